"""Inputs made at a case's first call (stress.engine.replay.lazy_inputs): the burst makes a
case's inputs when a call first needs them, never those that run the device (a backward case's
forward) while another call is in flight, each case's once."""

from __future__ import annotations

import threading
import time

import pytest

from stress import acl
from stress.config import RunConfig
from stress.corpus import preload
from stress.engine.call import inputs as inputs_module
from stress.engine.replay.lazy_inputs import DeviceGate, needs_device
from stress.engine.replay.phases import PhaseRunner
from stress.engine.replay.pool import PoolAborted
from stress.records import CallRecord


def _later(fn, events, name):
    t = threading.Thread(target=lambda: (fn(), events.append(name)), daemon=True)
    t.start()
    return t


def test_alone_waits_for_the_calls_in_flight_and_holds_new_ones_back():
    gate, events = DeviceGate(), []
    leave = threading.Event()

    def one_call():
        gate.enter()
        events.append("call in")
        leave.wait(5)
        gate.leave()

    caller = _later(one_call, events, "call out")
    while "call in" not in events:
        time.sleep(0.01)
    alone_done = threading.Event()

    def alone():
        with gate.alone():
            events.append("alone in")
            alone_done.wait(5)

    lone = _later(alone, events, "alone out")
    time.sleep(0.3)
    assert "alone in" not in events  # a call is in flight
    early = _later(gate.enter, events, "early call in")  # asked before the inputs are made
    time.sleep(0.3)
    assert "early call in" not in events  # held back from the request on (no starving)
    leave.set()
    caller.join(5)
    while "alone in" not in events:
        time.sleep(0.01)
    late = _later(gate.enter, events, "late call in")
    time.sleep(0.3)
    assert "late call in" not in events  # held back while the inputs are made
    alone_done.set()
    lone.join(5)
    late.join(5)
    early.join(5)
    assert events.index("late call in") > events.index("alone in")
    assert events.index("early call in") > events.index("alone in")


def test_a_closed_gate_lets_no_waiting_thread_on():
    gate = DeviceGate()
    gate.enter()  # a call that never ends (a hang)
    failed: list[BaseException] = []

    def alone():
        try:
            with gate.alone():
                pass
        except PoolAborted as exc:
            failed.append(exc)

    t = threading.Thread(target=alone, daemon=True)
    t.start()
    time.sleep(0.2)
    gate.close()
    t.join(5)
    assert len(failed) == 1


@pytest.mark.parametrize("seed", [1, 2])
def test_the_burst_makes_inputs_at_first_use_and_device_inputs_alone(monkeypatch, seed):
    cases = preload.load(["corpus/mhc.toml"])
    assert any(needs_device(c) for c in cases)
    config = RunConfig(seed=seed, threads=4, iterations=3, phases=("burst",), variants=())
    records: list[CallRecord] = []
    made: list[tuple[str, int, int]] = []  # case, calls in flight, records so far
    real = inputs_module.generate_inputs

    def generate(case, context=None, stream=None):
        gate = runner._gate
        active = gate._active if gate is not None else 0
        made.append((case.twin, active if needs_device(case) else 0, len(records)))
        return real(case, context, stream)

    monkeypatch.setattr(inputs_module, "generate_inputs", generate)
    runner = PhaseRunner(
        acl.runtime("sim"), config, cases, [], None, sink=lambda r: records.append(r)
    )
    status, _ = runner.run("burst", "shared")
    assert status == "done"
    calls = [r for r in records if isinstance(r, CallRecord)]
    assert {r.case for r in calls} == {c.id for c in cases}  # the serial pass met each
    assert sorted(m[0] for m in made) == sorted({c.twin for c in cases})  # each once
    assert all(active == 0 for _, active, _ in made)  # device inputs alone
    assert any(seen > 0 for *_, seen in made)  # some made after the first calls


def test_a_call_waiting_for_its_inputs_is_off_the_hang_rule_clock():
    """The watchdog judges a call by ``started_at``: while its inputs are made it has none,
    and its clock starts once they are (a slow forward is no hang of the call)."""
    from types import SimpleNamespace

    from stress.engine.replay.lazy_inputs import LazyInputs
    from stress.engine.replay.pool import Worker

    seen: list[float | None] = []
    worker = Worker(0, SimpleNamespace(bind=lambda: None), None)  # type: ignore[arg-type]

    class Cache:
        def __init__(self) -> None:
            self.made: dict[str, dict] = {}

        def ready(self, case):
            return case.twin in self.made

        def get(self, case):
            if case.twin not in self.made:
                seen.append(worker.started_at)
                time.sleep(0.2)
                self.made[case.twin] = {}
            return self.made[case.twin]

    runner = LazyInputs()
    runner.inputs = Cache()  # type: ignore[assignment]
    runner._lazily("burst")
    case = SimpleNamespace(twin="c", negative=False, spec=SimpleNamespace(depends_on=("f",)))
    runner.first_use = lambda: [case]  # type: ignore[method-assign]
    worker.begin(case="c", round=0)
    begun = worker.started_at
    assert runner._inputs(case, worker) == {}  # type: ignore[arg-type]
    assert seen == [None]  # no clock while the inputs were made
    assert worker.started_at is not None and worker.started_at >= begun + 0.2
    assert worker.in_flight is not None and worker.in_flight.flying() == {
        "worker": 0,
        "case": "c",
        "round": 0,
    }
    runner._left()
