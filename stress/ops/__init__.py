"""The operator catalogue: every operator the framework can call, as an :class:`OpSpec`.

Built-in operators are declarations shipped in ``stress/ops/declarations/*.toml`` (read from
the simulator's or the installed headers on first use): ``add`` and the mHC pair, whose inputs,
reference and tolerances they point at (``stress/ops/add_reference.py``, ``stress/ops/mhc.py``);
a corpus or declaration file adds its own with :func:`register_declaration`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stress.ops.spec import DTYPES, AttrArg, OpSpec, Param, ScalarArg, TensorArg, dtype_of

__all__ = [
    "BUILT_IN_DECLARATIONS",
    "DTYPES",
    "AttrArg",
    "OpSpec",
    "Param",
    "ScalarArg",
    "TensorArg",
    "declaration_of",
    "declaration_source",
    "dtype_of",
    "get",
    "names",
    "register_declaration",
]

#: The folder of the built-in operators' declarations.
BUILT_IN_DECLARATIONS = Path(__file__).resolve().parent / "declarations"

_CATALOGUE: dict[str, OpSpec] = {}
_BUILT_IN: set[str] = set()
_DECLARED_SOURCE: dict[str, str] = {}
_DECLARATIONS: dict[str, Any] = {}  # name -> OpDeclaration
_LOADED: list[bool] = []


def _catalogue() -> dict[str, OpSpec]:
    """The catalogue, the built-in declarations loaded on first use."""
    if not _LOADED:
        _LOADED.append(True)
        from stress.ops.declaration import load_declaration
        from stress.ops.declared import to_opspec

        for path in sorted(BUILT_IN_DECLARATIONS.glob("*.toml")):
            decl = load_declaration(path)
            _CATALOGUE[decl.name] = to_opspec(decl)
            _DECLARED_SOURCE[decl.name] = decl.source
            _DECLARATIONS[decl.name] = decl
            _BUILT_IN.add(decl.name)
    return _CATALOGUE


def register_declaration(decl) -> OpSpec:
    """The OpSpec of a loaded :class:`~stress.ops.declaration.OpDeclaration`, added to the
    catalogue under its name (a later declaration of the same name replaces it, except that a
    built-in operator's name cannot be taken: ConfigError naming the fix)."""
    from stress.errors import ConfigError
    from stress.ops.declared import to_opspec

    catalogue = _catalogue()
    if decl.name in _BUILT_IN:
        if _DECLARED_SOURCE.get(decl.name) == decl.source:
            return catalogue[decl.name]  # a built-in declaration named again
        raise ConfigError(
            f"{decl.source} [op], field 'name': {decl.name!r} is a built-in operator; "
            f'give the declaration another name (name = "my_{decl.name}")'
        )
    spec = to_opspec(decl)
    catalogue[spec.name] = spec
    _DECLARED_SOURCE[spec.name] = decl.source
    _DECLARATIONS[spec.name] = decl
    return spec


def declaration_of(name: str) -> Any:
    """The :class:`~stress.ops.declaration.OpDeclaration` op ``name`` was built from (its
    dims, dtype and shape variables: the ranges generated cases draw from)."""
    get(name)
    return _DECLARATIONS[name]


def declaration_source(name: str) -> str | None:
    """The declaration file op ``name`` was registered from (None: a built-in operator, which
    every process knows without it, or not a declaration)."""
    _catalogue()
    return None if name in _BUILT_IN else _DECLARED_SOURCE.get(name)


def names() -> list[str]:
    """Names of every operator in the catalogue."""
    return sorted(_catalogue())


def get(name: str) -> OpSpec:
    """The :class:`OpSpec` called ``name`` (``KeyError`` naming the known ones otherwise)."""
    try:
        return _catalogue()[name]
    except KeyError:
        raise KeyError(f"unknown op {name!r}; known ops: {', '.join(names())}") from None


_FROM_SPEC = ("DTYPES", "AttrArg", "OpSpec", "Param", "ScalarArg", "TensorArg", "dtype_of")


def __getattr__(name: str) -> Any:
    """The names re-exported from :mod:`stress.ops.spec` (numpy), imported on first use: the
    package itself stays light for the CLI's parsers (``stress.ops.header_options``)."""
    if name in _FROM_SPEC:
        from stress.ops import spec

        return getattr(spec, name)
    raise AttributeError(f"module 'stress.ops' has no attribute {name!r}")
