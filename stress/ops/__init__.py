"""The operator catalogue: every operator the framework can call, as an :class:`OpSpec`."""

from __future__ import annotations

from stress.ops.add import ADD
from stress.ops.mhc import MHC_PRE_SINKHORN, MHC_PRE_SINKHORN_BACKWARD
from stress.ops.spec import DTYPES, AttrArg, OpSpec, Param, ScalarArg, TensorArg, dtype_of

__all__ = [
    "DTYPES",
    "AttrArg",
    "OpSpec",
    "Param",
    "ScalarArg",
    "TensorArg",
    "dtype_of",
    "get",
    "names",
]

_CATALOGUE: dict[str, OpSpec] = {
    spec.name: spec for spec in (ADD, MHC_PRE_SINKHORN, MHC_PRE_SINKHORN_BACKWARD)
}


def names() -> list[str]:
    """Names of every operator in the catalogue."""
    return sorted(_CATALOGUE)


def get(name: str) -> OpSpec:
    """The :class:`OpSpec` called ``name`` (``KeyError`` naming the known ones otherwise)."""
    try:
        return _CATALOGUE[name]
    except KeyError:
        raise KeyError(f"unknown op {name!r}; known ops: {', '.join(names())}") from None
