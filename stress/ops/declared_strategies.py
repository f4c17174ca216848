"""Cases of a declared operator drawn from its declared ranges: hypothesis strategies and
``corpus generate``'s deterministic generator, sharing one case builder
(:mod:`stress.ops.declared_draw`).

Each dimension is drawn once per case and every shape uses it, so related shapes stay
consistent (``x = ["B", "H"]`` and ``gamma = ["H"]`` agree). Bounds are keyword-only and checked
when the strategy is *created* (``InvalidArgument``, as in ``hypothesis.extra.numpy``)::

    from stress.ops.declared_strategies import declared_cases, declared_violations

    @given(declared_cases(decl, dims={"H": (1, 64)}, max_elements=4096))
    def test_rms_norm(case): ...   # case is a DeclaredCase; case.params() feeds the OpSpec

    @given(declared_violations(decl, violations=["c-align"]))
    def test_rejected(case): ...   # case.expect is the status, case.description says why

``dims`` narrow ``[dims]`` (or widen them up to ``[generate] legal``), ``dtypes`` narrow the
drawn dtype variables, ``max_elements`` caps every tensor of a case (default: ``[generate]
max_elements``), ``limits`` add or replace ``[generate] limits`` (``{"B*S": 64}``). Drawn cases
whose shapes do not resolve (``"H/2"`` with an odd H) or exceed ``max_elements`` are rejected;
hypothesis shrinks towards the low end of each range, the first dtype, seed 0.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import tomli_w
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from stress.errors import ConfigError
from stress.ops.declaration import DeclaredCase, OpDeclaration
from stress.ops.declared_draw import DeclaredBounds, build_valid, build_violation
from stress.ops.generation import Limit, Violation
from stress.ops.shape_expr import ShapeExprError, parse_dim

__all__ = [
    "DeclaredBounds",
    "GenerateOptions",
    "cases_toml",
    "declared_bounds",
    "declared_cases",
    "declared_violations",
    "generate_cases",
    "violations_of",
]

T = TypeVar("T")


def _check_dims(decl: OpDeclaration, dims: Mapping[str, Any]) -> None:
    known = {d.name: d for d in decl.dims}
    for name, value in dims.items():
        if name not in known:
            raise InvalidArgument(f"dims: {name!r} is not a dimension of {decl.name} "
                                  f"(it has {', '.join(known) or 'none'})")  # fmt: skip
        d = known[name]
        if not (isinstance(value, tuple | list) and len(value) == 2):
            raise InvalidArgument(f"dims[{name!r}]: expected (low, high), got {value!r}")
        lo, hi = value
        low, high = decl.generation.legal_range(name) or (d.low, d.high)
        if not (isinstance(lo, int) and isinstance(hi, int) and low <= lo <= hi <= high):
            raise InvalidArgument(f"dims[{name!r}] = ({lo}, {hi}): must satisfy "
                                  f"{low} <= low <= high <= {high}")  # fmt: skip
        if d.multiple > 1 and -(-lo // d.multiple) > hi // d.multiple:
            raise InvalidArgument(f"dims[{name!r}] = ({lo}, {hi}): holds no multiple of "
                                  f"{d.multiple}")  # fmt: skip


def _limits(decl: OpDeclaration, limits: Mapping[str, int]) -> tuple[Limit, ...]:
    out = {lim.expr.text: lim for lim in decl.generation.limits}
    dims = {d.name for d in decl.dims}
    for text, most in limits.items():
        try:
            expr = parse_dim(text)
        except ShapeExprError as exc:
            raise InvalidArgument(f"limits[{text!r}]: {exc}") from None
        if not expr.names <= dims or not isinstance(most, int) or most < 0:
            raise InvalidArgument(f"limits[{text!r}] = {most!r}: an expression over "
                                  f"{', '.join(dims)} and an int >= 0")  # fmt: skip
        out[text] = Limit(expr, most)
    return tuple(out.values())


def declared_bounds(
    decl: OpDeclaration,
    *,
    dims: Mapping[str, tuple[int, int]] | None = None,
    dtypes: Mapping[str, Sequence[str]] | None = None,
    max_elements: int | None = None,
    limits: Mapping[str, int] | None = None,
) -> DeclaredBounds:
    """Bounds within the declaration's ranges (``InvalidArgument`` naming the bad one)."""
    dims = dict(dims or {})
    dtypes = dict(dtypes or {})
    _check_dims(decl, dims)
    free = {v.name: v for v in decl.dtypes if not v.derived and v.default is None}
    for name, value in dtypes.items():
        if name not in free:
            raise InvalidArgument(f"dtypes: {name!r} is not a dtype variable of {decl.name}")
        allowed = free[name].drawn or free[name].choices  # what a valid case may draw
        if isinstance(value, str) or not value or set(value) - set(allowed):
            raise InvalidArgument(f"dtypes[{name!r}]: choose from {', '.join(allowed)}")
    if max_elements is not None and (not isinstance(max_elements, int) or max_elements < 1):
        raise InvalidArgument(f"max_elements={max_elements!r}: must be an int >= 1")
    if max_elements is None:
        max_elements = decl.generation.max_elements
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
    return DeclaredBounds(tuple(ranges), choices, max_elements, shapes,
                          _limits(decl, dict(limits or {})))  # fmt: skip


def violations_of(decl: OpDeclaration, names: Sequence[str] | None = None) -> tuple[Violation, ...]:
    """The declared violations named (all when None); ``InvalidArgument`` for unknown names."""
    known = {v.name: v for v in decl.generation.violations}
    if not known:
        raise InvalidArgument(f"op {decl.name!r} declares no constraints to violate "
                              f"([[generate.violation]] in {decl.source})")  # fmt: skip
    if names is None:
        return tuple(known.values())
    if isinstance(names, str) or not names:
        raise InvalidArgument(f"violations={names!r}: expected a non-empty sequence of names")
    bad = [n for n in names if n not in known]
    if bad:
        raise InvalidArgument(f"violations: {bad[0]!r} is not a constraint of op {decl.name!r} "
                              f"(known: {', '.join(known)})")  # fmt: skip
    return tuple(known[n] for n in dict.fromkeys(names))


class _HypothesisDraw:
    """The builder's elementary choices, made by hypothesis (so they shrink)."""

    def __init__(self, draw: Any) -> None:
        self._draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self._draw(st.integers(lo, hi))

    def choice(self, options: Sequence[T]) -> T:
        return self._draw(st.sampled_from(list(options)))


class RandomDraw:
    """Choices from a seeded :class:`random.Random` (deterministic for a seed)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]


def declared_cases(decl: OpDeclaration, **bounds: Any) -> st.SearchStrategy[DeclaredCase]:
    """Valid cases of ``decl`` within the declared (or the given) ranges; ``bounds`` as
    :func:`declared_bounds`."""
    b = declared_bounds(decl, **bounds)

    @st.composite
    def draw_case(draw: Any) -> DeclaredCase:
        case = build_valid(decl, b, _HypothesisDraw(draw))
        assume(case is not None)
        return case  # type: ignore[return-value]

    return draw_case()


def declared_violations(
    decl: OpDeclaration, *, violations: Sequence[str] | None = None, **bounds: Any
) -> st.SearchStrategy[DeclaredCase]:
    """Cases breaking one of the declared violations (all by default), each expecting its
    status; ``bounds`` as :func:`declared_bounds`."""
    b = declared_bounds(decl, **bounds)
    chosen = violations_of(decl, violations)

    @st.composite
    def draw_case(draw: Any) -> DeclaredCase:
        hd = _HypothesisDraw(draw)
        case = build_violation(decl, b, hd, hd.choice(chosen))
        assume(case is not None)
        return case  # type: ignore[return-value]

    return draw_case()


def draw_cases(
    decl: OpDeclaration,
    n: int,
    seed: int,
    bounds: DeclaredBounds,
    violations: Sequence[Violation] = (),
) -> list[tuple[DeclaredCase, str | None]]:
    """``n`` cases within ``bounds`` (:func:`declared_bounds`), each breaking one of
    ``violations`` (:func:`violations_of`; none: valid cases), with the violation's name, from
    ``random.Random(seed)``: the same arguments give the same cases. The callers validate what
    they were given (each with its own error) and pass the result; ConfigError for too narrow
    ranges."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ConfigError(f"generate_cases: n must be an int >= 0, got {n!r}")
    draw = RandomDraw(seed)
    out: list[tuple[DeclaredCase, str | None]] = []
    attempts = 0
    while len(out) < n:
        attempts += 1
        if attempts > 100 * (n + 10):
            raise ConfigError(f"{decl.source}: only {len(out)} of {n} valid cases found in the "
                              "declared ranges; widen [dims] or raise max_elements")  # fmt: skip
        v = draw.choice(violations) if violations else None
        case = build_violation(decl, bounds, draw, v) if v else build_valid(decl, bounds, draw)
        if case is not None:
            out.append((case, v.name if v else None))
    return out


@dataclass(frozen=True)
class GenerateOptions:
    """What ``corpus generate`` asks of either front door (a catalogue op's
    :func:`stress.corpus.generate.generate_cases`, a declaration's :func:`generate_cases`):
    ``count`` cases from ``random.Random(seed)``, valid or each breaking one of ``violations``
    (with ``invalid``; all when None), drawn within ``bounds`` (the keywords of
    :func:`declared_bounds`, checked by the front door)."""

    count: int
    seed: int = 0
    invalid: bool = False
    violations: Sequence[str] | None = None
    bounds: Mapping[str, Any] = field(default_factory=dict)


def generate_cases(decl: OpDeclaration, options: GenerateOptions) -> list[DeclaredCase]:
    """``options.count`` distinct cases of ``decl``, the same for the same options (for
    ``corpus generate --declaration``); ConfigError naming the file for a bad bound or
    violation."""
    n, seed = options.count, options.seed
    try:
        b = declared_bounds(decl, **options.bounds)
        chosen = violations_of(decl, options.violations) if options.invalid else ()
    except InvalidArgument as exc:
        raise ConfigError(f"{decl.source}: {exc}") from None
    out: dict[str, DeclaredCase] = {}
    batch = n
    while len(out) < n and batch <= 100 * (n + 10):
        out = {}
        for case, _ in draw_cases(decl, batch, seed, b, chosen):
            out.setdefault(case.id, case)
        batch *= 2
    if len(out) < n:
        raise ConfigError(f"{decl.source}: only {len(out)} of {n} distinct cases found in the "
                          "declared ranges; widen [dims] or raise max_elements")  # fmt: skip
    return list(out.values())[:n]


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
        if c.description:
            entry["description"] = c.description
        blocks.append("[[case]]\n" + "".join(f"{k} = {_inline(v)}\n" for k, v in entry.items()))
    return "\n".join(blocks)
