"""Finite-difference check of a declared backward operator: ``aclnn-stress gradcheck``.

The pair (the backward under test and the forward it differentiates, the differentiable inputs
and their gradient outputs, the loss's outputs and their upstream gradients, the saved tensors)
is the backward declaration's ``[gradcheck]`` section (:mod:`stress.ops.gradspec`, bound by
:mod:`stress.gradcheck.pair`). Below, the default pair: ``aclnnMhcPreSinkhornBackward``.

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

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from stress.errors import ConfigError
from stress.gradcheck.classify import (
    Classification,
    backward_rtol,
    block_scale,
    classify,
    noise_per_step,
)
from stress.gradcheck.device import Device, device_session
from stress.gradcheck.elements import (
    _F8,
    AGREES,
    BIASED,
    DEFAULT_EPS,
    DRIFT_REL,
    K_SIGMA,
    RTOL_FP32,
    SETTLE_RTOL,
    UNCONVERGED,
    BackwardFn,
    Element,
    ProgressFn,
    parse_element,
    parse_eps,
    sample_elements,
)
from stress.gradcheck.evaluate import BackendFD, Evaluator, ReferenceFD
from stress.gradcheck.pair import DEFAULT_OP, FLOATING, GradPair, load_pair
from stress.gradcheck.result import ElementResult, GradcheckResult
from stress.ops.spec import Params

__all__ = [
    "AGREES",
    "BIASED",
    "DEFAULT_EPS",
    "DEFAULT_OP",
    "DRIFT_REL",
    "K_SIGMA",
    "RTOL_FP32",
    "SETTLE_RTOL",
    "UNCONVERGED",
    "Classification",
    "Element",
    "ElementResult",
    "GradcheckResult",
    "backward_rtol",
    "block_scale",
    "check_options",
    "classify",
    "gradcheck",
    "load_pair",
    "noise_per_step",
    "parse_element",
    "parse_eps",
    "sample_elements",
]


# --------------------------------------------------------------------------------------------
# results


def _backward_gradients(
    pair: GradPair, p: Params, host: Mapping[str, np.ndarray], backward: str | BackwardFn,
    device: Device | None,
) -> Mapping[str, np.ndarray]:  # fmt: skip
    if backward == "backend":
        assert device is not None
        return device.run(pair.backward, p, host)
    fn = pair.backward.reference if backward == "reference" else backward
    assert callable(fn)
    return fn(p, host)


def _chosen_elements(
    shapes: Mapping[str, tuple[int, ...]], elements: Sequence[str | Element], sample: int,
    seed: int,
) -> list[Element]:  # fmt: skip
    """The elements to check: the given ones (range-checked) plus ``sample`` random ones."""
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
    return chosen


def _check_element(
    evaluator: Evaluator,
    el: Element,
    gt: np.ndarray,
    tol_rtol: float,
    steps: Sequence[float],
    step_done: Callable[[int], None],
) -> ElementResult:
    """FD estimates of one element at every step, classified against the backward's value."""
    g = float(gt[el.index])
    block, _ = evaluator.pair.block(el, evaluator.params)
    scale = block_scale(gt[block])
    q = evaluator.quantum(el)
    eff, vals = [], []
    for k, h in enumerate(steps, 1):
        plus, minus, h_eff = evaluator.steps(el, h)
        if h_eff > 0:
            vals.append(evaluator.delta(el, plus, minus) / (2 * h_eff))
            eff.append(h_eff)
        else:
            vals.append(float("nan"))
            eff.append(float("nan"))
        step_done(k)
    noise = noise_per_step(q, [h if h > 0 else float("inf") for h in eff])
    tol = tol_rtol * max(abs(g), scale)
    res = classify(eff, vals, g, noise=noise, tolerance=tol, scale=scale, k=K_SIGMA)
    return ElementResult(el, g, scale, tuple(eff), tuple(vals), q, noise, res)


def _check_all(
    evaluator: Evaluator,
    chosen: Sequence[Element],
    grad_out: Mapping[str, np.ndarray],
    steps: Sequence[float],
    progress: ProgressFn | None,
) -> list[ElementResult]:
    """Every chosen element, in order, reporting progress after each loss evaluation."""
    pair, p = evaluator.pair, evaluator.params
    total = 2 * len(steps) * len(chosen)
    rows: list[ElementResult] = []
    for i, el in enumerate(chosen):

        def step_done(k: int, el: Element = el, i: int = i) -> None:
            if progress is not None:
                progress(2 * (i * len(steps) + k), total, str(el))

        gt = np.asarray(grad_out[pair.spec.grad_of[el.tensor]], _F8)
        rtol = backward_rtol(pair.grad_dtype(el.tensor, p), pair.spec.rtol)
        rows.append(_check_element(evaluator, el, gt, rtol, steps, step_done))
    return rows


def check_options(pair: GradPair, p: Params, fd: str, backward: Any) -> None:
    """ConfigError for an option the pair cannot honour (a missing reference, a dtype without
    gradient) before anything runs."""
    if fd not in ("reference", "backend"):
        raise ConfigError(f"--fd {fd!r}: use reference or backend")
    if isinstance(backward, str) and backward not in ("reference", "backend"):
        raise ConfigError(f"--backward {backward!r}: use backend or reference")
    if fd == "reference" and not pair.has_fd_reference:
        raise ConfigError(
            f"--fd reference: {pair.forward.name} ({pair.forward_decl.source}) declares no numpy "
            f"reference and {pair.spec.where('fd_reference')} is not set; use --fd backend, or "
            "declare one"
        )
    if backward == "reference" and not pair.has_backward_reference:
        raise ConfigError(
            f"--backward reference: {pair.name} ({pair.backward_decl.source}) declares no numpy "
            "reference ([op] reference); use --backward backend, or declare one"
        )
    for t, dt in pair.input_dtypes(p).items():
        if dt.name not in FLOATING:
            raise ConfigError(
                f"{_case_text(pair, p)}: {t} of {pair.forward.name} would be {dt.name}, which has "
                "no gradient; choose a floating-point dtype"
            )


def _case_text(pair: GradPair, p: Params) -> str:
    """The case's dtype variables as options, e.g. ``--dtype int32``."""
    names = [v.name for v in pair.backward_decl.dtypes if not v.derived and p.get(v.name)]
    return " ".join(f"--{n.replace('_', '-')} {p[n]}" for n in names) or pair.name


def _describe_backward(pair: GradPair, backward: Any, device: Device | None) -> str:
    if backward == "backend":
        return f"{device.kind} {pair.backward.function}"  # type: ignore[union-attr]
    if backward == "reference":
        return "numpy reference backward (float32)"
    return f"custom backward {getattr(backward, '__name__', repr(backward))}"


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
    op: str = DEFAULT_OP,
) -> GradcheckResult:
    """FD-check backward operator ``op`` at ``elements`` (plus ``sample`` random ones per
    differentiable input).

    ``params``: the backward's case parameters (for mHC: B, S, N, C, dtype, num_iters, hc_eps,
    norm_eps), validated like a corpus case. ``fd``: ``"reference"`` (the float64 forward) or
    ``"backend"`` (the backend's forward operator). ``backward``: ``"backend"`` (the backward
    operator on the saved tensors of the backend's forward), ``"reference"`` (its numpy
    reference) or a callable ``(params, host_inputs) -> gradients`` (host_inputs as the
    backward's generator makes them from the numpy forward). ``backend``: the CANN to load
    (None: ``$STRESS_BACKEND``); loaded only when ``fd`` or ``backward`` needs it.
    ``progress(done, total, label)`` is called after each loss evaluation.
    """
    t0 = time.perf_counter()
    pair = load_pair(op)
    p = pair.backward.parse_params(dict(params), "gradcheck params")
    check_options(pair, p, fd, backward)
    steps = parse_eps(eps)
    chosen = _chosen_elements(pair.shapes(p), elements, sample, seed)

    functions: list[str] = []
    if fd == "backend" or backward == "backend":
        functions.append(pair.forward.function)
    if backward == "backend":
        functions.append(pair.backward.function)
    inputs = pair.forward.generate(pair.forward_params(p), seed)

    with device_session(backend, functions) as device:
        host = pair.host(p, seed, device.run if backward == "backend" else None)  # type: ignore[union-attr]
        grads = pair.upstream(host)
        grad_out = _backward_gradients(pair, p, host, backward, device)
        evaluator: Evaluator = (
            BackendFD(pair, p, inputs, grads, device)  # type: ignore[arg-type]
            if fd == "backend"
            else ReferenceFD(pair, p, inputs, grads)
        )
        rows = _check_all(evaluator, chosen, grad_out, steps, progress)

    ran = {e.tensor for e in chosen}
    return GradcheckResult(
        params={k: v for k, v in p.items() if v is not None},  # the case, not C overrides
        seed=seed,
        eps=steps,
        fd=evaluator.name,
        backward=_describe_backward(pair, backward, device),
        backend=device.kind if device is not None else None,
        rows=rows,
        notes=[note for t, note in evaluator.notes if t in ran],
        elapsed_s=time.perf_counter() - t0,
        op=pair.name,
    )
