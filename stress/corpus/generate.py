"""Generated cases: valid ones and constraint violations, for hypothesis and for the CLI.

One set of *builders* (one per operator) turns a sequence of elementary choices (an integer in
a range, one of a few options) into a :class:`~stress.corpus.parse.Case`. Two drivers feed them:

* :mod:`stress.corpus.strategies` drives them with hypothesis (``draw(st.integers(lo, hi))``), so
  hypothesis explores and shrinks the cases (smaller shapes, fewer dims, seed 0);
* :func:`generate_cases` drives them with ``random.Random(seed)``: the same seed gives the same
  cases on every machine and Python version (``Random.randrange`` over a seeded Mersenne Twister
  is stable), which is what ``aclnn-stress corpus generate`` writes to TOML. Hypothesis itself
  is not used for files: its ``find``/``example()`` are not deterministic and it is only a test
  dependency.

Both share the same bounds (:class:`AddBounds`, :class:`MhcBounds`), validated eagerly: a bad
bound raises :class:`BoundsError` (a :class:`~stress.errors.ConfigError`; the strategies turn it
into hypothesis's ``InvalidArgument``) when the strategy or generator is created, not when a
case is drawn. Defaults keep cases small enough for stress work on the simulator (mHC: B*S <= 512
tokens, C <= 1024; add: <= 4096 elements).

Invalid cases violate exactly one documented constraint of the operator and carry the status it
must fail with (``expect = { status = 161002 }``); :data:`VIOLATIONS` lists them per operator.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any, Protocol, TypeVar

from stress import ops
from stress.corpus.bounds import (  # noqa: F401 - re-exported: the generator's vocabulary
    ADD_DTYPES,
    MHC_C_ALIGN,
    MHC_C_LIMIT,
    MHC_DTYPES,
    MHC_ITERS,
    MHC_N,
    MHC_OPS,
    PARAM_INVALID,
    VIOLATIONS,
    AddBounds,
    Bounds,
    BoundsError,
    MhcBounds,
    check_int,
    check_violations,
    make_bounds,
)
from stress.corpus.parse import Case, Expect
from stress.errors import ConfigError

__all__ = [
    "Draw",
    "RandomDraw",
    "build_case",
    "case_from_fields",
    "case_id_for",
    "generate_cases",
    "invalid_case",
    "valid_case",
]

T = TypeVar("T")


# -- drawing ---------------------------------------------------------------------------------
class Draw(Protocol):
    """The elementary choices a builder makes (hypothesis- or random-backed)."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]; hypothesis shrinks it towards ``lo``."""
        ...

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``; hypothesis shrinks towards the first."""
        ...


class RandomDraw:
    """Choices from a seeded :class:`random.Random` (deterministic for a seed)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]


# -- cases -----------------------------------------------------------------------------------
def _id_part(name: str, value: Any) -> str:
    if isinstance(value, tuple | list):
        return f"{name}{'x'.join(map(str, value)) or 'scalar'}"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return f"{name}{int(value)}"
    return f"{name}{value:g}" if isinstance(value, float) else f"{name}{value}"


def case_id_for(op: str, params: Mapping[str, Any], seed: int, expect: int | None = None) -> str:
    """A readable id made of the parameters that differ from the defaults, e.g.
    ``add-shape2x3-s1`` or ``mhc_pre_sinkhorn_backward-B2-S128-C256-s7-x161002``."""
    spec = ops.get(op)
    parts = [op]
    for p in spec.params:
        value = params.get(p.name)
        default = p.default
        if value is None or (value == default and p.name not in ("B", "S", "C")):
            continue
        if isinstance(value, tuple) and isinstance(default, list | tuple):
            if tuple(default) == value:
                continue
        parts.append(_id_part(p.name, value))
    parts.append(f"s{seed}")
    if expect is not None:
        parts.append(f"x{expect}")
    return "-".join(parts).replace("+", "")


def build_case(
    op: str,
    params: Mapping[str, Any],
    *,
    seed: int = 0,
    id: str | None = None,
    expect: int | Mapping[str, Any] | Expect | None = None,
    description: str = "",
    source: str = "<generated>",
) -> Case:
    """A :class:`Case` from an op name and raw parameters, validated like a corpus entry."""
    where = f"{source}: case '{id}'" if id else source
    try:
        spec = ops.get(op)
    except KeyError:
        raise ConfigError(
            f"{where}, field 'op': unknown op {op!r}; known ops: {', '.join(ops.names())}"
        ) from None
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"{where}, field 'seed': expected an integer >= 0, got {seed!r}")
    if isinstance(expect, Mapping):
        status = expect.get("status")
        unknown = sorted(set(expect) - {"status"})
        if unknown:
            raise ConfigError(f"{where}, field 'expect.{unknown[0]}': unknown; allowed: status")
        expect = status
    if isinstance(expect, Expect):
        expect = expect.status
    if expect is not None and (
        not isinstance(expect, int) or isinstance(expect, bool) or expect == 0
    ):
        raise ConfigError(
            f"{where}, field 'expect.status': expected a non-zero status code such as 161002, "
            f"got {expect!r}"
        )
    parsed = spec.parse_params(dict(params), where)
    case_id = id or case_id_for(op, parsed, seed, expect)
    return Case(
        id=case_id,
        op=op,
        params=parsed,
        seed=seed,
        source=source,
        expect=Expect(expect) if expect is not None else None,
        description=description,
        spec=spec,
    )


_CASE_FIELDS = ("op", "id", "seed", "expect", "description")


def case_from_fields(fields: Mapping[str, Any], *, source: str = "<generated>") -> Case:
    """A :class:`Case` from the fields of a corpus ``[[case]]`` table (``op``, optional ``id``,
    ``seed``, ``expect``, ``description``; every other key is a parameter of the op)."""
    op = fields.get("op")
    if not isinstance(op, str):
        raise ConfigError(f"{source}: field 'op' is required (one of {', '.join(ops.names())})")
    return build_case(
        op,
        {k: v for k, v in fields.items() if k not in _CASE_FIELDS},
        seed=fields.get("seed", 0),
        id=fields.get("id"),
        expect=fields.get("expect"),
        description=fields.get("description", ""),
        source=source,
    )


def _shape(draw: Draw, b: AddBounds, ndim: int) -> list[int]:
    shape: list[int] = []
    room = b.max_elements
    for _ in range(ndim):
        hi = max(1, min(b.max_side, room))
        d = draw.integer(1, hi)
        shape.append(d)
        room = max(1, room // d)
    if shape and b.allow_empty and draw.integer(0, 7) == 7:  # 1 in 8: an empty tensor
        shape[draw.integer(0, len(shape) - 1)] = 0
    return shape


def _seed(draw: Draw) -> int:
    return draw.integer(0, 2**31 - 1)


def _alpha(dtypes: Sequence[str], draw: Draw) -> float | int:
    if all(d == "int32" for d in dtypes):
        return draw.choice((1, 2, -3, 0))
    return draw.choice((1.0, 0.5, -2.0, 0.0, 1.5))


def add_params(draw: Draw, b: AddBounds) -> dict[str, Any]:
    """Parameters of a valid ``add`` case."""
    ndim = draw.integer(b.min_dims, b.max_dims)
    shape = _shape(draw, b, ndim)
    dtype = draw.choice(b.dtypes)
    other_dtype = None
    if b.mixed_dtypes and len(b.dtypes) > 1 and draw.integer(0, 3) == 3:
        other_dtype = draw.choice(b.dtypes)
    params: dict[str, Any] = {"shape": shape, "dtype": dtype}
    if b.broadcast and shape:
        mode = draw.integer(0, 2)  # 0: same shape, 1: a broadcast suffix, 2: [1]
        if mode == 1:
            keep = draw.integer(1, len(shape))
            params["other_shape"] = [d if draw.integer(0, 1) else 1 for d in shape[-keep:]]
        elif mode == 2:
            params["other_shape"] = [1]
    if other_dtype is not None and other_dtype != dtype:
        params["other_dtype"] = other_dtype
    params["alpha"] = _alpha([dtype, other_dtype or dtype], draw)
    return params


def mhc_params(draw: Draw, b: MhcBounds) -> dict[str, Any]:
    """Parameters of a valid mHC case (N = 4, num_iters = 20, C % 128 == 0)."""
    B = draw.integer(0 if b.allow_empty else 1, b.max_B)
    S = draw.integer(1, max(1, min(b.max_S, b.max_tokens // max(B, 1))))
    C = MHC_C_ALIGN * draw.integer(1, b.max_C // MHC_C_ALIGN)
    return {"B": B, "S": S, "C": C, "dtype": draw.choice(b.dtypes)}


def valid_case(op: str, draw: Draw, b: Bounds, *, id: str | None = None) -> Case:
    """A valid case of ``op`` (the operator must succeed and match its reference)."""
    params = add_params(draw, b) if op == "add" else mhc_params(draw, b)  # type: ignore[arg-type]
    return build_case(op, params, seed=_seed(draw), id=id)


def _invalid_add(draw: Draw, b: AddBounds, violation: str) -> dict[str, Any]:
    if violation == "broadcast":
        ndim = draw.integer(max(1, b.min_dims), max(1, b.max_dims))
        shape = _shape(draw, AddBounds(**{**_fields(b), "allow_empty": False}), ndim)
        axis = draw.integer(0, ndim - 1)
        d = max(2, shape[axis])
        shape[axis] = d
        other = list(shape)
        other[axis] = d + draw.integer(1, 3)  # both != 1 and different: not broadcastable
        return {"shape": shape, "other_shape": other, "dtype": draw.choice(b.dtypes)}
    if violation == "out-dtype":
        floats = [d for d in b.dtypes if d != "int32"] or ["float32"]
        ndim = draw.integer(max(1, b.min_dims), max(1, b.max_dims))
        shape = _shape(draw, b, ndim)
        return {"shape": shape, "dtype": draw.choice(floats), "out_dtype": "int32"}
    raise AssertionError(violation)


def _invalid_mhc(op: str, draw: Draw, b: MhcBounds, violation: str) -> dict[str, Any]:
    small = MhcBounds(max_B=min(b.max_B, 2), max_S=min(b.max_S, 16), max_C=min(b.max_C, 256))
    p = mhc_params(draw, small)
    p["B"] = max(p["B"], 1)
    if violation == "n":
        p["N"] = draw.choice((3, 2, 5, 1, 6, 8))
    elif violation == "c-align":
        p["C"] = MHC_C_ALIGN * draw.integer(0, b.max_C // MHC_C_ALIGN - 1) + draw.integer(1, 127)
    elif violation == "c-zero":
        p["C"] = 0
    elif violation == "c-limit":
        p.update(B=1, S=1, C=MHC_C_LIMIT + MHC_C_ALIGN - MHC_C_LIMIT % MHC_C_ALIGN)
    elif violation == "num-iters":
        p["num_iters"] = draw.choice([k for k in range(1, 41) if k != MHC_ITERS])
    elif violation == "dtype":
        p["dtype"] = "float32"
    elif violation == "hc-mult":
        p["hc_mult"] = draw.choice((3, 2, 5, 8))
    else:
        raise AssertionError(violation)
    return p


def _fields(b: Any) -> dict[str, Any]:
    return {f.name: getattr(b, f.name) for f in fields(b)}


def invalid_case(
    op: str,
    draw: Draw,
    b: Bounds,
    violations: Sequence[str],
    *,
    id: str | None = None,
) -> Case:
    """A case of ``op`` violating one of ``violations``; it expects the documented status."""
    violation = draw.choice(tuple(violations))
    what, status = VIOLATIONS[op][violation]
    if op == "add":
        params = _invalid_add(draw, b, violation)  # type: ignore[arg-type]
    else:
        params = _invalid_mhc(op, draw, b, violation)  # type: ignore[arg-type]
    return build_case(
        op,
        params,
        seed=_seed(draw),
        id=f"{id}-{violation}" if id else None,
        expect=status,
        description=f"violates: {what}",
    )


def generate_cases(
    op: str,
    count: int,
    seed: int,
    *,
    invalid: bool = False,
    violations: Sequence[str] | None = None,
    **bounds: Any,
) -> list[Case]:
    """``count`` cases of ``op`` from ``random.Random(seed)``: the same arguments always give
    the same cases (ids ``<op>-s<seed>-<i>``, plus ``-<violation>`` for invalid ones)."""
    check_int("count", count, 1)
    check_int("seed", seed, 0)
    b = make_bounds(op, **bounds)
    chosen = check_violations(op, violations) if invalid else ()
    draw = RandomDraw(seed)
    out = []
    for i in range(count):
        cid = f"{op}-s{seed}-{i:03d}"
        if invalid:
            out.append(invalid_case(op, draw, b, chosen, id=cid))
        else:
            out.append(valid_case(op, draw, b, id=cid))
    return out
