"""The report's assembly: a journal folded into a :class:`~stress.grading.tally.JournalTally`,
graded and diagnosed, as one :class:`~stress.records.RunReport` (what every printer reads)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from stress.errors import ConfigError
from stress.grading.tally import GradedJournal, JournalTally, finished
from stress.grading.twin_field import describe as describe_twins
from stress.grading.twin_field import twin_findings
from stress.grading.variants import variants_summary
from stress.journal.lines import RunHeader
from stress.journal.results import read_results
from stress.records import RunReport
from stress.report_sections import Timing, TwinPair
from stress.vocabulary import Diagnosis, PhaseStatus, Verdict, schema

__all__ = ["REPORT_SCHEMA", "build_report", "grade_journal", "read_tally", "report_from"]

REPORT_SCHEMA = schema("report")


def grade_journal(records: Iterable[Mapping[str, Any]], *, final: bool = True) -> GradedJournal:
    """Group result records by phase (in the order they started), grade each, diagnose
    (``final``: see :meth:`JournalTally.graded`)."""
    tally = JournalTally()
    tally.feed(records)
    return tally.graded(final=final)


def build_report(records: Iterable[Mapping[str, Any]], *, final: bool = True) -> RunReport:
    """The report (see README "Reports") from result records (``final``: see
    :meth:`JournalTally.graded`)."""
    tally = JournalTally()
    tally.feed(records)
    return report_from(tally, final=final)


def report_from(tally: JournalTally, *, final: bool = True) -> RunReport:
    """The report of a journal folded into ``tally`` (the records themselves are not kept)."""
    g = tally.graded(final=final)
    header, phases, run_end = g.header, g.phases, g.run_end
    diagnosis, explanation, notes = g.diagnosis, g.explanation, list(g.notes)
    pairs = _twin_pairs(phases, header) if diagnosis is Diagnosis.CROSS_CALL_CONTAMINATION else []
    if pairs:  # a case and its twin in flight: name the field (stress.grading.twin_field)
        explanation = f"{explanation}; {describe_twins(pairs)}"
    document = {
        "schema": REPORT_SCHEMA,
        "backend": header.backend,
        "config": header.config,
        "seed": header.config.get("seed"),
        "corpus": header.corpus,
        "baseline": header.baseline_path,
        "started": header.started,
        "phases": phases,
        "interference": g.interference,
        "diagnosis": str(diagnosis),
        "explanation": explanation,
        "verdict": str(diagnosis.run_verdict),
        "complete": finished(run_end),
        "status": str(run_end.status if run_end else PhaseStatus.INTERRUPTED),
        "reproducer": run_end.reproducer if run_end else None,
        "notes": notes,
        "calls": sum(p.calls for p in phases),
        "timing": Timing(
            first_detection_s=g.first_failure_s if diagnosis != Diagnosis.CLEAN else None,
            diagnosis_s=run_end.timing.diagnosis_s if run_end else None,
        ),
        "coverage": tally.coverage.result(header),
    }
    if pairs:
        document["twins"] = [p.to_json() for p in pairs]
    variants = variants_summary(phases, header.config)
    if "variants" in header.config or variants["kinds"]:  # (not in older runs)
        document["variants"] = variants
    return RunReport.from_json(document)


def _twin_pairs(phases: Any, header: RunHeader) -> list[TwinPair]:
    """The failing (case, twin) pairs of the concurrent phases, with their differing field."""
    concurrent = ("mixed", "interleaved", "burst", "isolated")
    failing = [
        c.id
        for p in phases
        if p.name in concurrent
        for c in p.cases
        if c.verdict not in (Verdict.PASS, Verdict.INCOMPLETE)
    ]
    return twin_findings(failing, header.cases)


def read_tally(path: Path, tally: JournalTally | None = None) -> JournalTally:
    """The journal ``path`` streamed line by line into ``tally`` (a new :class:`JournalTally`
    by default); one line naming the file when it holds no run header."""
    tally = tally if tally is not None else JournalTally()
    tally.feed(read_results(path, typed=True))  # each line checked and parsed once
    if not tally.header:
        raise ConfigError(
            f"{path}: no results (the run was stopped before it wrote its header); nothing to "
            "report"
        )
    return tally
