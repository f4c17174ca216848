"""Standard output that a closed reader cannot break.

``aclnn-stress run | head -n 2`` closes the pipe after two lines; the run must still finish,
write its files and exit with its verdict's code. :func:`guard_stdout` replaces ``sys.stdout``
by a wrapper that, on the first ``BrokenPipeError``, points file descriptor 1 at ``/dev/null``
and drops the rest of the output (rich's consoles write through ``sys.stdout`` too).
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

__all__ = ["GuardedStdout", "guard_stdout"]


class GuardedStdout:
    """A text stream that swallows ``BrokenPipeError`` once the reader has gone."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.broken = False

    def _drop(self) -> None:
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        if self.broken:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._drop()
            return len(text)

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._drop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> GuardedStdout:
    """Install (once) and return the guarded ``sys.stdout``."""
    if not isinstance(sys.stdout, GuardedStdout):
        sys.stdout = GuardedStdout(sys.stdout)  # type: ignore[assignment]
    return sys.stdout  # type: ignore[return-value]
