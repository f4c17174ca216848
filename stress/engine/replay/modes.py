"""API modes as a variant of every phase's calls (``--modes``; :data:`stress.config.MODES`).

A phase makes its calls through :meth:`PhaseRunner._call`; each call's mode is drawn from the
configured modes by its place in the phase (its rep in serial and shuffled, else its round),
offset by the worker, so that every case runs in every mode when it runs as many times, and on
T threads several repeatable executors are in flight at once. ``plain`` is the single-use
executor of :func:`stress.engine.call.execute.run_call`; ``repeat`` a repeatable executor
launched several times (:mod:`stress.engine.call.repeatable`), one record per launch, each
with ``mode``, ``launch`` and ``rebound``; ``event`` the outputs consumed on a second stream
after an event (:mod:`stress.engine.call.event_mode`), one record with ``mode`` (the journal's
keys; a plain call has no ``mode``); ``pipeline`` phase 1 on the worker and the launch on the
phase's one launch thread, which every worker feeds (:mod:`stress.engine.call.pipeline`), one
record with ``mode``. Warm-up calls run plain.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, NoReturn

from stress.corpus.parse import Case
from stress.engine.call.event_mode import run_event
from stress.engine.call.execute import CallTimeout
from stress.engine.call.opening import CallSite
from stress.engine.call.pipeline import Launcher, run_pipeline
from stress.engine.call.repeatable import LAUNCHES, Launch, run_repeat
from stress.engine.replay.pool import Worker
from stress.grading.judge import Outcome

__all__ = ["ModeCalls"]


_MADE = threading.Lock()


class ModeCalls:
    """Every call of the phase runner, by mode: a mixin of
    :class:`~stress.engine.replay.phases.PhaseRunner`, whose ``_plain_call`` makes a plain
    call and whose ``config``, ``_begin``, ``_inputs``, ``_canary``, ``_emit`` and
    ``_call_hung`` (:class:`~stress.engine.replay.timed_call.TimedCall`'s) it uses."""

    config: Any
    _call_hung: Callable[..., NoReturn]
    _launcher: Launcher | None = None
    # the runner's (annotations only)
    _left: Callable[[], None]

    def launcher(self) -> Launcher:
        """The launch thread of the pipeline mode, started on first use."""
        with _MADE:  # the workers' first pipeline calls race to start it
            if self._launcher is None:
                self._launcher = Launcher()
            return self._launcher

    def close_launcher(self) -> None:
        """End the launch thread (at the end of a phase)."""
        if self._launcher is not None:
            self._launcher.close()
            self._launcher = None

    def _call(self, phase: str, worker: Worker, rnd: int, case: Case, **extra: Any) -> None:
        mode = self._mode(worker, rnd, extra)
        if mode == "plain":
            return self._plain_call(phase, worker, rnd, case, **extra)
        # a repeat call is its launches plus the rebinding for the hang rule
        self._begin(
            worker, case=case.id, round=rnd, launches=LAUNCHES + 1 if mode == "repeat" else 2
        )
        inputs = self._inputs(case, worker)
        canary = extra.pop("canary", None)
        canary = self._canary() if canary is None else canary
        if isinstance(inputs, Outcome):  # its inputs could not be made
            worker.end()
            self._emit(phase, worker.index, rnd, case, inputs, canary=canary, **extra)
            return None
        return self._moded(mode, phase, worker, rnd, case, inputs, canary, extra)

    def _mode(self, worker: Worker, rnd: int, extra: dict[str, Any]) -> str:
        """The call's API mode, drawn from ``--modes`` by the call's place: its rep (serial,
        shuffled) or round, and its worker; warm-ups run plain, and so does every call of a
        phase in recycled memory (the allocator is that phase's variable: only plain calls take
        their blocks from the caching allocator)."""
        modes = self.config.modes
        if extra.get("warmup") or self.config.phase_allocator == "recycle":
            return "plain"
        return modes[(extra.get("rep", rnd) + worker.index) % len(modes)]

    def _launches(
        self, mode: str, worker: Worker, case: Case, inputs: Any, canary: int
    ) -> list[Launch]:
        """Run one call in ``mode``: every launch's outcome (one for event and pipeline)."""
        site = CallSite(
            worker.context, worker.stream, case, inputs, canary, self.config.call_timeout_ms
        )
        if mode == "repeat":
            return run_repeat(site)
        if mode == "pipeline":
            outcome = run_pipeline(site, self.launcher())
        else:
            outcome = run_event(site)
        return [Launch(outcome, 0, False)]

    def _moded(
        self,
        mode: str,
        phase: str,
        worker: Worker,
        rnd: int,
        case: Case,
        inputs: Any,
        canary: int,
        extra: dict[str, Any],
    ) -> None:
        """A call in the repeat mode (one record per launch of its repeatable executor), the
        event or the pipeline mode (one record)."""
        try:
            launches = self._launches(mode, worker, case, inputs, canary)
            self._left()
        except CallTimeout:
            self._call_hung(phase, worker.index, case.id, rnd)
        worker.end()
        for la in launches:
            note = {"extra": {"repeatable": la.note}} if la.note else {}
            where = {"launch": la.index, "rebound": la.rebound or None} if mode == "repeat" else {}
            self._emit(
                phase,
                worker.index,
                rnd,
                case,
                la.outcome,
                canary=canary,
                mode=mode,
                **where,
                **note,
                **extra,
            )
