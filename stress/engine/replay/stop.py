"""A phase child's stop request: SIGTERM from its parent ends the phase at the next round.

The parent, asked to stop (SIGINT / SIGTERM, see :mod:`stress.signals`), sends SIGTERM to its
phase child instead of killing it: the child sets :data:`requested`, every worker pool's budget
is then exhausted (:class:`stress.engine.replay.phase_budget.Budget`), so the calls in flight
end and are recorded, and the child ends normally. The parent waits a bounded time for that,
then kills.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

__all__ = ["listen", "requested"]

#: Set once the child was asked to stop.
requested = threading.Event()


def listen() -> None:
    """In the child: SIGTERM sets :data:`requested` instead of ending the process."""

    def handler(signum: int, frame: FrameType | None) -> None:
        requested.set()

    signal.signal(signal.SIGTERM, handler)
