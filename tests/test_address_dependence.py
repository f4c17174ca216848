"""address-dependence: the rule (stress.grading.address), the scheduler's steps, and the
``gamma-cache`` fault end to end (clean at fresh addresses, found in recycled blocks)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import stress_cli

from stress import sim
from stress.config import RunConfig
from stress.corpus.parse import load_corpus
from stress.engine.replay.baseline_order import OrderDependence
from stress.engine.run.schedule import plan
from stress.engine.run.session import Session
from stress.grading.diagnosis import diagnose
from stress.grading.verdicts import grade_phase
from stress.records import CallRecord
from stress.sim.faults import FAULTS
from stress.vocabulary import Diagnosis

REPO = Path(__file__).resolve().parents[1]
RMS = [str(REPO / "corpus/ops/rms_norm.toml")]


def _phase(name: str, variant: str, passed: bool):
    digest, match = ("d0", True) if passed else ("bad", False)
    rec = CallRecord.from_json(
        {"type": "call", "phase": name, "case": "c", "status": "ok", "digest": digest,
         "match": match}
    )  # fmt: skip
    return dataclasses.replace(grade_phase(name, [rec]), variant=variant)


@pytest.mark.parametrize(
    ("runs", "expected"),
    [
        # both: the fresh run has no variant, the recycled one is named
        ([("", True), ("allocator=recycle", False)], Diagnosis.ADDRESS_DEPENDENCE),
        # recycle: the run's own (recycled) has no variant, its fresh check is named
        ([("", False), ("allocator=fresh", True)], Diagnosis.ADDRESS_DEPENDENCE),
        # failing at fresh addresses too: the order, not the address
        ([("", False), ("allocator=recycle", False)], Diagnosis.ORDER_DEPENDENCE),
        ([("", False), ("allocator=fresh", False)], Diagnosis.ORDER_DEPENDENCE),
        # one policy only (--allocator fresh): nothing to compare with
        ([("", False)], Diagnosis.ORDER_DEPENDENCE),
    ],
)
def test_address_dependence_needs_the_fresh_run_to_pass(runs, expected):
    phases = [_phase("serial", "", True)] + [_phase("shuffled", v, ok) for v, ok in runs]
    diagnosis, explanation = diagnose(phases)
    assert diagnosis == expected, explanation


def test_the_scheduler_runs_shuffled_under_each_policy():
    def shuffled(alloc):
        steps = plan(RunConfig(allocator=alloc, streams=("shared",)))
        return [(s.variant, s.allocator) for s in steps if s.phase == "shuffled"], steps

    both, steps = shuffled("both")
    assert both == [("", "fresh"), ("allocator=recycle", "recycle")]
    assert {s.allocator for s in steps if s.phase != "shuffled"} == {"fresh"}
    recycle, steps = shuffled("recycle")
    assert recycle == [("", "recycle"), ("allocator=fresh", "fresh")]
    assert {s.allocator for s in steps if s.phase != "shuffled"} == {"recycle"}
    fresh, steps = shuffled("fresh")
    assert fresh == [("", "fresh")] and {s.allocator for s in steps} == {"fresh"}


def test_the_fault_expects_address_dependence():
    assert FAULTS["gamma-cache"].expected == Diagnosis.ADDRESS_DEPENDENCE
    assert FAULTS["gamma-cache"].targets == ("aclnnRmsNorm",)
    assert FAULTS["weight-cache"].expected == Diagnosis.ADDRESS_DEPENDENCE


def _run(tmp: Path, allocator: str, env: dict[str, str], seed: int = 1) -> dict:
    baseline = tmp / "baseline.json"
    if not baseline.exists():  # at fresh addresses only: the run is what finds it
        Session(RunConfig(seed=0, allocator="fresh"), RMS, [], env=env).record_baseline(baseline)
    config = RunConfig(
        seed=seed, phases=("serial", "shuffled"), duration=1.0, fail_fast=False,
        allocator=allocator,
    )  # fmt: skip
    out = tmp / f"run-{allocator}-{seed}"
    session = Session(
        config, RMS, [], baseline_path=baseline, out_dir=out, env=env,
        shrink_budget=0,  # no shrinking: the reproducer is the CLI test's below
    )  # fmt: skip
    report = session.run().to_json()
    report["journal"] = [json.loads(line) for line in (out / "results.jsonl").open()]
    return report


def test_gamma_cache_is_clean_fresh_and_address_dependence_recycled(tmp_path):
    env = {"ACLSIM_FAULTS": "gamma-cache"}
    fresh = _run(tmp_path, "fresh", env)
    assert fresh["diagnosis"] == "clean", fresh["explanation"]
    calls = [r for r in fresh["journal"] if r["type"] == "call"]
    assert calls and {r["allocator"] for r in calls} == {"fresh"}
    both = _run(tmp_path, "both", env)
    assert both["diagnosis"] == "address-dependence", both["explanation"]
    verdicts = {(p["name"], p["variant"]): p["verdict"] for p in both["phases"]}
    assert verdicts[("serial", "")] == verdicts[("shuffled", "")] == "PASS", verdicts
    assert verdicts[("shuffled", "allocator=recycle")].startswith("MISMATCH"), verdicts
    policy = {(r["variant"], r["allocator"]) for r in both["journal"] if r["type"] == "call"}
    assert policy == {("", "fresh"), ("allocator=recycle", "recycle")}, policy


def test_gamma_cache_is_address_dependence_when_the_baseline_is_recorded(tmp_path):
    session = Session(RunConfig(seed=0), RMS, [], env={"ACLSIM_FAULTS": "gamma-cache"})
    with pytest.raises(OrderDependence, match=r"^address-dependence: case rms-"):
        session.record_baseline(tmp_path / "b.json")
    assert not (tmp_path / "b.json").exists()


def test_the_clean_simulator_is_clean_in_recycled_blocks(tmp_path):
    """Both corpora whose operators keep address-keyed caches under a fault (gamma-cache,
    weight-cache) in one run: their cases recycle each other's blocks too (one recording and
    one run instead of one per corpus: 16.6 s of CPU against 20.1, serially, 2026-12-07)."""
    ops = [str(REPO / "corpus/ops" / corpus) for corpus in ("rms_norm.toml", "matmul.toml")]
    baseline = tmp_path / "b.json"
    Session(RunConfig(seed=0), ops, [], env={}).record_baseline(baseline)
    config = RunConfig(
        seed=2, phases=("serial", "shuffled", "isolated", "mixed"), duration=0.5,
        fail_fast=False, allocator="recycle", streams=("per-thread",),
    )  # fmt: skip
    report = Session(config, ops, [], baseline_path=baseline, out_dir=tmp_path / "r").run()
    report = report.to_json()
    assert report["diagnosis"] == "clean", report["explanation"]
    assert {p["name"] for p in report["phases"]} == {"serial", "shuffled", "isolated", "mixed"}
    ran = {c["id"].split("@")[0] for p in report["phases"] for c in p["cases"]}
    assert ran >= {c.id for c in load_corpus(ops)}, ran


def test_the_standalone_reproducer_recycles_like_the_run(tmp_path):
    """Found in recycled blocks, the shrunk reproducer replays with --allocator recycle and the
    standalone script keeps freed blocks for the next call: it fails on the faulty simulator,
    passes on the clean one."""
    text = (REPO / "corpus/ops/rms_norm.toml").read_text()
    cases = '[[case]]\nid = "rms-a"\nB = 2\nH = 64\nseed = 8\n\n'
    cases += '[[case]]\nid = "rms-b"\nB = 2\nH = 64\nseed = 9\n'
    corpus = tmp_path / "c.toml"
    corpus.write_text(text[: text.index("[[case]]")] + cases)
    base, out = tmp_path / "b.json", tmp_path / "out"
    common = ["--corpus", str(corpus), "--control", "none", "--variants", "none"]
    rec = stress_cli("baseline", "record", *common, "--allocator", "fresh", "--out", str(base),
                     faults="gamma-cache")  # fmt: skip
    assert rec.returncode == 0, rec.stderr
    run = stress_cli("run", *common, "--baseline", str(base), "--phases", "serial,shuffled",
                     "--seed", "1", "--out", str(out), "--quiet", faults="gamma-cache",
                     timeout=300)  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["diagnosis"] == "address-dependence", report["explanation"]
    assert "--allocator recycle" in report["reproducer"]["command"], report["reproducer"]
    script = out / "repro" / "reproduce.py"
    assert "RECYCLE = True" in script.read_text()
    env = {k: v for k, v in os.environ.items() if k not in ("ACLSIM_FAULTS", "PYTHONPATH")}
    env["ASCEND_HOME_PATH"] = str(sim.root())
    clean = subprocess.run([sys.executable, str(script), "1"], capture_output=True, text=True,
                           timeout=120, env=env)  # fmt: skip
    assert clean.returncode == 0, clean.stdout + clean.stderr
    faulty = subprocess.run([sys.executable, str(script), "1"], capture_output=True, text=True,
                            timeout=120, env={**env, "ACLSIM_FAULTS": "gamma-cache"})  # fmt: skip
    assert faulty.returncode == 1 and "digest differs" in faulty.stdout, faulty.stdout


def test_an_unknown_policy_is_refused_naming_the_option():
    from stress.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^--allocator must be fresh, recycle or both"):
        RunConfig(allocator="pooled").validate()
    assert "--allocator recycle" in " ".join(RunConfig(allocator="recycle").to_cli_args())
    assert "--allocator" not in " ".join(RunConfig().to_cli_args())  # the default, both
