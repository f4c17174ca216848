"""Bounds of generated cases per operator, and the documented constraints an invalid case
violates (:data:`VIOLATIONS`). Bounds are validated eagerly: a bad one raises
:class:`BoundsError` (a :class:`~stress.errors.ConfigError`) when a strategy or generator is
made, not when a case is drawn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from stress import ops
from stress.errors import ConfigError

__all__ = [
    "ADD_DTYPES",
    "MHC_DTYPES",
    "MHC_OPS",
    "PARAM_INVALID",
    "VIOLATIONS",
    "AddBounds",
    "Bounds",
    "BoundsError",
    "check_int",
    "check_violations",
    "make_bounds",
]

PARAM_INVALID = 161002  # ACLNN_ERR_PARAM_INVALID: what every documented violation returns

MHC_OPS = ("mhc_pre_sinkhorn", "mhc_pre_sinkhorn_backward")


def _declared() -> tuple:
    """What the built-in declarations (stress/ops/declarations/) say generated cases draw: the
    mHC pair's fixed N and num_iters, C's multiple and dtypes; add's dtypes and shape ranks."""
    mhc, add = ops.declaration_of(MHC_OPS[1]), ops.declaration_of("add")
    dtype, shape = mhc.dtype_var("dtype"), next(v for v in add.shapes if v.name == "shape")
    add_dtype = add.dtype_var("dtype")
    return (mhc.dim("N").default, mhc.dim("num_iters").default, mhc.dim("C").multiple,
            dtype.drawn or dtype.choices, add_dtype.drawn or add_dtype.choices, shape)  # fmt: skip


MHC_N, MHC_ITERS, MHC_C_ALIGN, MHC_DTYPES, ADD_DTYPES, _ADD_SHAPE = _declared()
MHC_C_LIMIT = 100_000  # C < 100000: a legal limit, not a generated range (C <= max_C)

#: Per operator: violation name -> (what it breaks, expected status).
VIOLATIONS: dict[str, dict[str, tuple[str, int]]] = {
    "add": {
        "broadcast": ("self and other shapes cannot be broadcast", PARAM_INVALID),
        "out-dtype": ("a floating result cannot be cast to an int32 out", PARAM_INVALID),
    },
    **{
        op: {
            "n": (f"N must be {MHC_N}", PARAM_INVALID),
            "c-align": (f"C must be a multiple of {MHC_C_ALIGN}", PARAM_INVALID),
            "c-zero": ("C must be > 0", PARAM_INVALID),
            "c-limit": (f"C must be < {MHC_C_LIMIT}", PARAM_INVALID),
            "num-iters": (f"num_iters must be {MHC_ITERS}", PARAM_INVALID),
            "dtype": (f"dtype must be {' or '.join(MHC_DTYPES)}", PARAM_INVALID),
            **(
                {"hc-mult": (f"hc_mult must be {MHC_N}", PARAM_INVALID)}
                if op == "mhc_pre_sinkhorn"
                else {}
            ),
        }
        for op in MHC_OPS
    },
}


class BoundsError(ConfigError):
    """A bound given to a case strategy or generator is out of range."""


# -- bounds ----------------------------------------------------------------------------------
def check_int(name: str, value: Any, lo: int, hi: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise BoundsError(f"{name}={value!r}: expected an integer")
    if value < lo or (hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise BoundsError(f"{name}={value!r}: must be {rng}")


def _check_dtypes(name: str, value: Any, allowed: Sequence[str]) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise BoundsError(f"{name}={value!r}: expected a non-empty sequence of dtype names")
    bad = [d for d in value if d not in allowed]
    if bad:
        raise BoundsError(f"{name}: {bad[0]!r} is not one of {', '.join(allowed)}")
    return tuple(dict.fromkeys(value))


@dataclass(frozen=True)
class AddBounds:
    """Bounds of generated ``add`` cases."""

    min_dims: int = _ADD_SHAPE.rank[0]
    max_dims: int = _ADD_SHAPE.rank[1]
    max_side: int = _ADD_SHAPE.side[1]
    max_elements: int = 4096
    dtypes: tuple[str, ...] = ADD_DTYPES
    broadcast: bool = True  # other_shape may be a broadcastable shape
    mixed_dtypes: bool = True  # other_dtype may differ from dtype
    allow_empty: bool = True  # a dimension may be 0 (an empty tensor)

    def __post_init__(self) -> None:
        check_int("min_dims", self.min_dims, 0, 8)
        check_int("max_dims", self.max_dims, 0, 8)
        if self.min_dims > self.max_dims:
            raise BoundsError(f"min_dims={self.min_dims} is greater than max_dims={self.max_dims}")
        check_int("max_side", self.max_side, 1)
        check_int("max_elements", self.max_elements, 1)
        object.__setattr__(self, "dtypes", _check_dtypes("dtypes", self.dtypes, ADD_DTYPES))


@dataclass(frozen=True)
class MhcBounds:
    """Bounds of generated mHC cases (B*S tokens, C channels)."""

    max_B: int = 4
    max_S: int = 256
    max_tokens: int = 512  # B * S
    max_C: int = 1024
    dtypes: tuple[str, ...] = MHC_DTYPES
    allow_empty: bool = True  # B may be 0 (the empty-batch case)

    def __post_init__(self) -> None:
        check_int("max_B", self.max_B, 1)
        check_int("max_S", self.max_S, 1)
        check_int("max_tokens", self.max_tokens, 1)
        check_int("max_C", self.max_C, MHC_C_ALIGN, MHC_C_LIMIT - 1)
        if self.max_C % MHC_C_ALIGN:
            raise BoundsError(
                f"max_C={self.max_C}: must be a multiple of {MHC_C_ALIGN} (valid cases need "
                f"C % {MHC_C_ALIGN} == 0)"
            )
        object.__setattr__(self, "dtypes", _check_dtypes("dtypes", self.dtypes, MHC_DTYPES))


Bounds = AddBounds | MhcBounds


def make_bounds(op: str, **bounds: Any) -> Bounds:
    """The validated bounds of ``op`` (:class:`BoundsError` naming the bad one)."""
    if op not in ops.names():
        raise BoundsError(f"unknown op {op!r}; known ops: {', '.join(ops.names())}")
    cls = AddBounds if op == "add" else MhcBounds
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(bounds) - known)
    if unknown:
        raise BoundsError(
            f"{unknown[0]!r} is not a bound of op {op!r} (its bounds: {', '.join(sorted(known))})"
        )
    if "dtypes" in bounds and isinstance(bounds["dtypes"], list):
        bounds["dtypes"] = tuple(bounds["dtypes"])
    return cls(**bounds)


def check_violations(op: str, violations: Sequence[str] | None) -> tuple[str, ...]:
    """The violation names to draw from (all of ``op``'s when None)."""
    known = VIOLATIONS[op]
    if violations is None:
        return tuple(known)
    if isinstance(violations, str) or not violations:
        raise BoundsError(f"violations={violations!r}: expected a non-empty sequence of names")
    bad = [v for v in violations if v not in known]
    if bad:
        raise BoundsError(
            f"violations: {bad[0]!r} is not a constraint of op {op!r} (known: {', '.join(known)})"
        )
    return tuple(dict.fromkeys(violations))
