"""End to end: every simulator fault gives its expected diagnosis (benchmarks/detection.py).

Each run goes through :class:`stress.engine.run.session.Session` with its phases in supervised
children that get ``ACLSIM_FAULTS`` in their environment (this process never loads a faulty
runtime), against a baseline recorded serially on the same faulty backend, as a user with that
library would record it.

The short versions (default suite) run only the phases that matter for each fault, briefly.
The full versions (``-m slow``) run the whole default protocol, both stream policies, three
seeds per fault, as ``make stress`` does, plus the CLI for crash and hang.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path

import pytest
from _cli import stress_cli

from stress.config import PHASES, VARIANTS, RunConfig
from stress.engine.replay.baseline_order import OrderDependence
from stress.engine.run.session import Session
from stress.sim.faults import FAULTS
from stress.vocabulary import size_kind, split_view
from tests._baselines import recorded_baseline

REPO = Path(__file__).resolve().parents[1]
CORPUS = [str(REPO / "corpus/mhc.toml")]
CONTROL = [str(REPO / "corpus/control.toml")]
GRADCHECK_ELEMENTS = ["bias[8]", "bias[12]", "bias[23]", "phi[12,2048]", "phi[23,4095]"]

# the run's expected diagnosis per fault (grad-drift: clean, and gradcheck says biased)
EXPECTED = {name: fault.expected for name, fault in FAULTS.items()}


def _baseline(tmp: Path, fault: str, control: bool, variants: tuple[str, ...] = VARIANTS) -> Path:
    """The serial baseline of ``fault`` (with or without the control corpus) for the run's
    ``variants``, recorded once per process (tests/_baselines.py)."""
    config = RunConfig(seed=0, variants=variants)
    env = {"ACLSIM_FAULTS": fault}
    return recorded_baseline(tmp, CORPUS, env, config, CONTROL if control else [])


def run_fault(
    tmp: Path,
    fault: str,
    *,
    phases: tuple[str, ...] = PHASES,
    streams: tuple[str, ...] = ("shared", "per-thread"),
    seed: int = 1,
    duration: float | None = None,
    call_timeout: float = 10.0,
    shrink_budget: float = 0,
    fail_fast: bool = False,
    variants: tuple[str, ...] = VARIANTS,
) -> dict:
    """One isolated run with ``ACLSIM_FAULTS=fault``; returns the report (every listed phase
    runs unless ``fail_fast``: these tests pin each phase's verdict)."""
    control = "control" in phases
    baseline = _baseline(tmp, fault, control, tuple(variants))
    config = RunConfig(
        seed=seed,
        streams=streams,
        duration=duration,
        call_timeout=call_timeout,
        phases=phases,
        fail_fast=fail_fast,
        variants=variants,
    )
    session = Session(
        config,
        CORPUS,
        CONTROL if control else [],
        baseline_path=baseline,
        out_dir=tmp / f"run-{fault}-{seed}",
        shrink_budget=shrink_budget,
        env={"ACLSIM_FAULTS": fault},
    )
    return session.run().to_json()


def verdicts(report: dict, field: str = "verdict") -> dict[str, str]:
    """{"phase" or "phase/stream": the phase's ``field``}"""
    return {
        p["name"] + (f"/{p['variant'].split('=', 1)[1]}" if p["variant"] else ""): p[field]
        for p in report["phases"]
    }


# ---- short versions (default suite) ------------------------------------------------------------


def test_tiling_race_is_cross_call_contamination_shrunk_to_a_pair_whose_replay_fails(tmp_path):
    """One run for the diagnosis and the reproducer: two runs of the same phases before (both
    tests 16.2 s of CPU, this one 11.8 s, serially on the loaded 2-core machine)."""
    report = run_fault(
        tmp_path,
        "tiling-race",
        phases=("serial", "interleaved", "isolated"),
        streams=("shared",),
        duration=1.0,
        shrink_budget=60,
        # the corpus alone: its pairs hold the race, and the interleaved phase (unbudgeted)
        # runs every pair, ~n² calls; the variants multiply n (-m slow runs them all)
        variants=(),
    )
    v = verdicts(report)
    assert v["serial"] == "PASS", v
    assert v["isolated"] == "PASS", v  # the same case on 8 threads: identical tiling
    assert v["interleaved"].startswith("MISMATCH"), v
    assert report["diagnosis"] == "cross-call-contamination", report["diagnosis"]
    repro = report["reproducer"]
    assert repro["phase"] == "interleaved" and repro["verified"], repro
    assert len(repro["cases"]) == 2, repro  # one victim, one aggressor of another shape
    env_part, _, cli = repro["command"].partition(" aclnn-stress ")
    assert env_part == "ACLSIM_FAULTS=tiling-race", repro["command"]
    out = tmp_path / "replayed"
    proc = stress_cli(*shlex.split(cli), "--out", str(out), "--quiet", faults="tiling-race")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    replayed = json.loads((out / "report.json").read_text())
    assert replayed["diagnosis"] == "cross-call-contamination"


def test_shared_scratch_is_a_self_race(tmp_path):
    report = run_fault(
        tmp_path,
        "shared-scratch",
        phases=("serial", "isolated"),
        streams=("shared", "per-thread"),
        duration=1.0,
        variants=(),
    )
    v = verdicts(report)
    assert v["serial"] == "PASS", v
    assert v["isolated/shared"] == "PASS", v  # one stream serialises the kernels
    assert v["isolated/per-thread"].startswith("MISMATCH"), v
    assert report["diagnosis"] == "self-race"


@pytest.mark.parametrize(
    "variants",
    [pytest.param((), id="corpus"), pytest.param(VARIANTS, id="variants", marks=pytest.mark.slow)],
)
def test_stale_tail_is_order_dependence_when_the_baseline_is_recorded(tmp_path, variants):
    """A tail case's serial value holds its corpus predecessor's partials: recorded after
    another case it differs, so no baseline is written (before the order check, the baseline
    took that value and the shuffled phase found the dependence). The corpus as written shows it
    (small-c-fp16 after large-c: 2.5 s of CPU, loaded); with every variant (5.4 s) ``-m slow``."""
    path = tmp_path / "b.json"
    config = RunConfig(seed=0, variants=variants)
    session = Session(config, CORPUS, [], env={"ACLSIM_FAULTS": "stale-tail"})
    with pytest.raises(
        OrderDependence,
        match=r"^order-dependence: case (base-b|small-c-fp16|fp16-mid)(@(edge|large)-\S+)? ",
    ):
        session.record_baseline(path)
    assert not path.exists()


def test_empty_skip_is_an_unwritten_output(tmp_path):
    """One view kind and the empty sizes (18 cases, not 42 with every variant: 6.3 s of CPU,
    not 12.9): the views and empties of empty-batch skip the same writes, the empties of the
    other cases too; every variant kind under empty-skip: test_full_protocol_diagnoses_each_fault
    (``-m slow``)."""
    report = run_fault(tmp_path, "empty-skip", phases=("serial",), variants=("transpose", "empty"))
    serial = report["phases"][0]
    assert serial["verdict"] == "UNWRITTEN"
    empty = next(c for c in serial["cases"] if c["id"] == "empty-batch")
    assert empty["verdict"] == "UNWRITTEN"
    # every element of the three non-empty outputs kept the canary
    assert empty["unwritten"] == {"gradPhi": 24 * 4 * 128, "gradAlpha": 3, "gradBias": 24}
    # (its view variants, the same call on non-contiguous inputs, skip the same writes; so
    # do the empty size variants of the other cases: B or S = 0, the same bug class)
    empties = [c for c in serial["cases"] if size_kind(c["id"]) == "empty"]
    assert empties and all(
        c["verdict"] == ("PASS" if c["id"].startswith("fwd-") else "UNWRITTEN") for c in empties
    ), {c["id"]: c["verdict"] for c in empties}
    others = [
        c
        for c in serial["cases"]
        if split_view(c["id"])[0] != "empty-batch" and size_kind(c["id"]) != "empty"
    ]
    assert others and all(c["verdict"] == "PASS" for c in others)
    assert report["diagnosis"] == "unwritten-output"


def test_add_race_is_a_runtime_fault(tmp_path):
    report = run_fault(
        tmp_path,
        "add-race",
        phases=("serial", "control"),
        streams=("per-thread",),
        duration=1.5,
        variants=(),
    )
    v = verdicts(report)
    assert v["serial"] == "PASS", v  # aclnnAdd is not in the corpus under test
    assert v["control"].startswith("MISMATCH"), v
    assert report["diagnosis"] == "runtime-fault"


@pytest.mark.parametrize("fault, verdict", [("crash", "CRASH"), ("hang", "HANG")])
def test_crash_and_hang_end_their_phase_and_the_run_goes_on(tmp_path, fault, verdict):
    started = time.monotonic()
    report = run_fault(
        tmp_path,
        fault,
        phases=("serial", "mixed", "control"),
        streams=("shared",),
        duration=1.5,
        call_timeout=2.0,
        variants=(),
    )
    assert time.monotonic() - started < 60
    v = verdicts(report)
    assert v == {"serial": "PASS", "mixed": verdict, "control": "PASS"}, v
    st = verdicts(report, "status")
    assert st["mixed"] == ("crashed" if fault == "crash" else "hung"), st
    assert st["serial"] == st["control"] == "done", st
    assert report["diagnosis"] == fault


def test_grad_drift_keeps_the_stress_run_clean_and_gradcheck_biased(tmp_path):
    report = run_fault(tmp_path, "grad-drift", phases=("serial", "shuffled"), variants=())
    assert set(verdicts(report).values()) == {"PASS"}
    assert report["diagnosis"] == "clean"
    proc, result = _gradcheck(tmp_path, "grad-drift")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    rows = {r["element"]: r["verdict"] for r in result["elements"]}
    assert sum(v == "biased" for v in rows.values()) >= 3, rows  # 4 of 5 at this seed


def test_gradcheck_agrees_without_grad_drift(tmp_path):
    proc, result = _gradcheck(tmp_path, "")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert {r["verdict"] for r in result["elements"]} == {"agrees"}


_GRADCHECKS: dict[str, tuple[subprocess.CompletedProcess, dict]] = {}


def _gradcheck(tmp: Path, fault: str) -> tuple[subprocess.CompletedProcess, dict]:
    """`aclnn-stress gradcheck --fd reference` on the default (large) shape and seed; run once
    per fault and process (it does not depend on the stress run's seed)."""
    if fault not in _GRADCHECKS:
        _GRADCHECKS[fault] = _run_gradcheck(tmp, fault)
    return _GRADCHECKS[fault]


def _run_gradcheck(tmp: Path, fault: str) -> tuple[subprocess.CompletedProcess, dict]:
    args = [a for e in GRADCHECK_ELEMENTS for a in ("--element", e)]
    path = tmp / f"gradcheck-{fault or 'clean'}.json"
    proc = stress_cli(
        "gradcheck", "--fd", "reference", "--json", str(path), *args, faults=fault, timeout=300
    )
    return proc, (json.loads(path.read_text()) if path.exists() else {})


# ---- full versions (-m slow) ---------------------------------------------------------------------


# scratch-pool lives in the staging pool of the non-mHC operators: the mHC corpus cannot see it
# (its diagnosis needs a corpus mixing two such operators; tests/test_sim_scratch_pool.py);
# softmax-grad-tail lives in aclnnSoftmaxBackward (gradcheck: tests/test_gradcheck_spec.py);
# weight-cache in aclnnMatmul and stale-tail are found when the baseline is recorded (above and
# tests/test_baseline_order.py): no run follows; dirty-accumulator lives in aclnnLayerNorm
# (tests/test_prefill_fault.py); gamma-cache in aclnnRmsNorm (tests/test_address_dependence.py);
# plan-cache in aclnnSoftmax, seen only with twins (tests/test_twins.py)
AT_RECORD = ("weight-cache", "stale-tail")
OTHER_OPS = ("scratch-pool", "softmax-grad-tail", "dirty-accumulator", "gamma-cache", "plan-cache")
MHC_FAULTS = [f for f in EXPECTED if f not in (*OTHER_OPS, *AT_RECORD)]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("fault", MHC_FAULTS)
def test_full_protocol_diagnoses_each_fault(tmp_path, fault, seed):
    """The whole default protocol, both stream policies, as `make stress` runs it."""
    report = run_fault(tmp_path, fault, seed=seed, duration=3.0)
    v = verdicts(report)
    # 3 single-threaded phases (shuffled twice: at fresh addresses and in recycled blocks) + 4
    # concurrent ones (burst, control, isolated, mixed) x 2 streams
    assert len(v) == 12 and "shuffled/recycle" in v, v
    assert report["diagnosis"] == EXPECTED[fault], (report["diagnosis"], v)
    assert v["serial"] == ("UNWRITTEN" if fault == "empty-skip" else "PASS"), v
    if fault in ("tiling-race", "shared-scratch", "add-race", "crash", "hang", "grad-drift"):
        assert v["shuffled"] == "PASS", v  # concurrency faults: single-threaded replay is clean
    if fault != "add-race":
        assert v["control/shared"] == v["control/per-thread"] == "PASS", v
    if fault == "tiling-race":
        assert v["isolated/shared"] == v["isolated/per-thread"] == "PASS", v
        assert v["interleaved"] != "PASS", v
    if fault == "grad-drift":
        assert _gradcheck(tmp_path, "grad-drift")[0].returncode == 1


def _cli(tmp: Path, fault: str) -> tuple[subprocess.CompletedProcess, dict, float]:
    baseline = tmp / "baseline.json"
    out = tmp / "out"
    started = time.monotonic()
    proc = stress_cli(
        "run",
        "--record-baseline",
        "--baseline",
        str(baseline),
        "--stream",
        "both",
        "--duration",
        "1.5",
        "--call-timeout",
        "2",
        "--shrink-budget",
        "0",
        "--no-fail-fast",  # the test pins every phase's verdict
        "--seed",
        "7",
        "--out",
        str(out),
        "--quiet",
        faults=fault,
        timeout=300,
    )
    return proc, json.loads((out / "report.json").read_text()), time.monotonic() - started


@pytest.mark.slow
@pytest.mark.parametrize("fault, verdict", [("crash", "CRASH"), ("hang", "HANG")])
def test_cli_run_reports_every_phase_and_exits_1(tmp_path, fault, verdict):
    proc, report, seconds = _cli(tmp_path, fault)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert seconds < 180
    assert report["diagnosis"] == fault
    v = verdicts(report)
    # every phase, the burst included (--no-fail-fast), shuffled in recycled blocks too
    assert len(v) == 12, v
    assert v["serial"] == v["shuffled"] == "PASS", v
    assert v["control/shared"] == v["control/per-thread"] == "PASS", v
    assert verdict in v.values(), v
