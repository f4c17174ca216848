"""The adaptive call timeout (stress.engine.replay.hang_rule): each case's limit from its
recorded call time, the confirmation wait (L again when the pool is stalled, stretched by the
slowdown while other calls go on finishing), the pool's watchdog applying it, the baseline
recording the time, and a simulated deadlock found by it."""

from __future__ import annotations

import json
import threading
import time
from types import SimpleNamespace

import pytest

from stress.baseline.store import Baseline, CaseBaseline
from stress.config import RunConfig
from stress.engine.call.repeatable import LAUNCHES
from stress.engine.replay.hang_rule import CallState, HangReport, HangRule, Slowdown, hang_rule_for
from stress.engine.replay.phase_budget import Budget
from stress.engine.replay.pool import PoolAborted, WorkerPool
from stress.errors import ConfigError
from stress.records import CallBegin
from stress.vocabulary import Diagnosis, Status

RULE = HangRule(ceiling_s=10.0, floor_s=0.5, factor=50.0, expected={"ms": 0.002, "slow": 0.05})


# ---- the rule, without a clock ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected_s", "limit"),
    [
        (0.002, 0.5),  # a millisecond case: the floor
        (0.05, 2.5),  # 50 x its p99
        (1.0, 10.0),  # 50 s would pass --call-timeout: the ceiling
        (None, 10.0),  # no recorded time: --call-timeout as before
    ],
)
def test_the_limit_is_the_cases_own_between_floor_and_ceiling(expected_s, limit):
    assert RULE.limit(expected_s) == pytest.approx(limit)


def test_a_stalled_pool_confirms_after_a_second_wait_of_l():
    assert RULE.verdict(0.4, 0.002) is CallState.RUNNING
    assert RULE.verdict(0.6, 0.002) is CallState.SUSPECT
    assert RULE.deadline(0.002, slowdown=8.0, progressed=False) == pytest.approx(1.0)
    assert RULE.verdict(1.01, 0.002, slowdown=8.0, progressed=False) is CallState.HUNG


def test_progress_elsewhere_stretches_the_wait_by_the_slowdown_up_to_the_ceiling():
    assert RULE.deadline(0.002, slowdown=8.0, progressed=True) == pytest.approx(0.5 + 0.5 * 8)
    assert RULE.verdict(1.01, 0.002, slowdown=8.0, progressed=True) is CallState.SUSPECT
    assert RULE.verdict(4.6, 0.002, slowdown=8.0, progressed=True) is CallState.HUNG
    assert RULE.deadline(0.002, slowdown=100.0, progressed=True) == 10.0
    assert RULE.deadline(0.002, slowdown=0.2, progressed=True) == pytest.approx(1.0)  # >= 1


def test_a_stalled_pools_call_does_not_count_the_time_it_waited_for_a_core():
    # 1.01 s in flight, 0.6 s of it runnable without a core: 0.41 s counted, not even suspect
    assert RULE.verdict(1.01, 0.002, starved_s=0.6) is CallState.RUNNING
    assert RULE.verdict(1.01, 0.002, starved_s=0.3) is CallState.SUSPECT
    assert RULE.verdict(1.61, 0.002, starved_s=0.6) is CallState.HUNG  # 1.01 s counted
    # while other calls finish the slowdown stretches the wait instead: starvation not taken off
    assert RULE.verdict(4.6, 0.002, slowdown=8.0, progressed=True, starved_s=4.0) is (
        CallState.HUNG
    )


def test_a_case_without_a_recorded_time_waits_the_call_timeout_only():
    assert RULE.deadline(None, slowdown=1.0, progressed=False) == 10.0
    assert RULE.verdict(9.9, None) is CallState.RUNNING
    assert RULE.verdict(10.1, None) is CallState.HUNG


def test_what_is_in_flight_is_timed_by_its_cases():
    assert RULE.expected_s(CallBegin(0, "ms", round=3)) == pytest.approx(0.002)
    assert RULE.expected_s(CallBegin(0, "ms", aggressor="slow")) == pytest.approx(0.052)
    assert RULE.expected_s(CallBegin(0, "ms", aggressor="unknown")) is None
    assert HangRule(ceiling_s=10.0).expected_s(CallBegin(0, "ms")) is None


def test_the_slowdown_is_the_median_ratio_of_finished_calls_at_least_one():
    s = Slowdown(window=3)
    assert s.factor() == 1.0
    for duration in (0.01, 0.04, 0.05, 0.03):  # the first one leaves the window
        s.finished(duration, 0.01)
    s.finished(1.0, None)  # counted as progress, not as a ratio
    assert s.factor() == pytest.approx(4.0)
    assert s.count == 5
    s2 = Slowdown()
    s2.finished(0.001, 0.01)
    assert s2.factor() == 1.0


def test_the_run_rule_takes_the_twins_time_and_the_options():
    config = RunConfig(call_timeout=7.0, hang_floor=0.25, hang_factor=20.0)
    cases = [SimpleNamespace(id="a", twin="a"), SimpleNamespace(id="a@pad", twin="a")]
    cases.append(SimpleNamespace(id="old", twin="old"))
    recorded = {"a": SimpleNamespace(call_p99_s=0.03), "old": SimpleNamespace(call_p99_s=None)}
    rule = hang_rule_for(config, cases, SimpleNamespace(cases=recorded))
    assert (rule.ceiling_s, rule.floor_s, rule.factor) == (7.0, 0.25, 20.0)
    assert rule.expected == {"a": 0.03, "a@pad": 0.03}
    assert rule.limit(rule.expected_s(CallBegin(0, "a@pad"))) == pytest.approx(0.6)
    assert hang_rule_for(config, cases, None).expected == {}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"hang_floor": 0.0}, "--hang-floor must be > 0"),
        ({"hang_factor": 0.5}, "--hang-factor must be at least 1"),
        ({"hang_factor": float("nan")}, "--hang-factor must be a finite number"),
    ],
)
def test_bad_hang_options_are_refused_in_one_line(changes, message):
    with pytest.raises(ConfigError, match=message):
        RunConfig(**changes).validate()


def test_the_hang_options_replay_on_the_command_line():
    args = " ".join(RunConfig(hang_floor=0.25, hang_factor=20).to_cli_args())
    assert "--hang-floor 0.25" in args and "--hang-factor 20" in args
    assert "--hang" not in " ".join(RunConfig().to_cli_args())


def test_the_cli_the_plugin_and_a_phase_child_get_the_same_hang_options():
    import argparse

    from stress.cli.parser import build_parser

    cli = RunConfig.from_cli(
        build_parser().parse_args(
            ["run", "--seed", "1", "--hang-floor", "0.3", "--hang-factor", "9"]
        )
    )
    plugin = RunConfig.from_pytest(
        argparse.Namespace(stress_hang_floor=0.3, stress_hang_factor=9.0, stress_device=0)
    )
    job = RunConfig.from_json(cli.to_json())
    for config in (cli, plugin, job):
        assert (config.hang_floor, config.hang_factor) == (0.3, 9.0)
    default = RunConfig.from_cli(build_parser().parse_args(["run", "--seed", "1"]))
    assert (default.hang_floor, default.hang_factor) == (
        RunConfig.hang_floor,
        RunConfig.hang_factor,
    )


# ---- the baseline keeps the time -------------------------------------------------------------


def test_the_call_time_round_trips_and_old_files_load_without_it(tmp_path):
    cb = CaseBaseline(id="a", key="k", op="add", status="error", code=1, call_p99_s=0.0042)
    b = Baseline({"kind": "sim"}, {"cases": {}}, True, 3, {"a": cb})
    path = b.save(tmp_path / "b.json")
    assert Baseline.load(path).cases["a"].call_p99_s == pytest.approx(0.0042)
    doc = json.loads(path.read_text())
    del doc["cases"]["a"]["call_p99_s"]
    path.write_text(json.dumps(doc))
    assert Baseline.load(path).cases["a"].call_p99_s is None
    doc["cases"]["a"]["call_p99_s"] = -1
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=r"cases\.a\.call_p99_s"):
        Baseline.load(path)


def test_recording_a_baseline_times_every_case(rt, tmp_path):
    from stress.corpus import load_corpus
    from stress.engine.replay.baseline import Recording, record_baseline

    cases = load_corpus([str(_repo() / "corpus/control.toml")])
    baseline = record_baseline(rt, cases, Recording(repeats=2))
    times = [cb.call_p99_s for cb in baseline.cases.values()]
    assert times and all(t is not None and t >= 0 for t in times), times
    assert any(t > 0 for t in times), times


def _repo():
    from pathlib import Path

    return Path(__file__).resolve().parents[1]


# ---- the watchdog applies it -----------------------------------------------------------------


def _hang_of(device, task, rule: HangRule, threads: int = 2) -> HangReport:
    hangs: list[HangReport] = []
    with WorkerPool(device, threads, hang_rule=rule, on_hang=hangs.append) as pool:
        with pytest.raises(PoolAborted) as err:
            pool.run_free(task, Budget(seconds=30))
    assert err.value.reason == Status.HANG
    return hangs[0]


def test_a_stalled_pool_is_hung_at_twice_the_cases_limit(device):
    release = threading.Event()
    rule = HangRule(ceiling_s=30.0, floor_s=0.05, factor=50.0, expected={"ms": 0.0001})

    def task(worker, n):  # every worker blocks: the deadlock holds the whole pool
        worker.begin(case="ms", round=n)
        release.wait(30)

    try:
        hang = _hang_of(device, task, rule)
    finally:
        release.set()
    assert hang.timeout_s == pytest.approx(0.1)  # L = 0.05, confirmed after L again
    assert hang.progressed is False
    assert {s.limit_s for s in hang.stuck} == {0.05}


def test_a_call_stuck_while_others_finish_waits_the_stretched_confirmation(device):
    release = threading.Event()
    rule = HangRule(ceiling_s=30.0, floor_s=0.05, factor=50.0, expected={"ms": 0.001})

    def task(worker, n):
        worker.begin(case="ms", round=n)
        if worker.index == 0:
            release.wait(30)
        else:
            time.sleep(0.01)  # at least 10 x the recorded time: slowdown >= 10

    try:
        hang = _hang_of(device, task, rule)
    finally:
        release.set()
    assert hang.progressed is True
    assert hang.slowdown >= 10
    assert hang.timeout_s == pytest.approx(min(30.0, 0.05 + 0.05 * hang.slowdown), abs=1e-3)
    assert [s.call.worker for s in hang.stuck] == [0]


class _Starved:
    """A starvation clock (stress.engine.replay.starvation) of a process that never gets a core:
    every second passing is a second starved."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.total = 0.0

    def tick(self) -> float:
        self.total = time.monotonic() - self.t0
        return self.total


def test_a_starved_call_alone_in_its_pool_is_not_a_hang(device):
    """One worker (a one-thread phase): no other call can show progress; a call whose time all
    went waiting for a core is never confirmed, and ends normally."""
    rule = HangRule(ceiling_s=30.0, floor_s=0.05, factor=50.0, expected={"ms": 0.0001})
    with WorkerPool(device, 1, hang_rule=rule) as pool:
        clock = pool.starvation = pool.workers[0].starvation = _Starved()

        def task(worker, n):
            worker.begin(case="ms", round=n)
            time.sleep(0.5)  # 10 x L, every second of it starved

        assert pool.run(task, Budget(rounds=1)) >= 0
    assert clock.total > 2 * 0.05  # the watchdog ticked past 2 L while the call was in flight


def test_the_starvation_clock_counts_waiting_for_a_core_not_sleeping():
    """Threads that sleep gather (almost) no run-queue wait; three busy threads pinned to one
    core do (sha256 of a large buffer runs without the GIL). In a child process (the pinning
    stays there)."""
    import os
    import subprocess
    import sys

    if not os.path.exists("/proc/self/schedstat"):
        pytest.skip("no scheduler statistics in /proc")
    code = """
import hashlib, os, threading, time
from stress.engine.replay.starvation import Starvation
os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
def run(work):
    clock = Starvation()
    ts = [threading.Thread(target=work) for _ in range(3)]
    for t in ts: t.start()
    for _ in range(10):
        time.sleep(0.05); clock.tick()
    for t in ts: t.join()
    return clock.tick()
data = bytes(8 << 20)
def busy():
    end = time.monotonic() + 0.6
    while time.monotonic() < end: hashlib.sha256(data).digest()
print(run(lambda: time.sleep(0.6)), run(busy))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    sleeping, busy = map(float, done.stdout.split())
    # (a loaded machine delays the sleepers' wake-ups too: the busy threads' wait is on top)
    assert busy > 0.15 and busy > sleeping + 0.1, done.stdout


# ---- a simulated deadlock ------------------------------------------------------------------


def test_the_simulated_deadlock_is_a_hang_found_by_the_cases_limit(tmp_path):
    """ACLSIM_FAULTS=hang with the default --call-timeout (10 s): the hang record comes from the
    adaptive rule, at the limit of the case in flight (its recorded time, from the baseline).
    The time from the start to the verdict is the report's ``timing.first_detection_s``; it
    depends on the machine's load and is not asserted here."""
    from test_fault_diagnosis import _baseline, run_fault, verdicts

    # the corpus's own cases: the variants would only lengthen the baseline's recording (the
    # rule takes a variant's time the same way: its own case's, or its contiguous twin's)
    report = run_fault(
        tmp_path, "hang", phases=("mixed",), streams=("shared",), duration=3.0, variants=()
    )
    assert report["diagnosis"] == Diagnosis.HANG
    assert verdicts(report) == {"mixed": "HANG"}
    baseline = Baseline.load(_baseline(tmp_path, "hang", False, ()))
    run = next(tmp_path.glob("run-hang-*"))
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    hangs = [r for r in records if r.get("status") == Status.HANG]
    assert hangs, "no hang record"
    first = hangs[0]
    # a view variant (``case@offset``) is graded against its contiguous twin's baseline; an edge
    # size (``case@edge-S-4``) is a case of its own shape, with its own recorded time
    case = first["case"]
    twin = case if case in baseline.cases else case.partition("@")[0]
    rule = hang_rule_for(RunConfig(), [SimpleNamespace(id=case, twin=twin)], baseline)
    # the call in flight ran in one of the API modes: plain (1 launch), event (2) or repeat (its
    # launches and the rebinding); the watchdog judges each launch (stress.engine.replay.modes)
    limits = [rule.limit(rule.expected_s(CallBegin(0, case))) * n for n in (1, 2, LAUNCHES + 1)]
    assert max(limits) < RunConfig().call_timeout
    said = [f"suspect after {round(limit, 3):g} s" in first["message"] for limit in limits]
    assert any(said), first["message"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--hang-floor", "0"], "--hang-floor"),
        (["--hang-factor", "0.5"], "--hang-factor must be at least 1"),
        (["--hang-factor", "x"], "--hang-factor"),
    ],
)
def test_the_cli_refuses_bad_hang_options_in_one_line(argv, needle):
    from tests._cli import stress_cli

    proc = stress_cli("run", "--corpus", str(_repo() / "corpus/control.toml"), *argv)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
