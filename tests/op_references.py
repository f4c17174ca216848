"""numpy references for the simulator's real-signature operators, written from the operators'
documented formulas (not from the simulator's C): torch's type promotion, float32 compute for
fp16/bf16/float, one rounding to the output dtype; float64 references with per-dtype tolerances
where the summation order is the kernel's own (reductions, matmul, norms, softmax).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
BOOL = np.dtype(np.bool_)
INTS = [np.dtype(t) for t in (np.uint8, np.int8, np.int16, np.int32, np.int64)]
FLOATS = [F16, BF16, F32, F64]
MATH_DTYPES = [BOOL, *INTS, *FLOATS, C64, C128]
HALF = (F16, BF16)


def category(dt: np.dtype) -> int:
    """0 bool, 1 integral, 2 floating, 3 complex."""
    dt = np.dtype(dt)
    if dt == BOOL:
        return 0
    if dt in INTS:
        return 1
    return 2 if dt in FLOATS else 3


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types over the 12 dtypes."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    ca, cb = category(a), category(b)
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        return C128 if hi == C64 and lo == F64 else hi
    if ca == 1:
        if np.dtype(np.uint8) in (a, b):
            other = b if a == np.uint8 else a
            return np.dtype(np.int16) if other == np.int8 else other
        return a if a.itemsize > b.itemsize else b
    if ca == 2:
        return F64 if F64 in (a, b) else F32
    return C128


def can_cast(src: np.dtype, dst: np.dtype) -> bool:
    return category(src) <= category(dst)


def promote_scalar(t: np.dtype, scalar_category: int) -> np.dtype:
    """tensor op wrapped-number scalar: promotes only across categories."""
    t = np.dtype(t)
    if scalar_category <= category(t):
        return t
    if scalar_category == 3:
        return C128 if t == F64 else C64
    return F32 if scalar_category == 2 else np.dtype(np.int64)


def to_out(v: np.ndarray, out: np.dtype) -> np.ndarray:
    """Store a computed value into out's dtype: half types through float32 (one rounding of a
    float32 value), integers wrapped, bool as v != 0, complex -> real keeps the real part."""
    out = np.dtype(out)
    if out == BOOL:
        return v != 0
    if v.dtype.kind == "c" and out.kind != "c":
        v = v.real
    with np.errstate(all="ignore"):  # overflow to inf and integer wrapping are intended
        return v.astype(F32).astype(out) if out in HALF else v.astype(out)


def binary(kind: str, x: np.ndarray, y, alpha, promoted: np.dtype, out: np.dtype) -> np.ndarray:
    """out = x + alpha * y (kind "add") or x * y ("mul"), computed as the documented kernels
    compute: float32 for fp16/bf16/float (rounded to the promoted type), float64, 64-bit
    wrapping integers, bool logic, complex in the promoted complex type."""
    c = category(promoted)
    y = np.asarray(y)
    if c == 0:
        xb, yb = x.astype(bool), y.astype(bool)
        r = (xb | (bool(alpha) & yb)) if kind == "add" else (xb & yb)
        return to_out(np.asarray(r), out)
    with np.errstate(all="ignore"):
        if c == 1:
            xi, yi = x.astype(np.int64), y.astype(np.int64)
            r = xi + np.int64(alpha) * yi if kind == "add" else xi * yi
            return to_out(np.asarray(r).astype(promoted), out)
        if promoted in (F16, BF16, F32):
            xf, yf = x.astype(F32), y.astype(F32)
            r = xf + F32.type(alpha) * yf if kind == "add" else xf * yf
            return to_out(np.asarray(r).astype(promoted).astype(F32), out)
        if promoted == F64:
            xd, yd = x.astype(F64), y.astype(F64)
            r = xd + F64.type(alpha) * yd if kind == "add" else xd * yd
            return to_out(np.asarray(r), out)
        xc, yc = x.astype(promoted), y.astype(promoted)
        r = xc + promoted.type(alpha) * yc if kind == "add" else xc * yc
        return to_out(np.asarray(r), out)


def tolerance(dt: np.dtype) -> tuple[float, float]:
    """(rtol, atol) for float64 references of float32-accumulated results stored as dt."""
    dt = np.dtype(dt)
    if dt == BF16:
        return 1.6e-2, 1e-2
    if dt == F16:
        return 2e-3, 1e-3
    if dt in (F32, C64):
        return 2e-5, 2e-5
    return 1e-12, 1e-12


def matmul(a: np.ndarray, b: np.ndarray, round_to: np.dtype | None = None) -> np.ndarray:
    """torch.matmul in float64 of the inputs (optionally first rounded to round_to)."""
    a64, b64 = a.astype(F32), b.astype(F32)
    if round_to is not None:
        a64, b64 = a64.astype(round_to).astype(F32), b64.astype(round_to).astype(F32)
    return np.matmul(a64.astype(F64), b64.astype(F64))


def softmax(x: np.ndarray, dim: int) -> np.ndarray:
    x = x.astype(F64)
    if x.ndim == 0:
        return np.ones_like(x)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def rms_norm(x: np.ndarray, gamma: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    xd = x.astype(F64)
    rstd = 1.0 / np.sqrt((xd * xd).mean(axis=axes, keepdims=True) + np.float32(eps))
    return xd * rstd * gamma.astype(F64), rstd


def layer_norm(x, g: int, w, b, eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    axes = tuple(range(x.ndim - g, x.ndim))
    xd = x.astype(F64)
    mean = xd.mean(axis=axes, keepdims=True)
    var = ((xd - mean) ** 2).mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + np.float32(eps))
    y = (xd - mean) * rstd
    if w is not None:
        y = y * w.astype(F64)
    if b is not None:
        y = y + b.astype(F64)
    return y, mean, rstd


def reduce_sum(x: np.ndarray, dims, keep: bool, dtype: np.dtype) -> np.ndarray:
    """torch.sum(x, dims, keepdim, dtype=dtype): x cast to dtype first, summed exactly
    (float64/complex128/int64 wrapping), then stored as dtype."""
    dtype = np.dtype(dtype)
    axes = tuple(range(x.ndim)) if not list(dims) else tuple(d % max(x.ndim, 1) for d in dims)
    if x.ndim == 0:
        axes = ()
    with np.errstate(all="ignore"):
        if dtype == BOOL:
            s = x.astype(bool).astype(np.int64).sum(axis=axes, keepdims=keep)
        elif category(dtype) == 1:
            xi = x.real if x.dtype.kind == "c" else x
            s = np.trunc(xi).astype(np.int64) if xi.dtype.kind == "f" else xi.astype(np.int64)
            s = s.astype(dtype).astype(np.int64).sum(axis=axes, keepdims=keep)
        elif category(dtype) == 3:
            s = x.astype(dtype).astype(C128).sum(axis=axes, keepdims=keep)
        else:
            xr = x.real if x.dtype.kind == "c" else x
            xr = xr.astype(F64) if dtype == F64 else xr.astype(F32).astype(dtype).astype(F64)
            s = xr.sum(axis=axes, keepdims=keep)
    return to_out(np.asarray(s), dtype)
