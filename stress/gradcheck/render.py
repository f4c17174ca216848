"""Console rendering of :class:`stress.gradcheck.check.GradcheckResult` (rich), for the CLI."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from stress.gradcheck.check import (
    AGREES,
    BIASED,
    DRIFT_REL,
    K_SIGMA,
    SETTLE_RTOL,
    UNCONVERGED,
    GradcheckResult,
    ProgressFn,
)
from stress.gradcheck.pair import GradPair

__all__ = ["header", "progress", "report", "table"]

_STYLE = {AGREES: "green", BIASED: "bold red", UNCONVERGED: "yellow"}


def _num(v: float, digits: int = 7) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.{digits}g}"


def header(
    console: Console,
    params: Mapping[str, Any],
    seed: int,
    eps: Sequence[float],
    fd: str,
    backward: str,
    backend: str,
    pair: GradPair,
) -> None:
    """What is about to run: the case, the seed and the options (printed before the run)."""
    shown = {k: v for k, v in params.items() if v is not None}
    first = [k for k in pair.case_order() if k in shown]  # the case's shape first
    case = " ".join(f"{k}={shown[k]}" for k in [*first, *(k for k in shown if k not in first)])
    console.print(f"[bold]gradcheck[/] {pair.name}  {case}  seed={seed}")
    fd_text = "float64 numpy forward" if fd == "reference" else "the backend's forward"
    bwd_text = "numpy reference (float32)" if backward == "reference" else "the backend's backward"
    console.print(f"  FD through: {fd_text}   backward: {bwd_text}   backend: {backend}")
    console.print(f"  eps sweep: {', '.join(f'{e:g}' for e in eps)}")
    low = [f"bf16 {g} 2^-7" for g in pair.bf16_gradients()]
    console.print(
        f"  rule: biased if |f*-g| > {K_SIGMA:g}(σ+t) + rtol·max(|g|,S), rtol {pair.spec.rtol:g}"
        f"{' (' + ', '.join(low) + ')' if low else ''}; unconverged if the sweep moves > "
        f"{K_SIGMA:g}σ + {SETTLE_RTOL:g}·max(|f*|,S) (see --help)"
    )


@contextmanager
def progress(console: Console) -> Iterator[ProgressFn | None]:
    """A rich progress bar over loss evaluations on a terminal; None elsewhere."""
    if not console.is_terminal:
        yield None
        return
    with Progress(
        TextColumn("FD evaluations"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("", total=None)

        def tick(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, description=label)

        yield tick


def table(result: GradcheckResult) -> Table:
    """element, backward, FD per eps, FD*, noise, diff, relative diff, resolution, verdict."""
    t = Table(title="finite differences vs backward", title_justify="left")
    t.add_column("element", no_wrap=True)
    t.add_column("backward g", justify="right")
    for e in result.eps:
        t.add_column(f"FD h={e:g}", justify="right")
    t.add_column("FD*", justify="right")
    t.add_column("noise σ", justify="right")
    t.add_column("f*-g", justify="right")
    t.add_column("rel", justify="right")
    t.add_column("resolves", justify="right")
    t.add_column("verdict", no_wrap=True)
    for row in result.rows:
        r = row.result
        verdict = f"[{_STYLE[r.verdict]}]{r.verdict}[/]"
        if r.sign_flip:
            verdict += " [bold red]SIGN FLIP[/]"
        if row.noise_limited and r.verdict != UNCONVERGED:
            verdict += " [dim](noise-limited)[/]"
        den = max(abs(row.backward), row.scale)
        rel = r.diff / den if den > 0 else math.nan
        t.add_row(
            escape(str(row.element)),
            _num(row.backward),
            *(_num(f) for f in row.fd),
            _num(r.estimate, 9),
            _num(r.noise, 2),
            _num(r.diff, 3),
            _num(rel, 2),
            _num(row.resolution, 2),
            verdict,
        )
    return t


def report(console: Console, result: GradcheckResult) -> None:
    """The table, notes, the noise floor and the summary line."""
    console.print(table(result))
    for note in result.notes:
        console.print(escape(f"note: {note}"))
    for row in result.rows:
        if any(
            math.isnan(h) or abs(h - e) > 1e-4 * e
            for h, e in zip(row.steps, result.eps, strict=True)
        ):
            steps = ", ".join("dropped" if math.isnan(h) else f"{h:.6g}" for h in row.steps)
            console.print(escape(f"  {row.element}: effective steps {steps}"))
    floors = [
        (K_SIGMA * row.result.noise / max(abs(row.backward), row.scale), row)
        for row in result.rows
        if max(abs(row.backward), row.scale) > 0 and not math.isnan(row.result.noise)
    ]
    if floors:
        worst, wrow = max(floors, key=lambda t: t[0])
        console.print(
            f"noise floor ({K_SIGMA:g}σ of the FD rounding noise of f*, relative to "
            f"max(|g|, S)): max {worst:.2g} at {escape(str(wrow.element))} (loss quantum q = "
            f"{wrow.quantum:.3g}, n(h) = q/2h); differences below it cannot be resolved"
        )
    limited = sum(r.noise_limited and r.verdict != UNCONVERGED for r in result.rows)
    if limited:
        console.print(
            f"{limited} row(s) noise-limited: they could not resolve a relative error of "
            f"{DRIFT_REL:g} (column 'resolves'); check them with --fd reference"
        )
    n = len(result.rows)
    console.print(
        f"{n} element{'s' if n != 1 else ''}: {result.count(AGREES)} agrees, "
        f"{result.count(BIASED)} biased ({result.sign_flips} sign flips), "
        f"{result.count(UNCONVERGED)} unconverged  ->  "
        f"[{_STYLE[result.verdict]}]{result.verdict}[/] (exit {result.exit_code}), "
        f"{result.elapsed_s:.1f} s"
    )
    for row in result.rows:
        if row.result.verdict != AGREES:
            console.print(escape(f"  {row.element}: {row.result.verdict}: {row.result.reason}"))
