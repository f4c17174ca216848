"""When a call in flight is a hang: an adaptive limit per case, confirmed by a second wait.

A fixed timeout has to be long enough for the slowest case on the slowest machine, so a
deadlocked millisecond call is found only after it (10 s by default). The baseline records each
case's call time (``CaseBaseline.call_p99_s``: the slowest of its recorded calls), and a call is
judged against its own case:

* **limit** ``L = min(call_timeout, max(floor, factor × p99))`` — ``--hang-floor`` (default
  :data:`HANG_FLOOR` s) keeps scheduling jitter of millisecond calls from counting,
  ``--hang-factor`` (default :data:`HANG_FACTOR`) leaves a slow call room; a case without a
  recorded time gets ``--call-timeout``;
* **confirmation** — a call past ``L`` is only *suspect*; it becomes a ``HANG`` when it is still
  in flight after a second wait. If no call of the pool finished since the call became suspect
  (the pool is stalled: a deadlock holds every worker, or the others ended their budget) the
  wait is ``L`` again: the hang stands at ``2 L`` (1 s for a millisecond case by default). If
  calls do finish meanwhile, the machine is progressing and this call may only be slow under
  load: the wait is stretched to ``L × slowdown``, where ``slowdown`` (≥ 1) is how much slower
  than their recorded p99 the calls that finished lately ran (their median ratio,
  :class:`Slowdown`): ten times slower calls, a ten times longer wait. Nothing is declared
  before ``L`` nor waited past ``--call-timeout``, which stays the upper bound.
* **starvation** — while the pool is stalled, the call's time counts only while the process
  could run: the seconds its threads waited for a core since the call started
  (:mod:`stress.engine.replay.starvation`) are taken off its elapsed time. A deadlocked call's
  threads sleep and lose nothing; a call on a machine so loaded that it, alone in its pool or
  with every other worker as slow, waits for a core, gets its wait back (a one-thread phase has
  no other call to show progress).

This module decides only (no clock, no thread): :mod:`stress.engine.replay.pool`'s watchdog asks
it about every call in flight.
"""

from __future__ import annotations

import enum
import statistics
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from stress.config import DEFAULTS
from stress.records import CallBegin

__all__ = [
    "HANG_FACTOR",
    "HANG_FLOOR",
    "CallState",
    "HangReport",
    "HangRule",
    "Slowdown",
    "StuckCall",
    "hang_rule_for",
]

#: Seconds: no call is suspect sooner (README "Hangs": four times the slowest millisecond call
#: measured in a concurrent phase; the wait for a core is not counted while the pool stalls).
HANG_FLOOR: float = DEFAULTS["hang_floor"]
#: A call is suspect after this many times its case's recorded p99.
HANG_FACTOR: float = DEFAULTS["hang_factor"]
#: Finished calls the slowdown is taken from (the median of their ratios).
SLOWDOWN_WINDOW = 32


class CallState(enum.Enum):
    """What the rule makes of a call in flight."""

    RUNNING = enum.auto()  # within its limit
    SUSPECT = enum.auto()  # past its limit, being confirmed
    HUNG = enum.auto()  # still running after the confirmation: a HANG


@dataclass(frozen=True)
class HangRule:
    """The per-call hang limit and its confirmation (see the module docstring)."""

    ceiling_s: float  # --call-timeout: the fixed upper bound
    floor_s: float = HANG_FLOOR
    factor: float = HANG_FACTOR
    expected: Mapping[str, float] | None = None  # case id -> recorded p99 seconds

    def expected_s(self, in_flight: CallBegin) -> float | None:
        """The recorded time of what a worker has in flight: its case (plus its aggressor, for
        an interleaved pair; times its ``launches`` for a repeatable executor launched several
        times, stress.engine.call.repeatable); None when a case has no recorded time."""
        if not self.expected:
            return None
        ids = [i for i in (in_flight.case, in_flight.aggressor) if i]
        times = [self.expected.get(str(i)) for i in ids]
        if not ids or any(t is None for t in times):
            return None
        launches = in_flight.launches or 1
        return float(sum(t for t in times if t is not None)) * launches

    def limit(self, expected_s: float | None) -> float:
        """``L``: when a call of this recorded time becomes suspect."""
        if expected_s is None:
            return self.ceiling_s
        return min(self.ceiling_s, max(self.floor_s, self.factor * expected_s))

    def deadline(
        self, expected_s: float | None, slowdown: float = 1.0, progressed: bool = False
    ) -> float:
        """Seconds after its start at which a call still in flight is a ``HANG``: ``L`` plus the
        confirmation wait (``L``, or ``L × slowdown`` when the pool ``progressed`` while the call
        was suspect), at most the ceiling (``L`` itself when ``L`` is the ceiling: a case
        without a recorded time waits ``--call-timeout`` as before)."""
        first = self.limit(expected_s)
        stretch = max(1.0, slowdown) if progressed else 1.0
        return min(self.ceiling_s, first + first * stretch)

    def verdict(
        self,
        elapsed_s: float,
        expected_s: float | None,
        slowdown: float = 1.0,
        progressed: bool = False,
        starved_s: float = 0.0,
    ) -> CallState:
        """Within ``L``, past it (being confirmed), or past the confirmation; ``starved_s``:
        the seconds of ``elapsed_s`` the process waited for a core, not counted while the pool
        is stalled (``progressed`` false: the slowdown stretches the wait otherwise)."""
        if not progressed:
            elapsed_s -= max(0.0, min(starved_s, elapsed_s))
        if elapsed_s > self.deadline(expected_s, slowdown, progressed):
            return CallState.HUNG
        return CallState.SUSPECT if elapsed_s > self.limit(expected_s) else CallState.RUNNING


class Slowdown:
    """How much slower than recorded the pool's calls run now: the median of finished calls'
    ``duration / recorded p99`` over the last :data:`SLOWDOWN_WINDOW` calls, at least 1."""

    def __init__(self, window: int = SLOWDOWN_WINDOW) -> None:
        self._ratios: deque[float] = deque(maxlen=window)
        self._lock = threading.Lock()
        self.count = 0  # calls finished so far (the watchdog's sign of progress)

    def finished(self, duration_s: float, expected_s: float | None) -> None:
        with self._lock:
            self.count += 1
            if expected_s is not None and expected_s > 0:
                self._ratios.append(duration_s / expected_s)

    def factor(self) -> float:
        with self._lock:
            ratios = list(self._ratios)
        return max(1.0, statistics.median(ratios)) if ratios else 1.0


def hang_rule_for(config: Any, cases: Iterable[Any], baseline: Any | None) -> HangRule:
    """The rule of a run: ``config``'s ``--call-timeout``, ``--hang-floor``, ``--hang-factor``,
    and each case's recorded time from ``baseline`` (a view variant takes its contiguous twin's,
    the baseline it is graded against)."""
    expected: dict[str, float] = {}
    recorded = baseline.cases if baseline is not None else {}
    for case in cases:
        cb = recorded.get(case.twin)
        if cb is not None and cb.call_p99_s is not None:
            expected[case.id] = float(cb.call_p99_s)
    return HangRule(
        ceiling_s=config.call_timeout,
        floor_s=config.hang_floor,
        factor=config.hang_factor,
        expected=expected,
    )


@dataclass(frozen=True)
class StuckCall:
    """A call in flight when a pool stopped on a hang (``call``: its worker and what it ran);
    for a call the watchdog judged, how long it had run, the seconds its thread waited for a
    core since it began and the adaptive limit it passed (None: it ran into --call-timeout
    itself)."""

    call: CallBegin
    elapsed_s: float | None = None
    starved_s: float | None = None
    limit_s: float | None = None


@dataclass(frozen=True)
class HangReport:
    """Why a pool stopped on a hang: the wait the stuck calls outlived (seconds), the calls
    themselves and every call then in flight; the load's ``slowdown`` and whether calls went on
    finishing (``progressed``) when the watchdog confirmed it; ``reported``: its hang records
    are written already (a call's own timeout reports before it aborts the pool)."""

    timeout_s: float
    stuck: tuple[StuckCall, ...]
    in_flight: tuple[StuckCall, ...] = ()
    slowdown: float = 1.0
    progressed: bool = False
    reported: bool = False

    def note(self, stuck: StuckCall) -> str:
        """How the adaptive limit judged ``stuck``, if it did ("" when the call ran into
        --call-timeout itself)."""
        if stuck.limit_s is None or stuck.limit_s >= self.timeout_s:
            return ""
        starved = stuck.starved_s or 0
        why = (
            f"calls went on finishing, the wait stretched x{self.slowdown:g} by the load"
            if self.progressed
            else "no call of the pool finished meanwhile"
            + (f", {starved:g} s waiting for a core not counted" if starved >= 0.001 else "")
        )
        return f" (suspect after {stuck.limit_s:g} s, confirmed: {why})"

    def names(self) -> str:
        """The stuck calls (else those in flight), for a one-line message."""
        calls = self.stuck or self.in_flight
        return ", ".join(f"{s.call.case} (worker {s.call.worker})" for s in calls) or "unknown"
