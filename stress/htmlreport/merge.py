"""Merge runs from several hosts or devices into one report: per-host columns and flakiness.

Runs merge only when they ran the same corpus (the same case ids and content keys, see
:func:`stress.htmlreport.load.fingerprint`); otherwise their verdicts are not comparable and
:func:`merge_runs` refuses with a :class:`~stress.errors.ConfigError` naming the directories.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from stress.errors import ConfigError
from stress.htmlreport import charts
from stress.htmlreport.html import _write, environment, render_html
from stress.htmlreport.load import Run, load_run
from stress.vocabulary import Verdict

__all__ = ["Flakiness", "MergedCell", "merge_runs"]


@dataclass(frozen=True)
class MergedCell:
    """A case's worst verdict in one run, linking to that run's report."""

    verdict: str
    href: str

    @classmethod
    def of(cls, run: Run, case: str, page: str) -> MergedCell | None:
        """``case``'s cell in ``run`` (``page``, its report): None where no phase ran it."""
        verdicts = [(p, c) for p in run.phases for c in p.cases if c.id == case]
        if not verdicts:
            return None
        v = Verdict.combine([c.verdict for _, c in verdicts])
        bad = next((p for p, c in verdicts if c.verdict == v), None)
        anchor = (
            f"#{charts.slug('fail', bad.name, bad.variant, case)}"
            if bad and v != Verdict.PASS
            else ""
        )
        return cls(v, page + anchor)


@dataclass(frozen=True)
class Flakiness:
    """How often a case failed in one phase over the merged runs."""

    case: str
    phase: str
    failed: int
    runs: int

    @property
    def rate(self) -> float:
        return self.failed / self.runs if self.runs else 0.0


def _labels(runs: Sequence[Run]) -> list[str]:
    hosts = [r.host for r in runs]
    return [
        h if hosts.count(h) == 1 else f"{h} ({r.dir.name})"
        for h, r in zip(hosts, runs, strict=True)
    ]


def _check_corpus(runs: Sequence[Run]) -> None:
    first = runs[0]
    for r in runs[1:]:
        if r.fingerprint != first.fingerprint:
            raise ConfigError(
                f"--merge: {r.dir} ran another corpus than {first.dir} (fingerprint "
                f"{r.fingerprint} vs {first.fingerprint}); merge only runs of the same corpus"
            )


def _cells(run: Run, page: str) -> dict[str, MergedCell]:
    """Per case the run ran: its worst verdict over the phases, linking to its first failure."""
    cells = {cid: MergedCell.of(run, cid, page) for cid in run.case_ids}
    return {cid: cell for cid, cell in cells.items() if cell is not None}


def _flakiness(runs: Sequence[Run]) -> list[Flakiness]:
    seen: dict[tuple[str, str], list[int]] = {}
    for r in runs:
        for p in r.phases:
            for c in p.cases:
                cell = seen.setdefault((c.id, p.title), [0, 0])
                cell[0] += c.verdict != Verdict.PASS
                cell[1] += 1
    rows = [Flakiness(cid, ph, f, n) for (cid, ph), (f, n) in seen.items()]
    return sorted(rows, key=lambda f: (-f.rate, f.case, f.phase))


def merge_runs(run_dirs: Sequence[Path], out_dir: Path) -> Path:
    """Render ``out_dir/report.html`` merging ``run_dirs``; returns its path.

    Each run's own ``report.html`` is rendered when missing, so the merged page links to it."""
    if not run_dirs:
        raise ConfigError("--merge: name at least one run directory")
    runs = [load_run(Path(d)) for d in run_dirs]
    _check_corpus(runs)
    out_dir = Path(out_dir)
    out = out_dir / "report.html"
    pages = []
    for r in runs:
        page = r.dir / "report.html"
        if not page.exists():
            render_html(r.dir)
        pages.append(os.path.relpath(page, out_dir))
    cells = [_cells(r, page) for r, page in zip(runs, pages, strict=True)]
    case_ids = list(runs[0].case_ids)
    text = (
        environment()
        .get_template("merged.html.j2")
        .render(
            runs=list(zip(_labels(runs), runs, pages, strict=True)),
            case_ids=[c for c in case_ids if any(c in col for col in cells)],
            cells=cells,
            flaky=_flakiness(runs),
            fingerprint=runs[0].fingerprint,
        )
    )
    _write(out, text)
    return out
