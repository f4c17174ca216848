"""How a phase ended, from its child's result: the ``phase-end`` line's status and detail.

A crashed or hung child still had calls in flight; each becomes a CRASH or HANG call record
(the verdict lands on the case that was running). A child that finished without making a call
made no test at all: ``no-calls``, never ``done``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stress.config import RunConfig
from stress.engine.isolation.supervise import ChildResult
from stress.engine.run.schedule import no_calls_detail
from stress.records import CallRecord
from stress.vocabulary import PhaseStatus, Status

__all__ = ["phase_end"]

_DIED = (PhaseStatus.CRASHED, PhaseStatus.HUNG)


def phase_end(
    result: ChildResult,
    phase: str,
    calls: Callable[[], int],
    n_cases: int,
    config: RunConfig,
    on_record: Callable[[CallRecord], None],
) -> tuple[str, str, dict[str, Any]]:
    """``(status, detail, extra fields)`` of the phase-end record; the calls in flight of a
    child that died are reported through ``on_record`` first (``calls`` counts after that)."""
    status, detail, extra = result.status, result.detail, {}
    if result.status in _DIED:
        died = Status.CRASH if result.status == PhaseStatus.CRASHED else Status.HANG
        for flying in result.in_flight:
            message = f"{result.detail} while this call was in flight"
            on_record(CallRecord(phase=phase, status=died, match=False, **flying, message=message))
    if result.status == PhaseStatus.CRASHED and not result.in_flight:
        detail += " (no call in flight: during setup)"
    if result.status == PhaseStatus.DONE and calls() == 0 and n_cases:
        status, detail = PhaseStatus.NO_CALLS, no_calls_detail(config, phase)
    if result.status in (*_DIED, PhaseStatus.FAILED):
        extra = {
            "signal": result.signal,
            "returncode": result.returncode,
            "stderr_tail": result.stderr_tail,
            "in_flight": result.in_flight,
        }
    return status, detail, extra
