"""Live progress for the CLI: a rich progress display on a terminal, plain lines elsewhere.

Off a terminal rich is imported only for a line it would change (markup, an emoji code, a tab
or a control character: :func:`plain`): a run's lines up to its first failure are printed as
they are, and ``import rich`` (~0.04 s of CPU on the 2-core machine) no longer comes between
the corpus load and the first step's go (tests/test_startup.py)."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stress.records import CallRecord
from stress.session_ui import SessionUI
from stress.vocabulary import PhaseStatus, RunVerdict, Status

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

__all__ = ["ConsoleUI", "plain"]

#: What rich's console renders otherwise than as written: markup (``[tag]``), emoji codes
#: (``:name:``); tabs and control characters are checked apart (:func:`plain`).
_RICH_SYNTAX = re.compile(r"\[|:\S*:")
#: Variables that make rich treat a pipe as a terminal (rich.console.Console.is_terminal).
_TERMINAL_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE")


def plain(text: str) -> bool:
    """Whether rich's ``print(text, soft_wrap=True, highlight=False)`` off a terminal writes
    ``text`` as it is (no markup, emoji code, tab or control character in it)."""
    return not _RICH_SYNTAX.search(text) and all(c == "\n" or c.isprintable() for c in text)


class ConsoleUI(SessionUI):
    """Shows each phase with its call count and failures as records stream in."""

    def __init__(
        self, console: Console | None = None, *, quiet: bool = False, banner: str = ""
    ) -> None:
        self._console = console
        self.quiet = quiet
        self.banner = banner  # printed once the run dir is claimed: errors come before it
        # rich decides what is a terminal; a pipe with none of its variables set never is
        maybe_live = console is not None or sys.stderr.isatty()
        maybe_live = maybe_live or any(os.environ.get(v) is not None for v in _TERMINAL_ENV)
        self.live = not quiet and maybe_live and self.console.is_terminal
        self._progress: Progress | None = None
        self._task: Any = None
        self._calls = 0
        self._bad = 0
        self._last_draw = 0.0

    @property
    def console(self) -> Console:
        """The rich console (imported and made at first use)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True)
        return self._console

    def message(self, text: str) -> None:
        if self.quiet:
            return
        if self._console is None and not self.live and plain(text):
            print(text, file=sys.stderr, flush=True)  # what rich would write, without rich
            return
        self.console.print(text, soft_wrap=True, highlight=False)

    def run_start(self, out: Path) -> None:
        if self.banner:
            self.message(self.banner)

    def phase_start(self, name: str, variant: str, cases: int) -> None:
        self._calls = self._bad = 0
        title = name + (f" [{variant}]" if variant else "")
        if self.live:
            from rich.markup import escape
            from rich.progress import (
                BarColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

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
        from rich.markup import escape

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
