"""Reports rendered from the result file alone: ``report.json``, ``report.md``, console tables.

Because everything is derived from ``results.jsonl``, ``aclnn-stress report DIR`` re-renders an
interrupted or killed run exactly as far as it got.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from stress.baseline.store import atomic_write_bytes
from stress.engine.coverage import coverage, describe
from stress.engine.grading import diagnose, grade_phase, interference_matrix
from stress.errors import ConfigError
from stress.model import Diagnosis, PhaseStatus, Verdict, schema
from stress.records import CALL, PHASE_END, CallRecord, PhaseResult, PhaseVerdict, RunReport
from stress.report.journal import RESULTS_FILE, read_results

__all__ = [
    "REPORT_SCHEMA",
    "GradedJournal",
    "build_report",
    "grade_journal",
    "render_console",
    "render_markdown",
    "write_reports",
]

REPORT_SCHEMA = schema("report")
T = TypeVar("T")


def _phase_key(rec: Mapping[str, Any]) -> tuple[str, str]:
    return rec.get("phase", "?"), rec.get("variant", "")


@dataclass(frozen=True)
class GradedJournal:
    """A journal's records grouped and graded: what every report format renders."""

    header: Mapping[str, Any]
    phases: tuple[PhaseVerdict, ...]
    interleaved: tuple[CallRecord, ...]  # the interleaved phase's call records
    run_end: Mapping[str, Any]
    notes: tuple[str, ...]
    diagnosis: Diagnosis
    explanation: str
    first_failure_s: float | None  # seconds from the run's start to its first failing call


def grade_journal(records: Iterable[Mapping[str, Any]], *, final: bool = True) -> GradedJournal:
    """Group result records by phase (in the order they started), grade each, diagnose.

    ``final``: the journal is all there will be (a report), so a run without a ``done``
    run-end that found nothing is ``incomplete``, never ``clean``; the running session grades
    its own journal between phases with ``final=False``."""
    header: dict[str, Any] = {}
    order: list[tuple[str, str]] = []
    ends: dict[tuple[str, str], PhaseResult] = {}
    calls: dict[tuple[str, str], list[CallRecord]] = defaultdict(list)
    run_end: Mapping[str, Any] = {}
    notes: list[str] = []
    first: float | None = None
    for line, rec in enumerate(records, 1):
        kind = rec["type"]
        if kind == "run":
            header = dict(rec)
        elif kind == "phase-start":
            key = _phase_key(rec)
            if key in order:  # started again by --resume: the new attempt replaces the old
                calls.pop(key, None)
                ends.pop(key, None)
            else:
                order.append(key)
        elif kind == PHASE_END:
            ends[_phase_key(rec)] = _typed(PhaseResult, rec, line)
        elif kind == CALL:
            call = _typed(CallRecord, rec, line)
            calls[_phase_key(rec)].append(call)
            if first is None and not call.warmup and call.failed:
                first = call.elapsed
        elif kind == "run-end":
            run_end = rec
        elif kind == "note":
            notes.append(rec.get("message", ""))
    case_order = [c["id"] for c in header.get("cases", []) + header.get("control_cases", [])]
    phases = tuple(
        _grade_phase(key, ends.get(key), calls.get(key, []), case_order) for key in order
    )
    diagnosis, explanation = diagnose(phases)
    if final and diagnosis is Diagnosis.CLEAN and not _finished(run_end):
        diagnosis, explanation = Diagnosis.INCOMPLETE, _unfinished(header, run_end, phases)
    interleaved = tuple(r for (name, _), rs in calls.items() if name == "interleaved" for r in rs)
    return GradedJournal(
        header, phases, interleaved, run_end, tuple(notes), diagnosis, explanation, first
    )


def _typed(cls: type[T], rec: Mapping[str, Any], line: int) -> T:
    """``cls.from_json(rec)``; a damaged record is the user's to fix: one line naming it."""
    try:
        return cls.from_json(rec)  # type: ignore[attr-defined]
    except ValueError as exc:
        raise ConfigError(
            f"{RESULTS_FILE}: line {line}: {exc}; the journal is damaged (re-run, or remove "
            "the line and re-render)"
        ) from None


def _finished(run_end: Mapping[str, Any]) -> bool:
    return bool(run_end) and run_end.get("status") == PhaseStatus.DONE


def _unfinished(
    header: Mapping[str, Any], run_end: Mapping[str, Any], phases: Iterable[PhaseVerdict]
) -> str:
    """The explanation of an ``incomplete`` diagnosis: how the run ended, what ran."""
    how = f"was {run_end.get('status')}" if run_end else "was killed (no run-end record)"
    done = [p.name for p in phases if p.status == PhaseStatus.DONE]
    planned = header.get("config", {}).get("phases") or []
    missing = [p for p in planned if p not in done]
    ran = ", ".join(dict.fromkeys(done))
    return (
        f"the run did not finish ({how}); "
        + (f"nothing failed in {ran}" if ran else "no phase finished")
        + (f"; not run to the end: {', '.join(missing)}" if missing else "")
    )


def _grade_phase(
    key: tuple[str, str],
    end: PhaseResult | None,
    calls: list[CallRecord],
    case_order: list[str],
) -> PhaseVerdict:
    return grade_phase(
        key[0],
        calls,
        status=end.status if end else PhaseStatus.INTERRUPTED,
        detail=end.detail if end else "the run stopped during this phase",
        variant=key[1],
        case_order=case_order,
        seconds=end.seconds if end else 0.0,
    )


def build_report(records: Iterable[Mapping[str, Any]], *, final: bool = True) -> RunReport:
    """The report (see README "Reports") from result records (``final``: see
    :func:`grade_journal`)."""
    records = list(records)  # read twice: graded, then the coverage reached
    g = grade_journal(records, final=final)
    header, phases, run_end = g.header, g.phases, g.run_end
    diagnosis, explanation, notes = g.diagnosis, g.explanation, list(g.notes)
    interleaved = g.interleaved
    complete = bool(run_end) and run_end.get("status") == PhaseStatus.DONE
    document = {
        "schema": REPORT_SCHEMA,
        "backend": header.get("backend", {}),
        "config": header.get("config", {}),
        "seed": header.get("config", {}).get("seed"),
        "corpus": header.get("corpus", []),
        "baseline": header.get("baseline", {}).get("path"),
        "started": header.get("started"),
        "phases": phases,
        "interference": interference_matrix(interleaved),
        "diagnosis": str(diagnosis),
        "explanation": explanation,
        "verdict": str(diagnosis.run_verdict),
        "complete": complete,
        "status": str(run_end.get("status", PhaseStatus.INTERRUPTED))
        if run_end
        else str(PhaseStatus.INTERRUPTED),
        "reproducer": run_end.get("reproducer") if run_end else None,
        "notes": notes,
        "calls": sum(p.calls for p in phases),
        "timing": {
            "first_detection_s": g.first_failure_s if diagnosis != Diagnosis.CLEAN else None,
            "diagnosis_s": (run_end.get("timing") or {}).get("diagnosis_s") if run_end else None,
        },
        "coverage": coverage(header, (r for r in records if r.get("type") == "call")),
    }
    return RunReport.from_json(document)


def render_markdown(report: RunReport) -> str:
    """A Markdown report: summary, per-phase verdict tables, interference matrix."""
    b = report.backend
    cfg = report.config
    lines = [
        "# aclnn-stress report",
        "",
        f"**Diagnosis: `{report.diagnosis}`** — {report.explanation}",
        "",
        f"- backend: {b.get('kind')}{' (simulator)' if b.get('simulator') else ''}, "
        f"SoC {b.get('soc')}, version {b.get('version')}",
        f"- seed {report.seed}, threads {cfg.get('threads')}, context {cfg.get('context')}, "
        f"streams {', '.join(cfg.get('streams', []))}, deterministic "
        f"{'on' if cfg.get('deterministic') else 'off'}",
        f"- baseline: {report.baseline}",
        f"- status: {report.status}, {report.calls} calls",
        "",
        "| phase | verdict | calls | seconds | status |",
        "|---|---|---:|---:|---|",
    ]
    for p in report.phases:
        lines.append(
            f"| {p.title} | {p.verdict} | {p.calls} | {round(p.seconds, 3):.1f} | "
            f"{p.status}{': ' + p.detail if p.detail else ''} |"
        )
    lines += [f"- coverage: {line}" for line in describe(report.extra.get("coverage") or {})]
    for p in report.phases:
        lines += ["", f"## {p.title} — {p.verdict}", ""]
        lines += [
            "| case | verdict | calls | distinct results | detail |",
            "|---|---|---:|---:|---|",
        ]
        for c in p.cases:
            lines.append(f"| {c.id} | {c.verdict} | {c.calls} | {len(c.digests)} | {c.detail} |")
    inter = report.interference or {}
    if inter.get("cells"):
        failing = [c for c in inter["cells"] if c["failures"]]
        lines += ["", "## Interference (interleaved): victim x aggressor", ""]
        if not failing:
            lines.append(f"No interference among {len(inter['cells'])} ordered pairs.")
        else:
            lines += ["| victim | aggressor | failures / calls |", "|---|---|---|"]
            lines += [
                f"| {c['victim']} | {c['aggressor']} | {c['failures']} / {c['calls']} |"
                for c in failing
            ]
    repro = report.reproducer
    if repro and repro.get("command"):
        lines += [
            "",
            "## Minimal reproducer",
            "",
            f"`{repro['phase']}` still fails with only: {', '.join(repro['cases'])} "
            f"({repro.get('trials', 0)} trial runs). Corpus: `{repro['corpus']}`.",
            "",
            f"```\n{repro['command']}\n```",
        ]
    elif repro:
        lines += ["", "## Minimal reproducer", "", repro.get("note", "")]
    if report.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in report.notes]
    return "\n".join(lines) + "\n"


def render_console(report: RunReport, console: Any = None, *, cases: bool = True) -> None:
    """Verdict tables per phase and the diagnosis, with rich."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    summary = Table(title="phases", show_lines=False)
    for col in ("phase", "verdict", "calls", "seconds", "status"):
        summary.add_column(col, justify="right" if col in ("calls", "seconds") else "left")
    for p in report.phases:
        summary.add_row(
            escape(p.title),
            f"[{p.verdict.style}]{p.verdict}[/]",
            str(p.calls),
            f"{round(p.seconds, 3):.1f}",
            str(p.status),
        )
    console.print(summary)
    for line in describe(report.extra.get("coverage") or {}):
        console.print(f"coverage: {escape(line)}", highlight=False)
    if cases:
        for p in report.phases:
            if p.verdict == Verdict.PASS:
                continue
            t = Table(title=escape(f"{p.title}: {p.verdict}"))
            for col in ("case", "verdict", "calls", "results", "detail"):
                t.add_column(col)
            for c in p.cases:
                t.add_row(
                    escape(c.id),
                    f"[{c.verdict.style}]{c.verdict}[/]",
                    str(c.calls),
                    str(len(c.digests)),
                    escape(c.detail),
                )
            console.print(t)
    repro = report.reproducer or {}
    if repro.get("command"):
        console.print(
            f"minimal reproducer ({len(repro['cases'])} case(s): {', '.join(repro['cases'])}):",
            highlight=False,
        )
        console.print(f"  {escape(repro['command'])}", highlight=False, soft_wrap=True)
    style = "green" if report.diagnosis == Diagnosis.CLEAN else "bold red"
    console.print(f"diagnosis: [{style}]{report.diagnosis}[/] — {escape(report.explanation)}")


def write_reports(
    out_dir: str | Path, records: Iterable[Mapping[str, Any]] | None = None, *, html: bool = True
) -> RunReport:
    """Render ``report.json`` and ``report.md`` in ``out_dir`` from ``records`` (the run that
    wrote them), else from the directory's ``results.jsonl`` (``aclnn-stress report``); and,
    with ``html``, the self-contained ``report.html`` (from the journal, see
    :mod:`stress.htmlreport`)."""
    out_dir = Path(out_dir)
    if records is None:
        records = list(read_results(out_dir / RESULTS_FILE))
        if not any(r["type"] == "run" for r in records):
            raise ConfigError(
                f"{out_dir / RESULTS_FILE}: no results (the run was stopped before it wrote "
                "its header); nothing to report"
            )
    report = build_report(records)
    sanitized = out_dir / "sanitize.json"  # `aclnn-stress sanitize DIR` findings survive re-renders
    if sanitized.is_file():
        found = json.loads(sanitized.read_text(encoding="utf-8")).get("report")
        report = report.replace(extra={**report.extra, "sanitizer": found})
    document = json.dumps(report.to_json(), indent=1) + "\n"
    atomic_write_bytes(out_dir / "report.json", document.encode())
    atomic_write_bytes(out_dir / "report.md", render_markdown(report).encode())
    if html:
        from stress.htmlreport import render_html

        render_html(out_dir)
    return report
