"""Verdicts and diagnosis, computed from call records alone (no device, no baseline file).

Per case and phase (worst first): ``CRASH``, ``HANG``, ``OUT_OF_MEMORY`` (a call ran out of
device memory — status 207001/207018/200000 — or of host memory), ``INCOMPLETE`` (the phase made
no call), ``ERROR`` (an unexpected non-zero
status, or a negative case that did not fail as expected), ``UNWRITTEN`` (canary left in a
non-empty output), ``MISMATCH_RANDOM`` (outputs vary between calls and differ from the
baseline), ``MISMATCH_STABLE`` (every call gives the same wrong result), ``PASS``.

The run's diagnosis, from these verdicts, is :mod:`stress.grading.diagnosis`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from stress.grading.mode_split import ModeTally
from stress.grading.prefill import PrefillTally, dependence
from stress.grading.reuse import ReuseTally
from stress.records import CallRecord, CaseVerdict, PhaseVerdict
from stress.report_sections import Interference, PairCell
from stress.vocabulary import Diagnosis, PhaseStatus, Status, Verdict

__all__ = [
    "DIAGNOSES",
    "VERDICTS",
    "CaseTally",
    "CaseVerdict",
    "PhaseVerdict",
    "add_interference",
    "case_verdict",
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
        "modes",
        "ok",
        "prefill",
        "reuse",
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
        self.reuse = ReuseTally()  # first vs later launches of an executor (executor-reuse)
        self.modes = ModeTally()  # the calls per API mode (mode-dependence)

    def add(self, r: CallRecord) -> None:
        """Fold one (graded, not warm-up) call record in."""
        self.calls += 1
        self.reuse.add(r)
        self.modes.add(r)
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
        split = self.modes.split()
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
            self.reuse.evidence(),
            "" if split is None else split.evidence,
            split,
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


def grade_phase(name: str, records: Iterable[CallRecord], **phase: Any) -> PhaseVerdict:
    """Verdicts of every case that has records in the phase (warm-up calls excluded);
    ``phase``: the keyword options of :func:`phase_verdict` (status, detail, variant,
    case_order, seconds)."""
    by_case: dict[str, CaseTally] = defaultdict(CaseTally)
    for r in records:
        if not r.warmup:
            by_case[r.case].add(r)
    return phase_verdict(name, by_case, **phase)


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


def interference_matrix(records: Iterable[CallRecord]) -> Interference:
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


def matrix_of(cells: Mapping[tuple[str, str], list[int]]) -> Interference:
    """The interference matrix (report.json's ``interference``) of folded cells."""
    return Interference(
        victims=tuple(sorted({v for v, _ in cells})),
        aggressors=tuple(sorted({a for _, a in cells})),
        cells=tuple(PairCell(v, a, c[0], c[1]) for (v, a), c in sorted(cells.items())),
    )
