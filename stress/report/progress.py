"""Live progress for the CLI: a rich progress display on a terminal, plain lines elsewhere."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from stress.records import CallRecord
from stress.session_ui import SessionUI
from stress.vocabulary import PhaseStatus, RunVerdict, Status

__all__ = ["ConsoleUI"]


class ConsoleUI(SessionUI):
    """Shows each phase with its call count and failures as records stream in."""

    def __init__(
        self, console: Console | None = None, *, quiet: bool = False, banner: str = ""
    ) -> None:
        self.console = console or Console(stderr=True)
        self.quiet = quiet
        self.banner = banner  # printed once the run dir is claimed: errors come before it
        self.live = self.console.is_terminal and not quiet
        self._progress: Progress | None = None
        self._task: Any = None
        self._calls = 0
        self._bad = 0
        self._last_draw = 0.0

    def message(self, text: str) -> None:
        if not self.quiet:
            self.console.print(text, soft_wrap=True, highlight=False)

    def run_start(self, out: Path) -> None:
        if self.banner:
            self.message(self.banner)

    def phase_start(self, name: str, variant: str, cases: int) -> None:
        self._calls = self._bad = 0
        title = name + (f" [{variant}]" if variant else "")
        if self.live:
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("[bold]{task.description}"),
                BarColumn(bar_width=None, pulse_style="cyan"),
                TextColumn("{task.fields[calls]} calls, {task.fields[bad]} failing"),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task(escape(title), total=None, calls=0, bad=0)
        elif not self.quiet:
            print(f"phase {title}: {cases} cases ...", file=sys.stderr, flush=True)

    def record(self, rec: CallRecord) -> None:
        if rec.warmup:
            return
        self._calls += 1
        self._bad += rec.failed
        now = time.monotonic()
        if self._progress is not None and now - self._last_draw > 0.1:
            self._last_draw = now
            self._progress.update(self._task, calls=self._calls, bad=self._bad)

    def phase_end(self, name: str, variant: str, status: str, calls: int, seconds: float) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if self.quiet:
            return
        title = name + (f" [{variant}]" if variant else "")
        done = status == PhaseStatus.DONE
        clean = self._bad == 0 and done
        mark = f"[green]{Status.OK}[/]" if clean else f"[red]{RunVerdict.FINDINGS}[/]"
        note = "" if done else f" ({status})"
        self.console.print(
            f"  {escape(f'{title:<28}')} {self._calls:>6} calls {seconds:7.1f} s  {mark}"
            f"{escape(note)}",
            highlight=False,
        )
