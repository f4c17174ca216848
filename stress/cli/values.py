"""The values the CLI's options take: each parser turns the text into a value or raises
:class:`argparse.ArgumentTypeError`, which the CLI prints as one line naming the option."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from stress.config import ALL_VARIANTS, MODES, PHASES, VARIANTS
from stress.option_values import parse_bytes

__all__ = ["byte", "byte_count", "phases", "positive", "seconds_or_zero", "variants"]


def phases(text: str) -> tuple[str, ...]:
    if text == "all":
        return PHASES
    chosen = tuple(p.strip() for p in text.split(",") if p.strip())
    bad = [p for p in chosen if p not in PHASES]
    if bad or not chosen:
        raise argparse.ArgumentTypeError(
            f"must be a comma-separated list of {', '.join(PHASES)}, or all, got "
            f"{bad[0] if bad else text!r}"
        )
    return chosen


def variants(text: str) -> tuple[str, ...]:
    """``--variants``: view and size kinds (stress.corpus.variants, .size_variants) and the
    opt-in twins (stress.corpus.twins), ``all`` (every kind), ``default`` or ``none``."""
    chosen = tuple(w.strip() for w in text.split(",") if w.strip())
    if chosen == ("none",):
        return ()
    groups = {"all": ALL_VARIANTS, "default": VARIANTS}  # in a list too: default,twins
    chosen = tuple(k for w in chosen for k in groups.get(w, (w,)))
    bad = [w for w in chosen if w not in ALL_VARIANTS]
    if bad or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown variant {bad[0] if bad else text!r}; choose from "
            f"{', '.join(ALL_VARIANTS)}, all, default or none"
        )
    return tuple(w for w in ALL_VARIANTS if w in chosen)


def modes(text: str) -> tuple[str, ...]:
    """``--modes``: API modes (stress.config.MODES), comma-separated, or ``all``."""
    chosen = tuple(w.strip() for w in text.split(",") if w.strip())
    if chosen == ("all",):
        return MODES
    bad = [w for w in chosen if w not in MODES]
    if bad or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown mode {bad[0] if bad else text!r}; choose from {', '.join(MODES)} or all"
        )
    return tuple(w for w in MODES if w in chosen)


def byte(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        value = -1
    if not 0 <= value <= 255:
        raise argparse.ArgumentTypeError(f"must be a byte 0..255 such as 0xAB, got {text!r}")
    return value


def positive(kind: type) -> Callable[[str], float]:
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"must be {what} > 0, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value

    return parse


def seconds_or_zero(text: str) -> float:
    """A finite number of seconds >= 0 (0 turns the thing off)."""
    try:
        value = float(text)
    except ValueError:
        value, text = math.nan, repr(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text}")
    return value


def byte_count(text: str) -> int:
    """A positive byte count, optionally with K, M, G or T (binary: 1G = 2^30)."""
    try:
        return parse_bytes(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a positive number of bytes (e.g. 8G, 512M, 1000000), got {text!r}"
        ) from None
