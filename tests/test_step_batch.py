"""The focused steps run ahead at once (stress.engine.run.step_batch): which steps, in which
order they start, how many at once, what is held, and what cancelling stops. No timing: each
fake step waits on events the test sets."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from stress.engine.run.step_batch import (
    FocusedSteps,
    Spare,
    StepBatch,
    ahead_span,
    control_spare,
    start_ahead,
)


@dataclass(frozen=True)
class _Step:
    phase: str
    confirm: bool = False


def test_the_span_runs_to_the_last_focused_step_and_skips_the_resumed():
    steps = [
        _Step("burst"),
        _Step("control", True),
        _Step("serial"),
        _Step("shuffled", True),
        _Step("isolated", True),
        _Step("mixed", True),
        _Step("control"),  # the fallback: the full phases
        _Step("mixed"),
    ]
    assert ahead_span(steps, 1, lambda s: False) == [1, 2, 3, 4, 5]
    assert ahead_span(steps, 1, lambda s: s.phase == "serial") == [1, 3, 4, 5]
    assert ahead_span(steps, 6, lambda s: False) == []  # nothing focused after index 6


def test_steps_start_in_plan_order_at_most_width_at_once_and_hold_their_records():
    started: list[int] = []
    running = {"now": 0, "most": 0}
    lock = threading.Lock()
    release = {k: threading.Event() for k in range(4)}

    def launch(k, on_record, cancel):
        with lock:
            started.append(k)
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
        on_record({"type": "call", "case": f"c{k}"})
        release[k].wait(10)
        with lock:
            running["now"] -= 1
        return f"result {k}"

    batch = StepBatch([0, 1, 2, 3], launch, width=2)
    for k in range(4):
        release[k].set()
        held = batch.take(k)
        assert held.result == f"result {k}"
        assert [r["case"] for _, r in held.records] == [f"c{k}"]
        assert held.seconds >= 0
    assert sorted(started) == [0, 1, 2, 3] and started[:2] in ([0, 1], [1, 0])
    assert started.index(2) < started.index(3)  # a later step never starts before an earlier
    assert running["most"] <= 2
    batch.cancel()


def test_cancel_starts_no_further_step_and_signals_the_running_ones():
    seen_cancel = threading.Event()
    started: list[int] = []

    def launch(k, on_record, cancel):
        started.append(k)
        if k == 0:
            return "first"
        assert cancel.wait(10)  # a running step is told to kill its child
        seen_cancel.set()
        return "cancelled"

    batch = StepBatch([0, 1, 2, 3], launch, width=2)
    assert batch.take(0).result == "first"
    batch.cancel()
    assert seen_cancel.is_set()
    assert 3 not in started  # the queue stopped at the cancel


def test_an_error_starting_a_step_is_raised_where_the_step_is_taken():
    def launch(k, on_record, cancel):
        if k == 1:
            raise ValueError("cannot start the phase child")
        return k

    batch = StepBatch([0, 1], launch, width=1)
    assert batch.take(0).result == 0
    with pytest.raises(ValueError, match="cannot start"):
        batch.take(1)
    assert 1 in batch and 2 not in batch


def test_start_ahead_fixes_each_configuration_when_the_steps_start():
    steps = [_Step("burst"), _Step("control", True), _Step("serial"), _Step("mixed", True)]
    got = []

    def run(step, config, on_record, cancel):
        got.append((step.phase, config))
        return config

    batch = start_ahead(steps, 1, lambda k: f"config {k}", lambda s: False, run)
    assert batch.configs == {1: "config 1", 2: "config 2", 3: "config 3"}
    assert [batch.take(k).result for k in (1, 2, 3)] == ["config 1", "config 2", "config 3"]
    assert sorted(got) == sorted(
        [("control", "config 1"), ("serial", "config 2"), ("mixed", "config 3")]
    )
    batch.cancel()


def test_a_cancelled_step_kills_its_child_instead_of_waiting_for_it():
    """A child that would sleep for ten minutes without a word: once ``cancel`` is set the
    supervisor kills it and returns (the step's result is not used)."""
    import sys

    from stress.engine.isolation.supervise import run_child
    from stress.vocabulary import PhaseStatus

    cancel = threading.Event()
    cancel.set()
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    result = run_child({}, lambda r: None, silence_timeout=600, command=sleeper, cancel=cancel)
    assert result.status == PhaseStatus.CRASHED and result.signal == "SIGKILL"


def test_the_spare_control_is_the_step_the_focused_plan_holds():
    """At the burst's first failing call the control step is started (control_spare): the
    plan focus_steps makes at the burst's end, whatever cases failed, holds that very step."""
    from stress.config import RunConfig
    from stress.engine.run.schedule import BurstFindings, Scheduler, focus_steps, plan

    config = RunConfig(seed=1, budget_s=20, streams=("shared", "per-thread"))
    scheduler = Scheduler(config, plan(config))
    steps = scheduler.steps
    runs = []
    spare = control_spare(steps, 0, scheduler.step_config, lambda *a: runs.append(a) or "ran")
    assert spare is not None and spare.step.phase == "control" and spare.step.confirm
    found = BurstFindings(("base-a", "large-c"), frozenset({steps[0].variant}))
    planned = steps[:1] + focus_steps(steps[1:], steps[:1], found)
    k = planned.index(spare.step)
    again = Scheduler(config, planned).config_for(k, elapsed=3.0)
    assert again == spare.config  # the same configuration: taken, not run again
    assert spare.take(spare.step, again).result == "ran"
    assert runs[0][:2] == (spare.step, again)
    other = spare.config.with_(duration=9.0)
    assert spare.take(spare.step, other) is None  # another configuration: not this one


def test_focused_steps_start_the_spare_once_and_run_the_rest_without_it():
    steps = [_Step("burst"), _Step("control", True), _Step("serial"), _Step("mixed", True)]
    ran: list[str] = []

    def run(step, config, on_record, cancel):
        ran.append(step.phase)
        return step.phase

    ahead = FocusedSteps()
    made = []
    ahead.arm(lambda: made.append(1) or Spare(steps[1], "c1", run))
    ahead.first_failure()
    ahead.first_failure()  # a second failing call starts nothing more
    assert made == [1]
    ahead.start(steps, 1, lambda k: f"c{k}", lambda s: False, run)
    assert ahead.config(1) is None and ahead.config(2) == "c2"  # the spare's is not the batch's
    assert [ahead.take(k, steps[k], f"c{k}").result for k in (1, 2, 3)] == [
        "control",
        "serial",
        "mixed",
    ]
    assert sorted(ran) == ["control", "mixed", "serial"]  # the control ran once
    ahead.cancel()
