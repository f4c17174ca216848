"""``report.html``: one self-contained, offline file per run (Jinja2 templates, inline SVG).

The page carries a Content-Security-Policy of ``default-src 'none'`` (inline styles and data:
images only), no script and no external URL, so opening it makes no network request.
"""

from __future__ import annotations

import functools
import os
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from stress.files import atomic_write_bytes
from stress.htmlreport import charts
from stress.htmlreport.gradplot import sweep_plot
from stress.htmlreport.load import FAILING_CALLS_SHOWN, Run, load_run
from stress.htmlreport.rerun_commands import rerun_command
from stress.records import CallRecord
from stress.vocabulary import Verdict

if TYPE_CHECKING:
    from stress.grading.tally import JournalTally

__all__ = ["FAILING_CALLS_SHOWN", "environment", "render_html", "render_xdist_summary"]


VERDICT_CLASS = {
    Verdict.PASS: "pass",
    Verdict.MISMATCH_STABLE: "mismatch",
    Verdict.MISMATCH_RANDOM: "mismatch",
    Verdict.UNWRITTEN: "unwritten",
    Verdict.ERROR: "error",
    Verdict.CRASH: "crash",
    Verdict.HANG: "crash",
    Verdict.OUT_OF_MEMORY: "error",
    Verdict.INCOMPLETE: "unwritten",
}


@functools.cache
def environment() -> jinja2.Environment:
    """The template environment: autoescape on for every template. One per process, so that
    each template compiles once (compiling report.html.j2 took ~60 ms of CPU per report: the
    plugin step of ``make stress`` renders one report per test)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("stress.htmlreport", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["vclass"] = lambda v: VERDICT_CLASS.get(v, "other")
    env.filters["short"] = lambda d: (d[:12] + "…") if d and len(d) > 13 else (d or "—")
    env.globals["slug"] = charts.slug
    return env


@dataclass(frozen=True)
class Failing:
    """The failing calls of one case in one phase (the target of a verdict-grid link)."""

    anchor: str
    phase: str
    case: str
    verdict: str
    total: int
    shown: tuple[CallRecord, ...]


@dataclass(frozen=True)
class DigestRow:
    """A case's baseline digest against every digest it produced, over all phases."""

    case: str
    baseline: str
    seen: tuple[tuple[str, int, bool], ...]  # digest, count, equals the baseline
    kind: str  # matches | stable | random | error status (no output) | not run


def _failing(run: Run) -> list[Failing]:
    out = []
    for p in run.phases:
        for case in p.cases:
            if case.verdict == Verdict.PASS:
                continue
            total, calls = run.failing.get((p.name, p.variant, case.id), (0, ()))
            out.append(
                Failing(
                    charts.slug("fail", p.name, p.variant, case.id),
                    p.title,
                    case.id,
                    case.verdict,
                    total,
                    calls[:FAILING_CALLS_SHOWN],
                )
            )
    return out


def _digests(run: Run) -> list[DigestRow]:
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    calls: Counter[str] = Counter()
    for p in run.phases:
        for c in p.cases:
            seen[c.id].update(dict(c.digests))
            calls[c.id] += c.calls
    rows = []
    for cid in [*run.case_ids, *sorted(set(seen) - set(run.case_ids))]:
        base = run.baseline.get(cid, "")
        counts = seen.get(cid, Counter())
        other = [d for d in counts if d != base]
        kind = (
            ("error status" if calls[cid] else "not run")
            if not counts
            else "matches"
            if not other
            else "stable"
            if len(other) == 1 and base not in counts
            else "random"
        )
        rows.append(
            DigestRow(cid, base, tuple((d, n, d == base) for d, n in counts.most_common()), kind)
        )
    return rows


def _grid(run: Run) -> tuple[list[str], dict[tuple[str, str], str]]:
    """Case rows (corpus order) and the verdict of (case, phase key)."""
    cells: dict[tuple[str, str], str] = {}
    rows: list[str] = []
    for p in run.phases:
        for c in p.cases:
            cells[(c.id, charts.slug(p.name, p.variant))] = c.verdict
            if c.id not in rows:
                rows.append(c.id)
    order = {cid: i for i, cid in enumerate(run.case_ids)}
    return sorted(rows, key=lambda cid: order.get(cid, len(order))), cells


def context(run: Run) -> dict[str, Any]:
    """Everything the report template shows, for one run."""
    rows, cells = _grid(run)
    return {
        "run": run,
        "grid_rows": rows,
        "grid": cells,
        "failing": _failing(run),
        "heatmap": charts.heatmap(run),
        "timelines": charts.timelines(run),
        "digests": _digests(run),
        "gradchecks": [(g, [sweep_plot(e) for e in g.elements]) for g in run.gradchecks],
        "n_calls": run.n_calls,
        "rerun": rerun_command(run),
    }


def render_html(
    run_dir: Path, out: Path | None = None, *, tally: JournalTally | None = None
) -> Path:
    """Render ``run_dir/report.html`` (or ``out``) from its journal alone (``tally``: already
    read into a :func:`~stress.htmlreport.load.sampling_tally`); returns the path."""
    run_dir = Path(run_dir)
    out = Path(out) if out is not None else run_dir / "report.html"
    run = load_run(run_dir, tally)
    text = environment().get_template("report.html.j2").render(**context(run))
    _write(out, text)
    return out


def _run_dirs(d: Path) -> list[Path]:
    """``d`` itself when it holds a journal, else every run directory below it."""
    if (d / "results.jsonl").exists():
        return [d]
    return sorted(p.parent for p in d.rglob("results.jsonl"))


def render_xdist_summary(worker_dirs: Sequence[Path], out: Path) -> Path:
    """A summary page for a pytest-xdist session: one row per run, grouped by worker, linking
    each run's ``report.html`` (rendered first when missing).

    Each entry of ``worker_dirs`` is a run directory or a directory holding run directories
    (a worker's output, e.g. ``stress-out/pytest-<stamp>/gw0``)."""
    out = Path(out)
    rows = []
    for w in worker_dirs:
        w = Path(w)
        for d in _run_dirs(w):
            page = d / "report.html"
            if not page.exists():
                render_html(d)
            rows.append(
                {
                    "worker": w.name,
                    "run": load_run(d),
                    "href": os.path.relpath(page, out.parent),
                    "label": os.path.relpath(d, w) if d != w else d.name,
                }
            )
    text = environment().get_template("xdist.html.j2").render(rows=rows)
    _write(out, text)
    return out


def _write(path: Path, text: str) -> None:
    # a unique temp name per writer (two `report DIR` at once never share one), then a rename
    atomic_write_bytes(path, text.encode("utf-8"))
