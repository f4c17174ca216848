"""One call on a worker's context and stream under the run's call timeout.

A mixin of :class:`stress.engine.replay.phases.PhaseRunner` (through
:class:`stress.engine.replay.interleave.InterleavedPhase`): the serial, concurrent and
interleaved phases launch their calls through :meth:`TimedCall._timed_call`, so a call that
does not finish is reported and aborts the pool in one place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from stress.config import RunConfig
from stress.engine.call.execute import CallTimeout
from stress.engine.replay.hang_rule import HangReport, StuckCall
from stress.engine.replay.pool import PoolAborted, Worker
from stress.records import CallBegin
from stress.vocabulary import Status

__all__ = ["TimedCall"]

T = TypeVar("T")


class TimedCall:
    """``_timed_call`` and the hang it reports (``_hang`` is the runner's)."""

    config: RunConfig

    def _timed_call(
        self, call: Callable[..., T], worker: Worker, *args: Any, stuck: dict[str, Any], **kw: Any
    ) -> T:
        """``call(worker.context, worker.stream, *args, timeout_ms=..., **kw)``; when it times
        out, the hang of ``stuck`` (its phase, worker, case and round) is reported and the pool
        aborted."""
        try:
            return call(
                worker.context, worker.stream, *args, timeout_ms=self.config.call_timeout_ms, **kw
            )
        except CallTimeout:
            self._call_hung(**stuck)

    def _call_hung(self, phase: str, worker: int, case: str, round: int) -> NoReturn:
        stuck = StuckCall(CallBegin(worker, case, round=round))
        hang = HangReport(self.config.call_timeout, (stuck,))
        self._hang(phase, hang)
        raise PoolAborted(Status.HANG, dataclasses.replace(hang, reported=True)) from None
