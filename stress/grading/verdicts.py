"""Verdicts and diagnosis, computed from call records alone (no device, no baseline file).

Per case and phase (worst first): ``CRASH``, ``HANG``, ``OUT_OF_MEMORY`` (a call ran out of
device memory — status 207001/207018/200000 — or of host memory), ``INCOMPLETE`` (the phase made
no call), ``ERROR`` (an unexpected non-zero
status, or a negative case that did not fail as expected), ``UNWRITTEN`` (canary left in a
non-empty output), ``MISMATCH_RANDOM`` (outputs vary between calls and differ from the
baseline), ``MISMATCH_STABLE`` (every call gives the same wrong result), ``PASS``.

The run's diagnosis names the pattern across phases (DESIGN.md "Protocol"), checked in this
order: ``crash``, ``hang``, ``out-of-memory`` (the resource ran out: never read as a race),
``runtime-fault`` (the control operator fails, so the runtime or
harness is to blame), ``unwritten-output``, ``view-dependence`` (only view variants fail
serially, their contiguous twins pass: the operator mishandles non-contiguous inputs),
``uninitialized-read`` (a serial result splits by the byte its outputs and workspace were
prefilled with: :mod:`stress.grading.prefill`),
``operator-error`` (a valid case fails with an error
status even serially), ``baseline-mismatch`` (serial replay disagrees with the baseline: a changed
or non-deterministic operator), ``order-dependence`` (single-threaded random order fails, serial
is clean), ``self-race`` (a case alone on many threads fails and the single-threaded
interleaved pairs do not: when they fail too, the case needs another call's state, which its own
copies on other threads also provide, and the run says ``cross-call-contamination``),
``cross-call-contamination`` (mixed or interleaved fail while isolated and control are
clean), ``incomplete`` (nothing failed but a phase made no call), ``clean``. Single-threaded
patterns come before concurrent ones because they need no concurrency and therefore also explain
concurrent failures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from stress.grading.prefill import PrefillTally, dependence, prefill_dependent
from stress.records import CallRecord, CaseVerdict, PhaseVerdict
from stress.vocabulary import Diagnosis, PhaseStatus, Status, Verdict, split_view

__all__ = [
    "DIAGNOSES",
    "VERDICTS",
    "CaseTally",
    "CaseVerdict",
    "PhaseVerdict",
    "add_interference",
    "case_verdict",
    "diagnose",
    "grade_phase",
    "interference_matrix",
    "matrix_of",
    "phase_verdict",
]

VERDICTS = tuple(Verdict)
DIAGNOSES = tuple(Diagnosis)


_ERRORS = (Status.ERROR, Status.OUT_OF_MEMORY)


def out_of_memory_detail(records: Iterable[CallRecord]) -> str:
    """The first out-of-memory call's status, API and message."""
    r = next(r for r in records if r.status == Status.OUT_OF_MEMORY)
    return _oom_detail(r)


def _oom_detail(r: CallRecord) -> str:
    return f"out of memory (status {r.code}): {r.message or r.api or ''}"


class CaseTally:
    """One case's calls of one phase, folded as they arrive: what :meth:`verdict` grades, in
    constant memory (counts, first messages, digest counts) instead of the record list."""

    __slots__ = (
        "bad_digest",
        "bad_varied",
        "calls",
        "digests",
        "errors",
        "first",
        "first_error",
        "first_mismatch",
        "kept",
        "mismatched",
        "ok",
        "prefill",
        "unwritten",
    )

    def __init__(self) -> None:
        self.calls = 0
        self.ok = 0
        self.digests: dict[str, int] = {}
        self.first: dict[Status, CallRecord] = {}  # the first crash, hang, out-of-memory call
        self.errors: dict[str, int] = {}
        self.first_error: CallRecord | None = None
        self.unwritten: dict[str, int] = {}
        # output -> canary byte -> elements: leftovers not confirmed by the baseline
        self.kept: dict[str, dict[int, int]] = {}
        self.mismatched = 0
        self.bad_digest: str | None = None
        self.bad_varied = False  # the mismatched calls gave more than one digest
        self.first_mismatch: CallRecord | None = None
        self.prefill = PrefillTally()  # the results by prefill byte (uninitialized-read)

    def add(self, r: CallRecord) -> None:
        """Fold one (graded, not warm-up) call record in."""
        self.calls += 1
        if r.status in (Status.CRASH, Status.HANG, Status.OUT_OF_MEMORY):
            self.first.setdefault(r.status, r)
        if r.status in _ERRORS and not r.match:
            key = f"{r.code} {r.api or ''}".strip()
            self.errors[key] = self.errors.get(key, 0) + 1
            self.first_error = self.first_error or r
        if r.status != Status.OK:
            return
        self.ok += 1
        self.prefill.add(r)
        if r.digest is not None:
            self.digests[r.digest] = self.digests.get(r.digest, 0) + 1
        for name, n in (r.unwritten or {}).items():
            self.unwritten[name] = max(self.unwritten.get(name, 0), n)
        for name, n in (r.kept or {}).items():
            seen = self.kept.setdefault(name, {})
            seen[r.canary or 0] = max(seen.get(r.canary or 0, 0), n)
        if r.match is False:
            if self.first_mismatch is None:
                self.first_mismatch, self.bad_digest = r, r.digest
            elif r.digest != self.bad_digest:
                self.bad_varied = True
            self.mismatched += 1

    def verdict(self, case_id: str) -> CaseVerdict:
        """The case's verdict (worst first) from what was folded in."""
        verdict, detail = Verdict.PASS, ""
        unwritten = self.confirmed_unwritten()
        if Status.CRASH in self.first:
            verdict = Verdict.CRASH
            detail = self.first[Status.CRASH].message or ""
        elif Status.HANG in self.first:
            verdict = Verdict.HANG
            detail = self.first[Status.HANG].message or ""
        elif Status.OUT_OF_MEMORY in self.first:
            verdict, detail = Verdict.OUT_OF_MEMORY, _oom_detail(self.first[Status.OUT_OF_MEMORY])
        elif self.first_error is not None:
            verdict = Verdict.ERROR
            detail = self.first_error.message or f"status {self.first_error.code}"
        elif unwritten:
            verdict = Verdict.UNWRITTEN
            detail = ", ".join(f"{k}: {n} elements kept the canary" for k, n in unwritten.items())
        elif self.first_mismatch is not None:
            if self.mismatched == self.ok and not self.bad_varied:
                verdict = Verdict.MISMATCH_STABLE
                detail = f"all {self.ok} calls gave the same wrong result"
            else:
                verdict = Verdict.MISMATCH_RANDOM
                detail = (
                    f"{self.mismatched} of {self.ok} calls differ from the baseline, "
                    f"{len(self.digests)} distinct results"
                )
            if self.first_mismatch.message:
                detail = self.first_mismatch.message
        return CaseVerdict(
            case_id,
            verdict,
            self.calls,
            dict(self.digests),
            self.mismatched,
            dict(self.errors),
            unwritten,
            detail,
            "" if verdict in (Verdict.PASS, Verdict.UNWRITTEN) else dependence(self.prefill),
        )

    def confirmed_unwritten(self) -> dict[str, int]:
        """Output -> elements never written: confirmed by the baseline's second canary, or kept
        under both canaries in this phase (one canary alone is a coincidence:
        :mod:`stress.grading.canaries`)."""
        out = dict(self.unwritten)
        for name, seen in self.kept.items():
            if len(seen) > 1:
                out[name] = max(out.get(name, 0), min(seen.values()))
        return out


def case_verdict(case_id: str, records: list[CallRecord]) -> CaseVerdict:
    """Grade one case's call records of one phase."""
    tally = CaseTally()
    for r in records:
        tally.add(r)
    return tally.verdict(case_id)


def grade_phase(
    name: str,
    records: Iterable[CallRecord],
    *,
    status: str = PhaseStatus.DONE,
    detail: str = "",
    variant: str = "",
    case_order: Iterable[str] = (),
    seconds: float = 0.0,
) -> PhaseVerdict:
    """Verdicts of every case that has records in the phase (warm-up calls excluded)."""
    by_case: dict[str, CaseTally] = defaultdict(CaseTally)
    for r in records:
        if not r.warmup:
            by_case[r.case].add(r)
    return phase_verdict(
        name,
        by_case,
        status=status,
        detail=detail,
        variant=variant,
        case_order=case_order,
        seconds=seconds,
    )


def phase_verdict(
    name: str,
    by_case: Mapping[str, CaseTally],
    *,
    status: str = PhaseStatus.DONE,
    detail: str = "",
    variant: str = "",
    case_order: Iterable[str] = (),
    seconds: float = 0.0,
) -> PhaseVerdict:
    """The phase's verdict from its cases' tallies (:func:`grade_phase` without the records)."""
    case_order = list(case_order)
    order = [c for c in case_order if c in by_case] + sorted(set(by_case) - set(case_order))
    cases = tuple(by_case[cid].verdict(cid) for cid in order)
    verdict = Verdict.combine(c.verdict for c in cases)
    if status == PhaseStatus.CRASHED:
        verdict = Verdict.CRASH
    else:
        verdict = Verdict.combine([verdict, PhaseStatus(status).verdict])
    calls = sum(c.calls for c in cases)
    return PhaseVerdict(name, verdict, cases, PhaseStatus(status), detail, variant, calls, seconds)


def interference_matrix(records: Iterable[CallRecord]) -> dict[str, Any]:
    """Victim x aggressor matrix of the interleaved phase: per cell, calls and mismatches."""
    cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        add_interference(cells, r)
    return matrix_of(cells)


def add_interference(cells: dict[tuple[str, str], list[int]], r: CallRecord) -> None:
    """Fold one call into the (victim, aggressor) -> [calls, failures] cells (a call with an
    aggressor, not a warm-up one)."""
    if r.aggressor is None or r.warmup:
        return
    cell = cells.setdefault((r.case, r.aggressor), [0, 0])
    cell[0] += 1
    cell[1] += int(r.failed)


def matrix_of(cells: Mapping[tuple[str, str], list[int]]) -> dict[str, Any]:
    """The interference matrix (report.json's ``interference``) of folded cells."""
    victims = sorted({v for v, _ in cells})
    aggressors = sorted({a for _, a in cells})
    return {
        "victims": victims,
        "aggressors": aggressors,
        "cells": [
            {"victim": v, "aggressor": a, "calls": c[0], "failures": c[1]}
            for (v, a), c in sorted(cells.items())
        ],
    }


class _Phases:
    """The graded phases of a run by name, with the questions :func:`diagnose` asks."""

    def __init__(self, phases: Iterable[PhaseVerdict]) -> None:
        self.by_name: dict[str, list[PhaseVerdict]] = defaultdict(list)
        for p in phases:
            self.by_name[p.name].append(p)
        self.every = [p.verdict for ps in self.by_name.values() for p in ps]
        self.all_cases = [(p.name, c) for ps in self.by_name.values() for p in ps for c in p.cases]

    def verdicts(self, name: str) -> list[str]:
        return [p.verdict for p in self.by_name.get(name, [])]

    def fails(self, name: str) -> bool:
        return any(_failed(v) for v in self.verdicts(name))

    def ran(self, name: str) -> bool:
        return name in self.by_name

    def with_verdict(self, verdict: Verdict) -> str:
        return ", ".join(n for n in self.by_name if verdict in self.verdicts(n))

    def where(self, pred: Callable[[str], bool]) -> str:
        hits = [f"{c.id} in {name}" for name, c in self.all_cases if pred(c.verdict)]
        return ", ".join(hits[:4]) + (" ..." if len(hits) > 4 else "")

    def ruled_out(self, names: tuple[str, ...]) -> str:
        """What the clean phases rule out, and which of them this run skipped."""
        ran = [n for n in names if self.ran(n)]
        skipped = [n for n in names if not self.ran(n)]
        text = f"{' and '.join(ran)} clean" if ran else ""
        if skipped:
            text += ("; " if text else "") + f"{' and '.join(skipped)} not run"
        return text


#: The explanation's start when only the burst failed (no diagnostic phase reproduced it yet).
BURST_ONLY = (
    "the burst (serial first calls, then the corpus mixed with the control on many threads) "
    "failed and no diagnostic phase isolated it: "
)

_CONTAMINATION = (Verdict.MISMATCH_RANDOM, Verdict.MISMATCH_STABLE, Verdict.ERROR)


def _failed(v: str) -> bool:
    """A finding: not PASS, and not INCOMPLETE (a phase that made no call found nothing)."""
    return v not in (Verdict.PASS, Verdict.INCOMPLETE)


def _view_dependence(ph: _Phases) -> str:
    """The explanation when only view variants fail serially and none of their contiguous
    twins does (view invariance broken); "" otherwise."""
    failing = [c for p in ph.by_name["serial"] for c in p.cases if _failed(c.verdict)]
    twins = {c.id: split_view(c.id) for c in failing}
    if not failing or any(not view for _, view in twins.values()):
        return ""
    shown = [f"{c.id} {c.verdict} (its twin {twins[c.id][0]} passes)" for c in failing[:4]]
    return (
        "a non-contiguous view of the inputs gives another result than the same call on "
        "contiguous tensors, even serially: "
        + ", ".join(shown)
        + (" ..." if len(failing) > 4 else "")
    )


def _single_threaded(ph: _Phases) -> tuple[Diagnosis, str] | None:
    """Failures that need no concurrency (serial, shuffled): they also explain failures of the
    concurrent phases (a stale read shows up in mixed too), so they are checked first."""
    if ph.fails("serial"):
        views = _view_dependence(ph)
        if views:
            return Diagnosis.VIEW_DEPENDENCE, views
        dirty = prefill_dependent([c for p in ph.by_name["serial"] for c in p.cases])
        if dirty:
            return Diagnosis.UNINITIALIZED_READ, dirty
        if Verdict.ERROR in ph.verdicts("serial"):
            return Diagnosis.OPERATOR_ERROR, "valid cases fail even serially: " + ph.where(
                lambda v: v == Verdict.ERROR
            )
        return Diagnosis.BASELINE_MISMATCH, (
            "serial replay disagrees with the baseline: the operator changed or is not "
            "deterministic (re-record the baseline)"
        )
    if ph.fails("shuffled"):
        return Diagnosis.ORDER_DEPENDENCE, (
            "single-threaded calls in random order fail while serial repeats pass: state left "
            "by a previous call leaks into the next"
            if ph.ran("serial")
            else "single-threaded calls in random order fail (serial not run, so a baseline "
            "mismatch is not ruled out): " + ph.where(_failed)
        )
    return None


def diagnose(phases: Iterable[PhaseVerdict]) -> tuple[Diagnosis, str]:
    """The run's diagnosis and a one-line explanation."""
    ph = _Phases(phases)
    if Verdict.CRASH in ph.every:
        return Diagnosis.CRASH, "the process died during " + ph.with_verdict(Verdict.CRASH)
    if Verdict.HANG in ph.every:
        return Diagnosis.HANG, "a call did not finish during " + ph.with_verdict(Verdict.HANG)
    if Verdict.OUT_OF_MEMORY in ph.every:
        return Diagnosis.OUT_OF_MEMORY, (
            "device or host memory ran out (the resource, not a race): "
            + ph.where(lambda v: v == Verdict.OUT_OF_MEMORY)
            + "; lower --threads, --max-case-bytes or the cases' sizes, or give the device more "
            "memory"
        )
    if ph.fails("control"):
        return Diagnosis.RUNTIME_FAULT, (
            "the control operator fails under the same pool, context and stream policy: the "
            "runtime or the harness is at fault, not the operator under test"
        )
    if Verdict.UNWRITTEN in ph.every:
        return Diagnosis.UNWRITTEN_OUTPUT, "outputs kept the canary: " + ph.where(
            lambda v: v == Verdict.UNWRITTEN
        )
    single = _single_threaded(ph)
    if single is not None:
        return single
    if ph.fails("isolated") and ph.fails("interleaved"):
        # one thread, two calls' stages interleaved, fails too: the case needs another call's
        # state (its freed buffers, its tiling), which T copies of itself also provide
        return Diagnosis.CROSS_CALL_CONTAMINATION, (
            "interleaved pairs fail on one thread, so the failure of one case alone on many "
            "threads is another call's state too, not a race of the case with itself: "
            + ph.where(lambda v: v in _CONTAMINATION)
        )
    if ph.fails("isolated"):
        return Diagnosis.SELF_RACE, (
            "one case alone on many threads fails"
            + ("" if ph.ran("interleaved") else " (interleaved pairs not run)")
            + ": "
            + ph.where(_failed)
        )
    if ph.fails("mixed") or ph.fails("interleaved"):
        return Diagnosis.CROSS_CALL_CONTAMINATION, (
            f"different cases in flight corrupt each other "
            f"({ph.ruled_out(('isolated', 'control'))}): " + ph.where(lambda v: v in _CONTAMINATION)
        )
    if ph.fails("burst"):
        return Diagnosis.CROSS_CALL_CONTAMINATION, BURST_ONLY + ph.where(_failed)
    if Verdict.INCOMPLETE in ph.every:
        return Diagnosis.INCOMPLETE, (
            f"no finding, but {ph.with_verdict(Verdict.INCOMPLETE)} made no call: nothing was "
            "tested there (raise --duration or lower --threads)"
        )
    return Diagnosis.CLEAN, "every phase passed"
