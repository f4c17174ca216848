"""What an operator is to the framework: :class:`OpSpec`.

An OpSpec declares the case parameters it takes (:class:`Param`), the exact argument list of its
phase-1 function in C order (tensors, scalars and by-value attributes, with dtype and shape rules
derived from the parameters), a seeded generator of host inputs, a numpy reference and per-output
comparison tolerances. The engine needs nothing else to upload, call, download and grade it.

Parameter validation checks types and basic sanity only (a dimension is a non-negative int). The
operator's own constraints (N = 4, C % 128 = 0, ...) are deliberately *not* checked here: negative
cases exist to prove the operator rejects them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import ml_dtypes
import numpy as np

from stress.errors import ConfigError

__all__ = [
    "DTYPES",
    "REQUIRED",
    "AttrArg",
    "BoolArrayArg",
    "DtypeArg",
    "FloatArrayArg",
    "IntArrayArg",
    "OpSpec",
    "Param",
    "Params",
    "ScalarArg",
    "ScalarListArg",
    "StringArg",
    "TensorArg",
    "TensorListArg",
    "dtype_of",
]

Params = Mapping[str, Any]

DTYPES: dict[str, np.dtype] = {
    "float32": np.dtype(np.float32),
    "fp32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "fp16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "int32": np.dtype(np.int32),
}


def dtype_of(name: str) -> np.dtype:
    """The numpy dtype of a corpus dtype name (``bf16``, ``fp16``, ``float32``, ``int32``)."""
    return DTYPES[name]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Param:
    """One case parameter: its type, default (or REQUIRED), allowed values and meaning."""

    name: str
    kind: type | tuple[type, ...] | str  # a Python type, or "shape" (list of ints >= 0)
    default: Any = REQUIRED  # REQUIRED, a value, or None for "absent unless given"
    doc: str = ""
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None

    def parse(self, value: Any, where: str) -> Any:
        """Validate ``value``; ``where`` names the file and case for the error message."""
        field_ = f"{where}, field '{self.name}'"
        if self.kind == "shape":
            if not isinstance(value, list | tuple) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value
            ):
                raise ConfigError(f"{field_}: expected a list of integers (a shape), got {value!r}")
            if any(v < 0 for v in value):
                raise ConfigError(f"{field_}: dimensions must be >= 0, got {list(value)}")
            return tuple(value)
        kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        if (
            float in kinds
            and int not in kinds
            and isinstance(value, int)
            and not isinstance(value, bool)
        ):
            value = float(value)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise ConfigError(f"{field_}: expected {names}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(map(str, self.choices))
            raise ConfigError(f"{field_}: {value!r} is not one of {allowed}")
        if self.minimum is not None and value < self.minimum:
            raise ConfigError(f"{field_}: must be >= {self.minimum}, got {value!r}")
        return value


@dataclass(frozen=True)
class TensorArg:
    """An ``aclTensor*`` argument. ``optional`` ones may be passed as NULL."""

    name: str
    output: bool
    shape: Callable[[Params], tuple[int, ...]]
    dtype: Callable[[Params], np.dtype]
    optional: bool = False
    present: Callable[[Params], bool] = field(default=lambda p: True)
    inout: bool = False  # read and written by the op (``selfRef``): uploaded, then graded


@dataclass(frozen=True)
class ScalarArg:
    """An ``aclScalar*`` argument (a host value copied at phase 1)."""

    name: str
    dtype: Callable[[Params], np.dtype]
    value: Callable[[Params], Any]


@dataclass(frozen=True)
class AttrArg:
    """A by-value C argument (``int64_t``, ``double``, ``bool``)."""

    name: str
    value: Callable[[Params], Any]
    ctype: str = ""  # the C type (int64_t, int32_t, int8_t, uint64_t, double, float, bool)


_E = TypeVar("_E", int, float, bool)


@dataclass(frozen=True)
class _ArrayArg(Generic[_E]):
    """An array argument: its values for a case's parameters (None -> NULL). The subclasses
    are the three array types of the ABI, told apart by their class."""

    name: str
    value: Callable[[Params], tuple[_E, ...] | None]


class IntArrayArg(_ArrayArg[int]):
    """An ``aclIntArray*`` (``aclCreateIntArray(const int64_t *, uint64_t)``); None -> NULL."""


class FloatArrayArg(_ArrayArg[float]):
    """An ``aclFloatArray*`` (``aclCreateFloatArray(const float *, uint64_t)``); None -> NULL."""


class BoolArrayArg(_ArrayArg[bool]):
    """An ``aclBoolArray*`` (``aclCreateBoolArray(const bool *, uint64_t)``); None -> NULL."""


@dataclass(frozen=True)
class TensorListArg:
    """An ``aclTensorList*`` of tensors named ``<name>[i]`` (host inputs/outputs use that key).

    Created with ``aclCreateTensorList(const aclTensor *const *, uint64_t)``; destroying the
    list destroys its members (never destroy them separately).
    """

    name: str
    output: bool
    shapes: Callable[[Params], tuple[tuple[int, ...], ...]]
    dtypes: Callable[[Params], tuple[np.dtype, ...]]
    optional: bool = False
    present: Callable[[Params], bool] = field(default=lambda p: True)
    inout: bool = False

    def member(self, i: int) -> str:
        return f"{self.name}[{i}]"


@dataclass(frozen=True)
class ScalarListArg:
    """An ``aclScalarList*`` (``aclCreateScalarList``; destroying it destroys the scalars)."""

    name: str
    dtypes: Callable[[Params], tuple[np.dtype, ...]]
    values: Callable[[Params], tuple[Any, ...] | None]


@dataclass(frozen=True)
class DtypeArg:
    """An ``aclDataType`` by value: the engine passes ``int(acl_dtype(value(p)))``."""

    name: str
    value: Callable[[Params], np.dtype]


@dataclass(frozen=True)
class StringArg:
    """A ``const char*`` attribute (UTF-8, NUL-terminated); None -> NULL."""

    name: str
    value: Callable[[Params], str | None]


Arg = (
    TensorArg
    | ScalarArg
    | AttrArg
    | IntArrayArg
    | FloatArrayArg
    | BoolArrayArg
    | TensorListArg
    | ScalarListArg
    | DtypeArg
    | StringArg
)


@dataclass(frozen=True)
class OpSpec:
    """An operator as the framework sees it."""

    name: str
    function: str  # the aclnn function, e.g. "aclnnAdd" (phase 1 is function + GetWorkspaceSize)
    description: str
    params: tuple[Param, ...]
    args: tuple[Arg, ...]  # phase-1 arguments in C order, without workspaceSize/executor
    generate: Callable[..., dict[str, np.ndarray]]  # (params, seed, *, forward) -> host inputs
    reference: Callable[[Params, Mapping[str, np.ndarray]], dict[str, np.ndarray]]
    tolerances: Callable[[Params, str], tuple[float, float]]  # (params, output) -> (rtol, atol)
    depends_on: str | None = None  # op whose outputs feed the inputs (e.g. the forward)
    signature: Any = (
        None  # the header's OpSignature, for a declared op (None: an OpSpec built in Python)
    )
    check: Callable[[Params, str], None] | None = None  # validates parsed params (ConfigError)
    # why its executor cannot be repeatable ("" = it can): [op] not_repeatable of a declaration;
    # the repeat mode then checks that aclSetAclOpExecutorRepeatable refuses it
    not_repeatable: str = ""
    # the derived variant kinds it opts out of ([variants] of a declaration): kind ->
    # stress.ops.variant_rules.VariantRule (why; the status a view variant must fail with)
    variant_rules: Mapping[str, Any] = field(default_factory=dict)

    @property
    def inputs(self) -> tuple[TensorArg, ...]:
        return tuple(a for a in self.args if isinstance(a, TensorArg) and not a.output)

    @property
    def outputs(self) -> tuple[TensorArg, ...]:
        return tuple(a for a in self.args if isinstance(a, TensorArg) and a.output)

    @property
    def scalars(self) -> tuple[ScalarArg, ...]:
        return tuple(a for a in self.args if isinstance(a, ScalarArg))

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def parse_params(self, raw: Mapping[str, Any], where: str) -> dict[str, Any]:
        """Validate a case's raw parameters, fill defaults; unknown keys are errors."""
        known = {p.name for p in self.params}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ConfigError(
                f"{where}, field '{unknown[0]}': not a parameter of op '{self.name}' "
                f"(its parameters: {', '.join(p.name for p in self.params)})"
            )
        out: dict[str, Any] = {}
        for p in self.params:
            if raw.get(p.name) is not None:  # None (TOML has none): the parameter's default
                out[p.name] = p.parse(raw[p.name], where)
            elif p.default is REQUIRED:
                raise ConfigError(f"{where}, field '{p.name}': required by op '{self.name}'")
            else:
                out[p.name] = p.default
        if self.check is not None:
            self.check(out, where)
        return out

    def uploaded(self, params: Params) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
        """(shape, dtype) of every host input the engine uploads: input and in-out tensors and
        tensor-list members (``name[i]``) that are present."""
        out: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
        for a in self.args:
            if isinstance(a, TensorArg) and not a.output and a.present(params):
                out[a.name] = (tuple(a.shape(params)), np.dtype(a.dtype(params)))
            elif isinstance(a, TensorListArg) and not a.output and a.present(params):
                for i, (shape, dtype) in enumerate(
                    zip(a.shapes(params), a.dtypes(params), strict=True)
                ):
                    out[a.member(i)] = (tuple(shape), np.dtype(dtype))
        return out

    def output_shapes(self, params: Params) -> dict[str, tuple[int, ...]]:
        return {o.name: tuple(o.shape(params)) for o in self.outputs if o.present(params)}
