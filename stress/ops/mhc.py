"""``aclnnMhcPreSinkhorn`` and ``aclnnMhcPreSinkhornBackward`` (spec/acl-api.md §4).

Case parameters: ``B, S, N, C`` (x is (B, S, N, C)), ``dtype`` (bf16 | fp16), ``num_iters``,
``hc_eps``, ``norm_eps``; the forward also takes ``need_backward`` and ``hc_mult`` (default N).
The operator's constraints (N = 4, num_iters = 20, C % 128 = 0, 0 < C < 100000) are not checked
here: negative corpus cases rely on the operator rejecting them.

The backward's saved inputs (hPre, hcBeforeNorm, invRms, sumOut, normOut) come from running the
forward on the same backend, as a real caller does (``generate(..., forward=...)``); without a
backend (or for a case expected to fail) they come from the numpy reference. The incoming
gradients are seeded random, independent of the forward inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from stress.ops import _mhc_reference as ref
from stress.ops.spec import DTYPES, AttrArg, OpSpec, Param, Params, TensorArg, dtype_of

__all__ = ["MHC_PRE_SINKHORN", "MHC_PRE_SINKHORN_BACKWARD", "forward_host_inputs"]

_F32 = np.dtype(np.float32)


def _d(p: Params) -> int:
    return p["N"] * p["N"] + 2 * p["N"]


def _x_dtype(p: Params) -> np.dtype:
    return dtype_of(p["dtype"])


def _f32(_: Params) -> np.dtype:
    return _F32


def _bs(p: Params) -> tuple[int, int]:
    return p["B"], p["S"]


_COMMON_PARAMS = (
    Param("B", int, doc="batch", minimum=0),
    Param("S", int, doc="sequence length", minimum=0),
    Param("N", int, 4, "hyper-connection count (the operator requires 4)", minimum=0),
    Param("C", int, doc="channels (the operator requires C % 128 == 0)", minimum=0),
    Param("dtype", str, "bf16", "dtype of x / hin / gradHin / gradX", choices=tuple(DTYPES)),
    Param("num_iters", int, 20, "Sinkhorn iterations (the operator requires 20)", minimum=0),
    Param("hc_eps", float, 1e-6, "hcEps"),
    Param("norm_eps", float, 1e-6, "normEps (forward RMS norm)"),
)

_X = TensorArg("x", False, lambda p: (*_bs(p), p["N"], p["C"]), _x_dtype)
_PHI = TensorArg("phi", False, lambda p: (_d(p), p["N"] * p["C"]), _f32)
_ALPHA = TensorArg("alpha", False, lambda p: (3,), _f32)
_BIAS = TensorArg("bias", False, lambda p: (_d(p),), _f32)


def _saved(output: bool, present: Callable[[Params], bool] = lambda p: True) -> tuple:
    """hPre, hcBeforeNorm, invRms, sumOut, normOut: forward outputs, backward inputs."""
    two_t = lambda p: 2 * p["num_iters"]  # noqa: E731
    opt = output  # optional (may be NULL) only as forward outputs with need_backward=false
    return (
        TensorArg("hPre", output, lambda p: (*_bs(p), p["N"]), _f32, opt, present),
        TensorArg("hcBeforeNorm", output, lambda p: (*_bs(p), _d(p)), _f32, opt, present),
        TensorArg("invRms", output, lambda p: (*_bs(p), 1), _f32, opt, present),
        TensorArg("sumOut", output, lambda p: (two_t(p), *_bs(p), p["N"]), _f32, opt, present),
        TensorArg(
            "normOut", output, lambda p: (two_t(p), *_bs(p), p["N"], p["N"]), _f32, opt, present
        ),
    )


def _ref_kwargs(p: Params) -> dict:
    return {"num_iters": p["num_iters"], "hc_eps": p["hc_eps"], "norm_eps": p["norm_eps"]}


def forward_host_inputs(p: Params, seed: int) -> dict[str, np.ndarray]:
    """The forward's seeded inputs x, phi, alpha, bias."""
    return ref.make_inputs(p["B"], p["S"], p["N"], p["C"], _x_dtype(p), seed, num_iters=1)


def _forward_generate(p: Params, seed: int, **_: object) -> dict[str, np.ndarray]:
    return forward_host_inputs(p, seed)


def _forward_reference(p: Params, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = ref.forward(inputs["x"], inputs["phi"], inputs["alpha"], inputs["bias"], **_ref_kwargs(p))
    if not p["need_backward"]:
        out = {k: out[k] for k in ("hin", "hPost", "hRes")}
    return out


def _forward_tolerance(p: Params, output: str) -> tuple[float, float]:
    if output == "hin":
        return (1e-3, 1e-3) if _x_dtype(p) == DTYPES["fp16"] else (8e-3, 8e-3)
    return (1e-4, 1e-5)


MHC_PRE_SINKHORN = OpSpec(
    name="mhc_pre_sinkhorn",
    function="aclnnMhcPreSinkhorn",
    description="mHC pre-projection + Sinkhorn forward (hin, hPost, hRes and saved tensors)",
    params=(
        *_COMMON_PARAMS,
        Param("need_backward", bool, True, "also produce hPre..normOut for the backward"),
        Param("hc_mult", int, None, "hcMult attribute (default: N; the operator requires 4)"),
    ),
    args=(
        _X,
        _PHI,
        _ALPHA,
        _BIAS,
        AttrArg("hcMult", lambda p: p["N"] if p["hc_mult"] is None else p["hc_mult"]),
        AttrArg("numIters", lambda p: p["num_iters"]),
        AttrArg("hcEps", lambda p: p["hc_eps"]),
        AttrArg("normEps", lambda p: p["norm_eps"]),
        AttrArg("needBackward", lambda p: p["need_backward"]),
        TensorArg("hin", True, lambda p: (*_bs(p), p["C"]), _x_dtype),
        TensorArg("hPost", True, lambda p: (*_bs(p), p["N"]), _f32),
        TensorArg("hRes", True, lambda p: (*_bs(p), p["N"] * p["N"]), _f32),
        *_saved(True, lambda p: p["need_backward"]),
    ),
    generate=_forward_generate,
    reference=_forward_reference,
    tolerances=_forward_tolerance,
)

_SAVED_NAMES = ("hPre", "hcBeforeNorm", "invRms", "sumOut", "normOut")


def _backward_generate(
    p: Params,
    seed: int,
    *,
    forward: Callable[[OpSpec, Params, Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]
    | None = None,
    **_: object,
) -> dict[str, np.ndarray]:
    """Forward inputs + seeded incoming gradients + the forward's saved tensors.

    ``forward(spec, params, inputs)`` runs the forward operator on the backend; None uses the
    numpy reference (float32, like the device).
    """
    inputs = forward_host_inputs(p, seed)
    grads = ref.make_grads(p["B"], p["S"], p["N"], p["C"], _x_dtype(p), seed)
    fwd_params = {**p, "need_backward": True, "hc_mult": None}
    run = forward or (lambda spec, params, ins: spec.reference(params, ins))
    saved = run(MHC_PRE_SINKHORN, fwd_params, inputs)
    return {
        "gradHin": grads["grad_hin"],
        "gradHPost": grads["grad_hpost"],
        "gradHRes": grads["grad_hres"],
        **inputs,
        **{k: np.asarray(saved[k]) for k in _SAVED_NAMES},
    }


def _backward_reference(p: Params, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    return ref.backward(
        inputs["gradHin"],
        inputs["gradHPost"],
        inputs["gradHRes"],
        *(inputs[k] for k in ("x", "phi", "alpha", "bias", *_SAVED_NAMES)),
        hc_eps=p["hc_eps"],
    )


def _backward_tolerance(p: Params, output: str) -> tuple[float, float]:
    if output == "gradX":
        return (1e-3, 1e-3) if _x_dtype(p) == DTYPES["fp16"] else (1.6e-2, 8e-3)
    return (1e-3, 1e-4)


MHC_PRE_SINKHORN_BACKWARD = OpSpec(
    name="mhc_pre_sinkhorn_backward",
    function="aclnnMhcPreSinkhornBackward",
    description="gradients of the mHC pre-sinkhorn forward w.r.t. x, phi, alpha, bias",
    params=_COMMON_PARAMS,
    args=(
        TensorArg("gradHin", False, lambda p: (*_bs(p), p["C"]), _x_dtype),
        TensorArg("gradHPost", False, lambda p: (*_bs(p), p["N"]), _f32),
        TensorArg("gradHRes", False, lambda p: (*_bs(p), p["N"], p["N"]), _f32),
        _X,
        _PHI,
        _ALPHA,
        _BIAS,
        *_saved(False),
        AttrArg("hcEps", lambda p: p["hc_eps"]),
        TensorArg("gradX", True, lambda p: (*_bs(p), p["N"], p["C"]), _x_dtype),
        TensorArg("gradPhi", True, lambda p: (_d(p), p["N"] * p["C"]), _f32),
        TensorArg("gradAlpha", True, lambda p: (3,), _f32),
        TensorArg("gradBias", True, lambda p: (_d(p),), _f32),
    ),
    generate=_backward_generate,
    reference=_backward_reference,
    tolerances=_backward_tolerance,
    depends_on="mhc_pre_sinkhorn",
)
