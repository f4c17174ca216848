"""Finite-difference check of ``aclnnMhcPreSinkhornBackward``: ``aclnn-stress gradcheck``.

DESIGN item 3 ("gradient drift"): for large ``M*K`` the backward's gradients were seen to differ
from a finite-difference (FD) gradient of the forward by ~2e-2, sometimes with the opposite sign,
while FD converged smoothly as eps went 0.2 -> 0.005. This module automates that check.

The loss is the fixed random scalar ``L = sum(gradHin*hin) + sum(gradHPost*hPost) +
sum(gradHRes*hRes)`` whose weights (:func:`stress.ops._mhc_reference.make_grads`, seeded) are
exactly the incoming gradients handed to the backward, so the backward's gradX/gradPhi/gradAlpha/
gradBias are dL/dx, dL/dphi, dL/dalpha, dL/dbias. For each chosen element ``theta`` and each step
``h`` of the sweep (default 0.2, 0.1, 0.05, 0.02, 0.01, 0.005) the central difference is
``f(h) = (L(theta + h) - L(theta - h)) / (2 h)``, evaluated

* ``fd="reference"``: through the numpy forward in float64, with x (its bf16/fp16 values exactly),
  phi, alpha and bias promoted to float64. Loss differences are computed as
  ``loss(out(+h) - out(-h))`` (L is linear in the outputs), and for an element of ``x`` only its
  token is re-evaluated (tokens are independent; exact, tested against the full forward).
* ``fd="backend"``: through the backend's forward operator. The perturbed input is rounded to its
  device dtype (x is bf16/fp16, phi/alpha/bias fp32), so the step actually applied is
  ``h_eff = (round(theta + h) - round(theta - h)) / 2``; that step is used and reported (a step
  that rounds away entirely is dropped).

The gradient under test ``g`` comes from the backward operator on the backend, run on the saved
tensors of the backend's forward (``backward="backend"``), or from the numpy reference backward
in float32 (``backward="reference"``), or from any callable (a test double).

Classification (:func:`classify`), with the steps sorted from largest to smallest:

1. *Noise*. Each FD value carries rounding noise ``n(h) = q / (2 h)`` where ``q`` is the loss
   quantum: float64 reference ``q = 2**-53 * sum|terms of L touched by the element|``; backend
   ``q = sqrt(sum (w * out * u)**2)`` over the touched outputs, with ``u`` = 2**-8 (bf16 hin),
   2**-11 (fp16 hin) and 2**-19 for fp32 outputs (32 ulp: the forward's fp32 arithmetic, not
   just the final rounding). Round-to-nearest leaves an error of std ~0.4 u|v|; two independent
   evaluations and the division by 2h give ~0.28 q / h, so ``q / 2h`` is a deliberate ~2x
   overestimate. This is the *noise floor* that is printed. (bf16 keeps 8 significant bits, so
   its unit roundoff is 2**-8; fp16 keeps 11: 2**-11.)
2. *Richardson*. For consecutive steps ``h1 > h2``, ``R = f(h2) + (f(h2) - f(h1)) h2^2 /
   (h1^2 - h2^2)`` removes the O(h^2) term of the central difference. Its truncation error is
   estimated by the difference to the previous Richardson value (``|f(h2) - f(h1)|`` for the
   first pair), its noise ``sigma`` by propagating ``n(h)`` through the linear combination.
   The estimate ``f*`` is the Richardson value minimising ``t + K*sigma``.
3. ``unconverged`` when the chosen value's truncation estimate is not explained by noise and is
   not small: ``t > K*sigma_t + SETTLE_RTOL * max(|f*|, S)``, with ``sigma_t`` the noise of that
   difference and ``S`` the RMS of the element's gradient block (:func:`block_scale`: all of
   gradX; the pre, post or res group of gradPhi rows / gradBias; the gradAlpha element itself;
   the groups differ in magnitude by ~10x). The sequence does not settle.
4. ``biased`` when converged and ``|f* - g| > K*(sigma + t) + tol``, with the backward's own
   precision ``tol = rtol * max(|g|, S)``: rtol = 1e-3 for the fp32 outputs gradPhi, gradAlpha,
   gradBias and ``max(1e-3, 2u)`` for gradX (2**-7 for bf16: twice its worst-case rounding,
   1e-3 for fp16). ``sign_flip`` when
   f* and g have opposite signs and both exceed that threshold.
5. ``agrees`` otherwise.

A row whose threshold ``K*(sigma + t) + tol`` exceeds ``DRIFT_REL = 2e-2`` of ``max(|g|, S)``
is flagged *noise-limited*: whatever its verdict, the FD could not have seen an error the size of
DESIGN item 3 there (typical of x and pre-group elements through a bf16 device forward). The
report's ``resolves`` column is that threshold relative to ``max(|g|, S)``.

Constants. ``K = 3``: three standard deviations of the estimated FD error. ``rtol = 1e-3``: an
honest fp32 backward is within ~1e-5 of the exact gradient relative to S (the A2/A3 kernel's eps
placement adds ~25*hc_eps = 2.5e-5; single small elements can differ by ~1e-3 of their *own*
value, which the ``max(|g|, S)`` floor absorbs), while the drift of DESIGN item 3 (~1e-2..2e-2
relative) is 10-20x above it for any element with ``|g| >= S/2``. Through the float64 reference
``sigma`` and ``t`` are ~1e-9 relative, so tol decides. Through a bf16 device forward the noise
floor of elements feeding ``hin`` (pre group, x) is of the order of a few 1e-2 of the gradient on
a large shape: the check then cannot resolve a 2e-2 drift there and says so by printing the
floor instead of calling it biased. ``SETTLE_RTOL = 1e-2``: a sequence whose best extrapolation
still moves by more than 1 % of the gradient scale beyond noise is not trusted.

Exit codes of the command: 0 no element biased, 1 some element biased, 2 bad options or
environment (e.g. the backend lacks the operator).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from stress.errors import ConfigError
from stress.ops import _mhc_reference as ref
from stress.ops.mhc import MHC_PRE_SINKHORN, MHC_PRE_SINKHORN_BACKWARD, forward_host_inputs
from stress.ops.spec import Params, dtype_of

__all__ = [
    "DEFAULT_EPS",
    "DRIFT_REL",
    "K_SIGMA",
    "RTOL_FP32",
    "SETTLE_RTOL",
    "TENSORS",
    "Classification",
    "Element",
    "ElementResult",
    "GradcheckResult",
    "add_cli",
    "backward_rtol",
    "block_scale",
    "classify",
    "gradcheck",
    "noise_per_step",
    "parse_element",
    "parse_eps",
    "sample_elements",
    "tensor_shapes",
]

DEFAULT_EPS: tuple[float, ...] = (0.2, 0.1, 0.05, 0.02, 0.01, 0.005)
TENSORS: tuple[str, ...] = ("x", "phi", "alpha", "bias")
GRAD_OF = {"x": "gradX", "phi": "gradPhi", "alpha": "gradAlpha", "bias": "gradBias"}

K_SIGMA = 3.0
RTOL_FP32 = 1e-3
SETTLE_RTOL = 1e-2
DRIFT_REL = 2e-2  # the drift of DESIGN item 3; a row that cannot resolve it is noise-limited
NOISE_FACTOR = 0.5  # n(h) = NOISE_FACTOR * q / h

AGREES, BIASED, UNCONVERGED = "agrees", "biased", "unconverged"
VERDICTS = (AGREES, BIASED, UNCONVERGED)

_SAMPLE_SPAWN_KEY = 2  # make_inputs uses default_rng(seed), make_grads spawn_key (1,)
_F8 = np.float64
_BF16 = np.dtype(ml_dtypes.bfloat16)
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_OUTPUTS = ("hin", "hPost", "hRes")
_GRAD_FOR_OUTPUT = {"hin": "grad_hin", "hPost": "grad_hpost", "hRes": "grad_hres"}
# unit roundoff of an output as the backend forward produces it (fp32: 32 ulp, see the docstring)
_UNIT = {_BF16: 2.0**-8, _F16: 2.0**-11, _F32: 2.0**-19}
_U64 = 2.0**-53

ProgressFn = Callable[[int, int, str], None]
BackwardFn = Callable[[Params, Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]


# --------------------------------------------------------------------------------------------
# elements


@dataclass(frozen=True, order=True)
class Element:
    """One scalar input of the forward: ``tensor`` in :data:`TENSORS`, ``index`` into it."""

    tensor: str
    index: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.tensor}[{','.join(map(str, self.index))}]"


def tensor_shapes(params: Params) -> dict[str, tuple[int, ...]]:
    """Shapes of x, phi, alpha, bias for mHC case parameters."""
    b, s, n, c = params["B"], params["S"], params["N"], params["C"]
    d = n * n + 2 * n
    return {"x": (b, s, n, c), "phi": (d, n * c), "alpha": (3,), "bias": (d,)}


_ELEMENT_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s*\[\s*([^\]]*)\]\s*$")


def parse_element(text: str, shapes: Mapping[str, tuple[int, ...]]) -> Element:
    """Parse ``"phi[12,2048]"`` against ``shapes``; ConfigError naming ``--element`` if bad."""
    where = f"--element {text!r}"
    m = _ELEMENT_RE.match(text)
    if not m:
        raise ConfigError(
            f"{where}: expected TENSOR[i,j,...] with TENSOR one of {', '.join(TENSORS)}, "
            "e.g. bias[8] or phi[12,2048]"
        )
    name, body = m.group(1), m.group(2)
    if name not in shapes:
        raise ConfigError(f"{where}: unknown tensor {name!r} (one of {', '.join(TENSORS)})")
    shape = shapes[name]
    parts = [p.strip() for p in body.split(",")] if body.strip() else []
    if not all(re.fullmatch(r"\d+", p) for p in parts):
        raise ConfigError(f"{where}: indices must be non-negative integers, got [{body}]")
    index = tuple(int(p) for p in parts)
    if len(index) != len(shape):
        raise ConfigError(
            f"{where}: {name} has rank {len(shape)} (shape {shape}), got {len(index)} "
            f"{'index' if len(index) == 1 else 'indices'}"
        )
    for axis, (i, dim) in enumerate(zip(index, shape, strict=True)):
        if i >= dim:
            raise ConfigError(
                f"{where}: index {i} out of range for axis {axis} of {name} (shape {shape})"
            )
    return Element(name, index)


def sample_elements(shapes: Mapping[str, tuple[int, ...]], k: int, seed: int) -> list[Element]:
    """``k`` distinct seeded random elements per tensor (fewer when a tensor is smaller).

    Drawn from ``SeedSequence(seed, spawn_key=(2,))``: independent of the inputs and gradients.
    """
    if k < 0:
        raise ConfigError(f"--sample: must be >= 0, got {k}")
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_SAMPLE_SPAWN_KEY,)))
    out: list[Element] = []
    for name in TENSORS:
        shape = shapes[name]
        size = math.prod(shape)
        picks = np.sort(rng.choice(size, size=min(k, size), replace=False)) if size else []
        out.extend(
            Element(name, tuple(int(i) for i in np.unravel_index(int(f), shape))) for f in picks
        )
    return out


def parse_eps(text: str | Sequence[float]) -> tuple[float, ...]:
    """``"0.2,0.1,0.05"`` (or numbers) -> distinct positive steps, largest first."""
    items = text.split(",") if isinstance(text, str) else list(text)
    try:
        values = [float(v) for v in items if not (isinstance(v, str) and not v.strip())]
    except ValueError:
        raise ConfigError(f"--eps {text!r}: expected comma-separated numbers") from None
    if len(values) < 2 or not all(math.isfinite(v) and v > 0 for v in values):
        raise ConfigError(f"--eps {text!r}: give at least two finite steps > 0")
    steps = tuple(sorted(set(values), reverse=True))
    if len(steps) < 2:
        raise ConfigError(f"--eps {text!r}: give at least two different steps")
    return steps


# --------------------------------------------------------------------------------------------
# classification (pure)


@dataclass(frozen=True)
class Classification:
    """What :func:`classify` decided for one element, with the numbers behind it."""

    verdict: str  # agrees | biased | unconverged
    estimate: float  # f*, the converged FD value (NaN when none)
    noise: float  # sigma: FD rounding noise of f* (the noise floor)
    truncation: float  # t: truncation estimate of f* from the sweep
    tolerance: float  # the backward's own precision
    allowed: float  # K*(sigma + t) + tolerance
    diff: float  # f* - g
    sign_flip: bool
    best_step: float  # the smaller step of the Richardson pair chosen (NaN when none)
    reason: str


def noise_per_step(q: float, steps: Sequence[float]) -> tuple[float, ...]:
    """FD rounding noise ``n(h) = NOISE_FACTOR * q / h`` for a loss quantum ``q``."""
    return tuple(NOISE_FACTOR * q / h if h > 0 else math.inf for h in steps)


def classify(
    steps: Sequence[float],
    fd: Sequence[float],
    backward: float,
    *,
    noise: Sequence[float] | float = 0.0,
    tolerance: float = 0.0,
    scale: float = 0.0,
    k: float = K_SIGMA,
) -> Classification:
    """Classify one element from its FD sweep (see the module docstring for the rule).

    ``steps`` and ``fd`` are the (effective) steps and FD values, in any order; a NaN value or a
    non-positive step is ignored, as is a repeated step. ``noise`` is the FD noise per step (a
    sequence) or one loss quantum ``q`` (a float, ``n(h) = q/2h``). ``tolerance`` is the
    backward's own precision at this element and ``scale`` the RMS of its gradient block.
    """
    g = float(backward)
    nz = noise_per_step(float(noise), steps) if isinstance(noise, int | float) else tuple(noise)
    if len(nz) != len(steps) or len(fd) != len(steps):
        raise ValueError("steps, fd and noise must have the same length")
    pts: dict[float, tuple[float, float]] = {}
    for h, f, n in sorted(zip(steps, fd, nz, strict=True), key=lambda t: -t[0]):
        if h > 0 and math.isfinite(h) and math.isfinite(f) and h not in pts:
            pts[h] = (float(f), float(n))
    nan = math.nan
    if not math.isfinite(g):
        return Classification(
            BIASED, nan, nan, nan, tolerance, nan, nan, False, nan,
            f"the backward's value {g} is not finite",
        )  # fmt: skip
    if len(pts) < 2:
        return Classification(
            UNCONVERGED, nan, nan, nan, tolerance, nan, nan, False, nan,
            f"only {len(pts)} usable FD step(s)",
        )  # fmt: skip
    hs = np.array(list(pts))
    fs = np.array([v[0] for v in pts.values()])
    ns = np.array([v[1] for v in pts.values()])

    def sigma(coef: np.ndarray) -> float:
        return float(np.sqrt(np.sum((coef * ns) ** 2)))

    best: tuple[float, int, float, float, float, float] | None = None
    prev = np.zeros(len(hs))
    prev[0] = 1.0  # the first Richardson value is compared with the plain f(h0)
    for i in range(1, len(hs)):
        w = hs[i - 1] ** 2 / (hs[i - 1] ** 2 - hs[i] ** 2)
        coef = np.zeros(len(hs))
        coef[i], coef[i - 1] = w, 1.0 - w
        if i == 1:
            dcoef = np.zeros(len(hs))
            dcoef[1], dcoef[0] = 1.0, -1.0
        else:
            dcoef = coef - prev
        value = float(coef @ fs)
        t = abs(float(dcoef @ fs))
        s, s_t = sigma(coef), sigma(dcoef)
        score = t + k * s
        if best is None or score < best[0]:
            best = (score, i, value, t, s, s_t)
        prev = coef
    assert best is not None
    _, i, est, t, s, s_t = best
    diff = est - g
    allowed = k * (s + t) + tolerance
    settle = k * s_t + SETTLE_RTOL * max(abs(est), scale)
    flip = est * g < 0 and min(abs(est), abs(g)) > allowed
    h = float(hs[i])
    if not t <= settle:  # also catches NaN/inf
        return Classification(
            UNCONVERGED, est, s, t, tolerance, allowed, diff, False, h,
            f"FD does not settle: extrapolations move by {t:.3g} > {settle:.3g} "
            f"(noise {k:g}*{s_t:.3g} + {SETTLE_RTOL:g}*scale)",
        )  # fmt: skip
    if not abs(diff) <= allowed:  # NaN-safe
        reason = f"|f*-g| = {abs(diff):.3g} > {allowed:.3g}"
        return Classification(BIASED, est, s, t, tolerance, allowed, diff, flip, h, reason)
    reason = f"|f*-g| = {abs(diff):.3g} <= {allowed:.3g}"
    return Classification(AGREES, est, s, t, tolerance, allowed, diff, False, h, reason)


def block_scale(el: Element, grad: np.ndarray, n: int) -> float:
    """RMS of the block of ``grad`` (the element's gradient tensor) the element belongs to.

    x: all of gradX. phi rows and bias entries: their column group (pre ``[0, N)``, post
    ``[N, 2N)``, res ``[2N, N*N+2N)``), whose magnitudes differ by an order of magnitude (the pre
    group carries gradHin through all C channels). alpha: the element itself (one per group).
    Non-finite entries (a garbage output) are left out.
    """
    g = np.asarray(grad, _F8)
    if el.tensor == "alpha":
        g = g[el.index[0] : el.index[0] + 1]
    elif el.tensor in ("phi", "bias"):
        j = el.index[0]
        lo, hi = (0, n) if j < n else (n, 2 * n) if j < 2 * n else (2 * n, n * n + 2 * n)
        g = g[lo:hi]
    g = g[np.isfinite(g)]
    return float(np.sqrt(np.mean(g**2))) if g.size else 0.0


def backward_rtol(tensor: str, x_dtype: np.dtype) -> float:
    """Relative precision of the backward's output for ``tensor`` (see the module docstring)."""
    if tensor == "x" and x_dtype in _UNIT and x_dtype != _F32:
        return max(RTOL_FP32, 2 * _UNIT[np.dtype(x_dtype)])
    return RTOL_FP32


# --------------------------------------------------------------------------------------------
# loss evaluation


def _affected(el: Element, n: int) -> tuple[tuple[str, ...], tuple[int, int] | None]:
    """Outputs an element can change, and its token (x) or None (all tokens)."""
    if el.tensor == "x":
        return _OUTPUTS, (el.index[0], el.index[1])
    col = el.index[0]  # bias[j], phi[j, k]; alpha[k] acts on a whole group
    group = col if el.tensor == "alpha" else (0 if col < n else 1 if col < 2 * n else 2)
    return (_OUTPUTS[group],), None


def _diff_outputs(plus: Mapping[str, np.ndarray], minus: Mapping[str, np.ndarray]) -> dict:
    return {k: np.asarray(plus[k], _F8) - np.asarray(minus[k], _F8) for k in _OUTPUTS}


class _Evaluator:
    """L(theta + delta) - L(theta - delta) for one element, and the loss quantum q."""

    name = ""
    note = ""

    def __init__(self, params: Params, inputs: Mapping[str, np.ndarray], grads: Mapping) -> None:
        self.params = params
        self.inputs = {k: np.asarray(v) for k, v in inputs.items()}
        self.grads = {k: np.asarray(v) for k, v in grads.items()}
        self._base: dict[str, np.ndarray] | None = None

    # subclasses: forward(values) -> outputs; dtype(tensor) -> dtype the value is rounded to
    def forward(self, values: Mapping[str, np.ndarray]) -> Mapping[str, np.ndarray]:
        raise NotImplementedError

    def dtype(self, tensor: str) -> np.dtype:
        raise NotImplementedError

    def values(self) -> dict[str, np.ndarray]:
        return self.inputs

    def steps(self, el: Element, h: float) -> tuple[Any, Any, float]:
        """(theta+h, theta-h) rounded to the evaluation dtype, and the effective step."""
        dt = self.dtype(el.tensor)
        v = float(self.values()[el.tensor][el.index])
        plus, minus = np.array(v + h).astype(dt), np.array(v - h).astype(dt)
        return plus, minus, (float(plus) - float(minus)) / 2

    def delta(self, el: Element, plus: Any, minus: Any) -> float:
        base = self.values()
        outs = []
        for value in (plus, minus):
            arr = base[el.tensor].copy()
            arr[el.index] = value
            outs.append(self.forward({**base, el.tensor: arr}))
        return ref.loss(_diff_outputs(*outs), self.grads)

    def base_outputs(self) -> Mapping[str, np.ndarray]:
        if self._base is None:
            self._base = self.forward(self.values())
        return self._base

    def quantum(self, el: Element) -> float:
        raise NotImplementedError

    def _terms(self, el: Element) -> Iterator[tuple[str, np.ndarray]]:
        """(output name, weight*output) over what the element touches, in float64."""
        outputs, token = _affected(el, self.params["N"])
        base = self.base_outputs()
        for o in outputs:
            w = np.asarray(self.grads[_GRAD_FOR_OUTPUT[o]], _F8)
            v = np.asarray(base[o], _F8).reshape(w.shape)
            if token is not None:
                w, v = w[token], v[token]
            yield o, w * v


class _ReferenceFD(_Evaluator):
    """The numpy forward in float64; x elements re-evaluate their token only."""

    name = "float64 reference forward"

    def __init__(self, params, inputs, grads, *, incremental: bool = True) -> None:
        super().__init__(params, inputs, grads)
        self.incremental = incremental
        self._values = {k: np.asarray(v, _F8) for k, v in self.inputs.items()}
        self._kw = {
            "num_iters": params["num_iters"],
            "hc_eps": params["hc_eps"],
            "norm_eps": params["norm_eps"],
            "compute_dtype": _F8,
        }

    def values(self) -> dict[str, np.ndarray]:
        return self._values

    def dtype(self, tensor: str) -> np.dtype:
        return np.dtype(_F8)

    def forward(self, values):
        return ref.forward(values["x"], values["phi"], values["alpha"], values["bias"], **self._kw)

    def delta(self, el: Element, plus: Any, minus: Any) -> float:
        if el.tensor != "x" or not self.incremental:
            return super().delta(el, plus, minus)
        b, s = el.index[:2]
        tok = (slice(b, b + 1), slice(s, s + 1))
        base = self.values()
        grads = {k: v[tok] for k, v in self.grads.items()}
        outs = []
        for value in (plus, minus):
            x = base["x"][tok].copy()
            x[(0, 0, *el.index[2:])] = value
            outs.append(self.forward({**base, "x": x}))
        return ref.loss(_diff_outputs(*outs), grads)

    def quantum(self, el: Element) -> float:
        return _U64 * sum(float(np.abs(t).sum()) for _, t in self._terms(el))


class _BackendFD(_Evaluator):
    """The backend's forward operator; inputs are rounded to their device dtype."""

    def __init__(self, params, inputs, grads, device: _Device) -> None:
        super().__init__(params, inputs, grads)
        self.device = device
        self.name = f"{device.kind} forward ({MHC_PRE_SINKHORN.function})"
        x_dt = dtype_of(params["dtype"])
        self.note = (
            f"x is {x_dt} on the device: x±h is rounded to {x_dt}, and the FD of x elements "
            "uses the effective step ((x+h)-(x-h))/2 actually applied (steps that round away "
            "are dropped)"
        )
        self._fwd_params = {**params, "need_backward": True, "hc_mult": None}

    def dtype(self, tensor: str) -> np.dtype:
        return np.dtype(self.inputs[tensor].dtype)

    def forward(self, values):
        return self.device.run(MHC_PRE_SINKHORN, self._fwd_params, values)

    def quantum(self, el: Element) -> float:
        base = self.base_outputs()
        total = 0.0
        for o, t in self._terms(el):
            u = _UNIT.get(np.dtype(base[o].dtype), 2.0**-19)
            total += float(np.sum((t * u) ** 2))
        return math.sqrt(total)


# --------------------------------------------------------------------------------------------
# the backend


class _Device:
    """A stream on device 0 of the backend (the process's one CANN runtime)."""

    def __init__(self, backend: str | None, functions: Sequence[str]) -> None:
        from stress import acl

        rt = acl.runtime(backend)
        self.kind = rt.backend.kind
        missing = [f for f in functions if not rt.api.has(f)]
        if missing:
            fix = (
                "this simulator build lacks the mHC kernels (rebuild: aclnn-stress sim build)"
                if self.kind == "sim"
                else "use a CANN release with the mHC operators"
            )
            raise ConfigError(
                f"the {self.kind} backend ({rt.backend.root}) does not export "
                f"{', '.join(missing)}: {fix}, or check with --backward reference "
                "(and --fd reference) meanwhile"
            )
        self.context = rt.device(0).default_context
        self.stream = self.context.create_stream()

    def run(self, spec, params: Params, inputs: Mapping[str, np.ndarray]) -> dict:
        from stress.engine.call import run_once

        self.context.bind()
        return run_once(self.context, self.stream, spec, params, inputs)

    def close(self) -> None:
        self.context.bind()
        self.stream.close()


@contextmanager
def _device_session(backend: str | None, functions: Sequence[str]) -> Iterator[_Device | None]:
    if not functions:
        yield None
        return
    device = _Device(backend, functions)
    try:
        yield device
    finally:
        device.close()


# --------------------------------------------------------------------------------------------
# results


@dataclass
class ElementResult:
    """One row of the report."""

    element: Element
    backward: float  # g, the backward's value
    scale: float  # S, RMS of the gradient block holding the element (block_scale)
    steps: tuple[float, ...]  # effective steps (NaN where the step rounded away)
    fd: tuple[float, ...]  # FD value per step (NaN where none)
    quantum: float  # q, the loss quantum
    noise: tuple[float, ...]  # FD noise per step
    result: Classification

    @property
    def verdict(self) -> str:
        return self.result.verdict

    @property
    def resolution(self) -> float:
        """Smallest relative error ``|f*-g| / max(|g|, S)`` this row would call biased."""
        den = max(abs(self.backward), self.scale)
        return self.result.allowed / den if den > 0 else math.inf

    @property
    def noise_limited(self) -> bool:
        """True when FD noise/truncation hide a relative error of :data:`DRIFT_REL`."""
        return not self.resolution <= DRIFT_REL

    def to_json(self) -> dict[str, Any]:
        r = self.result
        return _jsonable(
            {
                "element": str(self.element),
                "tensor": self.element.tensor,
                "index": list(self.element.index),
                "backward": self.backward,
                "scale": self.scale,
                "steps": list(self.steps),
                "fd": list(self.fd),
                "loss_quantum": self.quantum,
                "noise_per_step": list(self.noise),
                "estimate": r.estimate,
                "noise": r.noise,
                "truncation": r.truncation,
                "tolerance": r.tolerance,
                "allowed": r.allowed,
                "diff": r.diff,
                "rel_diff": _rel(r.diff, self.backward, self.scale),
                "resolution": self.resolution,
                "noise_limited": self.noise_limited,
                "verdict": r.verdict,
                "sign_flip": r.sign_flip,
                "best_step": r.best_step,
                "reason": r.reason,
            }
        )


@dataclass
class GradcheckResult:
    """Everything one gradcheck run found; render with :mod:`stress.gradcheck.render`."""

    params: dict[str, Any]
    seed: int
    eps: tuple[float, ...]
    fd: str  # description of the FD evaluation
    backward: str  # description of the backward under test
    backend: str | None
    rows: list[ElementResult]
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    def count(self, verdict: str) -> int:
        return sum(r.verdict == verdict for r in self.rows)

    @property
    def sign_flips(self) -> int:
        return sum(r.result.sign_flip for r in self.rows)

    @property
    def verdict(self) -> str:
        """``biased`` if any element is, else ``unconverged`` if any is, else ``agrees``."""
        for v in (BIASED, UNCONVERGED):
            if self.count(v):
                return v
        return AGREES

    @property
    def exit_code(self) -> int:
        """1 when any element is biased, else 0."""
        return 1 if self.count(BIASED) else 0

    def to_json(self) -> dict[str, Any]:
        return _jsonable(
            {
                "command": "gradcheck",
                "op": MHC_PRE_SINKHORN_BACKWARD.name,
                "params": self.params,
                "seed": self.seed,
                "eps": list(self.eps),
                "fd": self.fd,
                "backward": self.backward,
                "backend": self.backend,
                "rule": {
                    "k_sigma": K_SIGMA,
                    "rtol_fp32": RTOL_FP32,
                    "settle_rtol": SETTLE_RTOL,
                    "noise_factor": NOISE_FACTOR,
                    "drift_rel": DRIFT_REL,
                },
                "notes": self.notes,
                "elements": [r.to_json() for r in self.rows],
                "summary": {
                    **{v: self.count(v) for v in VERDICTS},
                    "sign_flips": self.sign_flips,
                    "noise_limited": sum(r.noise_limited for r in self.rows),
                    "verdict": self.verdict,
                    "exit_code": self.exit_code,
                },
                "elapsed_s": self.elapsed_s,
            }
        )


def _rel(diff: float, g: float, scale: float) -> float:
    den = max(abs(g), scale)
    return diff / den if den > 0 else (0.0 if diff == 0 else math.inf)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float | np.floating):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


# --------------------------------------------------------------------------------------------
# the check


def _backward_gradients(
    p: Params, seed: int, backward: str | BackwardFn, device: _Device | None
) -> Mapping[str, np.ndarray]:
    spec = MHC_PRE_SINKHORN_BACKWARD
    if backward == "backend":
        assert device is not None
        host = spec.generate(p, seed, forward=device.run)
        return device.run(spec, p, host)
    host = spec.generate(p, seed)  # saved tensors from the float32 numpy forward
    fn = spec.reference if backward == "reference" else backward
    assert callable(fn)
    return fn(p, host)


def gradcheck(
    params: Mapping[str, Any],
    seed: int,
    elements: Sequence[str | Element] = (),
    *,
    sample: int = 0,
    eps: Sequence[float] = DEFAULT_EPS,
    fd: str = "reference",
    backward: str | BackwardFn = "backend",
    backend: str | None = None,
    progress: ProgressFn | None = None,
) -> GradcheckResult:
    """FD-check the mHC backward at ``elements`` (plus ``sample`` random ones per tensor).

    ``params``: mHC case parameters (B, S, N, C, dtype, num_iters, hc_eps, norm_eps), validated
    like a corpus case. ``fd``: ``"reference"`` (float64 numpy forward) or ``"backend"`` (the
    backend's forward operator). ``backward``: ``"backend"`` (the backward operator on the
    saved tensors of the backend's forward), ``"reference"`` (numpy, float32) or a callable
    ``(params, host_inputs) -> {"gradX", "gradPhi", "gradAlpha", "gradBias"}`` (host_inputs as
    the backward OpSpec generates them from the float32 numpy forward). ``backend``: the CANN
    to load (None: ``$STRESS_BACKEND``); it is loaded only when ``fd`` or ``backward`` needs it.
    ``progress(done, total, label)`` is called after each loss evaluation.
    """
    t0 = time.perf_counter()
    p = MHC_PRE_SINKHORN_BACKWARD.parse_params(dict(params), "gradcheck params")
    if fd not in ("reference", "backend"):
        raise ConfigError(f"--fd {fd!r}: use reference or backend")
    if isinstance(backward, str) and backward not in ("reference", "backend"):
        raise ConfigError(f"--backward {backward!r}: use backend or reference")
    if dtype_of(p["dtype"]) not in (_BF16, _F16):
        raise ConfigError(f"--dtype {p['dtype']}: the mHC operators take bf16 or fp16 x")
    steps = parse_eps(eps)
    shapes = tensor_shapes(p)
    chosen: list[Element] = []
    for e in elements:
        el = e if isinstance(e, Element) else parse_element(e, shapes)
        if isinstance(e, Element):
            parse_element(str(e), shapes)  # range check
        chosen.append(el)
    chosen.extend(sample_elements(shapes, sample, seed))
    chosen = list(dict.fromkeys(chosen))
    if not chosen:
        raise ConfigError("no elements to check: give --element TENSOR[i,...] or --sample K")

    functions: list[str] = []
    if fd == "backend" or backward == "backend":
        functions.append(MHC_PRE_SINKHORN.function)
    if backward == "backend":
        functions.append(MHC_PRE_SINKHORN_BACKWARD.function)
    x_dtype = dtype_of(p["dtype"])
    inputs = forward_host_inputs(p, seed)
    grads = ref.make_grads(p["B"], p["S"], p["N"], p["C"], x_dtype, seed)

    with _device_session(backend, functions) as device:
        grad_out = _backward_gradients(p, seed, backward, device)
        if backward == "backend":
            bwd_desc = f"{device.kind} {MHC_PRE_SINKHORN_BACKWARD.function}"  # type: ignore[union-attr]
        elif backward == "reference":
            bwd_desc = "numpy reference backward (float32)"
        else:
            bwd_desc = f"custom backward {getattr(backward, '__name__', repr(backward))}"
        evaluator: _Evaluator = (
            _BackendFD(p, inputs, grads, device)  # type: ignore[arg-type]
            if fd == "backend"
            else _ReferenceFD(p, inputs, grads)
        )
        total = 2 * len(steps) * len(chosen)
        done = 0
        rows: list[ElementResult] = []
        for el in chosen:
            gt = np.asarray(grad_out[GRAD_OF[el.tensor]], _F8)
            g = float(gt[el.index])
            scale = block_scale(el, gt, p["N"])
            q = evaluator.quantum(el)
            eff, vals = [], []
            for h in steps:
                plus, minus, h_eff = evaluator.steps(el, h)
                if h_eff > 0:
                    vals.append(evaluator.delta(el, plus, minus) / (2 * h_eff))
                    eff.append(h_eff)
                else:
                    vals.append(math.nan)
                    eff.append(math.nan)
                done += 2
                if progress is not None:
                    progress(done, total, str(el))
            noise = noise_per_step(q, [h if h > 0 else math.inf for h in eff])
            tol = backward_rtol(el.tensor, x_dtype) * max(abs(g), scale)
            res = classify(eff, vals, g, noise=noise, tolerance=tol, scale=scale, k=K_SIGMA)
            rows.append(ElementResult(el, g, scale, tuple(eff), tuple(vals), q, noise, res))

    notes = [evaluator.note] if evaluator.note and any(e.tensor == "x" for e in chosen) else []
    return GradcheckResult(
        params=dict(p),
        seed=seed,
        eps=steps,
        fd=evaluator.name,
        backward=bwd_desc,
        backend=device.kind if device is not None else None,
        rows=rows,
        notes=notes,
        elapsed_s=time.perf_counter() - t0,
    )


# --------------------------------------------------------------------------------------------
# CLI

_HELP = """\
Central finite differences of the fixed seeded loss
  L = sum(gradHin*hin) + sum(gradHPost*hPost) + sum(gradHRes*hRes)
(its weights are the incoming gradients handed to the backward) through the forward, for
chosen (--element) or sampled (--sample) elements of x, phi, alpha, bias, over an eps sweep,
against aclnnMhcPreSinkhornBackward's gradient.

Classification, per element (f(h): FD at step h; g: the backward's value; S: RMS of g's block:
gradX; the pre/post/res group of gradPhi rows or gradBias; the gradAlpha element itself):
  noise      n(h) = q/2h, q the loss quantum: float64 reference 2^-53*sum|terms of L|; backend
             forward sqrt(sum (w*out*u)^2) with u = 2^-8 bf16 hin, 2^-11 fp16, 2^-19 fp32 outputs
  estimate   f* = the Richardson extrapolation of two consecutive steps minimising t + 3*sigma
             (t: change from the previous extrapolation, sigma: propagated noise)
  unconverged  t > 3*sigma_t + 1e-2*max(|f*|, S)  (the sweep does not settle)
  biased     |f* - g| > 3*(sigma + t) + tol, tol = rtol*max(|g|, S), rtol = 1e-3 (fp32
             gradients), 2^-7 (bf16 gradX), 1e-3 (fp16 gradX); sign flip: opposite signs,
             both above that threshold
  agrees     otherwise
Columns: backward g, FD per step, FD* = f*, noise sigma, f*-g, rel = (f*-g)/max(|g|, S),
resolves (the smallest rel it would call biased: (3*(sigma + t) + tol)/max(|g|, S)), verdict.
A row is noise-limited when it resolves no better than 2e-2.
A bf16 device forward (--fd backend) makes FD of elements feeding hin noisy: the noise floor
is printed, and errors below it cannot be seen.

exit codes: 0 no element biased (unconverged ones are a warning), 1 some element biased,
            2 bad options or environment (e.g. the backend lacks the operator)
"""

_OPTION_OF = {
    "B": "--B",
    "S": "--S",
    "N": "--N",
    "C": "--C",
    "dtype": "--dtype",
    "num_iters": "--num-iters",
    "hc_eps": "--hc-eps",
    "norm_eps": "--norm-eps",
}


def add_cli(subparsers: Any) -> None:
    """Add the ``gradcheck`` subcommand to ``aclnn-stress``'s subparsers."""
    spec = MHC_PRE_SINKHORN_BACKWARD
    p = subparsers.add_parser(
        "gradcheck",
        help="finite-difference check of the mHC backward's gradients (DESIGN item 3)",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--backend",
        choices=("auto", "sim", "cann"),
        default=None,
        help="which CANN runs the operators (default: $STRESS_BACKEND, else auto); loaded only "
        "when --fd backend or --backward backend needs it",
    )
    shape = p.add_argument_group("case (the report's large shape by default)")
    shape.add_argument("--B", type=int, default=4, help="batch (default 4)")
    shape.add_argument("--S", type=int, default=256, help="sequence length (default 256)")
    shape.add_argument(
        "--N", type=int, default=spec.param("N").default, help="hyper-connections (default 4)"
    )
    shape.add_argument("--C", type=int, default=1024, help="channels (default 1024)")
    shape.add_argument(
        "--dtype", default="bf16", help="dtype of x/hin/gradHin/gradX: bf16 (default) or fp16"
    )
    shape.add_argument("--seed", type=int, default=20261023, help="default 20261023")
    shape.add_argument(
        "--num-iters",
        type=int,
        default=spec.param("num_iters").default,
        help="Sinkhorn iterations (default %(default)s; the operator requires 20)",
    )
    shape.add_argument(
        "--hc-eps", type=float, default=spec.param("hc_eps").default, help="hcEps (%(default)s)"
    )
    shape.add_argument(
        "--norm-eps",
        type=float,
        default=spec.param("norm_eps").default,
        help="normEps of the forward's RMS norm (%(default)s)",
    )
    what = p.add_argument_group("what to check")
    what.add_argument(
        "--element",
        action="extend",
        nargs="+",
        default=[],
        metavar="T[i,...]",
        help="element(s) to check, e.g. bias[8] phi[12,2048] x[0,3,1,17] alpha[2] (repeatable)",
    )
    what.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="K",
        help="also check K seeded random elements of each tensor (default 2 when no --element)",
    )
    what.add_argument(
        "--eps",
        default=",".join(f"{e:g}" for e in DEFAULT_EPS),
        help="comma-separated FD steps (default %(default)s)",
    )
    what.add_argument(
        "--fd",
        choices=("reference", "backend"),
        default="reference",
        help="evaluate the loss through the float64 numpy forward (default) or the backend's "
        "forward operator (bf16 hin makes it noisy; the noise floor is printed)",
    )
    what.add_argument(
        "--backward",
        choices=("backend", "reference"),
        default="backend",
        help="the gradient under test: the backend's backward operator on its forward's saved "
        "tensors (default), or the numpy reference backward in float32",
    )
    p.add_argument("--json", metavar="PATH", help="also write the result as JSON to PATH")
    p.set_defaults(func=_cmd_gradcheck)


def _cmd_gradcheck(args: argparse.Namespace) -> int:
    from rich.console import Console

    from stress.acl.errors import AclError
    from stress.gradcheck import render

    raw = {
        name: getattr(args, opt.lstrip("-").replace("-", "_")) for name, opt in _OPTION_OF.items()
    }
    try:
        params = MHC_PRE_SINKHORN_BACKWARD.parse_params(raw, "aclnn-stress gradcheck")
    except ConfigError as exc:
        msg = str(exc)
        for name, opt in _OPTION_OF.items():
            msg = msg.replace(f"field '{name}'", f"option {opt}")
        raise ConfigError(msg) from None
    eps = parse_eps(args.eps)
    shapes = tensor_shapes(params)
    elements = [parse_element(e, shapes) for e in args.element]
    sample = args.sample if args.sample is not None else (0 if elements else 2)
    if sample < 0:
        raise ConfigError(f"--sample {sample}: must be >= 0")
    json_path = Path(args.json) if args.json else None
    if json_path is not None and not json_path.parent.is_dir():
        raise ConfigError(f"--json {args.json}: directory {json_path.parent} does not exist")

    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 200))
    uses_backend = args.fd == "backend" or args.backward == "backend"
    shown = (args.backend or "$STRESS_BACKEND/auto") if uses_backend else "not used"
    render.header(console, params, args.seed, eps, args.fd, args.backward, shown)
    try:
        with render.progress(console) as tick:
            result = gradcheck(
                params,
                args.seed,
                elements,
                sample=sample,
                eps=eps,
                fd=args.fd,
                backward=args.backward,
                backend=args.backend,
                progress=tick,
            )
    except AclError as exc:
        hint = (
            " (the operator rejected this case; the A2/A3 kernels need N=4, num_iters=20, C%128==0)"
            if exc.api.startswith("aclnn")
            else ""
        )
        raise ConfigError(f"{exc}{hint}") from None
    render.report(console, result)
    if json_path is not None:
        try:
            json_path.write_text(json.dumps(result.to_json(), indent=2) + "\n")
        except OSError as exc:
            raise ConfigError(f"--json {args.json}: cannot write: {exc.strerror}") from None
        console.print(f"JSON written to {json_path}")
    return result.exit_code
