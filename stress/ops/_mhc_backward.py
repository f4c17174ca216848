"""The mHC backward reference, ``aclnnMhcPreSinkhornBackward`` (re-exported by
:mod:`stress.ops._mhc_reference`, whose docstring gives the math and the eps placement)."""

from __future__ import annotations

from typing import Any

import numpy as np

from stress.ops._mhc_common import _check_shape, _float_array, _out_dtype, _params, _sigmoid

__all__ = ["backward"]


def backward(
    grad_hin: Any,
    grad_hpost: Any,
    grad_hres: Any,
    x: Any,
    phi: Any,
    alpha: Any,
    bias: Any,
    hPre: Any,
    hcBeforeNorm: Any,
    invRms: Any,
    sumOut: Any,
    normOut: Any,
    *,
    hc_eps: float = 1e-6,
    compute_dtype: Any = np.float32,
    kernel_eps: bool = False,
) -> dict[str, np.ndarray]:
    """Reference ``aclnnMhcPreSinkhornBackward``: gradX, gradPhi, gradAlpha, gradBias.

    Exact gradient of :func:`forward` by default; ``kernel_eps=True`` places eps like the
    A2/A3 kernel (see the module docstring).  ``grad_hres`` may be (B,S,N,N) or (B,S,N*N).
    gradX has grad_hin's dtype when that is bf16/fp16 (RNE), else ``compute_dtype``.
    With no tokens, gradX is empty and gradPhi/gradAlpha/gradBias are zero.
    """
    cd = np.dtype(compute_dtype)
    x = _float_array(x, "x")
    if x.ndim != 4:
        raise ValueError(f"x: expected 4-D (B, S, N, C), got shape {x.shape}")
    b, s, n, c = x.shape
    m, k, d = b * s, n * c, n * n + 2 * n
    phi_c, _, bias_c, a_vec = _params(phi, alpha, bias, n, c, cd)
    saved = _checked_saved(
        (b, s, n, c), grad_hin, grad_hpost, grad_hres, hPre, hcBeforeNorm, invRms, sumOut, normOut
    )
    grad_hin, grad_hpost, grad_hres = saved["gradHin"], saved["gradHPost"], saved["gradHRes"]
    t2 = saved["sumOut"].shape[0]

    eps = cd.type(hc_eps)
    zero = cd.type(0)
    extra = eps if kernel_eps else zero  # eps re-added to the already-eps'd stored sums
    soft_eps = zero if kernel_eps else eps  # normOut[0] - soft_eps is the softmax

    xf = x.reshape(m, k).astype(cd)
    gh = grad_hin.reshape(m, c).astype(cd)
    h_pre = saved["hPre"].reshape(m, n).astype(cd)
    hcbn = saved["hcBeforeNorm"].reshape(m, d).astype(cd)
    inv_rms = saved["invRms"].reshape(m).astype(cd)
    sum_out = saved["sumOut"].reshape(t2, m, n).astype(cd, copy=False)
    norm_out = saved["normOut"].reshape(t2, m, n, n).astype(cd, copy=False)

    nf = hcbn * inv_rms[:, None]
    z = nf * a_vec + bias_c

    # pre / post groups
    g_hpre = np.einsum("mnc,mc->mn", xf.reshape(m, n, c), gh)
    s_pre = _sigmoid(z[:, :n])
    s_post = _sigmoid(z[:, n : 2 * n])
    dz = np.empty((m, d), dtype=cd)
    dz[:, :n] = g_hpre * s_pre * (1 - s_pre)
    dz[:, n : 2 * n] = 2 * grad_hpost.reshape(m, n).astype(cd) * s_post * (1 - s_post)

    dz[:, 2 * n :] = _sinkhorn_backward(
        grad_hres.reshape(m, n, n).astype(cd), sum_out, norm_out, eps, extra, soft_eps
    ).reshape(m, n * n)

    grad_x, grad_phi, grad_alpha, grad_bias = _shared_tail(
        dz, nf, a_vec, inv_rms, hcbn, xf, phi_c, h_pre, gh, n
    )
    return {
        "gradX": grad_x.astype(_out_dtype(grad_hin.dtype, cd)).reshape(b, s, n, c),
        "gradPhi": grad_phi,
        "gradAlpha": grad_alpha,
        "gradBias": grad_bias,
    }


def _shared_tail(
    dz: np.ndarray,
    nf: np.ndarray,
    a_vec: np.ndarray,
    inv_rms: np.ndarray,
    hcbn: np.ndarray,
    xf: np.ndarray,
    phi_c: np.ndarray,
    h_pre: np.ndarray,
    gh: np.ndarray,
    n: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """From dz (the gradient of the pre-activations): gradX, gradPhi, gradAlpha, gradBias."""
    cd, (m, k) = dz.dtype, xf.shape
    grad_bias = dz.sum(axis=0)
    nf_dz = nf * dz
    grad_alpha = np.array(
        [nf_dz[:, :n].sum(), nf_dz[:, n : 2 * n].sum(), nf_dz[:, 2 * n :].sum()], dtype=cd
    )
    g_nf = dz * a_vec
    g_hcbn = g_nf * inv_rms[:, None]
    g_inv_rms = np.einsum("md,md->m", hcbn, g_nf)
    grad_phi = g_hcbn.T @ xf
    grad_x = g_hcbn @ phi_c
    grad_x -= (inv_rms**3 * g_inv_rms / cd.type(k))[:, None] * xf
    grad_x += (h_pre[:, :, None] * gh[:, None, :]).reshape(m, k)
    return grad_x, grad_phi, grad_alpha, grad_bias


def _checked_saved(
    shape: tuple[int, int, int, int],
    grad_hin: Any,
    grad_hpost: Any,
    grad_hres: Any,
    *saved_in: Any,
) -> dict[str, np.ndarray]:
    """The backward's gradients and saved forward tensors as float arrays, shapes checked."""
    b, s, n, c = shape
    names = ("hPre", "hcBeforeNorm", "invRms", "sumOut", "normOut")
    saved = {name: _float_array(v, name) for name, v in zip(names, saved_in, strict=True)}
    t2 = saved["sumOut"].shape[0] if saved["sumOut"].ndim == 4 else -1
    if t2 < 2 or t2 % 2:
        raise ValueError(f"sumOut: shape {saved['sumOut'].shape}, expected (2*T, B, S, N)")
    saved["gradHin"] = _float_array(grad_hin, "grad_hin")
    saved["gradHPost"] = _float_array(grad_hpost, "grad_hpost")
    saved["gradHRes"] = _float_array(grad_hres, "grad_hres")
    _check_shape(saved["gradHin"], (b, s, c), "grad_hin")
    _check_shape(saved["gradHPost"], (b, s, n), "grad_hpost")
    if saved["gradHRes"].shape != (b, s, n * n):
        _check_shape(saved["gradHRes"], (b, s, n, n), "grad_hres")
    d = n * n + 2 * n
    for name, want in (
        ("hPre", (b, s, n)),
        ("hcBeforeNorm", (b, s, d)),
        ("invRms", (b, s, 1)),
        ("sumOut", (t2, b, s, n)),
        ("normOut", (t2, b, s, n, n)),
    ):
        _check_shape(saved[name], want, name)
    return saved


def _sinkhorn_backward(
    g: np.ndarray, sum_out: np.ndarray, norm_out: np.ndarray, eps: Any, extra: Any, soft_eps: Any
) -> np.ndarray:
    """d loss / d z_res, (M, N, N): backwards through the row/column normalisations, then the
    softmax of the first step (``extra`` is eps re-added to the stored sums, kernel style)."""
    for t in range(norm_out.shape[0] // 2 - 1, 0, -1):
        y = norm_out[2 * t]
        col = (sum_out[2 * t + 1] + extra)[:, None, :]
        row = (sum_out[2 * t] + extra)[:, :, None]
        g1 = (g - (g * y).sum(axis=-2, keepdims=True) / col) / col
        g2 = g1 / row
        g = g2 - (g2 * y).sum(axis=-1, keepdims=True)
    y = norm_out[0]
    col = (sum_out[1] + eps)[:, None, :]
    g1 = (g - (g * y).sum(axis=-2, keepdims=True) / col) / col
    soft = y - soft_eps
    return soft * (g1 - (g1 * soft).sum(axis=-1, keepdims=True))
