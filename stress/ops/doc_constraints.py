"""The legal sizes an aclnn header's comments state for a dimension or an integer parameter, in
the spelling CANN's headers (and the simulator's) use, and the dims two shapes of one tensor
pin down.

- ``C % 128 == 0``: C is a multiple of 128;
- ``0 < C < 100000``, ``C <= 64``, ``S >= 1``: a range (strict bounds made inclusive);
- ``N == hcMult == 4``, ``numIters must be 20``: a fixed value for every name of the chain;
- a tensor written twice with different shapes, ``(2*numIters, B, S, N)`` in its ``@param``
  and ``sumOut (40, B, S, N)`` in the file comment: ``2*numIters == 40``, so numIters = 20.

:func:`small_range` turns what is known of one dim into the skeleton's small range and case
value. Like :mod:`stress.ops.doc_comment`, these are hints ``op new`` starts from, not rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from stress.ops.doc_comment import doc_shape
from stress.ops.shape_expr import ShapeExprError, parse_dim

__all__ = ["DimBound", "doc_bounds", "doc_restated_shapes", "small_range", "solve_shapes"]

_NAME = r"[A-Za-z_]\w*"
_CHAIN = re.compile(rf"\b((?:{_NAME}\s*==\s*)+)(-?\d+)\b")
_MUST = re.compile(rf"\b({_NAME})\s+must\s+be\s+(-?\d+)\b")
_MULTIPLE = re.compile(rf"\b({_NAME})\s*%\s*(\d+)\s*==\s*0\b")
_BETWEEN = re.compile(rf"(-?\d+)\s*(<=?)\s*({_NAME})\s*(<=?)\s*(-?\d+)")
_ONE_SIDE = re.compile(rf"\b({_NAME})\s*([<>]=?)\s*(-?\d+)\b")
_SOLVE_LIMIT = 4096  # the largest value a restated shape's equation is solved for


@dataclass(frozen=True)
class DimBound:
    """What a header says of one name's value: an inclusive range, a multiple, a fixed value;
    ``said`` the header's words, quoted in the skeleton's comments."""

    name: str
    low: int | None = None
    high: int | None = None
    multiple: int = 1
    fixed: int | None = None
    said: tuple[str, ...] = ()


def _merge(out: dict[str, DimBound], name: str, said: str, **change: int) -> None:
    old = out.get(name, DimBound(name))
    if "low" in change and old.low is not None:
        change["low"] = max(old.low, change["low"])
    if "high" in change and old.high is not None:
        change["high"] = min(old.high, change["high"])
    out[name] = replace(old, **change, said=(*old.said, said))


def doc_bounds(texts: Iterable[str]) -> dict[str, DimBound]:
    """Every name's :class:`DimBound` that ``texts`` (the header's comments) state."""
    out: dict[str, DimBound] = {}
    for text in texts:
        for m in _CHAIN.finditer(text):
            for name in re.findall(_NAME, m.group(1)):
                _merge(out, name, m.group(0).strip(), fixed=int(m.group(2)))
        for m in _MUST.finditer(text):
            _merge(out, m.group(1), m.group(0), fixed=int(m.group(2)))
        for m in _MULTIPLE.finditer(text):
            _merge(out, m.group(1), m.group(0), multiple=int(m.group(2)))
        for m in _BETWEEN.finditer(text):
            low = int(m.group(1)) + (m.group(2) == "<")
            high = int(m.group(5)) - (m.group(4) == "<")
            _merge(out, m.group(3), m.group(0), low=low, high=high)
        for m in _ONE_SIDE.finditer(_BETWEEN.sub(" ", text)):
            value, op = int(m.group(3)), m.group(2)
            if op.startswith("<"):
                _merge(out, m.group(1), m.group(0).strip(), high=value - (op == "<"))
            else:
                _merge(out, m.group(1), m.group(0).strip(), low=value + (op == ">"))
    return out


def doc_restated_shapes(text: str, tensors: Iterable[str]) -> dict[str, list[int | str]]:
    """The shapes ``text`` (a file comment) gives the tensors by name: ``sumOut (40, B, S, N)``
    or ``x: (B, S, N, C)``, the tuple right after the name."""
    out: dict[str, list[int | str]] = {}
    for name in tensors:
        for m in re.finditer(rf"\b{re.escape(name)}\b\s*:?\s*(?=\()", text):
            shape = doc_shape(text[m.end() : text.find(")", m.end()) + 1])
            if shape is not None:
                out.setdefault(name, shape)
    return out


def solve_shapes(
    pairs: Iterable[tuple[list[int | str], list[int | str]]], known: Mapping[str, int]
) -> dict[str, int]:
    """The names fixed by equating two shapes of one tensor, entry by entry, where one side is
    a number and the other an expression over one name not in ``known``: ``2*numIters`` = 40."""
    found: dict[str, int] = {}
    for a, b in pairs:
        if len(a) != len(b):
            continue
        for x, y in zip(a, b, strict=True):
            if isinstance(x, int) and not isinstance(y, int):
                x, y = y, x
            if isinstance(x, int) or not isinstance(y, int):
                continue
            value = _solve(str(x), y, {**known, **found})
            if value is not None:
                found[value[0]] = value[1]
    return found


def _solve(expr: str, target: int, known: Mapping[str, int]) -> tuple[str, int] | None:
    try:
        parsed = parse_dim(expr)
    except ShapeExprError:
        return None
    free = sorted(parsed.names - set(known))
    if len(free) != 1:
        return None
    for value in range(1, _SOLVE_LIMIT + 1):
        try:
            if parsed({**known, free[0]: value}) == target:
                return free[0], value
        except ShapeExprError:
            continue
    return None


def small_range(bound: DimBound | None, guess: tuple[int, int, int]) -> tuple[int, int, int]:
    """(low, high, case value) for a dim guessed ``guess`` that ``bound`` constrains: its fixed
    value, else the guess moved into its range, two multiples wide where it has one."""
    if bound is None:
        return guess
    if bound.fixed is not None:
        return bound.fixed, bound.fixed, bound.fixed
    lo, hi, case = guess
    floor = bound.low if bound.low is not None else lo
    top = bound.high if bound.high is not None else max(hi, floor)
    m = bound.multiple
    if m > 1:
        first = max(lo, floor, 1) // -m * -m
        last = min(first + m, top // m * m) if top >= first else first
        return first, max(first, last), first
    lo, hi = max(lo, floor), min(hi, top)
    if lo > hi:
        lo, hi = floor, min(top, floor + (guess[1] - guess[0]))
    return lo, hi, min(max(case, lo), hi)
