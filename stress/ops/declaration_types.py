"""The declared operator's frozen types: :class:`OpDeclaration` (a parsed declaration file),
its :class:`DeclaredCase` tables and per-output :class:`Tolerance`.

:mod:`stress.ops.declaration` parses a file into them; :mod:`stress.ops.resolve` turns one
into concrete shapes, dtypes and values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stress.ops.dims import DimSpec, DtypeVar, ScalarVar, ShapeVar
from stress.ops.generation import GenerationSpec
from stress.ops.gradspec import GradSpec
from stress.ops.signature import OpSignature

__all__ = ["DeclaredCase", "OpDeclaration", "Tolerance"]


@dataclass(frozen=True)
class Tolerance:
    """Per-output comparison tolerance: rtol/atol, or ``ulp`` units in the last place."""

    rtol: float = 0.0
    atol: float = 0.0
    ulp: int | None = None


@dataclass(frozen=True)
class DeclaredCase:
    """One [[case]]: bindings of dims and dtype variables, parameter overrides, seed."""

    id: str
    dims: Mapping[str, int]
    dtypes: Mapping[str, str]
    overrides: Mapping[str, Any]
    seed: int | None = None
    expect: int | None = None  # the expected non-zero status of a negative case
    description: str = ""
    shapes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    def params(self) -> dict[str, Any]:
        """The flat parameter mapping an OpSpec built from the declaration takes."""
        return {**self.dims, **self.shapes, **self.dtypes, **self.overrides}


@dataclass(frozen=True)
class OpDeclaration:
    """A declared operator: its header signature (roles overridden), dims, dtypes, params."""

    name: str
    function: str
    source: str  # the declaration file
    header: str  # the header file read
    signature: OpSignature
    dims: tuple[DimSpec, ...]
    dtypes: tuple[DtypeVar, ...]
    params: Mapping[str, Any]  # header parameter name -> its declared (raw TOML) value
    cases: tuple[DeclaredCase, ...] = ()
    reference: str | None = None
    tolerance: Tolerance | None = None
    tolerances: Mapping[str, Tolerance] = field(default_factory=dict)
    description: str = ""
    shapes: tuple[ShapeVar, ...] = ()  # [shapes]: whole shapes a case gives by name
    vars: tuple[ScalarVar, ...] = ()  # [vars]: named scalars attributes refer to
    generate: str | None = None  # "module:function" drawing the inputs (default: [params])
    tolerance_function: str | None = None  # "module:function" (values, output) -> (rtol, atol)
    depends_on: str | None = None  # the op whose outputs the generator takes (a forward)
    generation: GenerationSpec = field(default_factory=GenerationSpec)  # [generate] table
    gradcheck: GradSpec | None = None  # [gradcheck]: the forward this backward differentiates
    not_repeatable: str = ""  # [op] not_repeatable: why its executor cannot be made repeatable
    #: [variants]: kind -> stress.ops.variant_rules.VariantRule (the kinds it opts out of)
    variant_rules: Mapping[str, Any] = field(default_factory=dict)

    def dim(self, name: str) -> DimSpec:
        return next(d for d in self.dims if d.name == name)

    def dtype_var(self, name: str) -> DtypeVar:
        return next(v for v in self.dtypes if v.name == name)

    def tolerance_of(self, output: str) -> Tolerance | None:
        return self.tolerances.get(output, self.tolerance)
