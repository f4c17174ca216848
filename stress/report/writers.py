"""The report's writers: ``report.json``, ``report.md`` and the console tables of a graded
:class:`~stress.records.RunReport` (assembled by :mod:`stress.grading.assemble`), and
``report.html`` beside them (:mod:`stress.htmlreport`).

Because everything is derived from ``results.jsonl``, ``aclnn-stress report DIR`` re-renders an
interrupted or killed run exactly as far as it got.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stress.errors import ConfigError
from stress.files import atomic_write_bytes, load_json
from stress.grading.assemble import read_tally, report_from
from stress.grading.coverage import describe
from stress.grading.tally import JournalTally
from stress.grading.variants import describe_variants
from stress.journal.results import RESULTS_FILE
from stress.records import RunReport
from stress.report_sections import Fingerprint, TwinPair
from stress.vocabulary import Diagnosis, Verdict

__all__ = ["live_tally", "render_console", "render_markdown", "write_reports"]


def render_markdown(report: RunReport) -> str:
    """A Markdown report: summary, per-phase verdict tables, interference matrix."""
    b = Fingerprint.from_json(report.backend)
    cfg = report.config
    lines = [
        "# aclnn-stress report",
        "",
        f"**Diagnosis: `{report.diagnosis}`** — {report.explanation}",
        "",
        f"- backend: {b.kind}{' (simulator)' if b.simulator else ''}, "
        f"SoC {b.soc}, version {b.version}",
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
    lines += [f"- {line}" for line in describe_variants(report.extra.get("variants"))]
    lines += [  # a case and its twin failing in flight (stress.grading.twin_field)
        f"- twins in flight: {t.case} and {t.twin}: same shape, {t.field}"
        for t in map(TwinPair.from_json, report.extra.get("twins") or [])
    ]
    for p in report.phases:
        lines += ["", f"## {p.title} — {p.verdict}", ""]
        lines += [
            "| case | verdict | calls | distinct results | detail |",
            "|---|---|---:|---:|---|",
        ]
        for c in p.cases:
            lines.append(f"| {c.id} | {c.verdict} | {c.calls} | {len(c.digests)} | {c.detail} |")
    cells = report.interference.cells
    if cells:
        failing = [c for c in cells if c.failures]
        lines += ["", "## Interference (interleaved): victim x aggressor", ""]
        if not failing:
            lines.append(f"No interference among {len(cells)} ordered pairs.")
        else:
            lines += ["| victim | aggressor | failures / calls |", "|---|---|---|"]
            lines += [f"| {c.victim} | {c.aggressor} | {c.failures} / {c.calls} |" for c in failing]
    repro = report.reproducer
    if repro and repro.command:
        lines += [
            "",
            "## Minimal reproducer",
            "",
            f"`{repro.phase}` still fails with only: {', '.join(repro.cases or ())} "
            f"({repro.trials or 0} trial runs). Corpus: `{repro.corpus}`.",
            "",
            f"```\n{repro.command}\n```",
        ]
    elif repro:
        lines += ["", "## Minimal reproducer", "", repro.note or ""]
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
    for line in describe_variants(report.extra.get("variants")):
        console.print(escape(line), highlight=False)
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
    repro = report.reproducer
    if repro and repro.command:
        cases = repro.cases or []
        console.print(
            f"minimal reproducer ({len(cases)} case(s): {', '.join(cases)}):", highlight=False
        )
        console.print(f"  {escape(repro.command)}", highlight=False, soft_wrap=True)
    style = "green" if report.diagnosis == Diagnosis.CLEAN else "bold red"
    console.print(f"diagnosis: [{style}]{report.diagnosis}[/] — {escape(report.explanation)}")


def live_tally() -> JournalTally:
    """The tally a running session folds its journal into as it writes it: what report.json
    and report.md need and the bounded sample of calls report.html draws, so no report reads
    the journal back."""
    from stress.htmlreport.load import sampling_tally

    return sampling_tally()


def write_reports(
    out_dir: str | Path, tally: JournalTally | None = None, *, html: bool = True
) -> RunReport:
    """Render ``report.json`` and ``report.md`` in ``out_dir`` from ``tally`` (the run that
    wrote the journal folded it as it went), else from the directory's ``results.jsonl``
    streamed into one (``aclnn-stress report``); and, with ``html``, the self-contained
    ``report.html`` (see :mod:`stress.htmlreport`: from the same pass over the journal when
    this one read it, else from the journal)."""
    out_dir = Path(out_dir)
    if tally is None:
        sample = None
        if html:  # one pass over the journal for both reports: keep what the HTML draws
            from stress.htmlreport.load import sampling_tally

            sample = sampling_tally()
        tally = read_tally(out_dir / RESULTS_FILE, sample)
    report = report_from(tally)
    found = _sanitizer_findings(out_dir / "sanitize.json")
    if found is not None:
        report = report.replace(extra={**report.extra, "sanitizer": found})
    document = json.dumps(report.to_json(), indent=1) + "\n"
    atomic_write_bytes(out_dir / "report.json", document.encode())
    atomic_write_bytes(out_dir / "report.md", render_markdown(report).encode())
    if html:
        from stress.htmlreport import render_html

        render_html(out_dir, tally=tally if tally.keep_calls else None)
    return report


def _sanitizer_findings(path: Path) -> Any:
    """The summary ``aclnn-stress sanitize DIR`` left in ``path`` for report.json (re-renders
    keep it), None without the file; a bad file is one line (exit 2)."""
    if not path.is_file():
        return None
    fix = "rerun `aclnn-stress sanitize DIR`, or remove the file"
    summary = load_json(path, "sanitizer summary", fix=fix)
    if not isinstance(summary, dict):
        raise ConfigError(f"{path}: the sanitizer summary is not a JSON object; {fix}")
    return summary.get("report")
