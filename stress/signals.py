"""SIGINT and SIGTERM as an exception the run can clean up after.

Under :func:`interruptible`, the first SIGINT or SIGTERM raises :class:`Interrupted` in the
main thread: the session stops scheduling, kills the phase child in flight (its calls written so
far stay in the journal), writes the run-end record and the partial report, and the CLI exits
with ``128 + signal`` (130 for SIGINT, 143 for SIGTERM). Later signals are ignored while that
cleanup runs, so a second Ctrl-C cannot leave a half-written report.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Interrupted", "exit_code", "interruptible"]

_HANDLED = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The run was asked to stop by ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_code(exc: KeyboardInterrupt) -> int:
    """The exit status of a run stopped by ``exc``: 128 + the signal (130 for a plain Ctrl-C)."""
    return 128 + (exc.signum if isinstance(exc, Interrupted) else signal.SIGINT)


@contextmanager
def interruptible() -> Iterator[None]:
    """Turn the first SIGINT/SIGTERM into :class:`Interrupted`; ignore the ones after it."""
    fired = False

    def handler(signum: int, frame: FrameType | None) -> None:
        nonlocal fired
        if fired:
            return
        fired = True
        raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in _HANDLED}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
