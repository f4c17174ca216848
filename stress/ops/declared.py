"""A declared operator as the engine sees it: :func:`to_opspec` (signature + declaration).

A case's parameters are flat: its dimensions and dtype variables by name, plus overrides of
header parameters (``DeclaredCase.params()``). :func:`resolve` turns them into one concrete
value per C parameter (:class:`TensorValue`, tuples for arrays and lists, ``(value, dtype)`` for
scalars, ``None`` for NULL), cached per parameter set, and the OpSpec's argument callables read
from it. Inputs (and in-out tensors) are drawn in C order from one generator seeded with the
case's seed, each with its declared distribution, in one fixed order and sampling: the same
declaration and seed always yield the same bytes.

Without a declared reference, grading is baseline-vs-replay only (the OpSpec's reference
raises, which the recorder reports as "reference unavailable"). Tolerances are the declared
ones (``ulp`` becomes rtol = ulp * eps, atol = ulp * smallest normal of the output dtype), else
per-dtype defaults (fp16 1e-3, bf16 8e-3, otherwise 1e-6).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import ml_dtypes
import numpy as np

from stress.ops import spec
from stress.ops.declaration import DTYPE_NAMES, OpDeclaration
from stress.ops.gradlink import UPSTREAM_SPAWN_KEY, linked_inputs
from stress.ops.references import BUILT_IN_PREFIX, check_reference, load_reference
from stress.ops.resolve import TensorValue, check_params, resolve
from stress.ops.spec import REQUIRED, OpSpec, Param, Params
from stress.ops.values import Distribution

__all__ = ["TensorValue", "check_params", "resolve", "to_opspec"]

_ANY = (dict, list, int, float, bool, str)


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
        return spec.TensorArg(
            cp.name,
            output,
            lambda p: (get(p) or _ABSENT).shape,
            lambda p: (get(p) or _ABSENT).dtype,
            cp.optional,
            present,
            inout,
        )
    if cp.kind == "tensor_list":
        return spec.TensorListArg(
            cp.name,
            output,
            lambda p: tuple(t.shape for t in get(p) or ()),
            lambda p: tuple(t.dtype for t in get(p) or ()),
            cp.optional,
            present,
            inout,
        )
    if cp.kind == "scalar":
        return spec.ScalarArg(cp.name, lambda p: get(p)[1], lambda p: get(p)[0])
    if cp.kind == "scalar_list":
        return spec.ScalarListArg(
            cp.name,
            lambda p: tuple(s[1] for s in get(p) or ()),
            lambda p: None if get(p) is None else tuple(s[0] for s in get(p)),
        )
    simple = {
        "int_array": spec.IntArrayArg,
        "float_array": spec.FloatArrayArg,
        "bool_array": spec.BoolArrayArg,
        "dtype": spec.DtypeArg,
        "string": spec.StringArg,
    }
    if cp.kind in simple:
        return simple[cp.kind](cp.name, get)
    return spec.AttrArg(cp.name, get, cp.type)


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
        Param(s.name, "shape", REQUIRED if s.default is None else None,
              f"shape (default: {s.default})" if s.default else "shape")
        for s in decl.shapes
    ]  # fmt: skip
    out += [
        Param(v.name, v.kind, None if v.default_dim else v.default,
              f"variable (default: {v.default_dim or v.default})")
        for v in decl.vars
    ]  # fmt: skip
    out += [
        Param(v.name, str, None if v.default else v.choices[0],
              f"dtype variable (default: {v.default})" if v.default else "dtype variable",
              choices=v.choices)
        for v in decl.dtypes
        if not v.derived
    ]  # fmt: skip
    out += [
        Param(cp.name, _ANY, None, f"override of {cp.type} {cp.name} ({cp.role})")
        for cp in decl.signature.params
    ]
    return tuple(out)


def _generate(decl: OpDeclaration) -> Callable[..., dict[str, np.ndarray]]:
    link = decl.gradcheck  # a backward: the forward provides its saved inputs (ops/gradlink.py)

    def generate(p: Params, seed: int, *, forward=None, **_: object) -> dict[str, np.ndarray]:
        key = (UPSTREAM_SPAWN_KEY,) if link is not None else ()
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))
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
        if link is not None:
            from stress import ops

            out.update(linked_inputs(decl, ops.get(decl.name), p, seed, forward))
        return out

    return generate


def _no_reference(p: Params, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    raise NotImplementedError("no reference declared: graded baseline-vs-replay only")


def _pointer(decl: OpDeclaration, field: str) -> Callable[..., Any] | None:
    """The declaration's ``[op] <field> = "module:function"``, called as
    ``function(values, ...)`` where ``values`` holds the case's parameters and, over them, its
    resolved C parameter values (imported on first use; an import failure is a one-line
    ConfigError naming the field)."""
    target = getattr(decl, field)
    if target is None:
        return None
    check_reference(target, decl.source, field)  # data never imports code on its own say
    found: list[Callable[..., Any]] = []
    if not target.startswith(BUILT_IN_PREFIX):  # a user's module: imported (and failing) now
        found.append(load_reference(target, decl.source, field))

    def call(p: Params, *args: Any, **kwargs: Any) -> Any:
        if not found:
            found.append(load_reference(target, decl.source, field))
        return found[0]({**p, **resolve(decl, p)}, *args, **kwargs)

    return call


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
    functions written against parameter names other than the header's)."""
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
        generate=generate or _pointer(decl, "generate") or _generate(decl),
        reference=reference or _pointer(decl, "reference") or _no_reference,
        tolerances=tolerances or _pointer(decl, "tolerance_function") or declared_tolerance,
        depends_on=depends_on or decl.depends_on,
        signature=decl.signature,
        check=lambda p, where: resolve(decl, p, where) and None,
        not_repeatable=decl.not_repeatable,
        variant_rules=decl.variant_rules,
    )
