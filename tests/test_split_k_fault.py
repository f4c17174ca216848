"""The `split-k` fault end to end: found through the edge-size variants, invisible without.

Past K = 2048 aclnnMatmul walks K in slices and carries the running sums in an accumulation
buffer; the fault makes that buffer one per process (op_matmul_split_k.c), so two such kernels
executing at once (per-thread streams) corrupt each other, even two calls of one case. The
shipped matmul corpus (K <= 32) never takes the path: a run with ``--variants none`` must stay
clean, a run with the edge variants (K at 4096, 8192 and one past them) says self-race; and the
split itself changes no bit (the same digests with the fault off, serially).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stress.config import RunConfig
from stress.corpus.parse import load_corpus_file
from stress.corpus.size_variants import sampled, size_variants, tops
from stress.engine.run.session import Session

REPO = Path(__file__).resolve().parents[1]
CORPUS = [str(REPO / "corpus/ops/matmul.toml")]
FAULT = {"ACLSIM_FAULTS": "split-k"}
#: keeps the edge and large cases cheap: K up to ~10 000 for the fp16 case (24 bytes per K)
MAX_BYTES = 256 << 10


def _config(variants: tuple[str, ...], **kw) -> RunConfig:
    return RunConfig(seed=1, variants=variants, max_case_bytes=MAX_BYTES, **kw)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    path = tmp_path_factory.mktemp("split_k") / "baseline-split-k.json"
    Session(_config(("edge",)), CORPUS, [], env=FAULT).record_baseline(path)
    return path


def _run(tmp: Path, baseline: Path, variants: tuple[str, ...]) -> dict:
    config = _config(
        variants,
        streams=("per-thread",),
        duration=1.0,
        phases=("serial", "isolated"),
        fail_fast=False,
    )
    session = Session(
        config, CORPUS, [], baseline_path=baseline, out_dir=tmp, env=FAULT,
        shrink_budget=0,  # no shrinking: nothing here reads a reproducer
    )  # fmt: skip
    return session.run().to_json()


def test_split_k_is_found_through_the_edge_variants(tmp_path, baseline):
    report = _run(tmp_path / "edges", baseline, ("edge",))
    v = {p["name"]: p for p in report["phases"]}
    assert v["serial"]["verdict"] == "PASS"  # one kernel at a time: its own sums
    failing = [c["id"] for c in v["isolated"]["cases"] if c["verdict"] != "PASS"]
    assert failing, v["isolated"]
    ks = [int(c.rpartition("-")[2]) for c in failing if "-K-" in c]
    assert ks and min(ks) > 2048, failing  # only the cases past the threshold
    assert len(ks) == len(failing), failing
    assert report["diagnosis"] == "self-race", report["explanation"]


def test_split_k_is_invisible_without_variants(tmp_path, baseline):
    report = _run(tmp_path / "plain", baseline, ())
    assert report["diagnosis"] == "clean", report["explanation"]


def test_the_split_changes_no_bit(tmp_path, baseline):
    """The clean simulator's serial digests of the cases past the threshold are the faulty
    library's (one kernel at a time the shared buffer holds the same sums as a private one)."""
    clean = tmp_path / "clean.json"
    Session(_config(("edge",)), CORPUS, [], env={"ACLSIM_FAULTS": ""}).record_baseline(clean)
    import json

    def digests(path: Path) -> dict:
        data = json.loads(path.read_text())
        return {k: v for k, v in data["cases"].items() if "-K-" in k}

    faulty, plain = digests(baseline), digests(clean)
    past = [k for k in plain if int(k.rpartition("-")[2]) > 2048]
    assert past, sorted(plain)
    assert {k: plain[k]["outputs"] for k in past} == {k: faulty[k]["outputs"] for k in past}


def test_every_budgeted_seed_passes_each_dimensions_top_edge():
    """Under --budget each case draws one size variant, and the largest edge of each dimension
    of each operator runs too: K past 2048 on every seed, where the draw alone misses it."""
    cases = load_corpus_file(CORPUS[0])
    variants = size_variants(cases, ("empty", "edge"))
    top = {c.id for c in tops(variants)}
    assert {c.rpartition("@")[2].split("-")[1] for c in top} == {"M", "K", "N"}, top
    top_k = [c for c in top if "@edge-K-" in c]
    assert len(top_k) == 1 and int(top_k[0].rpartition("-")[2]) > 2048, top_k
    for seed in range(12):
        ids = {c.id for c in sampled(variants, seed)}
        assert top <= ids, (seed, sorted(ids))
