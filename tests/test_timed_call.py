"""The phases' one timed call: the timeout passed through, a timed-out call reported as a hang."""

import dataclasses
from types import SimpleNamespace

import pytest

from stress.engine.call.execute import CallTimeout
from stress.engine.replay.hang_rule import HangReport, StuckCall
from stress.engine.replay.pool import PoolAborted
from stress.engine.replay.timed_call import TimedCall
from stress.records import CallBegin
from stress.vocabulary import Status


class _Runner(TimedCall):
    def __init__(self) -> None:
        self.config = SimpleNamespace(call_timeout=1.5, call_timeout_ms=1500)
        self.hangs: list[tuple[str, HangReport]] = []

    def _hang(self, phase: str, hang: HangReport) -> None:
        self.hangs.append((phase, hang))


WORKER = SimpleNamespace(context="ctx", stream="stream", index=3)
STUCK = {"phase": "mixed", "worker": 3, "case": "add-1", "round": 7}


def test_the_call_gets_the_workers_context_stream_and_the_runs_timeout():
    runner = _Runner()
    seen = runner._timed_call(lambda *a, **kw: (a, kw), WORKER, "case", canary=9, stuck=STUCK)
    assert seen == (("ctx", "stream", "case"), {"timeout_ms": 1500, "canary": 9})
    assert runner.hangs == []


def test_a_timed_out_call_is_reported_once_and_aborts_the_pool_as_a_hang():
    def stuck_call(*_a, **_kw):
        raise CallTimeout

    runner = _Runner()
    with pytest.raises(PoolAborted) as info:
        runner._timed_call(stuck_call, WORKER, stuck=STUCK)
    hang = HangReport(1.5, (StuckCall(CallBegin(3, "add-1", round=7)),))
    assert runner.hangs == [("mixed", hang)]
    assert info.value.reason == Status.HANG
    assert info.value.hang == dataclasses.replace(hang, reported=True)
    assert info.value.__suppress_context__
