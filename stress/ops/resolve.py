"""Concrete values of one declared case: :func:`resolve` (dims, dtypes, overrides -> one value
per C parameter).

A case's parameters are flat: its dimensions and dtype variables by name, plus overrides of
header parameters (a table overriding a table merges into it). Each C parameter resolves by
kind to a :class:`TensorValue` (tensors), a tuple of them (tensor lists), ``(value, dtype)``
(scalars), a tuple (arrays, scalar lists), a numpy dtype (``aclDataType``), a string, a number,
or ``None`` for NULL. Results are cached per parameter set, so the OpSpec's argument callables
(called while the engine builds a call's layout) cost one lookup each.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from stress.errors import ConfigError
from stress.ops.declaration_types import OpDeclaration
from stress.ops.dims import DTYPE_NAMES
from stress.ops.shape_expr import ShapeExprError, parse_dim
from stress.ops.spec import Params
from stress.ops.values import Distribution, parse_distribution

__all__ = ["TensorValue", "check_params", "resolve"]

_ANY = (dict, list, int, float, bool, str)
_TENSOR_KEYS = {"shape", "dtype", "values"}
_VARS = " vars"  # the [vars] bindings ride along with the dims (not an identifier)
_INT_ATTRS = {"int64", "int32", "int16", "int8", "uint64", "uint32", "uint8"}
_SHAPES = " shapes"  # the [shapes] bindings ride along with the dims (not an identifier)


@dataclass(frozen=True)
class TensorValue:
    """A concrete tensor argument."""

    shape: tuple[int, ...]
    dtype: np.dtype
    values: Distribution


def check_params(decl: OpDeclaration) -> None:
    """Static checks of [params]: names are the header's, no name is both a dim and a param."""
    names = set(decl.signature.names)
    unknown = sorted(set(decl.params) - names)
    if unknown:
        raise ConfigError(
            f"{decl.source} [params], field '{unknown[0]}': {decl.function} has no such "
            f"parameter (it has {', '.join(decl.signature.names)})"
        )
    variables = {d.name for d in decl.dims} | {v.name for v in decl.dtypes}
    variables |= {v.name for v in decl.shapes} | {v.name for v in decl.vars}
    clash = sorted(names & variables)
    if clash:
        raise ConfigError(
            f"{decl.source} [dims]/[dtypes], field '{clash[0]}': also a parameter "
            f"of {decl.function}; rename the dimension"
        )


def _dtype(value: Any, vars_: Mapping[str, str], at: str) -> np.dtype:
    name = vars_.get(value, value) if isinstance(value, str) else value
    if not isinstance(name, str) or name not in DTYPE_NAMES:
        known = ", ".join([*vars_, *DTYPE_NAMES])
        raise ConfigError(f"{at}: unknown dtype or dtype variable {value!r}; use one of {known}")
    return DTYPE_NAMES[name]


def _dim(item: Any, dims: Mapping[str, int], at: str) -> int:
    if type(item) is int and item >= 0:  # a literal size (a bool is no dimension)
        return item
    try:
        value = parse_dim(item)(dims)
    except ShapeExprError as exc:
        names = ", ".join(d for d in dims if d not in (_SHAPES, _VARS)) or "none"
        raise ConfigError(f"{at}: {exc}; declared dimensions: {names}") from None
    if value < 0:
        raise ConfigError(f"{at}: {item!r} = {value}, a dimension must be >= 0")
    return value


def _broadcast(names: Any, tensors: Mapping[str, TensorValue], at: str) -> tuple[int, ...]:
    """numpy broadcasting of the named tensors' shapes (the first one's shape where they do not
    broadcast: the operator must reject the call)."""
    if not isinstance(names, list) or not names or not all(n in tensors for n in names):
        raise ConfigError(f"{at}.shape: broadcast = [...] names tensors given before this one")
    shapes = [tensors[n].shape for n in names]
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        return shapes[0]


def _tensor(raw: Any, dims, vars_, tensors, at: str) -> TensorValue:
    if not isinstance(raw, dict) or set(raw) - _TENSOR_KEYS or "shape" not in raw:
        raise ConfigError(
            f'{at}: expected a tensor table {{ shape = [...], dtype = "T", values = "normal" }}}}'
        )
    shape = raw["shape"]
    shapes = dims.get(_SHAPES, {})
    if isinstance(shape, str) and shape in shapes:
        dims_ = shapes[shape]
    elif isinstance(shape, dict) and set(shape) == {"broadcast"}:
        dims_ = _broadcast(shape["broadcast"], tensors, at)
    elif isinstance(shape, str) and shape in tensors:
        dims_ = tensors[shape].shape
    elif isinstance(shape, list):
        dims_ = tuple(_dim(d, dims, f"{at}.shape") for d in shape)
    else:
        raise ConfigError(
            f"{at}.shape: expected a list of dims, a [shapes] variable, the name of a tensor "
            f"given before it or {{ broadcast = [tensors] }}, got {shape!r}"
        )
    if "dtype" not in raw and isinstance(shape, str) and shape in tensors:
        dtype = tensors[shape].dtype
    else:
        dtype = _dtype(raw.get("dtype", "float32"), vars_, f"{at}.dtype")
    try:
        dist = parse_distribution(raw.get("values", "normal"))
    except ValueError as exc:
        raise ConfigError(f"{at}.values: {exc}") from None
    return TensorValue(dims_, dtype, dist)


def _scalar(raw: Any, vars_, at: str, base: Any = None) -> tuple[Any, np.dtype]:
    if isinstance(raw, dict) and set(raw) <= {"value", "dtype"} and "value" in raw:
        value, dtype = raw["value"], raw.get("dtype")
    elif isinstance(raw, int | float):
        value, dtype = raw, base.get("dtype") if isinstance(base, dict) else None
    else:
        raise ConfigError(f'{at}: expected a number or {{ value = 1.5, dtype = "float32" }}')
    if dtype is None:
        dtype = (
            "bool"
            if isinstance(value, bool)
            else "int64"
            if isinstance(value, int)
            else ("float32")
        )
    return value, _dtype(dtype, vars_, f"{at}.dtype")


def _list(raw: Any, types: tuple[type, ...], at: str) -> list:
    if not isinstance(raw, list) or not all(
        isinstance(v, types) and (bool in types or not isinstance(v, bool)) for v in raw
    ):
        names = " or ".join(t.__name__ for t in types)
        raise ConfigError(f"{at}: expected a list of {names}, got {raw!r}")
    return raw


def _value(kind: str, raw: Any, dims, vars_, tensors, at: str, base: Any) -> Any:
    scalars = dims.get(_VARS, {})
    if kind not in ("tensor", "tensor_list", "dtype") and isinstance(raw, str) and raw in scalars:
        raw = scalars[raw]  # an attribute given by a [vars] variable
    if kind == "tensor":
        return _tensor(raw, dims, vars_, tensors, at)
    if kind == "tensor_list":
        items = _list(raw, (dict,), at)
        return tuple(_tensor(t, dims, vars_, tensors, f"{at}[{i}]") for i, t in enumerate(items))
    if kind == "scalar":
        return _scalar(raw, vars_, at, base)
    if kind == "scalar_list":
        return tuple(_scalar(v, vars_, f"{at}[{i}]") for i, v in enumerate(_list(raw, _ANY, at)))
    if kind == "int_array":
        return tuple(
            _dim(v, dims, f"{at}[{i}]") if isinstance(v, str) else v
            for i, v in enumerate(_list(raw, (int, str), at))
        )
    if kind == "float_array":
        return tuple(float(v) for v in _list(raw, (int, float), at))
    if kind == "bool_array":
        return tuple(_list(raw, (bool,), at))
    if kind == "dtype":
        return _dtype(raw, vars_, at)
    if kind == "string":
        if not isinstance(raw, str):
            raise ConfigError(f"{at}: expected a string")
        return raw
    if kind == "bool":
        if not isinstance(raw, bool):
            raise ConfigError(f"{at}: expected true or false, got {raw!r}")
        return raw
    if kind in _INT_ATTRS:
        if isinstance(raw, str):
            return _dim(raw, dims, at)
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise ConfigError(f"{at}: expected an integer or a dimension expression, got {raw!r}")
        return raw
    if not isinstance(raw, int | float) or isinstance(raw, bool):  # double, float
        raise ConfigError(f"{at}: expected a number, got {raw!r}")
    return float(raw)


def _bindings(decl: OpDeclaration, p: Params, where: str) -> tuple[dict, dict]:
    dims = {}
    for d in decl.dims:
        value = p.get(d.name, d.default)
        if value is None:
            raise ConfigError(
                f"{where}, field '{d.name}': required (a dimension in [{d.low}, {d.high}])"
            )
        dims[d.name] = value
    vars_ = {
        v.name: p.get(v.name) or v.choices[0]
        for v in decl.dtypes
        if not v.derived and v.default is None
    }
    for v in decl.dtypes:  # in declaration order: each refers to variables before it
        if v.derived:
            vars_[v.name] = v.derive(vars_)
        elif v.default is not None:
            vars_[v.name] = p.get(v.name) or vars_[v.default]
    shapes: dict[str, tuple[int, ...]] = {}
    for s in decl.shapes:
        value = p.get(s.name)
        if value is None and s.default is None:
            raise ConfigError(f"{where}, field '{s.name}': required (a shape, e.g. [2, 3])")
        shapes[s.name] = tuple(value) if value is not None else shapes[s.default]  # type: ignore[index]
    if shapes:
        dims[_SHAPES] = shapes  # type: ignore[assignment]
    scalars = {v.name: p.get(v.name) for v in decl.vars}
    for v in decl.vars:
        if scalars[v.name] is None:
            scalars[v.name] = dims[v.default_dim] if v.default_dim else v.default
    if scalars:
        dims[_VARS] = scalars  # type: ignore[assignment]
    return dims, vars_


def _resolve(decl: OpDeclaration, p: Params, where: str) -> dict[str, Any]:
    dims, vars_ = _bindings(decl, p, where)
    out: dict[str, Any] = {}
    tensors: dict[str, TensorValue] = {}
    for cp in decl.signature.params:
        base, override = decl.params.get(cp.name), p.get(cp.name)
        raw = (
            {**base, **override}
            if isinstance(base, dict) and isinstance(override, dict)
            else (override if override is not None else base)
        )
        at = f"{where}, field '{cp.name}'"
        if isinstance(raw, dict) and "when" in raw:  # present only while a [vars] bool is true
            when = raw["when"]
            if when not in dims.get(_VARS, {}):
                raise ConfigError(f"{at}.when: expected the name of a [vars] variable")
            raw = {k: v for k, v in raw.items() if k != "when"} if dims[_VARS][when] else None
        if raw is None or raw == "null":
            if not cp.optional:
                raise ConfigError(
                    f"{at}: required by {decl.function} (missing required "
                    f"{cp.type} parameter; give it in [params])"
                )
            out[cp.name] = None
            continue
        out[cp.name] = _value(cp.kind, raw, dims, vars_, tensors, at, base)
        if cp.kind == "tensor":
            tensors[cp.name] = out[cp.name]
    return out


_CACHE: dict[tuple[int, str], tuple[OpDeclaration, dict[str, Any]]] = {}


_KEYS: dict[int, tuple[Params, str]] = {}


def _params_key(params: Params) -> str:
    """The JSON key of ``params``, encoded once per parameters object: every tensor's shape and
    dtype is resolved through here, many times a call, with a case's own ``params`` (never
    changed once the case is parsed; the object is kept, so its id is not reused meanwhile)."""
    hit = _KEYS.get(id(params))
    if hit is not None and hit[0] is params:
        return hit[1]
    key = json.dumps(dict(params), sort_keys=True, default=str)
    if len(_KEYS) > 16384:
        _KEYS.clear()
    _KEYS[id(params)] = (params, key)
    return key


def resolve(decl: OpDeclaration, params: Params, where: str = "") -> dict[str, Any]:
    """One concrete value per C parameter of ``decl`` for ``params`` (ConfigError if bad)."""
    key = (id(decl), _params_key(params))
    hit = _CACHE.get(key)
    if hit is None or hit[0] is not decl:  # an id can be reused once a declaration is freed
        if len(_CACHE) > 4096:
            _CACHE.clear()
        hit = _CACHE[key] = (decl, _resolve(decl, params, where or f"{decl.source}: {decl.name}"))
    return hit[1]
