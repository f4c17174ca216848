"""The mHC operators' inputs, numpy reference and tolerances, which their declarations
(stress/ops/declarations/mhc_pre_sinkhorn*.toml) point at; the math is in _mhc_reference.py.

Every function takes ``values``: the case's parameters (``B, S, N, C``, ``dtype``,
``num_iters``, ``hc_eps``, ``norm_eps``; the forward's ``need_backward``, ``hc_mult``) and,
over them, the resolved C parameters. The backward's saved inputs (hPre, hcBeforeNorm, invRms,
sumOut, normOut) come from running the forward on the same backend, as a real caller does
(``forward=...``); without a backend (or for a case expected to fail) from the numpy
reference. The incoming gradients are seeded random, independent of the forward inputs.

``MHC_PRE_SINKHORN`` and ``MHC_PRE_SINKHORN_BACKWARD`` are the declared OpSpecs from the
catalogue (looked up on first use).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from stress.ops import _mhc_reference as ref
from stress.ops.spec import DTYPES, OpSpec, Params, dtype_of

__all__ = [
    "backward_generate",
    "backward_reference",
    "backward_tolerance",
    "forward_generate",
    "forward_host_inputs",
    "forward_reference",
    "forward_reference_f64",
    "forward_tolerance",
]

_SAVED_NAMES = ("hPre", "hcBeforeNorm", "invRms", "sumOut", "normOut")
_CASE = ("B", "S", "N", "C", "dtype", "num_iters", "hc_eps", "norm_eps")
_SPECS = {
    "MHC_PRE_SINKHORN": "mhc_pre_sinkhorn",
    "MHC_PRE_SINKHORN_BACKWARD": "mhc_pre_sinkhorn_backward",
}


def __getattr__(name: str) -> OpSpec:
    if name in _SPECS:
        from stress import ops

        return ops.get(_SPECS[name])
    raise AttributeError(name)


def _x_dtype(p: Params) -> np.dtype:
    return dtype_of(p["dtype"])


def _ref_kwargs(p: Params) -> dict:
    return {"num_iters": p["num_iters"], "hc_eps": p["hc_eps"], "norm_eps": p["norm_eps"]}


def forward_host_inputs(p: Params, seed: int) -> dict[str, np.ndarray]:
    """The forward's seeded inputs x, phi, alpha, bias."""
    return ref.make_inputs(p["B"], p["S"], p["N"], p["C"], _x_dtype(p), seed, num_iters=1)


def forward_generate(values: Params, seed: int, **_: object) -> dict[str, np.ndarray]:
    return forward_host_inputs(values, seed)


def forward_reference(values: Params, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = ref.forward(
        inputs["x"], inputs["phi"], inputs["alpha"], inputs["bias"], **_ref_kwargs(values)
    )
    if not values["need_backward"]:
        out = {k: out[k] for k in ("hin", "hPost", "hRes")}
    return out


def forward_tolerance(values: Params, output: str) -> tuple[float, float]:
    if output == "hin":
        return (1e-3, 1e-3) if _x_dtype(values) == DTYPES["fp16"] else (8e-3, 8e-3)
    return (1e-4, 1e-5)


def backward_generate(
    values: Params,
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
    from stress import ops

    fwd = ops.get("mhc_pre_sinkhorn")
    inputs = forward_host_inputs(values, seed)
    grads = ref.make_grads(values["B"], values["S"], values["N"], values["C"], _x_dtype(values),
                           seed)  # fmt: skip
    fwd_params = fwd.parse_params(
        {**{k: values[k] for k in _CASE}, "need_backward": True}, "the backward's forward"
    )
    run = forward or (lambda spec, params, ins: spec.reference(params, ins))
    saved = run(fwd, fwd_params, inputs)
    return {
        "gradHin": grads["grad_hin"],
        "gradHPost": grads["grad_hpost"],
        "gradHRes": grads["grad_hres"],
        **inputs,
        **{k: np.asarray(saved[k]) for k in _SAVED_NAMES},
    }


def backward_reference(values: Params, inputs: Mapping[str, np.ndarray]) -> dict[str, Any]:
    return ref.backward(
        inputs["gradHin"],
        inputs["gradHPost"],
        inputs["gradHRes"],
        *(inputs[k] for k in ("x", "phi", "alpha", "bias", *_SAVED_NAMES)),
        hc_eps=values["hc_eps"],
    )


def backward_tolerance(values: Params, output: str) -> tuple[float, float]:
    if output == "gradX":
        return (1e-3, 1e-3) if _x_dtype(values) == DTYPES["fp16"] else (1.6e-2, 8e-3)
    return (1e-3, 1e-4)


def forward_reference_f64(values: Params, inputs: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The forward in float64 (the gradient check's finite differences)."""
    f8 = np.float64
    return ref.forward(
        *(np.asarray(inputs[k], f8) for k in ("x", "phi", "alpha", "bias")),
        **_ref_kwargs(values),
        compute_dtype=f8,
    )
