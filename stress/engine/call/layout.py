"""The argument layout of a call: what each phase-1 argument of an :class:`OpSpec` becomes for
one case (tensor slots with shapes, strides and dtype codes as ctypes arrays; scalars as raw
bytes; arrays; lists), computed once per case and cached, so the hot path in
:mod:`stress.engine.call.prepared` only allocates, uploads and creates handles."""

import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np

from stress import acl
from stress.engine.call.views import ViewGeometry, geometry
from stress.ops.spec import (
    AttrArg,
    BoolArrayArg,
    DtypeArg,
    FloatArrayArg,
    IntArrayArg,
    OpSpec,
    Params,
    ScalarArg,
    ScalarListArg,
    StringArg,
    TensorArg,
    TensorListArg,
)

__all__ = ["ArraySlot", "ScalarSlot", "TensorSlot", "layout"]


@dataclass(frozen=True)
class TensorSlot:
    name: str
    output: bool  # canary-filled, downloaded, graded
    shape: tuple[int, ...]
    dtype: np.dtype
    acl_dtype: int
    nbytes: int
    dims: Any  # ctypes int64 array
    strides: Any
    inout: bool = False  # uploaded, then downloaded and graded (no canary)
    # a view variant's input (stress.engine.call.views): strides/offset into a larger storage
    view: ViewGeometry | None = None
    storage_dims: Any = None  # ctypes int64 array of view.storage

    @property
    def alloc_nbytes(self) -> int:
        """The bytes of device memory the tensor's storage takes."""
        return self.view.elements * self.dtype.itemsize if self.view else self.nbytes


@dataclass(frozen=True)
class ScalarSlot:
    name: str
    raw: bytes
    acl_dtype: int


@dataclass(frozen=True)
class ArraySlot:
    create: str  # aclCreateIntArray / aclCreateFloatArray / aclCreateBoolArray
    destroy: str
    values: Any  # ctypes array (read by CANN at creation, so shared between calls)
    n: int


_ARRAYS = {
    IntArrayArg: ("aclCreateIntArray", "aclDestroyIntArray", ctypes.c_int64),
    FloatArrayArg: ("aclCreateFloatArray", "aclDestroyFloatArray", ctypes.c_float),
    BoolArrayArg: ("aclCreateBoolArray", "aclDestroyBoolArray", ctypes.c_bool),
}


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


_LAYOUTS: dict[tuple[str, Any], tuple] = {}


def layout(spec: OpSpec, params: Params, key: str | None = None, view: str = "") -> tuple:
    """The cached layout of a call: by ``key`` (a case's digest, which covers its view) when
    given, else by params; ``view`` lays the inputs out as that view variant's."""
    if key is not None:
        cache_key: Any = (spec.name, key, view)
    else:
        try:
            cache_key = (spec.name, _freeze(dict(params)), view)
            hash(cache_key)
        except TypeError:  # unhashable parameter values: no caching
            return _build_layout(spec, params, view)
    layout = _LAYOUTS.get(cache_key)
    if layout is None:
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
        layout = _LAYOUTS[cache_key] = _build_layout(spec, params, view)
    return layout


def _tensor_slot(
    name: str, output: bool, inout: bool, shape: Any, dtype: Any, view: str = ""
) -> TensorSlot:
    shape = tuple(int(d) for d in shape)
    dtype = np.dtype(dtype)
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    n = max(len(shape), 1)
    g = geometry(view, shape) if view and not output and not inout else None
    if g is not None:
        strides = list(g.strides[::-1])
    return TensorSlot(
        name,
        output,
        shape,
        dtype,
        int(acl.acl_dtype(dtype)),
        int(np.prod(shape, dtype=np.int64)) * dtype.itemsize,
        (ctypes.c_int64 * n)(*shape),
        (ctypes.c_int64 * n)(*strides[::-1]),
        inout,
        g,
        (ctypes.c_int64 * len(g.storage))(*g.storage) if g is not None else None,
    )


def _scalar_slot(name: str, dtype: Any, value: Any) -> ScalarSlot:
    dtype = np.dtype(dtype)
    raw = np.array([value], dtype=dtype).tobytes()
    return ScalarSlot(name, raw, int(acl.acl_dtype(dtype)))


def _slot(arg: Any, p: Params, view: str = "") -> tuple[str, Any]:
    """One argument's (kind, slot): everything about it that depends on the case only."""
    if isinstance(arg, AttrArg):
        return ("attr", arg.value(p))
    if isinstance(arg, ScalarArg):
        return ("scalar", _scalar_slot(arg.name, arg.dtype(p), arg.value(p)))
    if isinstance(arg, TensorArg):
        if not arg.present(p):
            return ("null", None)
        slot = _tensor_slot(arg.name, arg.output, arg.inout, arg.shape(p), arg.dtype(p), view)
        return ("tensor", slot)
    if isinstance(arg, TensorListArg):
        if not arg.present(p):
            return ("null", None)
        members = zip(arg.shapes(p), arg.dtypes(p), strict=True)
        return (
            "tensor_list",
            tuple(
                _tensor_slot(arg.member(i), arg.output, arg.inout, shape, dtype, view)
                for i, (shape, dtype) in enumerate(members)
            ),
        )
    if isinstance(arg, ScalarListArg):
        values = arg.values(p)
        if values is None:
            return ("null", None)
        dtypes = arg.dtypes(p)
        return (
            "scalar_list",
            tuple(
                _scalar_slot(f"{arg.name}[{i}]", d, v)
                for i, (d, v) in enumerate(zip(dtypes, values, strict=True))
            ),
        )
    if isinstance(arg, tuple(_ARRAYS)):
        values = arg.value(p)
        if values is None:
            return ("null", None)
        create, destroy, ctype = _ARRAYS[type(arg)]
        n = len(values)
        return ("array", ArraySlot(create, destroy, (ctype * max(n, 1))(*values), n))
    if isinstance(arg, DtypeArg):
        return ("attr", int(acl.acl_dtype(arg.value(p))))
    if isinstance(arg, StringArg):
        value = arg.value(p)
        return ("attr", None if value is None else value.encode("utf-8"))
    raise TypeError(f"{type(arg).__name__} {getattr(arg, 'name', '?')}: no binding for this kind")


def _build_layout(spec: OpSpec, p: Params, view: str = "") -> tuple:
    return tuple(_slot(arg, p, view) for arg in spec.args)
