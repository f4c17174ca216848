"""Size variants derived from every case (stress.corpus.size_variants): which cases a corpus
yields, that they are recorded in the baseline and skipped with a note where it lacks them, and
that an empty variant finds the seed's own bug (B = 0 outputs left unwritten) on a corpus with
no B = 0 case of its own, while the clean simulator stays clean with them on."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from stress.config import VARIANTS, RunConfig
from stress.corpus.parse import load_corpus
from stress.corpus.size_variants import (
    EDGE_BYTES,
    LARGE_BYTES,
    _bytes,
    edge_values,
    sampled,
    size_variants,
    tops,
)
from stress.corpus.variants import recorded_cases, run_variants
from stress.engine.run.session import Session
from stress.errors import ConfigError
from stress.vocabulary import size_kind, variant_kind

REPO = Path(__file__).resolve().parents[1]
MHC = REPO / "corpus/mhc.toml"
SIZES = ("empty", "edge")


def _without_empty_batch(tmp: Path) -> Path:
    """corpus/mhc.toml without its B = 0 case."""
    blocks = MHC.read_text().split("[[case]]")
    kept = [b for b in blocks if 'id = "empty-batch"' not in b]
    assert len(kept) == len(blocks) - 1
    path = tmp / "mhc-no-empty.toml"
    path.write_text("[[case]]".join(kept))
    return path


def test_edge_values_are_the_ends_powers_and_tile_multiples_and_one_past():
    assert edge_values(1, 40) == [1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 40]
    # a multiple of 128 in [128, 1024]: one past a multiple is never legal there
    assert edge_values(128, 1024, 128) == [128, 256, 512, 1024]
    assert edge_values(0, 3) == [1, 2, 3]  # 0 is an empty's


def test_mhc_yields_an_empty_per_nonzero_b_case_and_edges_inside_the_legal_ranges():
    cases = load_corpus([str(MHC)])
    derived = size_variants(cases, SIZES)
    positive = [c for c in cases if not c.negative]
    empties = {c.id for c in derived if size_kind(c.id) == "empty"}
    # B's and S's legal ranges admit 0 (empty x is documented), C's does not; negative cases
    # derive nothing
    assert empties == {f"{c.id}@empty-{d}" for c in positive for d in "BS" if c.params[d]}
    assert derived and all(not c.negative for c in derived)
    by_id = {c.id: c for c in derived}
    assert all(by_id[e].params[e[-1]] == 0 for e in empties)
    edges = [c for c in derived if size_kind(c.id) == "edge"]
    for c in edges:
        dim, value = c.id.rpartition("@")[2].split("-")[1:]
        assert c.params[dim] == int(value)
        assert c.params["S"] >= 1 and c.params["B"] >= 0
        assert c.params["C"] % 128 == 0 and c.params["C"] <= 99999  # the legal range
    small = [c for c in edges if "@edge-" in c.id]
    assert small and all(_bytes(c) <= EDGE_BYTES for c in small)
    large = [c for c in edges if "@large-" in c.id]
    assert len(large) == len({c.op for c in positive})  # one per operator
    assert all(EDGE_BYTES < _bytes(c) <= LARGE_BYTES for c in large)
    # each S edge of the forward (one case, fwd-base, S = 128) is derived once; the ones left
    # out are those whose case is over the edge cap
    fwd = [c.params["S"] for c in edges if c.op == "mhc_pre_sinkhorn" and "-S-" in c.id]
    base = next(c for c in cases if c.id == "fwd-base")
    left = set(edge_values(1, 2**31 - 1)) - set(fwd) - {128}
    assert len(fwd) == len(set(fwd)) and {1, 17, 129} <= set(fwd)
    assert left and all(
        _bytes(replace(base, params={**base.params, "S": v})) > EDGE_BYTES for v in left
    )


def test_the_large_case_follows_max_case_bytes():
    cases = load_corpus([str(MHC)])
    limit = 2 * LARGE_BYTES
    large = [c for c in size_variants(cases, ("edge",), limit) if "@large-" in c.id]
    assert large and all(LARGE_BYTES < _bytes(c) <= limit for c in large)


def test_budget_runs_one_size_variant_per_case_and_recording_holds_them_all():
    cases = load_corpus([str(MHC)])
    every = size_variants(cases, SIZES)
    drawn = sampled(every, seed=3)
    top = {c.id for c in tops(every)}
    assert top and top <= {c.id for c in drawn}  # each dimension's largest edge, every seed
    twins = [c.id.rpartition("@")[0] for c in drawn if c.id not in top]
    assert len(twins) == len(set(twins))  # besides the tops, one per case at most
    assert {c.id.rpartition("@")[0] for c in drawn} == {c.id.rpartition("@")[0] for c in every}
    assert {size_kind(c.id) for c in drawn} == {"empty", "edge"}  # both kinds in one seed
    assert {c.id for c in drawn} != {c.id for c in sampled(every, seed=4)}  # seeds differ
    again = sampled(every[::-1], seed=3)  # any order (or subset) draws the same
    assert {c.id for c in again} == {c.id for c in drawn}
    over_seeds = {c.id for seed in range(400) for c in sampled(every, seed)}
    assert over_seeds == {c.id for c in every}  # every variant comes round
    budgeted = run_variants(cases, RunConfig(budget_s=14, seed=3))
    recorded = {c.id for c in recorded_cases(cases, RunConfig(budget_s=14, seed=3))}
    sized = {c.id for c in budgeted if size_kind(c.id)}
    assert sized and sized <= recorded  # a budgeted run's sample is in the baseline
    plain = run_variants(cases, RunConfig(variants=()))
    assert plain and not any(variant_kind(c.id) for c in plain)


def test_variants_accepts_the_size_kinds_and_refuses_others():
    assert set(SIZES) <= set(VARIANTS) and set(SIZES) <= set(RunConfig().variants)
    RunConfig(variants=("empty",)).validate()
    with pytest.raises(ConfigError, match="--variants: unknown variant 'edges'"):
        RunConfig(variants=("edges",)).validate()


def _run(tmp: Path, corpus: Path, variants: tuple[str, ...], faults: str, name: str) -> dict:
    baseline = tmp / f"baseline-{name}.json"
    env = {"ACLSIM_FAULTS": faults} if faults else {}
    config = RunConfig(seed=1, phases=("serial",), variants=variants)
    Session(config, [str(corpus)], [], env=env).record_baseline(baseline)
    session = Session(
        config, [str(corpus)], [], baseline_path=baseline, out_dir=tmp / name, env=env,
        shrink_budget=0,  # no shrinking: nothing here reads a reproducer
    )  # fmt: skip
    return session.run().to_json()


def test_an_empty_variant_finds_empty_skip_on_a_corpus_without_a_b0_case(tmp_path):
    corpus = _without_empty_batch(tmp_path)
    # the corpus alone cannot show it: no case has B = 0
    assert _run(tmp_path, corpus, (), "empty-skip", "none")["diagnosis"] == "clean"
    report = _run(tmp_path, corpus, ("empty",), "empty-skip", "empty")
    assert report["diagnosis"] == "unwritten-output"
    serial = report["phases"][0]
    failing = {c["id"] for c in serial["cases"] if c["verdict"] != "PASS"}
    assert failing and all("@empty-" in i for i in failing), failing
    assert report["variants"]["kinds"]["empty"]["failing"]


def test_the_clean_simulator_stays_clean_with_every_size_variant(tmp_path):
    report = _run(tmp_path, MHC, SIZES, "", "clean")
    assert report["diagnosis"] == "clean", report["diagnosis"]
    ran = {c["id"] for c in report["phases"][0]["cases"]}
    assert {variant_kind(i) for i in ran} >= {"empty", "edge"}


def test_a_baseline_without_the_size_variants_skips_them_with_a_note(tmp_path):
    baseline = tmp_path / "old.json"
    Session(RunConfig(variants=()), [str(MHC)], []).record_baseline(baseline)
    config = RunConfig(seed=1, phases=("serial",), variants=("empty",))
    out = tmp_path / "run"
    report = Session(config, [str(MHC)], [], baseline_path=baseline, out_dir=out).run().to_json()
    assert report["diagnosis"] == "clean"
    first = report["phases"][0]["cases"]
    assert first and not any("@empty-" in c["id"] for c in first)
    notes = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    said = [n["message"] for n in notes if n.get("type") == "note"]
    assert any("not in the baseline" in m and "@empty-B" in m for m in said), said


def test_matmul_k_past_its_small_range_can_be_asked_for(tmp_path):
    from stress import cli

    out = tmp_path / "k.toml"
    args = ["corpus", "generate", "--declaration", str(REPO / "corpus/ops/matmul.toml")]
    assert cli.main([*args, "--dim", "K=1000:2048", "--count", "3", "--out", str(out)]) == 0
    cases = [c for c in load_corpus([str(out)]) if not c.negative]
    assert cases and all(1000 <= c.params["K"] <= 2048 for c in cases)


@pytest.mark.parametrize("path", sorted((REPO / "corpus/ops").glob("*.toml")), ids=lambda p: p.stem)
def test_every_shipped_declaration_states_legal_ranges_wider_than_its_draws(path):
    from stress import ops

    cases = load_corpus([str(path)])
    decl = ops.declaration_of(cases[0].op)
    ranged = [d for d in decl.dims if d.default is None and d.low < d.high]
    assert ranged
    for d in ranged:
        legal = decl.generation.legal_range(d.name)
        assert legal is not None, d.name
        assert legal[0] <= d.low and legal[1] > d.high, (d.name, legal)
