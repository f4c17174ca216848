"""A journal graded as it streams: per-phase, per-case aggregates instead of the record list.

A run writes hundreds of thousands of call records; grading needs, per (phase, variant) and
case, only counts, the first failing records and the digests seen (:class:`CaseTally`), the
interleaved phase's victim x aggressor cells and the pair coverage (:class:`CoverageTally`).
:class:`JournalTally` folds each record in as it is written (the running session) or read back
(``aclnn-stress report``, the HTML loader), so memory stays flat however long the run; the
report is rendered from the tally (:func:`stress.grading.assemble.report_from`). With
``keep_calls`` it also keeps a bounded sample of call records for the HTML report: the first
``keep_calls`` of each phase (its timeline) and the first ``failing`` failing calls of each case
in each phase (the lists a verdict links to), with the totals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from stress.errors import ConfigError
from stress.grading.coverage import CoverageTally
from stress.grading.diagnosis import diagnose
from stress.grading.verdicts import CaseTally, add_interference, matrix_of, phase_verdict
from stress.journal.lines import Note, PhaseStart, RunEnd, RunHeader, typed_line
from stress.journal.results import JournalReader
from stress.records import CallRecord, PhaseResult, PhaseVerdict
from stress.report_sections import Interference
from stress.vocabulary import Diagnosis, PhaseStatus

__all__ = ["GradedJournal", "JournalTally", "PhaseSample"]

Key = tuple[str, str]  # (phase, variant)


@dataclass(frozen=True)
class GradedJournal:
    """A journal's records grouped and graded: what every report format renders."""

    header: RunHeader  # (an empty one when the journal had none)
    phases: tuple[PhaseVerdict, ...]
    interference: Interference  # the interleaved phase's victim x aggressor matrix
    run_end: RunEnd | None  # None: the journal has no run-end line (killed, or still running)
    notes: tuple[str, ...]
    diagnosis: Diagnosis
    explanation: str
    first_failure_s: float | None  # seconds from the run's start to its first failing call


class _PhaseTally:
    """One (phase, variant) attempt: its cases' tallies, interference cells, kept calls."""

    def __init__(self) -> None:
        self.cases: dict[str, CaseTally] = {}
        self.cells: dict[tuple[str, str], list[int]] = {}
        self.calls = 0
        self.wrong = 0  # failing calls, warm-up ones included
        self.kept: list[CallRecord] = []  # the first ``keep_calls``, then failing ones listed
        self.failing: dict[str, list[CallRecord]] = {}  # case -> its first failing calls
        self.failing_total: dict[str, int] = {}


class JournalTally:
    """Folds journal records (dicts as read back, or the typed ones being written)."""

    def __init__(self, *, keep_calls: int = 0, failing: int = 0) -> None:
        self.header: RunHeader | None = None
        self.order: list[Key] = []
        self.ends: dict[Key, PhaseResult] = {}
        self.phases: dict[Key, _PhaseTally] = {}
        self.coverage = CoverageTally()
        self.run_end: RunEnd | None = None
        self.notes: list[str] = []
        self.first: float | None = None
        self.records = 0
        self.call_records = 0  # every call line, warm-up and ungraded ones included
        self.keep_calls = keep_calls
        self.keep_failing = failing
        self.truncated = False  # the journal read back ended in a cut line (skipped)

    def feed(self, records: Iterable[Any]) -> None:
        """Fold every record in; a :class:`~stress.journal.results.JournalReader` also tells
        whether the journal's last line was cut (``truncated``: the reader's one answer)."""
        for rec in records:
            self.add(rec)
        if isinstance(records, JournalReader):
            self.truncated = records.truncated

    def add(self, rec: Any) -> None:
        """Fold one record in: a typed one (:mod:`stress.journal.lines`), or a journal object
        (typed here). A ``phase-start`` of a phase seen before is a ``--resume`` restart: the
        new attempt replaces the old one."""
        self.records += 1
        if type(rec) is CallRecord:  # most lines: no further test
            self._call(rec)
            return
        if isinstance(rec, Mapping):
            rec = _typed(rec, self.records)
        if isinstance(rec, CallRecord):
            self._call(rec)
        elif isinstance(rec, PhaseResult):
            self.ends[(rec.phase, rec.variant or "")] = rec
        elif isinstance(rec, PhaseStart):
            if rec.key in self.order:
                self.ends.pop(rec.key, None)
                self.phases[rec.key] = _PhaseTally()
            else:
                self.order.append(rec.key)
                self.phases.setdefault(rec.key, _PhaseTally())
        elif isinstance(rec, RunEnd):
            self.run_end = rec
        elif isinstance(rec, Note):
            self.notes.append(rec.message)
        elif isinstance(rec, RunHeader):
            self.header = rec

    def _call(self, call: CallRecord) -> None:
        key = (call.phase, call.variant or "")
        phase = self.phases.get(key)
        if phase is None:  # calls without their phase-start (an edited journal): not graded
            phase = self.phases[key] = _PhaseTally()
        phase.calls += 1
        self.call_records += 1
        self.coverage.add(call)
        if key[0] == "interleaved":
            add_interference(phase.cells, call)
        failed = call.failed
        phase.wrong += failed
        if self.first is None and not call.warmup and failed:
            self.first = call.elapsed
        listed = False
        if failed and not call.warmup and self.keep_failing:
            total = phase.failing_total[call.case] = phase.failing_total.get(call.case, 0) + 1
            if total <= self.keep_failing:
                phase.failing.setdefault(call.case, []).append(call)
                listed = True
        if phase.calls <= self.keep_calls or listed:
            phase.kept.append(call)
        if not call.warmup:
            tally = phase.cases.get(call.case)
            if tally is None:
                tally = phase.cases[call.case] = CaseTally()
            tally.add(call)

    # -- what the reports read ---------------------------------------------------------------
    def case_order(self) -> list[str]:
        return self.header.case_ids if self.header else []

    def graded(self, *, final: bool = True) -> GradedJournal:
        """Grade each phase, diagnose (``final``: the journal is all there will be, so a run
        without a ``done`` run-end that found nothing is ``incomplete``, never ``clean``; the
        running session grades its own journal between phases with ``final=False``)."""
        order = self.case_order()
        phases = tuple(self._grade(key, order) for key in self.order)
        diagnosis, explanation = diagnose(phases)
        if final and diagnosis is Diagnosis.CLEAN and not finished(self.run_end):
            diagnosis, explanation = (
                Diagnosis.INCOMPLETE,
                _unfinished(self.header or RunHeader(), self.run_end, phases),
            )
        cells: dict[tuple[str, str], list[int]] = {}
        for (name, _), phase in self.phases.items():
            if name != "interleaved":
                continue
            for pair, (calls, failures) in phase.cells.items():
                cell = cells.setdefault(pair, [0, 0])
                cell[0] += calls
                cell[1] += failures
        return GradedJournal(
            self.header or RunHeader(),
            phases,
            matrix_of(cells),
            self.run_end,
            tuple(self.notes),
            diagnosis,
            explanation,
            self.first,
        )

    def _grade(self, key: Key, case_order: list[str]) -> PhaseVerdict:
        end = self.ends.get(key)
        phase = self.phases.get(key) or _PhaseTally()
        return phase_verdict(
            key[0],
            phase.cases,
            status=end.status if end else PhaseStatus.INTERRUPTED,
            detail=end.detail if end else "the run stopped during this phase",
            variant=key[1],
            case_order=case_order,
            seconds=end.seconds if end else 0.0,
        )

    def sample(self, key: Key) -> PhaseSample:
        """What was kept of one phase's calls (``keep_calls``/``failing``) and its counts."""
        phase = self.phases.get(key) or _PhaseTally()
        failing = {
            case: (phase.failing_total[case], tuple(calls)) for case, calls in phase.failing.items()
        }
        return PhaseSample(tuple(phase.kept), phase.calls, phase.wrong, failing)


@dataclass(frozen=True)
class PhaseSample:
    """A bounded sample of one phase's call records: the first ``keep_calls`` calls and the
    failing calls listed per case (the HTML timeline and failing-call lists), with the counts."""

    calls: tuple[CallRecord, ...]
    total: int  # call records of the phase
    wrong: int  # failing ones (warm-up included)
    failing: Mapping[str, tuple[int, tuple[CallRecord, ...]]]  # case -> (total, first ones)


def _typed(rec: Mapping[str, Any], line: int) -> Any:
    """The journal object ``rec`` typed; a damaged record is the user's to fix: one line."""
    try:
        return typed_line(rec)
    except ValueError as exc:
        raise ConfigError(
            f"results.jsonl: line {line}: {exc}; the journal is damaged (re-run, or remove "
            "the line and re-render)"
        ) from None


def finished(run_end: RunEnd | None) -> bool:
    """The run-end says the run finished."""
    return run_end is not None and run_end.status == PhaseStatus.DONE


def _unfinished(header: RunHeader, run_end: RunEnd | None, phases: Iterable[PhaseVerdict]) -> str:
    """The explanation of an ``incomplete`` diagnosis: how the run ended, what ran."""
    how = f"was {run_end.status}" if run_end else "was killed (no run-end record)"
    done = [p.name for p in phases if p.status == PhaseStatus.DONE]
    planned = header.config.get("phases") or []
    missing = [p for p in planned if p not in done]
    ran = ", ".join(dict.fromkeys(done))
    return (
        f"the run did not finish ({how}); "
        + (f"nothing failed in {ran}" if ran else "no phase finished")
        + (f"; not run to the end: {', '.join(missing)}" if missing else "")
    )
