"""The `dirty-accumulator` fault end to end: uninitialized-read through the prefilled workspace.

aclnnLayerNorm keeps each row's running sums in its workspace and, under the fault, skips
zeroing them (op_layer_norm.c). The simulator's aclrtMalloc hands out the same fill bytes
every time, so without a prefill that varies between calls the kernel gives the same (wrong)
value on every call and a baseline agrees with it. The harness prefills the workspace with the
call's alternating canary, so the serial phase sees one result per byte: uninitialized-read on
the shipped corpus/ops/layer_norm.toml, naming the workspace; the clean simulator stays clean.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stress.config import VARIANTS, RunConfig
from stress.engine.run.session import Session
from stress.sim.faults import FAULTS
from stress.vocabulary import Diagnosis, size_kind, split_view
from tests._baselines import recorded_baseline
from tests._snippet import script_result

REPO = Path(__file__).resolve().parents[1]
CORPUS = [str(REPO / "corpus/ops/layer_norm.toml")]
FAULT = "dirty-accumulator"


def _run(
    tmp: Path, env: dict[str, str], phases=("serial", "shuffled"), shrink=0.0, variants=()
) -> dict:
    """The corpus as written by default (3 cases; its variants make 15: the slow test below)."""
    baseline = recorded_baseline(tmp, CORPUS, env, RunConfig(seed=0, variants=variants))
    config = RunConfig(seed=1, phases=phases, duration=1.0, fail_fast=False, variants=variants)
    session = Session(
        config, CORPUS, [], baseline_path=baseline, out_dir=tmp / "run", shrink_budget=shrink,
        env=env,
    )  # fmt: skip
    return session.run().to_json()


def test_the_fault_expects_uninitialized_read():
    assert FAULTS[FAULT].expected == Diagnosis.UNINITIALIZED_READ
    assert FAULTS[FAULT].targets == ("aclnnLayerNorm",)


def test_dirty_accumulator_is_an_uninitialized_read(tmp_path):
    report = _run(tmp_path, {"ACLSIM_FAULTS": FAULT}, shrink=30)
    assert report["diagnosis"] == "uninitialized-read", report["explanation"]
    serial = next(p for p in report["phases"] if p["name"] == "serial")
    failing = [c for c in serial["cases"] if c["verdict"] != "PASS"]
    assert failing and all(c.get("prefill") for c in failing), failing
    assert "ln-f32: " in report["explanation"] and "workspace (" in report["explanation"]
    # the canary never survives: wrong values, not unwritten bytes
    assert all(not c["unwritten"] for c in failing), failing
    repro = report["reproducer"]  # one case, serially (its calls alternate the byte)
    assert repro and repro["verified"] and repro["phase"] == "serial", repro
    assert len(repro["cases"]) == 1, repro


@pytest.mark.slow
def test_dirty_accumulator_is_found_through_every_variant(tmp_path):
    """The fault's run over the corpus with every variant kind (its short version: the test
    above, the corpus as written)."""
    report = _run(tmp_path, {"ACLSIM_FAULTS": FAULT}, variants=VARIANTS)
    assert report["diagnosis"] == "uninitialized-read", report["explanation"]
    serial = next(p for p in report["phases"] if p["name"] == "serial")
    failing = [c["id"] for c in serial["cases"] if c["verdict"] != "PASS"]
    assert any(split_view(c)[1] or size_kind(c) for c in failing), failing


def test_the_clean_simulator_stays_clean_on_the_corpus(tmp_path):
    """The fault's run (its phases, seed, variants) on the clean simulator: the prefilled
    workspace alone finds nothing. The corpus through every phase: test_declared_corpus.py
    (as written, in ``make test``; with its variants, ``-m slow``)."""
    report = _run(tmp_path, {})
    assert report["diagnosis"] == "clean", report["explanation"]
    assert {p["name"] for p in report["phases"]} >= {"serial", "shuffled"}, report["phases"]


MECHANISM = r"""
import json
import numpy as np
from stress import acl
from stress.corpus.parse import load_corpus
from stress.engine.call.prepared import OpCall
from stress.engine.call.inputs import InputCache
from stress.acl.enums import MemcpyKind

rt = acl.runtime("sim")
ctx = rt.device(0).default_context
ctx.bind()
stream = ctx.create_stream()
case = next(c for c in load_corpus(["corpus/ops/layer_norm.toml"]) if c.id == "ln-f32")
inputs = InputCache(ctx, stream).get(case)

def run(canary):
    with OpCall(ctx, case.spec, case.params, inputs, canary=canary, layout_key=case.key) as oc:
        size = oc.phase1()
        ws = np.empty(size, np.uint8)
        rt.api.raw.aclrtMemcpy(ws.ctypes.data, size, oc._workspace, size,
                               MemcpyKind.DEVICE_TO_HOST)
        oc.phase2(stream)
        stream.synchronize()
        out = oc.collect()["out"]
    return sorted(set(ws.tolist())), out.tobytes().hex()

a1, a2, b = run(0xAB), run(0xAB), run(0x5A)
print("RESULT " + json.dumps({"ws_a": a1[0], "ws_b": b[0], "same_byte_agrees": a1[1] == a2[1],
                              "bytes_agree": a1[1] == b[1]}), flush=True)
"""


@pytest.mark.parametrize("fault", ["", FAULT])
def test_the_workspace_is_prefilled_and_only_the_fault_reads_it(fault):
    res = script_result(MECHANISM, fault)
    assert res["ws_a"] == [0xAB] and res["ws_b"] == [0x5A], res  # the call's byte, everywhere
    assert res["same_byte_agrees"], res  # invisible while the prior contents do not change
    assert res["bytes_agree"] is (not fault), res  # the fault's result follows the byte
