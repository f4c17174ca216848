"""Judging one call on its own: status, digests, canary, baseline match.

A call's *record* (a :class:`~stress.records.CallRecord`) is what the result file stores;
verdicts are derived from records later (:mod:`stress.grading.verdicts`). Judging one call needs
the case's baseline: its digest (bit-deterministic cases), its output arrays (cases graded by
tolerance) and how many output elements equal the canary pattern by chance.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stress.acl.errors import AclError, AclMemoryError
from stress.baseline.store import CaseBaseline
from stress.corpus.parse import Case
from stress.grading.canaries import survivors
from stress.grading.digest import DEFAULT_CANARY, call_digest, digest
from stress.records import CallRecord
from stress.vocabulary import Status

__all__ = ["Outcome", "close_enough", "judge"]


@dataclass
class Outcome:
    """What one call produced: outputs, or the status it failed with."""

    status: Status = Status.OK
    code: int = 0
    api: str = ""
    message: str = ""
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    start: float = 0.0
    duration: float = 0.0
    workspace: int = 0  # bytes of workspace the call had (prefilled with its canary)

    @classmethod
    def failed(cls, exc: AclError, start: float) -> Outcome:
        """A call that failed with an ACL status; device memory exhaustion (the
        :class:`~stress.acl.AclMemoryError` codes) is ``out-of-memory``, not an error."""
        return cls(
            Status.OUT_OF_MEMORY if isinstance(exc, AclMemoryError) else Status.ERROR,
            exc.code,
            exc.api,
            exc.message,
            start=start,
            duration=time.perf_counter() - start,
        )

    @classmethod
    def host_out_of_memory(cls, exc: MemoryError, start: float) -> Outcome:
        """The host could not allocate while preparing or collecting the call."""
        return cls(
            Status.OUT_OF_MEMORY,
            0,
            "host",
            f"MemoryError: {exc}" if str(exc) else "MemoryError",
            start=start,
            duration=time.perf_counter() - start,
        )

    @classmethod
    def of_error(cls, exc: AclError | MemoryError, start: float) -> Outcome:
        """A call stopped by ``exc``: :meth:`host_out_of_memory` for a host ``MemoryError``,
        :meth:`failed` for an ACL status."""
        if isinstance(exc, MemoryError):
            return cls.host_out_of_memory(exc, start)
        return cls.failed(exc, start)

    @classmethod
    def collected(cls, outputs: dict[str, np.ndarray], start: float, workspace: int) -> Outcome:
        """A call that ran to its download: ``outputs``, timed from ``start`` to now."""
        return cls(
            outputs=outputs,
            start=start,
            duration=time.perf_counter() - start,
            workspace=workspace,
        )


def close_enough(
    actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float
) -> tuple[bool, float]:
    """|a - e| <= atol * max|e| + rtol * |e| elementwise (atol is relative to the tensor's scale).

    Returns (ok, worst ratio of error to allowance).
    """
    if actual.shape != expected.shape:
        return False, float("inf")
    if actual.size == 0:
        return True, 0.0
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    scale = float(np.nanmax(np.abs(e))) if np.isfinite(e).any() else 0.0
    allowance = atol * max(scale, 1e-30) + rtol * np.abs(e)
    err = np.abs(a - e)
    err = np.where(np.isnan(a) & np.isnan(e), 0.0, err)
    err = np.where(np.isnan(err), np.inf, err)
    ratio = float(np.max(err / np.maximum(allowance, 1e-300)))
    return ratio <= 1.0, ratio


def judge(
    case: Case,
    outcome: Outcome,
    baseline: CaseBaseline | None,
    *,
    phase: str,
    canary: int = DEFAULT_CANARY,
    run_canary: int | None = None,
    **where: Any,
) -> CallRecord:
    """One call's record: status, digests, unwritten elements, baseline match; ``where`` are
    the record's other fields (seq, worker, round, rep, aggressor, ...). ``canary`` is the byte
    the call's outputs were prefilled with, ``run_canary`` the run's (the baseline's) when the
    call used the second one (:mod:`stress.grading.canaries`). Every call names its prefill
    byte (outputs and workspace): the grader groups a case's results by it
    (stress.grading.prefill)."""
    timing = {"t": round(outcome.start, 6), "dur": round(outcome.duration, 6)}
    base = {"phase": phase, "case": case.id, "status": outcome.status, "canary": canary}
    base.update(timing, workspace=outcome.workspace or None, **where)
    if outcome.status != Status.OK:
        match = bool(case.expect and outcome.code == case.expect.status)
        return CallRecord(**base, code=outcome.code, api=outcome.api, message=outcome.message,
                          match=match)  # fmt: skip
    digests = {name: digest(arr) for name, arr in outcome.outputs.items()}
    whole = call_digest(digests)
    run_canary = canary if run_canary is None else run_canary
    left = survivors(outcome.outputs, baseline, canary, run_canary)
    # leftover canaries the second canary did not confirm (kept) are graded per phase
    # (stress.grading.canaries)
    marks = {"unwritten": left.unwritten or None, "kept": left.kept or None}
    if case.expect is not None:  # a negative case succeeded
        message = f"expected status {case.expect.status}, the call succeeded"
        return CallRecord(**base, digest=whole, outputs=digests, **marks, match=False,
                          message=message)  # fmt: skip
    match, ratio = _matched(case, outcome, baseline, whole)
    return CallRecord(**base, digest=whole, outputs=digests, **marks, match=match,
                      tolerance_ratio=ratio)  # fmt: skip


def _matched(
    case: Case, outcome: Outcome, baseline: CaseBaseline | None, whole: str
) -> tuple[bool | None, float | None]:
    """Whether an ok call matches its baseline (None: no baseline), and its worst tolerance
    ratio (cases graded by tolerance)."""
    if baseline is None:
        return None, None
    if baseline.status != Status.OK:
        return False, None
    if baseline.grading == "digest":
        return whole == baseline.call_digest, None
    worst = 0.0
    ok = True
    for name, arr in outcome.outputs.items():
        rtol, atol = case.spec.tolerances(case.params, name)
        good, ratio = close_enough(arr, baseline.arrays[name], rtol, atol)
        ok &= good
        worst = max(worst, ratio)
    return ok, round(worst, 4)
