"""Checks of an option's value, shared by :class:`stress.config.RunConfig` and the CLI's value
parsers: each raises a one-line :class:`~stress.errors.ConfigError` (or ``ValueError`` for a
byte count's text) naming the option and what it accepts."""

from __future__ import annotations

import math
from typing import Any

from stress.errors import ConfigError

__all__ = ["factor", "int_in", "parse_bytes", "seconds_in"]

_BYTE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_bytes(text: str) -> int:
    """A positive byte count, optionally with K, M, G or T (binary: 1G = 2^30), as
    ``--max-case-bytes`` takes it; a ``ValueError`` says what is accepted."""
    text = text.strip()
    number, unit = (text[:-1], text[-1].upper()) if text[-1:].isalpha() else (text, "")
    if unit not in _BYTE_UNITS or not number.isdigit() or int(number) <= 0:
        raise ValueError(f"{text!r} is not a positive number of bytes (e.g. 8G, 512M, 1000000)")
    return int(number) * _BYTE_UNITS[unit]


def int_in(option: str, value: Any, lo: int, hi: int, what: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{option} must be an integer, got {value!r}")
    if what and not lo <= value <= hi:
        raise ConfigError(f"{option} must be {what}, got {value}")
    if value < lo:
        raise ConfigError(f"{option} must be >= {lo}, got {value}")
    if value > hi:
        raise ConfigError(f"{option} must be <= {hi}, got {value}")


def factor(option: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{option} must be a finite number, got {value!r}")
    if not 1 <= value <= 1e6:
        raise ConfigError(f"{option} must be at least 1 and at most 1e6, got {value:g}")


def seconds_in(option: str, value: Any, hi: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{option} must be a number of seconds, got {value!r}")
    if not math.isfinite(value):
        raise ConfigError(f"{option} must be a finite number of seconds, got {value}")
    if not 0 < value <= hi:
        raise ConfigError(f"{option} must be > 0 seconds and at most {hi:g}, got {value}")
