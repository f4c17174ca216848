"""Shared pieces of the mHC numpy references (:mod:`stress.ops._mhc_reference`): dtype and
shape checks, the parameter layout, the sigmoid."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

_LOW_PRECISION = (np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16))
_FLOATS = (*_LOW_PRECISION, np.dtype(np.float32), np.dtype(np.float64))


def _sigmoid(v: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-v))


def _float_array(a: Any, name: str) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype not in _FLOATS:
        raise ValueError(f"{name}: dtype {a.dtype} not supported (bf16, fp16, fp32 or fp64)")
    return a


def _check_shape(a: np.ndarray, shape: tuple[int, ...], name: str) -> None:
    if a.shape != shape:
        raise ValueError(f"{name}: shape {a.shape}, expected {shape}")


def _params(
    phi: Any, alpha: Any, bias: Any, n: int, c: int, cd: np.dtype
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Check phi/alpha/bias and return them in ``cd`` plus the per-column alpha vector."""
    d = n * n + 2 * n
    phi = _float_array(phi, "phi")
    alpha = _float_array(alpha, "alpha")
    bias = _float_array(bias, "bias")
    _check_shape(phi, (d, n * c), "phi")
    _check_shape(alpha, (3,), "alpha")
    _check_shape(bias, (d,), "bias")
    alpha_c = alpha.astype(cd)
    a_vec = np.repeat(alpha_c, (n, n, n * n))
    return phi.astype(cd), alpha_c, bias.astype(cd), a_vec


def _out_dtype(like: np.dtype, cd: np.dtype) -> np.dtype:
    return like if like in _LOW_PRECISION else cd
