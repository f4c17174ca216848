"""The `view-staging` fault end to end: found through the view variants, invisible without.

The mHC kernels gather a non-contiguous input into one process-wide staging slot per input
position (op_mhc_view_stage.c): only two such kernels executing at once (per-thread streams)
corrupt each other. The shipped mHC corpus alone (every tensor contiguous) never stages, so a
run with ``--variants none`` must stay clean; with the variants the mixed phase fails and the
run says cross-call-contamination, the reproducer keeping the variants it needs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stress.config import RunConfig
from stress.corpus.parse import load_corpus_file
from stress.engine.session import Session
from stress.model import split_view

REPO = Path(__file__).resolve().parents[1]
CORPUS = [str(REPO / "corpus/mhc.toml")]
FAULT = {"ACLSIM_FAULTS": "view-staging"}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    path = tmp_path_factory.mktemp("views") / "baseline-view-staging.json"
    Session(RunConfig(seed=0), CORPUS, [], env=FAULT).record_baseline(path)
    return path


def _run(tmp: Path, baseline: Path, variants: tuple[str, ...], shrink: float = 0) -> dict:
    config = RunConfig(
        seed=1,
        streams=("per-thread",),
        duration=1.5,
        phases=("serial", "isolated", "mixed"),
        fail_fast=False,
        variants=variants,
    )
    session = Session(
        config, CORPUS, [], baseline_path=baseline, out_dir=tmp, shrink_budget=shrink, env=FAULT
    )
    return session.run().to_json()


def test_view_staging_is_found_through_the_variants(tmp_path, baseline):
    report = _run(tmp_path / "views", baseline, ("transpose", "pad", "offset"), shrink=30)
    v = {p["name"]: p for p in report["phases"]}
    assert v["serial"]["verdict"] == "PASS"  # one call at a time stages and reads its own
    assert v["isolated"]["verdict"] == "PASS"  # the same case everywhere stages the same
    assert v["mixed"]["verdict"].startswith("MISMATCH"), v["mixed"]
    failing = [c["id"] for c in v["mixed"]["cases"] if c["verdict"] != "PASS"]
    assert failing and all(split_view(c)[1] for c in failing), failing  # only views
    assert report["diagnosis"] == "cross-call-contamination"
    found = report["variants"]["kinds"]
    assert any(k["failing"] for k in found.values()), found
    repro = report["reproducer"]
    if repro and repro.get("verified"):  # the reproducer keeps its variants
        cases = load_corpus_file(repro["corpus"])
        assert any(c.view for c in cases), [c.id for c in cases]
        assert "--variants none" in repro["command"]


def test_view_staging_is_invisible_without_variants(tmp_path, baseline):
    report = _run(tmp_path / "plain", baseline, ())
    assert report["diagnosis"] == "clean", report["explanation"]
    assert report["variants"] == {"derived": [], "kinds": {}}
