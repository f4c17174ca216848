"""A declaration skeleton (:class:`Skeleton`, guessed by :mod:`stress.ops.skeleton`) and its
text: TOML values written inline, the CHECK and FIX comments, ``[op]``, ``[dims]``,
``[dtypes]``, ``[params]`` with a comment per parameter, and its cases (the skeleton's one, or
imported ones)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Entry", "Skeleton", "render_skeleton", "toml_value"]


@dataclass(frozen=True)
class Entry:
    """One ``[params]`` line: the parameter, its TOML value text and its comment."""

    name: str
    value: str
    comment: str

    @property
    def assignment(self) -> str:
        """The line without its comment: ``name = value``."""
        return f"{self.name} = {self.value}"


@dataclass(frozen=True)
class Skeleton:
    """What ``op new`` writes: the operator, dims (name, low, high, case value), dtype choices
    of ``T``, the parameter lines, the checks and the fix line; ``multiples``, the dims whose
    values must be multiples of a number (``C % 128 == 0``)."""

    function: str
    name: str
    header: str
    dims: tuple[tuple[str, int, int, int], ...]
    dtypes: tuple[str, ...]
    dtype_note: str
    params: tuple[Entry, ...]
    checks: tuple[str, ...]
    fix: str
    multiples: tuple[tuple[str, int], ...] = ()


def toml_value(value: Any) -> str:
    """``value`` as a TOML inline value (strings, bools, numbers, lists, inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"


def render_skeleton(
    sk: Skeleton,
    cases: Sequence[tuple[str, Mapping[str, Any]]] | None = None,
    head: Sequence[str] = (),
) -> str:
    """The declaration file's text: its one skeleton case, or ``cases`` ((comment, table)
    pairs, e.g. imported ones) after the ``head`` comment lines."""
    out = list(head) or [
        f"# {sk.function}: a declaration skeleton written by `aclnn-stress op new` from its",
        "# header. Its values are guesses that run as written on a typical operator; check:",
    ]
    out += [f"# - {c}" for c in sk.checks]
    out += [
        f"# {sk.fix}",
        "[op]",
        f"header = {toml_value(sk.header)}",
        f"function = {toml_value(sk.function)}",
        f"name = {toml_value(sk.name)}",
        "",
    ]
    if sk.dims:
        out.append("[dims]  # small ranges: generated cases draw from them")
        multiples = dict(sk.multiples)
        for n, lo, hi, _ in sk.dims:
            if n in multiples:
                out.append(f"{n} = {toml_value({'range': [lo, hi], 'multiple': multiples[n]})}")
            else:
                out.append(f"{n} = {toml_value([lo, hi])}")
        out.append("")
    if sk.dtypes:
        out += ["[dtypes]", f"T = {toml_value(list(sk.dtypes))}  # dtypes from {sk.dtype_note}", ""]
    out.append("[params]  # every header parameter by its C name, in C order")
    width = min(max((len(e.assignment) for e in sk.params), default=0), 60)
    for e in sk.params:
        out.append(f"{e.assignment:<{width}}  # {_short(e.comment)}")
    if cases is None:
        skeleton_case = {"id": f"{sk.name.replace('_', '-')}-skeleton"}
        cases = [("", {**skeleton_case, **{n: v for n, _, _, v in sk.dims}, "seed": 1})]
    for comment, table in cases:
        out += ["", *(f"# {c}" for c in comment.splitlines() if c), "[[case]]"]
        out += [f"{k} = {toml_value(v)}" for k, v in table.items()]
    out.append("")
    return "\n".join(out)


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
