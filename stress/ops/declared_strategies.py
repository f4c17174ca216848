"""Cases of a declared operator drawn from its declared ranges: hypothesis strategies and
``corpus generate``'s deterministic generator, sharing one case builder.

Each dimension is drawn once per case and every shape uses it, so related shapes stay
consistent (``x = ["B", "H"]`` and ``gamma = ["H"]`` agree). Bounds are keyword-only and checked
when the strategy is *created* (``InvalidArgument``, as in ``hypothesis.extra.numpy``)::

    from stress.ops.declared_strategies import declared_cases

    @given(declared_cases(decl, dims={"H": (1, 64)}, max_elements=4096))
    def test_rms_norm(case): ...   # case is a DeclaredCase; case.params() feeds the OpSpec

Drawn cases whose shapes do not resolve (``"H/2"`` with an odd H) or exceed ``max_elements``
are rejected; hypothesis shrinks towards the low end of each range, the first dtype, seed 0.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import tomli_w
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from stress.errors import ConfigError
from stress.ops.declaration import DeclaredCase, OpDeclaration
from stress.ops.declared import TensorValue, resolve

__all__ = ["DeclaredBounds", "cases_toml", "declared_bounds", "declared_cases", "generate_cases"]

T = TypeVar("T")
_SEED_MAX = 2**32 - 1


@dataclass(frozen=True)
class DeclaredBounds:
    """Validated draw ranges: per dimension (low, high), per dtype variable the choices."""

    dims: tuple[tuple[str, int, int, int], ...]  # name, low // m, high // m, multiple m
    dtypes: tuple[tuple[str, tuple[str, ...]], ...]
    max_elements: int | None
    shapes: tuple[tuple[str, int, int, int, int], ...] = ()  # name, rank lo/hi, side lo/hi


def declared_bounds(
    decl: OpDeclaration,
    *,
    dims: Mapping[str, tuple[int, int]] | None = None,
    dtypes: Mapping[str, Sequence[str]] | None = None,
    max_elements: int | None = None,
) -> DeclaredBounds:
    """Bounds within the declaration's ranges (``InvalidArgument`` naming the bad one)."""
    dims = dict(dims or {})
    dtypes = dict(dtypes or {})
    known = {d.name: d for d in decl.dims}
    for name, value in dims.items():
        if name not in known:
            raise InvalidArgument(f"dims: {name!r} is not a dimension of {decl.name} "
                                  f"(it has {', '.join(known) or 'none'})")  # fmt: skip
        d = known[name]
        if not (isinstance(value, tuple | list) and len(value) == 2):
            raise InvalidArgument(f"dims[{name!r}]: expected (low, high), got {value!r}")
        lo, hi = value
        if not (d.low <= lo <= hi <= d.high):
            raise InvalidArgument(f"dims[{name!r}] = ({lo}, {hi}): must satisfy "
                                  f"{d.low} <= low <= high <= {d.high}")  # fmt: skip
    free = {v.name: v for v in decl.dtypes if not v.derived and v.default is None}
    for name, value in dtypes.items():
        if name not in free:
            raise InvalidArgument(f"dtypes: {name!r} is not a dtype variable of {decl.name}")
        bad = [v for v in value if v not in free[name].choices]
        if not value or bad:
            raise InvalidArgument(f"dtypes[{name!r}]: choose from {', '.join(free[name].choices)}")
    if max_elements is not None and (not isinstance(max_elements, int) or max_elements < 1):
        raise InvalidArgument(f"max_elements={max_elements!r}: must be an int >= 1")
    free_dims = [d for d in decl.dims if d.low < d.high and d.name not in dims]
    cap = None
    if max_elements is not None and free_dims:  # keep every dimension's share of the budget
        cap = max(1, round(max_elements ** (1 / len(free_dims))))
    ranges = []
    for d in decl.dims:
        lo, hi = dims.get(d.name, (d.low, d.high))
        if cap is not None and d.name not in dims:
            hi = max(lo, min(hi, cap))
        m = d.multiple
        lo_m, hi_m = -(-lo // m), hi // m
        ranges.append((d.name, lo_m, max(lo_m, hi_m), m))
    choices = tuple(
        (v.name, tuple(dtypes.get(v.name, v.drawn or v.choices))) for v in free.values()
    )
    shapes = tuple(
        (v.name, *v.rank, *v.side) for v in decl.shapes if v.default is None
    )  # a shape variable with a default follows it
    return DeclaredBounds(tuple(ranges), choices, max_elements, shapes)


def _shape(b: DeclaredBounds, spec: tuple, integer: Callable[[int, int], int]) -> tuple:
    """A drawn shape: its rank, then each side, kept under max_elements' share."""
    _, rank_lo, rank_hi, side_lo, side_hi = spec
    rank = integer(rank_lo, rank_hi)
    if b.max_elements is not None and rank:
        side_hi = max(side_lo, min(side_hi, int(b.max_elements ** (1 / rank))))
    return tuple(integer(side_lo, side_hi) for _ in range(rank))


def _elements(values: Mapping[str, Any]) -> int:
    total = 0
    for v in values.values():
        for t in v if isinstance(v, tuple) else (v,):
            if isinstance(t, TensorValue):
                n = 1
                for s in t.shape:
                    n *= s
                total += n
    return total


def _case_id(decl: OpDeclaration, params: Mapping[str, Any], seed: int) -> str:
    digest = hashlib.sha256(json.dumps([params, seed], sort_keys=True).encode()).hexdigest()
    return f"{decl.name}-{digest[:10]}"


def _build(
    decl: OpDeclaration,
    b: DeclaredBounds,
    integer: Callable[[int, int], int],
    choice: Callable[[Sequence[T]], T],
) -> DeclaredCase | None:
    """One case from the draws, or None if its shapes do not resolve or are too large."""
    dims = {name: integer(lo, hi) * m for name, lo, hi, m in b.dims}
    dtypes = {name: choice(options) for name, options in b.dtypes}
    shapes = {spec[0]: _shape(b, spec, integer) for spec in b.shapes}
    seed = integer(0, _SEED_MAX)
    case = DeclaredCase("", dims, dtypes, {}, seed, shapes=shapes)
    try:
        values = resolve(decl, case.params(), f"{decl.source}: generated case")
    except ConfigError:
        return None
    if b.max_elements is not None and _elements(values) > b.max_elements:
        return None
    return DeclaredCase(_case_id(decl, case.params(), seed), dims, dtypes, {}, seed, shapes=shapes)


def declared_cases(
    decl: OpDeclaration,
    *,
    dims: Mapping[str, tuple[int, int]] | None = None,
    dtypes: Mapping[str, Sequence[str]] | None = None,
    max_elements: int | None = None,
) -> st.SearchStrategy[DeclaredCase]:
    """Valid cases of ``decl`` within the declared (or the given, narrower) ranges."""
    b = declared_bounds(decl, dims=dims, dtypes=dtypes, max_elements=max_elements)

    @st.composite
    def draw_case(draw: Any) -> DeclaredCase:
        case = _build(
            decl,
            b,
            lambda lo, hi: draw(st.integers(lo, hi)),
            lambda options: draw(st.sampled_from(list(options))),
        )
        assume(case is not None)
        return case  # type: ignore[return-value]

    return draw_case()


def generate_cases(
    decl: OpDeclaration,
    n: int,
    seed: int,
    *,
    dims: Mapping[str, tuple[int, int]] | None = None,
    dtypes: Mapping[str, Sequence[str]] | None = None,
    max_elements: int | None = None,
) -> list[DeclaredCase]:
    """``n`` distinct valid cases, the same for the same arguments (for ``corpus generate``)."""
    if not isinstance(n, int) or n < 0:
        raise ConfigError(f"generate_cases: n must be an int >= 0, got {n!r}")
    try:
        b = declared_bounds(decl, dims=dims, dtypes=dtypes, max_elements=max_elements)
    except InvalidArgument as exc:
        raise ConfigError(f"{decl.source}: {exc}") from None
    rng = random.Random(seed)
    out: dict[str, DeclaredCase] = {}
    attempts = 0
    while len(out) < n:
        attempts += 1
        if attempts > 100 * (n + 10):
            raise ConfigError(f"{decl.source}: only {len(out)} of {n} valid cases found in the "
                              "declared ranges; widen [dims] or raise max_elements")  # fmt: skip
        case = _build(decl, b, rng.randint, rng.choice)
        if case is not None:
            out.setdefault(case.id, case)
    return list(out.values())


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_inline(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return tomli_w.dumps({"v": value})[4:].strip()


def cases_toml(cases: Sequence[DeclaredCase]) -> str:
    """``[[case]]`` tables for ``cases`` (append them to the declaration they came from)."""
    blocks = []
    for c in cases:
        entry: dict[str, Any] = {"id": c.id, **c.dims, **c.shapes, **c.dtypes, **c.overrides}
        if c.seed is not None:
            entry["seed"] = c.seed
        if c.expect is not None:
            entry["expect"] = {"status": c.expect}
        blocks.append("[[case]]\n" + "".join(f"{k} = {_inline(v)}\n" for k, v in entry.items()))
    return "\n".join(blocks)
