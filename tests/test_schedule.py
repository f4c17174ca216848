"""The run's schedule: phase order, fail-fast stop rule, budget division, first-failure timing."""

from __future__ import annotations

import pytest
from test_fault_diagnosis import run_fault

from stress.config import PHASES, RunConfig
from stress.engine.grading import BURST_ONLY
from stress.engine.schedule import BURST_SECONDS, STEP_OVERHEAD_S, Scheduler, plan, settled


def test_phases_run_in_the_order_the_diagnosis_weighs_them():
    assert PHASES[:2] == ("burst", "control")
    steps = plan(RunConfig(streams=("shared", "per-thread")))
    assert [s.phase for s in steps[:4]] == ["burst", "burst", "control", "control"]
    assert {s.variant for s in steps if s.phase == "serial"} == {""}


def test_settled_needs_the_control_unless_crash_or_hang():
    assert not settled("clean", ["burst", "control"], PHASES)
    assert settled("crash", ["burst"], PHASES) and settled("hang", ["burst"], PHASES)
    assert not settled("unwritten-output", ["burst"], PHASES)
    assert settled("unwritten-output", ["burst", "control"], PHASES)
    assert settled("self-race", ["serial", "isolated"], ("serial", "isolated"))
    assert not settled("self-race", ["isolated"], ("isolated",), phase_done=False)
    # a failure only the burst saw never stands early: the diagnostic phases must look
    burst_only = BURST_ONLY + "x in burst"
    assert not settled("cross-call-contamination", ["burst", "control"], PHASES, burst_only)


def test_budget_is_divided_across_the_concurrent_phases_left():
    cfg = RunConfig(budget_s=20.0, streams=("shared",))
    steps = plan(cfg)
    s = Scheduler(cfg, steps)
    assert s.duration(0, 0.0) == pytest.approx(min(BURST_SECONDS, 2.0))
    i = [st.phase for st in steps].index("isolated")
    rest = steps[i:]
    # isolated, interleaved (sampling pairs to fit its share) and mixed are left
    expect = (20.0 - 5.0 - STEP_OVERHEAD_S * len(rest)) / 3
    assert s.duration(i, 5.0) == pytest.approx(expect)
    assert s.duration([st.phase for st in steps].index("serial"), 5.0) is None
    assert s.duration(i, 19.0) > 0  # never zero or negative, however late
    assert s.config_for(i, 5.0).duration == pytest.approx(round(expect, 3))
    # without a budget, --duration per concurrent phase and the short burst
    plain = Scheduler(RunConfig(duration=3.0), plan(RunConfig(duration=3.0)))
    assert plain.duration(0, 0.0) == BURST_SECONDS and plain.duration(1, 0.0) == 3.0
    inter = [st.phase for st in plan(RunConfig())].index("interleaved")
    assert plain.duration(inter, 0.0) is None  # every pair: only --budget bounds the matrix
    left = len(steps) - inter  # interleaved and mixed
    assert s.duration(inter, 5.0) == pytest.approx((15.0 - STEP_OVERHEAD_S * left) / 2)


def test_fail_fast_run_times_first_failure_and_diagnosis(tmp_path):
    report = run_fault(tmp_path, "empty-skip", streams=("shared",), duration=1.0, fail_fast=True)
    assert report["diagnosis"] == "unwritten-output", report["explanation"]
    names = [p["name"] for p in report["phases"]]
    assert names == ["burst", "control"], names  # settled once the control ran clean
    assert any(n.startswith("fail-fast:") and "skipped serial" in n for n in report["notes"])
    first, diag = report["timing"]["first_detection_s"], report["timing"]["diagnosis_s"]
    assert first is not None and diag is not None and 0 < first <= diag


def test_clean_run_has_null_timings(tmp_path):
    report = run_fault(
        tmp_path, "", phases=("burst", "serial"), streams=("shared",), fail_fast=True
    )
    assert report["diagnosis"] == "clean"
    assert report["timing"] == {"first_detection_s": None, "diagnosis_s": None}
    assert [p["name"] for p in report["phases"]] == ["burst", "serial"]
