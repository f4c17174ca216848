"""Running out of memory is the resource's verdict, never a race; the tool's own failures to
start threads or children are one line and exit 2; a phase that made no call is never PASS."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from _cli import REPO, stress_cli

from stress import acl
from stress.acl.errors import error_for
from stress.config import RunConfig
from stress.corpus.parse import load_corpus
from stress.engine.call import execute
from stress.engine.isolation.supervise import run_child
from stress.engine.replay.phase_budget import Budget
from stress.engine.replay.pool import WorkerPool
from stress.engine.run.schedule import no_calls_detail, settled
from stress.errors import ConfigError
from stress.grading import judge
from stress.grading.diagnosis import diagnose
from stress.grading.verdicts import grade_phase
from stress.records import CallRecord
from stress.vocabulary import Diagnosis, PhaseStatus, Status, Verdict

OOM = int(acl.Status.RT_MEMORY_ALLOCATION)


def _rec(case: str, status: Status, **kw) -> CallRecord:
    match = kw.pop("match", status == Status.OK)
    return CallRecord("isolated", case, status, match=match, **kw)


def _oom(case: str) -> CallRecord:
    return _rec(case, Status.OUT_OF_MEMORY, code=OOM, api="aclrtMalloc", message="out of memory")


def test_an_oom_call_is_the_cases_verdict_naming_the_status():
    phase = grade_phase("isolated", [_rec("a", Status.OK, digest="d"), _oom("a")])
    assert phase.verdict == Verdict.OUT_OF_MEMORY
    assert f"status {OOM}" in phase.cases[0].detail


def test_oom_in_isolated_or_control_is_out_of_memory_not_self_race_or_runtime_fault():
    isolated = grade_phase("isolated", [_oom("a")])
    control = grade_phase("control", [_oom("add")])
    serial = grade_phase("serial", [_rec("a", Status.OK, digest="d")])
    for phases in ([serial, isolated], [serial, control], [serial, isolated, control]):
        diagnosis, why = diagnose(phases)
        assert diagnosis == Diagnosis.OUT_OF_MEMORY, why
        assert "a in isolated" in why or "add in control" in why


def test_oom_is_outranked_by_a_crash_and_never_stops_a_run_early():
    crashed = grade_phase("mixed", [_rec("b", Status.CRASH)])
    assert diagnose([grade_phase("isolated", [_oom("a")]), crashed])[0] == Diagnosis.CRASH
    assert not settled(Diagnosis.OUT_OF_MEMORY, ["control", "isolated"], ["control", "isolated"])


def test_a_phase_without_calls_is_incomplete_never_pass_and_never_a_race():
    empty = grade_phase("isolated", [], status=PhaseStatus.NO_CALLS, detail="none")
    assert empty.verdict == Verdict.INCOMPLETE
    serial = grade_phase("serial", [_rec("a", Status.OK, digest="d")])
    diagnosis, why = diagnose([serial, empty])
    assert diagnosis == Diagnosis.INCOMPLETE and "isolated" in why
    assert diagnosis.run_verdict != "clean"
    # a real finding elsewhere still stands
    mixed = grade_phase("mixed", [_rec("a", Status.OK, digest="x", match=False)])
    assert diagnose([serial, empty, mixed])[0] == Diagnosis.CROSS_CALL_CONTAMINATION
    text = no_calls_detail(RunConfig(threads=200, duration=0.2), "mixed")
    assert "0.2 s on 200 threads" in text and "--duration" in text


def test_a_host_memory_error_while_preparing_a_call_is_an_oom_outcome(monkeypatch):
    def no_memory(*a, **kw):
        raise MemoryError("Unable to allocate 3.64 TiB")

    monkeypatch.setattr(execute, "OpCall", no_memory)
    case = load_corpus([REPO / "corpus/control.toml"])[0]
    outcome = execute.run_call(None, None, case, {})
    assert outcome.status == Status.OUT_OF_MEMORY and outcome.api == "host"
    assert "3.64 TiB" in outcome.message
    rec = judge.judge(case, outcome, None, phase="serial")
    assert rec.status == Status.OUT_OF_MEMORY and rec.match is False


def test_a_device_memory_error_is_an_oom_outcome():
    exc = error_for(OOM, "aclrtMalloc", "out of memory")
    assert judge.Outcome.failed(exc, 0.0).status == Status.OUT_OF_MEMORY
    other = error_for(int(acl.Status.INVALID_PARAM), "aclrtMalloc", "bad")
    assert judge.Outcome.failed(other, 0.0).status == Status.ERROR


def test_threads_the_host_cannot_start_are_a_config_error(device, monkeypatch):
    real_start = threading.Thread.start
    started = []

    def start(self):
        if self.name.startswith("stress-worker-") and len(started) >= 2:
            raise RuntimeError("can't start new thread")
        started.append(self)
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    with WorkerPool(device, 4) as pool:
        with pytest.raises(ConfigError, match=r"--threads 4: .*worker thread 3 .*can't start"):
            pool.run(lambda w, r: None, Budget(rounds=1))
    for t in started:
        t.join(timeout=5)
        assert not t.is_alive()  # the threads that did start were released


def test_a_phase_child_that_cannot_start_is_a_config_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="cannot start the phase child"):
        run_child({}, lambda r: None, silence_timeout=5, command=[str(tmp_path / "missing")])


def test_device_memory_exhaustion_end_to_end_is_out_of_memory(tmp_path: Path):
    """A baseline recorded with enough memory, then a run whose concurrent calls do not fit
    ACLSIM_DEVICE_MEMORY: the report says out-of-memory and names 207001, never self-race."""
    base = ["run", "--corpus", str(REPO / "corpus/control.toml"), "--control", "none"]
    # the corpus's own cases (add-large among them): the variants only lengthened the recording
    base += ["--variants", "none", "--baseline", str(tmp_path / "b.json"), "--seed", "1", "--quiet"]
    env = {**os.environ, "STRESS_BACKEND": "sim"}
    rec = stress_cli(
        *base, "--record-baseline", "--phases", "serial", "--out", str(tmp_path / "a"), env=env
    )
    assert rec.returncode == 0, rec.stderr
    out = tmp_path / "o"
    env["ACLSIM_DEVICE_MEMORY"] = "3M"
    run = [*base, "--phases", "isolated", "--duration", "0.3", "--out", str(out)]
    # the default size budget (a quarter of the 3 MiB the device reports) refuses add-large
    refused = stress_cli(*run, env=env)
    assert refused.returncode == 2 and "1/4 of device memory" in refused.stderr
    assert "add-large" in refused.stderr and not (out / "results.jsonl").exists()
    proc = stress_cli(*run, "--max-case-bytes", "1G", env=env)
    assert "Traceback" not in proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["diagnosis"] == Diagnosis.OUT_OF_MEMORY, report["explanation"]
    assert proc.returncode == 1
    verdicts = {c["verdict"] for p in report["phases"] for c in p["cases"]}
    assert Verdict.OUT_OF_MEMORY in verdicts
    details = " ".join(c["detail"] for p in report["phases"] for c in p["cases"])
    assert f"status {OOM}" in details


def test_a_phase_that_made_no_call_end_to_end_is_never_clean(tmp_path: Path):
    """256 threads cannot reach their first round within 1 ms: the phase made no call, and
    the run says so (incomplete, not clean, not exit 0). The isolated phase: mixed rounds
    always complete one epoch of the corpus, however short their share."""
    out = tmp_path / "o"
    proc = stress_cli(
        *("run", "--corpus", str(REPO / "corpus/control.toml"), "--control", "none"),
        *("--variants", "none"),  # no call is made either way: fewer cases to record
        *("--baseline", str(tmp_path / "b.json"), "--record-baseline", "--phases", "isolated"),
        *("--threads", "256", "--duration", "0.001", "--seed", "1", "--quiet", "--out", str(out)),
        env={**os.environ, "STRESS_BACKEND": "sim"},
    )
    assert "Traceback" not in proc.stderr
    report = json.loads((out / "report.json").read_text())
    phase = report["phases"][0]
    assert phase["calls"] == 0 and phase["status"] == PhaseStatus.NO_CALLS
    assert phase["verdict"] == Verdict.INCOMPLETE and "--duration" in phase["detail"]
    assert report["diagnosis"] == Diagnosis.INCOMPLETE and proc.returncode != 0
