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
    "declaration_source",
    "dtype_of",
    "get",
    "names",
    "register_declaration",
]

_CATALOGUE: dict[str, OpSpec] = {
    spec.name: spec for spec in (ADD, MHC_PRE_SINKHORN, MHC_PRE_SINKHORN_BACKWARD)
}


_BUILT_IN = frozenset(_CATALOGUE)
_DECLARED_SOURCE: dict[str, str] = {}


def register_declaration(decl) -> OpSpec:
    """The OpSpec of a loaded :class:`~stress.ops.declaration.OpDeclaration`, added to the
    catalogue under its name (a later declaration of the same name replaces it, except that a
    built-in operator's name cannot be taken: ConfigError naming the fix)."""
    from stress.errors import ConfigError
    from stress.ops.declared import to_opspec

    if decl.name in _BUILT_IN and _DECLARED_SOURCE.get(decl.name) != decl.source:
        raise ConfigError(
            f"{decl.source} [op], field 'name': {decl.name!r} is a built-in operator; "
            f'give the declaration another name (name = "my_{decl.name}")'
        )
    reference = None
    if decl.reference is not None:
        from stress.ops.references import load_reference

        reference = load_reference(decl.reference, decl.source)
    spec = to_opspec(decl, reference=reference)
    _CATALOGUE[spec.name] = spec
    _DECLARED_SOURCE[spec.name] = decl.source
    return spec


def declaration_source(name: str) -> str | None:
    """The declaration file op ``name`` was registered from (None: not a loaded declaration)."""
    return _DECLARED_SOURCE.get(name)


def names() -> list[str]:
    """Names of every operator in the catalogue."""
    return sorted(_CATALOGUE)


def get(name: str) -> OpSpec:
    """The :class:`OpSpec` called ``name`` (``KeyError`` naming the known ones otherwise)."""
    try:
        return _CATALOGUE[name]
    except KeyError:
        raise KeyError(f"unknown op {name!r}; known ops: {', '.join(names())}") from None
