"""What an aclnn header says about one operator: :class:`OpSignature` of :class:`CParam`.

An operator is the pair ``aclnnXxxGetWorkspaceSize(..., uint64_t *workspaceSize,
aclOpExecutor **executor)`` / ``aclnnXxx(void *, uint64_t, aclOpExecutor *, aclrtStream)``; its
signature is the first function's parameters in C order, without the last two.

Each parameter has a *kind* (what the binding must create for it), a *role* and an ``optional``
flag. Neither const-ness, nor names, nor the ``@param [in]/[out]`` doc tags are right alone in
real headers (``aclnnRmsNorm`` declares ``const aclTensor *yOut``, ``aclnnBatchNormBackward`` a
non-const ``gradInput``, ``aclnnMhcPreSinkhornBackward`` const *inputs* ``sumOut``/``normOut``
tagged ``[in]``, ``aclnn_add.h`` tags its non-const ``out`` ``[in]``), so :func:`role_of`
combines them in the one order that fits all of them:

1. a non-const tensor (or tensor list) is an output, in-out if its name ends in ``Ref``;
2. a const one is in-out if its name ends in ``Ref``,
3. else follows the ``@param [in]/[out]`` tag where the header documents it,
4. else is an input if named ``gradOut``, ``gradOutput`` or ``grad_output`` (optionally
   ending in ``Optional``): a backward's upstream gradient, an input of every backward (torch's
   convention) although its name ends in ``Out`` (``aclnnBatchNormBackward``'s untagged
   ``const aclTensor *gradOut``),
5. else is an output if named ``out`` or ending in ``Out`` / ``OutOptional``,
6. else an input.

A name ending in ``Optional`` may be NULL. Only tensors and tensor lists have input / output /
inout roles; every other parameter is an ``attr``.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "KINDS",
    "ROLES",
    "UPSTREAM_GRADIENTS",
    "CParam",
    "HeaderInfo",
    "OpSignature",
    "ctype_of",
    "phase1_argtypes",
    "phase2_argtypes",
    "role_of",
]

Role = Literal["input", "output", "inout", "attr"]
ROLES: tuple[str, ...] = ("input", "output", "inout", "attr")

# (C type name, pointer depth, const required) -> kind. Pointer types may be const or not.
KINDS: dict[tuple[str, int], str] = {
    ("aclTensor", 1): "tensor",
    ("aclScalar", 1): "scalar",
    ("aclIntArray", 1): "int_array",
    ("aclFloatArray", 1): "float_array",
    ("aclBoolArray", 1): "bool_array",
    ("aclTensorList", 1): "tensor_list",
    ("aclScalarList", 1): "scalar_list",
    ("char", 1): "string",
    ("int64_t", 0): "int64",
    ("int32_t", 0): "int32",
    ("int16_t", 0): "int16",
    ("int8_t", 0): "int8",
    ("uint64_t", 0): "uint64",
    ("uint32_t", 0): "uint32",
    ("uint8_t", 0): "uint8",
    ("double", 0): "double",
    ("float", 0): "float",
    ("bool", 0): "bool",
    ("_Bool", 0): "bool",
    ("aclDataType", 0): "dtype",
}

_TENSOR_KINDS = frozenset({"tensor", "tensor_list"})
UPSTREAM_GRADIENTS = frozenset({"gradOut", "gradOutput", "grad_output"})  # rule 4: inputs


def role_of(name: str, kind: str, const: bool, tag: str | None) -> tuple[str, bool]:
    """(role, optional) of a parameter by the module's rule; ``tag`` is "in"/"out"/"inout"."""
    optional = name.endswith("Optional")
    if kind not in _TENSOR_KINDS:
        return "attr", optional
    if name.endswith("Ref"):
        return "inout", optional
    if not const:
        return "output", optional
    if tag is not None:
        return {"in": "input", "out": "output", "inout": "inout"}[tag], optional
    if name.removesuffix("Optional") in UPSTREAM_GRADIENTS:
        return "input", optional
    if name == "out" or name.endswith(("Out", "OutOptional")):
        return "output", optional
    return "input", optional


@dataclass(frozen=True)
class CParam:
    """One phase-1 parameter as declared: C name, C type name, kind, role, NULL-able."""

    name: str
    type: str  # the C type without pointer and const: aclTensor, int64_t, char, ...
    kind: str  # a value of KINDS: tensor, scalar, int_array, ..., int64, double, dtype, string
    const: bool  # the pointee (or the value) is const
    role: str  # input | output | inout | attr
    optional: bool
    tag: str | None = None  # the header's @param direction (in | out | inout), if documented
    line: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "role": self.role, "optional": self.optional}


@dataclass(frozen=True)
class OpSignature:
    """An operator read from a header: its function name and phase-1 parameters in C order."""

    name: str  # e.g. "aclnnAdd" (phase 1 is name + "GetWorkspaceSize")
    params: tuple[CParam, ...]
    header: str = ""
    line: int = 0

    def param(self, name: str) -> CParam:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "params": [p.to_json() for p in self.params]}


@dataclass(frozen=True)
class HeaderInfo:
    """Every operator one header declares, in declaration order."""

    header: str
    ops: tuple[OpSignature, ...]

    def op(self, name: str) -> OpSignature:
        for op in self.ops:
            if op.name == name:
                return op
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        return {"header": self.header, "ops": [op.to_json() for op in self.ops]}


_CTYPES: dict[str, Any] = {
    "int64": ctypes.c_int64,
    "int32": ctypes.c_int32,
    "int16": ctypes.c_int16,
    "int8": ctypes.c_int8,
    "uint64": ctypes.c_uint64,
    "uint32": ctypes.c_uint32,
    "uint8": ctypes.c_uint8,
    "double": ctypes.c_double,
    "float": ctypes.c_float,
    "bool": ctypes.c_bool,
    "dtype": ctypes.c_int,  # aclDataType is a C enum
    "string": ctypes.c_char_p,
}


def ctype_of(param: CParam) -> Any:
    """The ctypes type the binding passes for ``param`` (opaque acl* pointers are c_void_p)."""
    return _CTYPES.get(param.kind, ctypes.c_void_p)


def phase1_argtypes(sig: OpSignature) -> tuple:
    """argtypes of ``<op>GetWorkspaceSize``: the parameters, uint64_t*, aclOpExecutor**."""
    return (
        *(ctype_of(p) for p in sig.params),
        ctypes.POINTER(ctypes.c_uint64),
        ctypes.POINTER(ctypes.c_void_p),
    )


def phase2_argtypes(sig: OpSignature) -> tuple:
    """argtypes of ``<op>(void *workspace, uint64_t size, aclOpExecutor *, aclrtStream)``."""
    return (ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p)
