"""The stress engine end to end on the simulator, with aclnnAdd as the operator under test."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _cli import stress_cli

from stress import cli
from stress.config import PHASES, VIEWS, RunConfig
from stress.engine.run.session import Session
from stress.grading.assemble import build_report
from stress.journal.results import read_results
from stress.report.writers import write_reports
from stress.vocabulary import Diagnosis, RunVerdict

ADD = "tests/data/add_under_test.toml"
CONTROL = "corpus/control.toml"


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """One baseline for the add corpus + control, recorded in a child process."""
    path = tmp_path_factory.mktemp("baseline") / "add.json"
    s = Session(RunConfig(), [ADD], [CONTROL])
    s.record_baseline(path)
    return path


def _session(tmp_path, baseline, *, isolate=False, **cfg):
    config = RunConfig(
        seed=cfg.pop("seed", 7),
        threads=cfg.pop("threads", 4),
        iterations=cfg.pop("iterations", 3),
        **cfg,
    )
    return Session(
        config, [ADD], [CONTROL], baseline_path=baseline, out_dir=tmp_path / "out", isolate=isolate
    )


def test_clean_run_passes_everywhere_and_report_rerenders(tmp_path, baseline):
    # 4 rounds: one mixed epoch of the 13 cases on 4 threads deals every case at least once
    # (stress.pairs.epoch_rounds); with 3, the last cases ran only if a fill call drew them
    s = _session(tmp_path, baseline, iterations=4)
    typed = s.run()
    assert typed.diagnosis == Diagnosis.CLEAN and typed.verdict == RunVerdict.CLEAN
    report = typed.to_json()
    assert report["diagnosis"] == "clean" and report["verdict"] == "clean"
    names = [p["name"] for p in report["phases"]]
    assert list(dict.fromkeys(names)) == list(PHASES)  # concurrent ones under both streams
    for p in report["phases"]:
        assert p["verdict"] == "PASS" and p["calls"] > 0, p
        for c in p["cases"]:
            assert c["verdict"] == "PASS"
    assert {
        "schema",
        "backend",
        "config",
        "seed",
        "phases",
        "interference",
        "diagnosis",
        "verdict",
    } <= set(report)
    mixed = next(p for p in report["phases"] if p["name"] == "mixed")
    # the corpus and the view variants of its 3 valid cases (every kind applies to them)
    valid = ("t-f32", "t-bf16", "t-fp16")
    variants = {f"{c}@{v}" for c in valid for v in VIEWS}
    assert {c["id"] for c in mixed["cases"]} == {*valid, "t-neg"} | variants
    n = len(valid) * (1 + len(VIEWS))  # valid cases and their variants: n * n ordered pairs
    assert len(report["interference"]["cells"]) == n * n
    # the report is a pure function of the result file
    again = write_reports(tmp_path / "out")
    assert again == typed and report == json.loads((tmp_path / "out/report.json").read_text())
    assert "Diagnosis: `clean`" in (tmp_path / "out/report.md").read_text()


@pytest.mark.parametrize(
    ("context", "streams"),
    [
        ("shared", ("per-thread",)),
        ("per-thread", ("per-thread",)),
        ("shared", ("shared", "per-thread")),
    ],
)
def test_policies_are_clean(tmp_path, baseline, context, streams):
    s = _session(
        tmp_path,
        baseline,
        context=context,
        streams=streams,
        phases=("isolated", "mixed", "control"),
        iterations=2,
    )
    report = s.run().to_json()
    assert report["diagnosis"] == "clean"
    variants = {p["variant"] for p in report["phases"]}
    assert variants == ({""} if len(streams) == 1 else {"stream=shared", "stream=per-thread"})


def test_isolated_children_and_seed_are_recorded(tmp_path, baseline):
    s = _session(tmp_path, baseline, isolate=True, phases=("serial", "mixed"), seed=99)
    report = s.run().to_json()
    assert report["diagnosis"] == "clean" and report["seed"] == 99
    header = next(read_results(tmp_path / "out"))
    assert header["type"] == "run" and header["config"]["seed"] == 99
    assert header["baseline"]["cases"]["t-neg"]["status"] == "error"


def test_existing_results_are_never_overwritten(tmp_path, baseline):
    _session(tmp_path, baseline, phases=("serial",)).run()
    from stress.errors import ConfigError

    with pytest.raises(ConfigError, match="already holds results"):
        _session(tmp_path, baseline, phases=("serial",)).run()


def test_truncated_result_file_still_renders(tmp_path, baseline):
    _session(tmp_path, baseline, phases=("serial", "shuffled")).run()
    path = tmp_path / "out/results.jsonl"
    lines = path.read_text().splitlines()
    # cut inside the shuffled phase, mid-line, as a kill -9 would
    cut = next(i for i, ln in enumerate(lines) if '"phase-start"' in ln and "shuffled" in ln)
    path.write_text("\n".join(lines[: cut + 2]) + "\n" + lines[cut + 2][:20])
    report = build_report(read_results(path)).to_json()
    assert [p["name"] for p in report["phases"]] == ["serial", "shuffled"]
    assert report["phases"][1]["status"] == "interrupted" and not report["complete"]
    assert report["phases"][0]["verdict"] == "PASS"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--threads", "0"], "--threads must be >= 1"),
        (["--context", "per-thread", "--stream", "shared"], "needs --stream per-thread"),
        (["--corpus", "nope.toml"], "nope.toml: corpus file not found"),
        (["--repeats", "0"], "--repeats must be >= 1"),
    ],
)
def test_bad_run_options_exit_2_with_one_line(args, message, tmp_path):
    proc = stress_cli("run", "--out", str(tmp_path / "o"), *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and proc.stderr.count("\n") == 1


def test_argparse_errors_exit_2():
    assert stress_cli("run", "--phases", "bogus").returncode == 2
    assert stress_cli("run", "--duration", "-1").returncode == 2
    assert stress_cli("run", "--duration", "1", "--iterations", "2").returncode == 2
    assert stress_cli("run", "--canary", "300").returncode == 2


def test_mismatched_baseline_refused_then_forced(tmp_path, baseline):
    doc = json.loads(Path(baseline).read_text())
    doc["backend"]["version"] = "other"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc))
    args = ["run", "--corpus", ADD, "--baseline", str(forged), "--phases", "serial", "--quiet"]
    proc = stress_cli(*args, "--out", str(tmp_path / "a"))
    assert proc.returncode == 2 and "backend version differs" in proc.stderr
    proc = stress_cli(*args, "--out", str(tmp_path / "b"), "--force")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "b/report.json").read_text())
    assert any("baseline forced" in n for n in report["notes"])


def _start_long_run(out, baseline, **popen):
    """A CLI run with a long budget, returned once it streams control-phase records (the
    control runs right after the burst, 60 s long here)."""
    argv = [sys.executable, "-m", "stress", "run", "--corpus", ADD, "--baseline", str(baseline),
            "--out", str(out), "--duration", "60", "--quiet", "--seed", "5"]  # fmt: skip
    proc = subprocess.Popen(argv, **popen)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lines = results.read_text().splitlines() if results.exists() else []
        # a control call's record, not its phase-start line: interrupted before its first call,
        # the phase has no verdict of its own yet
        if any('"type":"call"' in ln and '"phase":"control"' in ln for ln in lines):
            return proc
        time.sleep(0.1)
    proc.kill()
    pytest.fail("the run never reached the control phase")


def test_interrupted_run_keeps_a_renderable_result_file(tmp_path, baseline):
    out = tmp_path / "run"
    proc = _start_long_run(out, baseline, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "interrupted" and not report["complete"]
    assert [p["name"] for p in report["phases"]][:3] == ["burst", "burst", "control"]
    assert report["phases"][0]["verdict"] == "PASS"
    # `aclnn-stress report` renders the same from the JSONL alone
    (out / "report.json").unlink()
    assert (
        cli.main(["report", str(out), "--json"]) == cli.EXIT_INCOMPLETE
    )  # found nothing, unfinished
    assert json.loads((out / "report.json").read_text())["phases"] == report["phases"]


def test_killed_run_renders_with_report_command(tmp_path, baseline):
    out = tmp_path / "run"
    proc = _start_long_run(
        out, baseline, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "report.json").exists()
    proc = stress_cli("report", str(out))
    assert proc.returncode == cli.EXIT_INCOMPLETE, proc.stderr  # never 0 for a killed run
    assert "did not finish" in proc.stdout and "incomplete" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["phases"][0]["verdict"] == "PASS" and report["status"] == "interrupted"


def test_default_baseline_path_is_per_backend_and_fault_set():
    s = Session(RunConfig(), ["corpus/mhc.toml"], ["corpus/control.toml"])
    assert str(s.default_baseline({"simulator": True})) == "baselines/control+mhc.sim.json"
    faulty = {"simulator": True, "faults": ["stale-tail", "tiling-race"]}
    assert s.default_baseline(faulty).name == "control+mhc.sim-stale-tail+tiling-race.json"
    assert s.default_baseline({"kind": "cann", "simulator": False}).name == "control+mhc.cann.json"
