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
from stress.engine.run.session import Session
from stress.vocabulary import split_view

REPO = Path(__file__).resolve().parents[1]
CORPUS = [str(REPO / "corpus/mhc.toml")]
FAULT = {"ACLSIM_FAULTS": "view-staging"}
VIEW_VARIANTS = ("transpose", "pad", "offset")


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    path = tmp_path_factory.mktemp("views") / "baseline-view-staging.json"
    # the views the runs below derive (the size variants would only lengthen the recording)
    config = RunConfig(seed=0, variants=VIEW_VARIANTS)
    Session(config, CORPUS, [], env=FAULT).record_baseline(path)
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
    report = _run(tmp_path / "views", baseline, VIEW_VARIANTS, shrink=30)
    v = {p["name"]: p for p in report["phases"]}
    assert v["serial"]["verdict"] == "PASS"  # one call at a time stages and reads its own
    assert v["isolated"]["verdict"] == "PASS"  # the same case everywhere stages the same
    failing = {c["id"]: c for c in v["mixed"]["cases"] if c["verdict"] != "PASS"}
    assert failing and all(split_view(c)[1] for c in failing), failing  # only views
    # the plain cases, in flight beside the staged views, stay clean: a run without the
    # variants cannot see the fault (that run itself: the slow test below)
    plain = [c["verdict"] for c in v["mixed"]["cases"] if not split_view(c["id"])[1]]
    assert plain and set(plain) == {"PASS"}, v["mixed"]["cases"]
    mismatched = [c for c, f in failing.items() if f["verdict"].startswith("MISMATCH")]
    assert mismatched, failing
    # A kernel computing with another call's inputs writes garbage, and an fp16 output of
    # thousands of garbage elements holds the canary pattern (0xABAB) by chance now and then;
    # the second canary (stress.grading.canaries) keeps that a mismatch, never UNWRITTEN.
    assert not [c for c, f in failing.items() if f["verdict"] == "UNWRITTEN"], failing
    assert report["diagnosis"] == "cross-call-contamination", report["explanation"]
    found = report["variants"]["kinds"]
    assert any(k["failing"] for k in found.values()), found
    repro = report["reproducer"]
    if repro and repro.get("verified"):  # the reproducer keeps its variants
        cases = load_corpus_file(repro["corpus"])
        assert any(c.view for c in cases), [c.id for c in cases]
        assert "--variants none" in repro["command"]


@pytest.mark.slow
def test_view_staging_is_invisible_without_variants(tmp_path, baseline):
    """The plain run (~10 s of CPU): ``make test-slow``. Its short versions in ``make test``:
    the plain cases pass in the mixed phase of the run above, and the mechanism test below
    (contiguous inputs on their own streams are never staged)."""
    report = _run(tmp_path / "plain", baseline, ())
    assert report["diagnosis"] == "clean", report["explanation"]
    assert report["variants"] == {"derived": [], "kinds": {}}


# ---- the mechanism, in a fresh process (ACLSIM_FAULTS is read at aclInit) ----------------------

MECHANISM = r"""
import json, threading
import numpy as np
from stress import acl
from stress.corpus.parse import load_corpus
from stress.corpus.variants import with_variants
from stress.engine.call.prepared import OpCall
from stress.engine.call.inputs import InputCache

rt = acl.runtime("sim")
ctx = rt.device(0).default_context
ctx.bind()
rt.set_deterministic(True)
stream = ctx.create_stream()
CASES = {c.id: c for c in with_variants(load_corpus(["corpus/mhc.toml"]), ("transpose", "pad"))}
cache = InputCache(ctx, ctx.create_stream())

def call(cid, s):
    c = CASES[cid]
    with OpCall(ctx, c.spec, c.params, cache.get(c), layout_key=c.key, view=c.view) as oc:
        return oc.run(s)

def same(x, y):
    return all(np.array_equal(x[k].view(np.uint8), y[k].view(np.uint8)) for k in x)

def concurrent(ids, own_streams, rounds=16, threads=4):
    streams = [ctx.create_stream() if own_streams else stream for _ in range(threads)]
    bar, lock, bad = threading.Barrier(threads), threading.Lock(), [0]
    def work(i):
        ctx.bind()
        for r in range(rounds):
            cid = ids[(i + r) % len(ids)]
            bar.wait()
            out = call(cid, streams[i])
            with lock:
                bad[0] += not same(out, ref[CASES[cid].twin])
    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts: t.start()
    for t in ts: t.join()
    return bad[0]

plain = ["base-a", "base-b", "seq512", "large-c"]
views = [f"{p}@transpose" for p in plain] + [f"{p}@pad" for p in plain]
ref = {p: call(p, stream) for p in plain}
serial = sum(not same(call(v, stream), ref[CASES[v].twin]) for v in views for _ in range(2))
print("RESULT " + json.dumps({
    "serial": serial,
    "plain_own_streams": concurrent(plain, True),
    "views_one_stream": concurrent(views, False),
    "views_own_streams": concurrent(views, True),
}), flush=True)
"""


def test_view_staging_needs_two_staged_kernels_executing_at_once():
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, **FAULT, "STRESS_BACKEND": "sim"}
    proc = subprocess.run(
        [sys.executable, "-c", MECHANISM], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    lines = [ln[7:] for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    res = json.loads(lines[-1])
    assert res["serial"] == 0, res  # one staged kernel at a time: its own values
    assert res["plain_own_streams"] == 0, res  # contiguous inputs are never staged
    assert res["views_one_stream"] == 0, res  # one stream runs the kernels in order
    assert res["views_own_streams"] >= 1, res  # two staged kernels at once: corrupted
