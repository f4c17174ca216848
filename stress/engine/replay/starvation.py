"""How long this process was starved of CPU: its threads runnable but not running.

A call that is still in flight may be hung, or only waiting for a core on a loaded machine.
Linux keeps, per thread, the time it spent runnable on a run queue without running
(``/proc/self/task/<tid>/schedstat``, its second field, in nanoseconds). A deadlocked call's
threads sleep (blocked on a lock: no run-queue wait); a starved call's threads wait to run. The
pool's watchdog ticks :class:`Starvation` every few tens of milliseconds: each tick adds the
largest run-queue wait any one thread of the process gathered since the previous tick (at most
the tick's own length: time the process could not run), so :attr:`Starvation.total` is a clock
of starved seconds, and a call's starved time is its difference between the call's start and
now (:mod:`stress.engine.replay.hang_rule` discounts it). Where the kernel keeps no such
statistics the clock stays at 0 and nothing is discounted.
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["Starvation"]

_TASKS = "/proc/self/task"


def _waits() -> dict[str, int]:
    """Each thread's run-queue wait so far (nanoseconds), by thread id."""
    waits: dict[str, int] = {}
    try:
        tids = os.listdir(_TASKS)
    except OSError:
        return waits
    for tid in tids:
        try:
            with open(f"{_TASKS}/{tid}/schedstat", "rb") as f:
                waits[tid] = int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # the thread ended meanwhile, or no statistics
    return waits


class Starvation:
    """The process's starved seconds so far (see the module doc); :meth:`tick` advances it."""

    def __init__(self) -> None:
        self.total = 0.0
        self._lock = threading.Lock()
        self._last = _waits()
        self._at = time.monotonic()

    def tick(self) -> float:
        """Add the starvation since the previous tick; returns :attr:`total`."""
        with self._lock:
            now, waits = time.monotonic(), _waits()
            grown = [w - self._last[t] for t, w in waits.items() if t in self._last]
            worst = max(grown, default=0) / 1e9
            self.total += max(0.0, min(worst, now - self._at))
            self._last, self._at = waits, now
            return self.total
