"""Running calls and judging each one on its own: status, digests, canary, baseline match.

A call's *record* (a :class:`~stress.records.CallRecord`) is what the result file stores;
verdicts are derived from records later (:mod:`stress.engine.grading`). Judging one call needs
the case's baseline: its digest (bit-deterministic cases), its output arrays (cases graded by
tolerance) and how many output elements equal the canary pattern by chance.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stress import acl
from stress.baseline.store import CaseBaseline
from stress.corpus.parse import Case
from stress.engine.call import OpCall
from stress.engine.digest import DEFAULT_CANARY, call_digest, canary_count, digest
from stress.model import Status
from stress.records import CallRecord

__all__ = ["CallTimeout", "Outcome", "close_enough", "judge", "run_call", "run_interleaved"]


class CallTimeout(Exception):
    """A stream synchronisation timed out: the call's resources stay allocated (the kernel may
    still be writing them) and the phase must stop."""


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

    @classmethod
    def failed(cls, exc: acl.AclError, start: float) -> Outcome:
        """A call that failed with an ACL status; device memory exhaustion (the
        :class:`~stress.acl.AclMemoryError` codes) is ``out-of-memory``, not an error."""
        return cls(
            Status.OUT_OF_MEMORY if isinstance(exc, acl.AclMemoryError) else Status.ERROR,
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
    **where: Any,
) -> CallRecord:
    """One call's record: status, digests, unwritten elements, baseline match; ``where`` are
    the record's other fields (seq, worker, round, rep, aggressor, ...)."""
    rec: dict[str, Any] = {"case": case.id, "status": outcome.status}
    rec.update(_judged(case, outcome, baseline, canary))
    rec["t"] = round(outcome.start, 6)
    rec["dur"] = round(outcome.duration, 6)
    return CallRecord(phase=phase, **rec, **where)


def _judged(
    case: Case, outcome: Outcome, baseline: CaseBaseline | None, canary: int
) -> dict[str, Any]:
    """The judged fields of a call record (see :func:`judge`)."""
    rec: dict[str, Any] = {}
    if outcome.status != Status.OK:
        rec.update(code=outcome.code, api=outcome.api, message=outcome.message)
        rec["match"] = bool(case.expect and outcome.code == case.expect.status)
        return rec
    digests = {name: digest(arr) for name, arr in outcome.outputs.items()}
    rec["digest"] = call_digest(digests)
    rec["outputs"] = digests
    unwritten = {}
    for name, arr in outcome.outputs.items():
        chance = (
            baseline.outputs[name].canary_chance if baseline and name in baseline.outputs else 0
        )
        n = canary_count(arr, canary) - chance
        if n > 0:
            unwritten[name] = n
    if unwritten:
        rec["unwritten"] = unwritten
    if case.expect is not None:
        rec["match"] = False  # a negative case succeeded
        rec["message"] = f"expected status {case.expect.status}, the call succeeded"
    elif baseline is None:
        rec["match"] = None
    elif baseline.status != Status.OK:
        rec["match"] = False
    elif baseline.grading == "digest":
        rec["match"] = rec["digest"] == baseline.call_digest
    else:
        worst = 0.0
        ok = True
        for name, arr in outcome.outputs.items():
            rtol, atol = case.spec.tolerances(case.params, name)
            good, ratio = close_enough(arr, baseline.arrays[name], rtol, atol)
            ok &= good
            worst = max(worst, ratio)
        rec["match"] = ok
        rec["tolerance_ratio"] = round(worst, 4)
    return rec


def _sync(stream: acl.Stream, timeout_ms: int | None) -> None:
    try:
        stream.synchronize(timeout_ms)
    except acl.AclTimeoutError as exc:
        raise CallTimeout(str(exc)) from exc


def run_call(
    context: acl.Context,
    stream: acl.Stream,
    case: Case,
    inputs: Mapping[str, np.ndarray],
    *,
    canary: int = DEFAULT_CANARY,
    timeout_ms: int | None = None,
) -> Outcome:
    """One call back to back (upload, phase 1, workspace, phase 2, sync, download)."""
    start = time.perf_counter()
    try:
        call = OpCall(
            context, case.spec, case.params, inputs, canary=canary, layout_key=case.key,
            view=case.view,
        )  # fmt: skip
    except acl.AclError as exc:
        return Outcome.failed(exc, start)
    except MemoryError as exc:
        return Outcome.host_out_of_memory(exc, start)
    try:
        call.phase1()
        call.phase2(stream)
        _sync(stream, timeout_ms)
        outputs = call.collect()
    except (acl.AclError, MemoryError) as exc:
        _settle(stream, timeout_ms)
        call.close()
        if isinstance(exc, MemoryError):
            return Outcome.host_out_of_memory(exc, start)
        return Outcome.failed(exc, start)
    except CallTimeout:
        call.abandon()  # leave the call's memory alone: the kernel may still be writing it
        raise
    call.close()
    return Outcome(outputs=outputs, start=start, duration=time.perf_counter() - start)


def _settle(stream: acl.Stream, timeout_ms: int | None) -> None:
    """After a failed step, drain the stream so freed memory is not still in use."""
    try:
        _sync(stream, timeout_ms)
    except acl.AclError:
        pass


def run_interleaved(
    context: acl.Context,
    stream: acl.Stream,
    cases: Sequence[Case],
    inputs: Sequence[Mapping[str, np.ndarray]],
    *,
    canary: int = DEFAULT_CANARY,
    timeout_ms: int | None = None,
    order: Sequence[tuple[int, str]] | None = None,
) -> list[Outcome]:
    """Calls with their phases interleaved: every phase 1, then every phase 2, then one sync.

    For two cases this is A.phase1, B.phase1, A.phase2, B.phase2: host-side state that phase 1
    leaves for phase 2 (tiling, caches) is overwritten by the other call in between. ``order``
    gives another order as (call index, "phase1" | "phase2") steps (a PCT schedule,
    :mod:`stress.engine.pct`); each call's phase 1 must come before its phase 2.
    """
    start = time.perf_counter()
    outcomes: list[Outcome | None] = [None] * len(cases)
    calls: list[OpCall | None] = []
    for i, (case, ins) in enumerate(zip(cases, inputs, strict=True)):
        try:
            calls.append(
                OpCall(
                    context,
                    case.spec,
                    case.params,
                    ins,
                    canary=canary,
                    layout_key=case.key,
                    view=case.view,
                )
            )
        except acl.AclError as exc:
            calls.append(None)
            outcomes[i] = Outcome.failed(exc, start)
        except MemoryError as exc:
            calls.append(None)
            outcomes[i] = Outcome.host_out_of_memory(exc, start)
    if order is None:
        order = [(i, step) for step in ("phase1", "phase2") for i in range(len(calls))]
    for i, step in order:
        call = calls[i]
        if call is None or outcomes[i] is not None:
            continue
        try:
            call.phase1() if step == "phase1" else call.phase2(stream)
        except acl.AclError as exc:
            outcomes[i] = Outcome.failed(exc, start)
    try:
        _sync(stream, timeout_ms)
        sync_error = None
    except CallTimeout:
        for call in calls:
            if call is not None:
                call.abandon()
        raise
    except acl.AclError as exc:
        sync_error = exc
    end = time.perf_counter()
    for i, call in enumerate(calls):
        if call is None:
            continue
        if outcomes[i] is None:
            if sync_error is not None:
                outcomes[i] = Outcome.failed(sync_error, start)
            else:
                try:
                    outputs = call.collect()
                except MemoryError as exc:
                    outputs, outcomes[i] = {}, Outcome.host_out_of_memory(exc, start)
                if outcomes[i] is None:
                    outcomes[i] = Outcome(outputs=outputs, start=start, duration=end - start)
        call.close()
    return [o for o in outcomes if o is not None]
