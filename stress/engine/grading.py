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
harness is to blame), ``unwritten-output``, ``operator-error`` (a valid case fails with an error
status even serially), ``baseline-mismatch`` (serial replay disagrees with the baseline: a changed
or non-deterministic operator), ``order-dependence`` (single-threaded random order fails, serial
is clean), ``self-race`` (a case alone on many threads fails), ``cross-call-contamination``
(mixed or interleaved fail while isolated and control are clean), ``incomplete`` (nothing
failed but a phase made no call), ``clean``. Single-threaded
patterns come before concurrent ones because they need no concurrency and therefore also explain
concurrent failures.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from stress.model import Diagnosis, PhaseStatus, Status, Verdict
from stress.records import CallRecord, CaseVerdict, PhaseVerdict

__all__ = [
    "DIAGNOSES",
    "VERDICTS",
    "CaseVerdict",
    "PhaseVerdict",
    "case_verdict",
    "diagnose",
    "grade_phase",
    "interference_matrix",
    "worst",
]

VERDICTS = tuple(Verdict)
DIAGNOSES = tuple(Diagnosis)


def worst(verdicts: Iterable[str]) -> Verdict:
    """The most severe verdict (``PASS`` for none): :meth:`Verdict.combine`."""
    return Verdict.combine(verdicts)


_ERRORS = (Status.ERROR, Status.OUT_OF_MEMORY)


def out_of_memory_detail(records: Iterable[CallRecord]) -> str:
    """The first out-of-memory call's status, API and message."""
    r = next(r for r in records if r.status == Status.OUT_OF_MEMORY)
    return f"out of memory (status {r.code}): {r.message or r.api or ''}"


def case_verdict(case_id: str, records: list[CallRecord]) -> CaseVerdict:
    """Grade one case's call records of one phase."""
    ok = [r for r in records if r.status == Status.OK]
    digests = dict(Counter(r.digest for r in ok if r.digest is not None))
    special = {r.status for r in records} & {Status.CRASH, Status.HANG, Status.OUT_OF_MEMORY}
    bad_errors = [r for r in records if r.status in _ERRORS and not r.match]
    errors: dict[str, int] = {}
    for r in bad_errors:
        key = f"{r.code} {r.api or ''}".strip()
        errors[key] = errors.get(key, 0) + 1
    unwritten: dict[str, int] = {}
    for r in ok:
        for name, n in (r.unwritten or {}).items():
            unwritten[name] = max(unwritten.get(name, 0), n)
    mismatched = [r for r in ok if r.match is False]
    verdict, detail = Verdict.PASS, ""
    if Status.CRASH in special:
        verdict = Verdict.CRASH
        detail = next(r.message or "" for r in records if r.status == Status.CRASH)
    elif Status.HANG in special:
        verdict = Verdict.HANG
        detail = next(r.message or "" for r in records if r.status == Status.HANG)
    elif Status.OUT_OF_MEMORY in special:
        verdict, detail = Verdict.OUT_OF_MEMORY, out_of_memory_detail(records)
    elif bad_errors:
        verdict = Verdict.ERROR
        detail = bad_errors[0].message or f"status {bad_errors[0].code}"
    elif unwritten:
        verdict = Verdict.UNWRITTEN
        detail = ", ".join(f"{k}: {n} elements kept the canary" for k, n in unwritten.items())
    elif mismatched:
        bad_digests = {r.digest for r in mismatched}
        if len(mismatched) == len(ok) and len(bad_digests) == 1:
            verdict = Verdict.MISMATCH_STABLE
            detail = f"all {len(ok)} calls gave the same wrong result"
        else:
            verdict = Verdict.MISMATCH_RANDOM
            detail = (
                f"{len(mismatched)} of {len(ok)} calls differ from the baseline, "
                f"{len(digests)} distinct results"
            )
        if mismatched[0].message:
            detail = mismatched[0].message
    return CaseVerdict(
        case_id, verdict, len(records), digests, len(mismatched), errors, unwritten, detail
    )


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
    by_case: dict[str, list[CallRecord]] = defaultdict(list)
    for r in records:
        if not r.warmup:
            by_case[r.case].append(r)
    order = [c for c in case_order if c in by_case] + sorted(set(by_case) - set(case_order))
    cases = tuple(case_verdict(cid, by_case[cid]) for cid in order)
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
        if r.aggressor is None or r.warmup:
            continue
        cell = cells[(r.case, r.aggressor)]
        cell[0] += 1
        cell[1] += int(r.failed)
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


def _single_threaded(ph: _Phases) -> tuple[Diagnosis, str] | None:
    """Failures that need no concurrency (serial, shuffled): they also explain failures of the
    concurrent phases (a stale read shows up in mixed too), so they are checked first."""
    if ph.fails("serial"):
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
    if ph.fails("isolated"):
        return Diagnosis.SELF_RACE, "one case alone on many threads fails: " + ph.where(_failed)
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
