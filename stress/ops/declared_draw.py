"""One generated case of a declared operator, made from elementary draws.

A :class:`Draw` makes two kinds of choice: an integer in a range and one of a few options.
:mod:`stress.ops.declared_strategies` makes them with hypothesis (so cases shrink: towards the
low end of each range, the first option) or with a seeded :class:`random.Random` (so a seed
always gives the same cases). What is drawn comes from the declaration only: ``[dims]``,
``[shapes]`` and ``[dtypes]`` ranges, narrowed by the caller's :class:`DeclaredBounds`, and the
``[generate]`` table (:mod:`stress.ops.generation`): limits over dimensions, broadcast shapes,
mixed dtypes, drawn values, and the violations an invalid case breaks.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from stress.errors import ConfigError
from stress.ops.declaration import DeclaredCase, OpDeclaration
from stress.ops.declared import TensorValue, resolve
from stress.ops.generation import Limit, ValueRule, Violation

__all__ = ["DeclaredBounds", "Draw", "build_valid", "build_violation", "dtype_values"]

T = TypeVar("T")
SEED_MAX = 2**32 - 1


class Draw(Protocol):
    """The elementary choices a case is made of (hypothesis- or random-backed)."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]; hypothesis shrinks it towards ``lo``."""
        ...

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``; hypothesis shrinks towards the first."""
        ...


@dataclass(frozen=True)
class DeclaredBounds:
    """Validated draw ranges: per dimension (low, high), per dtype variable the choices."""

    dims: tuple[tuple[str, int, int, int], ...]  # name, low // m, high // m, multiple m
    dtypes: tuple[tuple[str, tuple[str, ...]], ...]
    max_elements: int | None  # of any one tensor of a case
    shapes: tuple[tuple[str, int, int, int, int], ...] = ()  # name, rank lo/hi, side lo/hi
    limits: tuple[Limit, ...] = ()


# -- dims and shapes -------------------------------------------------------------------------
def _within(limits: Sequence[Limit], dims: Mapping[str, int]) -> bool:
    return all(limit.holds(dims) for limit in limits)


def _high(limits: Sequence[Limit], known: dict[str, int], name: str, lo: int, hi: int, m: int):
    """The largest k in [lo, hi] keeping every limit naming ``name`` (lo if none does)."""
    relevant = [lim for lim in limits if name in lim.expr.names]
    if not relevant or not _within(relevant, {**known, name: lo * m}):
        return hi if not relevant else lo
    while lo < hi:  # the limits grow with each dimension: bisect
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if _within(relevant, {**known, name: mid * m}) else (lo, mid - 1)
    return lo


def draw_dims(b: DeclaredBounds, draw: Draw, ranges=None) -> dict[str, int]:
    """Each dimension in declaration order, kept under the limits given those drawn so far
    (the rest at their lowest)."""
    ranges = ranges or b.dims
    known = {name: lo * m for name, lo, _, m in ranges}
    dims: dict[str, int] = {}
    for name, lo, hi, m in ranges:
        top = _high(b.limits, {**known, **dims}, name, lo, hi, m)
        dims[name] = draw.integer(lo, top) * m
    return dims


def _shape(b: DeclaredBounds, spec: tuple, draw: Draw) -> tuple[int, ...]:
    """A drawn shape: its rank, then each side, the product kept under max_elements."""
    _, rank_lo, rank_hi, side_lo, side_hi = spec
    room = b.max_elements
    shape = []
    for _ in range(draw.integer(rank_lo, rank_hi)):
        top = side_hi if room is None else max(side_lo, min(side_hi, room))
        side = draw.integer(side_lo, top)
        shape.append(side)
        room = None if room is None else max(1, room // max(side, 1))
    return tuple(shape)


def _broadcast_of(shape: tuple[int, ...], draw: Draw) -> tuple[int, ...] | None:
    """None (the same shape), a suffix of it with some sides 1, or (1,)."""
    mode = draw.integer(0, 2) if shape else 0
    if mode == 1:
        keep = draw.integer(1, len(shape))
        return tuple(d if draw.integer(0, 1) else 1 for d in shape[-keep:])
    return (1,) if mode == 2 else None


def _unbroadcastable(shape: tuple[int, ...], draw: Draw) -> tuple[tuple, tuple]:
    """(shape without empty sides, a shape differing from it on one side, neither being 1)."""
    base = [max(d, 1) for d in shape] or [2]
    axis = draw.integer(0, len(base) - 1)
    base[axis] = max(2, base[axis])
    other = list(base)
    other[axis] = base[axis] + draw.integer(1, 3)
    return tuple(base), tuple(other)


# -- dtypes and values -----------------------------------------------------------------------
def dtype_values(decl: OpDeclaration, chosen: Mapping[str, str]) -> dict[str, str]:
    """Every dtype variable's value, given the chosen ones (defaults and derived ones filled)."""
    bound: dict[str, str] = {}
    for v in decl.dtypes:
        if v.name in chosen:
            bound[v.name] = chosen[v.name]
        elif v.derived:
            bound[v.name] = v.derive(bound)
        else:
            bound[v.name] = bound[v.default] if v.default else v.choices[0]
    return bound


def pick(rule: ValueRule, dtypes: Mapping[str, str], draw: Draw) -> Any:
    """A value drawn by ``rule``."""
    if rule.span is None:
        return draw.choice(rule.choices_for(dtypes))
    lo, hi = rule.span
    m = rule.not_multiple
    allowed = [k for k in range(lo, hi + 1) if (m == 1 or k % m) and k not in rule.excluded]
    return draw.choice(allowed)


def _set(case: dict[str, dict], decl: OpDeclaration, key: str, value: Any) -> None:
    if key in {d.name for d in decl.dims}:
        case["dims"][key] = value
    elif key in {v.name for v in decl.shapes}:
        case["shapes"][key] = tuple(value)  # checked a list of ints when parsed
    elif key in {v.name for v in decl.dtypes}:
        case["dtypes"][key] = value
    else:
        case["overrides"][key] = value


# -- cases -----------------------------------------------------------------------------------
def _elements(values: Mapping[str, Any]) -> int:
    """The element count of the case's largest tensor."""
    largest = 0
    for v in values.values():
        for t in v if isinstance(v, tuple) else (v,):
            if isinstance(t, TensorValue):
                n = 1
                for s in t.shape:
                    n *= s
                largest = max(largest, n)
    return largest


def _case_id(decl: OpDeclaration, params: Mapping[str, Any], seed: int) -> str:
    digest = hashlib.sha256(json.dumps([params, seed], sort_keys=True).encode()).hexdigest()
    return f"{decl.name}-{digest[:10]}"


def _base(decl: OpDeclaration, b: DeclaredBounds, draw: Draw, ranges=None) -> dict[str, dict]:
    return {
        "dims": draw_dims(b, draw, ranges),
        "dtypes": {name: draw.choice(options) for name, options in b.dtypes},
        "shapes": {spec[0]: _shape(b, spec, draw) for spec in b.shapes},
        "overrides": {},
    }


def _finish(decl: OpDeclaration, parts: dict[str, dict], seed: int, check: int | None, **extra):
    case = DeclaredCase("", parts["dims"], parts["dtypes"], parts["overrides"], seed,
                        shapes=parts["shapes"], **extra)  # fmt: skip
    try:
        values = resolve(decl, case.params(), f"{decl.source}: generated case")
    except ConfigError:
        return None
    if check is not None and _elements(values) > check:
        return None
    return DeclaredCase(_case_id(decl, case.params(), seed), parts["dims"], parts["dtypes"],
                        parts["overrides"], seed, shapes=parts["shapes"], **extra)  # fmt: skip


def build_valid(decl: OpDeclaration, b: DeclaredBounds, draw: Draw) -> DeclaredCase | None:
    """A valid case, or None if its shapes do not resolve, break a limit or are too large."""
    gen = decl.generation
    parts = _base(decl, b, draw)
    defaults = {v.name: v.default for v in decl.shapes}
    for name in gen.broadcast:
        shape = _broadcast_of(parts["shapes"].get(defaults[name], ()), draw)
        if shape is not None:
            parts["shapes"][name] = shape
    for name, options in gen.dtypes:  # a quarter of the cases draw it (shrinks to the default)
        if draw.integer(0, 3) == 3:
            parts["dtypes"][name] = draw.choice(options)
    bound = dtype_values(decl, parts["dtypes"])
    for name, rule in gen.values:
        _set(parts, decl, name, pick(rule, bound, draw))
    seed = draw.integer(0, SEED_MAX)
    if not _within(b.limits, parts["dims"]):
        return None
    return _finish(decl, parts, seed, b.max_elements)


def _narrowed(b: DeclaredBounds, decl: OpDeclaration) -> tuple:
    """The dimension ranges of a violation case: [generate] violation_dims within the bounds."""
    narrow = {n: (lo, hi) for n, lo, hi in decl.generation.violation_dims}
    out = []
    for name, lo, hi, m in b.dims:
        if name in narrow:
            n_lo, n_hi = -(-narrow[name][0] // m), narrow[name][1] // m
            if max(lo, n_lo) <= min(hi, n_hi):
                lo, hi = max(lo, n_lo), min(hi, n_hi)
        out.append((name, lo, hi, m))
    return tuple(out)


def build_violation(
    decl: OpDeclaration, b: DeclaredBounds, draw: Draw, violation: Violation
) -> DeclaredCase | None:
    """A case breaking ``violation`` alone: a plain small case (no broadcast, mixed dtypes or
    drawn values), then the violation's settings; it expects the violation's status."""
    parts = _base(decl, b, draw, _narrowed(b, decl))
    defaults = {v.name: v.default for v in decl.shapes}
    for name in violation.unbroadcastable:
        base, other = _unbroadcastable(parts["shapes"].get(defaults[name], ()), draw)
        parts["shapes"][defaults[name]] = base
        parts["shapes"][name] = other
    for key, rule in violation.set:
        _set(parts, decl, key, pick(rule, dtype_values(decl, parts["dtypes"]), draw))
    seed = draw.integer(0, SEED_MAX)
    return _finish(decl, parts, seed, None, expect=violation.status,
                   description=f"violates: {violation.what}")  # fmt: skip
