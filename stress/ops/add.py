"""``aclnnAdd``: out = self + alpha * other, the control operator.

Case parameters: ``shape`` and ``other_shape`` (numpy-broadcast), ``dtype``/``other_dtype``
(float32, fp16, bf16, int32), ``out_dtype`` (default: the promoted type), ``alpha``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from stress.ops.spec import DTYPES, OpSpec, Param, Params, ScalarArg, TensorArg, dtype_of

__all__ = ["ADD", "promote"]

_F32, _I32 = np.dtype(np.float32), np.dtype(np.int32)


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch-style promotion among float32, fp16, bf16 and int32 (as aclnnAdd does)."""
    if a == b:
        return a
    if a == _I32:
        return b
    if b == _I32:
        return a
    return _F32  # fp16+bf16, or either with float32


def _self_dtype(p: Params) -> np.dtype:
    return dtype_of(p["dtype"])


def _other_dtype(p: Params) -> np.dtype:
    return dtype_of(p["other_dtype"] or p["dtype"])


def _out_dtype(p: Params) -> np.dtype:
    if p["out_dtype"]:
        return dtype_of(p["out_dtype"])
    return promote(_self_dtype(p), _other_dtype(p))


def _other_shape(p: Params) -> tuple[int, ...]:
    return tuple(p["shape"] if p["other_shape"] is None else p["other_shape"])


def _out_shape(p: Params) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(tuple(p["shape"]), _other_shape(p)))
    except ValueError:
        return tuple(p["shape"])  # not broadcastable: the operator must reject it (161002)


def _alpha_dtype(p: Params) -> np.dtype:
    return _I32 if promote(_self_dtype(p), _other_dtype(p)) == _I32 else _F32


def _generate(p: Params, seed: int, **_: object) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def draw(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        if dtype == _I32:
            return rng.integers(-1000, 1000, size=shape, dtype=np.int32)
        return rng.standard_normal(shape, dtype=np.float32).astype(dtype)

    return {
        "self": draw(tuple(p["shape"]), _self_dtype(p)),
        "other": draw(_other_shape(p), _other_dtype(p)),
    }


def _reference(p: Params, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    common = promote(_self_dtype(p), _other_dtype(p))
    if common == _I32:
        total = inputs["self"].astype(np.int64) + int(p["alpha"]) * inputs["other"].astype(np.int64)
        out = total.astype(np.int32)  # wraps like the device's int32 arithmetic
    else:
        a = inputs["self"].astype(np.float32)
        b = inputs["other"].astype(np.float32)
        out = a + np.float32(p["alpha"]) * b
    return {"out": out.astype(_out_dtype(p))}


def _tolerance(p: Params, output: str) -> tuple[float, float]:
    return {np.dtype(np.float16): (1e-3, 1e-3), DTYPES["bf16"]: (8e-3, 8e-3)}.get(
        _out_dtype(p), (1e-6, 1e-6)
    )


ADD = OpSpec(
    name="add",
    function="aclnnAdd",
    description="out = self + alpha * other (control operator)",
    params=(
        Param("shape", "shape", doc="shape of self"),
        Param("other_shape", "shape", None, "shape of other (default: shape)"),
        Param("dtype", str, "float32", "dtype of self", choices=tuple(DTYPES)),
        Param("other_dtype", str, None, "dtype of other (default: dtype)", choices=tuple(DTYPES)),
        Param("out_dtype", str, None, "dtype of out (default: promoted)", choices=tuple(DTYPES)),
        Param("alpha", (float, int), 1.0, "the scalar multiplying other"),
    ),
    args=(
        TensorArg("self", False, lambda p: tuple(p["shape"]), _self_dtype),
        TensorArg("other", False, _other_shape, _other_dtype),
        ScalarArg("alpha", _alpha_dtype, lambda p: p["alpha"]),
        TensorArg("out", True, _out_shape, _out_dtype),
    ),
    generate=_generate,
    reference=_reference,
    tolerances=_tolerance,
)
