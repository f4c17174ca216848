"""Classifying one element: does the backward's gradient agree with the FD estimates, given
their noise?"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stress.gradcheck.elements import (
    _F8,
    _F32,
    _UNIT,
    AGREES,
    BIASED,
    K_SIGMA,
    NOISE_FACTOR,
    RTOL_FP32,
    SETTLE_RTOL,
    UNCONVERGED,
)


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


def block_scale(block: np.ndarray) -> float:
    """RMS of an element's gradient block (:meth:`stress.gradcheck.pair.GradPair.block`: the
    whole gradient, or the declared block holding the element, e.g. mHC's pre/post/res groups of
    gradPhi rows, whose magnitudes differ by an order of magnitude). Non-finite entries (a
    garbage output) are left out."""
    g = np.asarray(block, _F8)
    g = g[np.isfinite(g)]
    return float(np.sqrt(np.mean(g**2))) if g.size else 0.0


def backward_rtol(grad_dtype: np.dtype, rtol: float = RTOL_FP32) -> float:
    """Relative precision of a backward output of dtype ``grad_dtype`` (see the module
    docstring): ``rtol``, or twice the unit roundoff of a bf16/fp16 gradient if larger."""
    dt = np.dtype(grad_dtype)
    if dt in _UNIT and dt != _F32:
        return max(rtol, 2 * _UNIT[dt])
    return rtol


# --------------------------------------------------------------------------------------------
# loss evaluation
