"""A declared operator as the engine sees it: :func:`to_opspec` (signature + declaration).

A case's parameters are flat: its dimensions and dtype variables by name, plus overrides of
header parameters (``DeclaredCase.params()``). :func:`resolve` turns them into one concrete
value per C parameter (:class:`TensorValue`, tuples for arrays and lists, ``(value, dtype)`` for
scalars, ``None`` for NULL), cached per parameter set, and the OpSpec's argument callables read
from it. Inputs (and in-out tensors) are drawn in C order from one generator seeded with the
case's seed, each with its declared distribution; this is the hand-written ``add`` generator's
order and sampling, so a declared ``add`` yields the same bytes.

Without a declared reference, grading is baseline-vs-replay only (the OpSpec's reference
raises, which the recorder reports as "reference unavailable"). Tolerances are the declared
ones (``ulp`` becomes rtol = ulp * eps, atol = ulp * smallest normal of the output dtype), else
the hand-written ops' per-dtype defaults (fp16 1e-3, bf16 8e-3, otherwise 1e-6).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from stress.errors import ConfigError
from stress.ops.declaration import DTYPE_NAMES, OpDeclaration
from stress.ops.shape_expr import ShapeExprError, parse_dim
from stress.ops.spec import (
    REQUIRED,
    AttrArg,
    BoolArrayArg,
    DtypeArg,
    FloatArrayArg,
    IntArrayArg,
    OpSpec,
    Param,
    Params,
    ScalarArg,
    ScalarListArg,
    StringArg,
    TensorArg,
    TensorListArg,
)
from stress.ops.values import Distribution, parse_distribution

__all__ = ["TensorValue", "check_params", "corpus_cases", "resolve", "to_opspec"]

_ANY = (dict, list, int, float, bool, str)
_TENSOR_KEYS = {"shape", "dtype", "values"}
_INT_ATTRS = {"int64", "int32", "int16", "int8", "uint64", "uint32", "uint8"}


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
    clash = sorted(names & ({d.name for d in decl.dims} | {v.name for v in decl.dtypes}))
    if clash:
        raise ConfigError(
            f"{decl.source} [dims]/[dtypes], field '{clash[0]}': also a parameter "
            f"of {decl.function}; rename the dimension"
        )


def _dtype(value: Any, vars_: Mapping[str, str], at: str) -> np.dtype:
    name = vars_.get(value, value) if isinstance(value, str) else value
    if name not in DTYPE_NAMES:
        known = ", ".join([*vars_, *DTYPE_NAMES])
        raise ConfigError(f"{at}: unknown dtype or dtype variable {value!r}; use one of {known}")
    return DTYPE_NAMES[name]


def _dim(item: Any, dims: Mapping[str, int], at: str) -> int:
    try:
        value = parse_dim(item)(dims)
    except ShapeExprError as exc:
        raise ConfigError(
            f"{at}: {exc}; declared dimensions: {', '.join(dims) or 'none'}"
        ) from None
    if value < 0:
        raise ConfigError(f"{at}: {item!r} = {value}, a dimension must be >= 0")
    return value


def _tensor(raw: Any, dims, vars_, tensors, at: str) -> TensorValue:
    if not isinstance(raw, dict) or set(raw) - _TENSOR_KEYS or "shape" not in raw:
        raise ConfigError(
            f'{at}: expected a tensor table {{ shape = [...], dtype = "T", values = "normal" }}}}'
        )
    shape = raw["shape"]
    if isinstance(shape, str) and shape in tensors:
        dims_ = tensors[shape].shape
    elif isinstance(shape, list):
        dims_ = tuple(_dim(d, dims, f"{at}.shape") for d in shape)
    else:
        raise ConfigError(
            f"{at}.shape: expected a list of dims or the name of a tensor given "
            f"before it, got {shape!r}"
        )
    if "dtype" not in raw and isinstance(shape, str):
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
    vars_ = {v.name: p.get(v.name) or v.choices[0] for v in decl.dtypes if not v.of}
    for v in decl.dtypes:
        if v.of:
            vars_[v.name] = v.derive(vars_)
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


_CACHE: dict[tuple[int, str], dict[str, Any]] = {}


def resolve(decl: OpDeclaration, params: Params, where: str = "") -> dict[str, Any]:
    """One concrete value per C parameter of ``decl`` for ``params`` (ConfigError if bad)."""
    key = (id(decl), json.dumps(dict(params), sort_keys=True, default=str))
    hit = _CACHE.get(key)
    if hit is None:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        hit = _CACHE[key] = _resolve(decl, params, where or f"{decl.source}: {decl.name}")
    return hit


def _default_tolerance(dtype: np.dtype) -> tuple[float, float]:
    return {np.dtype(np.float16): (1e-3, 1e-3), DTYPE_NAMES["bf16"]: (8e-3, 8e-3)}.get(
        np.dtype(dtype), (1e-6, 1e-6)
    )


_ABSENT = TensorValue((0,), np.dtype(np.float32), Distribution("zeros"))  # a NULL tensor's


def _arg(decl: OpDeclaration, cp) -> Any:
    get: Callable[[Params], Any] = lambda p: resolve(decl, p)[cp.name]  # noqa: E731
    output, inout = cp.role == "output", cp.role == "inout"
    present = lambda p: get(p) is not None  # noqa: E731
    if cp.kind == "tensor":
        return TensorArg(
            cp.name,
            output,
            lambda p: (get(p) or _ABSENT).shape,
            lambda p: (get(p) or _ABSENT).dtype,
            cp.optional,
            present,
            inout,
        )
    if cp.kind == "tensor_list":
        return TensorListArg(
            cp.name,
            output,
            lambda p: tuple(t.shape for t in get(p) or ()),
            lambda p: tuple(t.dtype for t in get(p) or ()),
            cp.optional,
            present,
            inout,
        )
    if cp.kind == "scalar":
        return ScalarArg(cp.name, lambda p: get(p)[1], lambda p: get(p)[0])
    if cp.kind == "scalar_list":
        return ScalarListArg(
            cp.name,
            lambda p: tuple(s[1] for s in get(p) or ()),
            lambda p: None if get(p) is None else tuple(s[0] for s in get(p)),
        )
    simple = {
        "int_array": IntArrayArg,
        "float_array": FloatArrayArg,
        "bool_array": BoolArrayArg,
        "dtype": DtypeArg,
        "string": StringArg,
    }
    if cp.kind in simple:
        return simple[cp.kind](cp.name, get)
    return AttrArg(cp.name, get, cp.type)


def _params(decl: OpDeclaration) -> tuple[Param, ...]:
    out = [
        Param(
            d.name,
            int,
            REQUIRED if d.default is None else d.default,
            f"dimension in [{d.low}, {d.high}]",
            minimum=0,
        )
        for d in decl.dims
    ]
    out += [
        Param(v.name, str, v.choices[0], "dtype variable", choices=v.choices)
        for v in decl.dtypes
        if not v.of
    ]
    out += [
        Param(cp.name, _ANY, None, f"override of {cp.type} {cp.name} ({cp.role})")
        for cp in decl.signature.params
    ]
    return tuple(out)


def _generate(decl: OpDeclaration) -> Callable[..., dict[str, np.ndarray]]:
    def generate(p: Params, seed: int, **_: object) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        values = resolve(decl, p)
        out: dict[str, np.ndarray] = {}
        for cp in decl.signature.params:
            v = values[cp.name]
            if cp.role not in ("input", "inout") or v is None:
                continue
            if cp.kind == "tensor":
                out[cp.name] = v.values.draw(rng, v.shape, v.dtype)
            else:
                for i, t in enumerate(v):
                    out[f"{cp.name}[{i}]"] = t.values.draw(rng, t.shape, t.dtype)
        return out

    return generate


def _no_reference(p: Params, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    raise NotImplementedError("no reference declared: graded baseline-vs-replay only")


def _adapted(fn: Callable[..., Any], adapt: Callable[[Params], Params]) -> Callable[..., Any]:
    return lambda p, *args, **kwargs: fn(adapt(p), *args, **kwargs)


def to_opspec(
    decl: OpDeclaration,
    *,
    generate: Callable[..., dict[str, np.ndarray]] | None = None,
    reference: Callable[[Params, Mapping[str, np.ndarray]], dict[str, np.ndarray]] | None = None,
    tolerances: Callable[[Params, str], tuple[float, float]] | None = None,
    depends_on: str | None = None,
    adapt: Callable[[Params], Params] | None = None,
) -> OpSpec:
    """The OpSpec of ``decl``; Python generator/reference/tolerances may replace the declared.

    ``adapt`` maps the declared case parameters to those the given Python functions read (for
    a hand-written op whose parameter names differ from the header's)."""
    args = tuple(_arg(decl, cp) for cp in decl.signature.params)
    if adapt is not None:
        generate = generate and _adapted(generate, adapt)
        reference = reference and _adapted(reference, adapt)
        tolerances = tolerances and _adapted(tolerances, adapt)

    def declared_tolerance(p: Params, output: str) -> tuple[float, float]:
        name = output.split("[", 1)[0]
        value = resolve(decl, p)[name]
        dtype = (value[int(output[len(name) + 1 : -1])] if "[" in output else value).dtype
        tol = decl.tolerance_of(name)
        if tol is None:
            return _default_tolerance(dtype)
        if tol.ulp is not None and (dtype.kind == "f" or dtype == DTYPE_NAMES["bf16"]):
            info = ml_dtypes.finfo(dtype)
            return tol.ulp * float(info.eps), tol.ulp * float(info.smallest_normal)
        return tol.rtol, tol.atol

    return OpSpec(
        name=decl.name,
        function=decl.function,
        description=decl.description or f"{decl.function} (declared in {decl.source})",
        params=_params(decl),
        args=args,
        generate=generate or _generate(decl),
        reference=reference or _no_reference,
        tolerances=tolerances or declared_tolerance,
        depends_on=depends_on,
        signature=decl.signature,
    )


def corpus_cases(decl: OpDeclaration, spec: OpSpec | None = None) -> list:
    """The declaration's [[case]] tables as the engine's :class:`stress.corpus.Case` objects
    (a case without a seed gets the corpus's id-derived seed)."""
    from stress.corpus import Case, Expect, _default_seed  # the corpus imports the op catalogue

    spec = spec or to_opspec(decl)
    out = []
    for c in decl.cases:
        where = f"{decl.source}: case '{c.id}'"
        out.append(
            Case(
                id=c.id,
                op=spec.name,
                params=spec.parse_params(c.params(), where),
                seed=_default_seed(c.id) if c.seed is None else c.seed,
                source=decl.source,
                expect=None if c.expect is None else Expect(c.expect),
                description=c.description,
                spec=spec,
            )
        )
    return out
