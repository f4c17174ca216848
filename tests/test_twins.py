"""Twins derived from every case (stress.corpus.twins): each differs from its case in exactly
one field and only takes values the declaration allows; `--variants twins` selects them; the
interleaved phase pairs a case with its twins; a contamination between a case and its twin is
diagnosed with the field named (stress.grading.twin_field); and the `plan-cache` fault
(aclnnSoftmax's plan cache keyed by the shape alone) is found only with twins."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from stress import ops
from stress.cli.values import variants as parse_variants
from stress.config import ALL_VARIANTS, VARIANTS, RunConfig
from stress.corpus.parse import corpus_text, load_corpus
from stress.corpus.twins import CAP, parse_twin, sampled_twins, twin_count, twin_of, twins
from stress.corpus.variants import recorded_cases, run_variants
from stress.engine.replay.twins import twin_pairs
from stress.engine.run.session import Session
from stress.grading.twin_field import describe, differing_field, twin_findings
from stress.ops.spec import dtype_of
from stress.report_sections import TwinPair
from stress.vocabulary import variant_kind
from tests._baselines import recorded_baseline

REPO = Path(__file__).resolve().parents[1]
CORPORA = ["corpus/ops/softmax.toml", "corpus/ops/add.toml", "corpus/ops/reduce_sum.toml"]


@pytest.mark.parametrize("corpus", [*CORPORA, "corpus/mhc.toml"])
def test_a_twin_differs_in_exactly_one_field_with_a_legal_value(corpus):
    cases = load_corpus([REPO / corpus])
    derived = twins(cases)
    assert derived, corpus
    by_id = {c.id: c for c in cases}
    for t in derived:
        info = parse_twin(t.id)
        assert info is not None and info.case in by_id and variant_kind(t.id) == "twins"
        case = by_id[info.case]
        changed = [k for k in case.params if case.params[k] != t.params[k]]
        # one field set, and only it (a derived dtype follows its root: not set by hand)
        assert info.name in changed, (t.id, changed)
        decl = ops.declaration_of(case.op)
        if info.field == "dtype":
            var = decl.dtype_var(info.name)
            assert t.params[info.name] in var.choices
            assert dtype_of(t.params[info.name]) != dtype_of(case.params[info.name])
            roots = {v.name for v in decl.dtypes if not v.derived}
            assert [k for k in changed if k in roots] == [info.name], (t.id, changed)
        else:
            others = {c.params.get(info.name) for c in cases if c.op == case.op}
            assert t.params[info.name] in others  # a value another case passes
            assert changed == [info.name], (t.id, changed)
        assert t.seed == case.seed and t.op == case.op and not t.negative


def test_twins_are_capped_and_the_count_says_how_many_were_left_out():
    cases = load_corpus([REPO / "corpus/ops/add.toml"])
    full, skipped = twin_count(cases)
    assert (full, skipped) == (len(twins(cases)), 0)
    one, left = twin_count(cases, cap=1)
    assert len(twins(cases, cap=1)) == one < full and one + left == full
    per_case = {}
    for t in twins(cases):
        per_case[twin_of(t.id)] = per_case.get(twin_of(t.id), 0) + 1
    assert max(per_case.values()) <= CAP


def test_twins_are_selected_by_name_only():
    assert "twins" not in VARIANTS and "twins" in ALL_VARIANTS
    assert parse_variants("twins") == ("twins",)
    assert parse_variants("all") == ALL_VARIANTS and parse_variants("default") == VARIANTS
    assert parse_variants("twins,default") == ALL_VARIANTS  # in derivation order
    with pytest.raises(argparse.ArgumentTypeError, match="twins"):
        parse_variants("twin")
    cases = load_corpus([REPO / "corpus/ops/softmax.toml"])
    plain = run_variants(cases, RunConfig(variants=()))
    with_twins = run_variants(cases, RunConfig(variants=("twins",)))
    assert [c.id for c in plain] == [c.id for c in cases]
    added = [c.id for c in with_twins[len(cases) :]]
    assert added == [t.id for t in twins(cases)]
    # twins compute something else: each is recorded in the baseline
    recorded = {c.id for c in recorded_cases(cases, RunConfig(variants=("twins",)))}
    assert set(added) <= recorded
    budgeted = run_variants(cases, RunConfig(variants=("twins",), budget_s=5))
    drawn = [c for c in budgeted if variant_kind(c.id) == "twins"]
    assert len(drawn) == len({twin_of(t) for t in added})  # one per case under --budget
    assert sampled_twins(twins(cases), 3) == sampled_twins(list(reversed(twins(cases))), 3)[::-1]


def test_a_written_twin_loads_back_with_its_id(tmp_path):
    cases = load_corpus([REPO / "corpus/ops/softmax.toml"])
    derived = twins(cases)
    path = tmp_path / "corpus.toml"
    path.write_text(corpus_text(derived))
    back = load_corpus([path])
    assert [c.id for c in back] == [c.id for c in derived]
    assert [c.key for c in back] == [c.key for c in derived]


def test_the_interleaved_phase_pairs_each_case_with_its_twins():
    cases = run_variants(
        load_corpus([REPO / "corpus/ops/softmax.toml"]), RunConfig(variants=("twins",))
    )
    pairs = {(cases[a].id, cases[b].id) for a, b in twin_pairs(cases)}
    for t in twins(cases):
        assert (twin_of(t.id), t.id) in pairs and (t.id, twin_of(t.id)) in pairs
    assert all(twin_of(a) == b or twin_of(b) == a for a, b in pairs)


def test_the_differing_field_is_named():
    params = {"s": {"T": "float32", "dim": None}, "s@dtype-T=float16": {"T": "float16"}}
    assert differing_field("s", "s@dtype-T=float16", params) == "dtype T float16 vs float32"
    assert differing_field("s@dtype-T=float16", "s", params) == "dtype T float16 vs float32"
    assert differing_field("s", "s@attr-dim=0", params) == "attr dim 0 vs its default"
    assert differing_field("s", "other@dtype-T=float16", params) == ""
    found = twin_findings(["s@dtype-T=float16", "s", "x"], [{"id": "s", "params": params["s"]}])
    assert found == [TwinPair("s", "s@dtype-T=float16", "dtype T float16 vs float32", True)]
    assert "same shape, dtype T float16 vs float32 in flight" in describe(found)
    assert describe([]) == ""


# ---- the plan-cache fault: found with twins, invisible without them ------------------------

SOFTMAX = [str(REPO / "corpus/ops/softmax.toml")]
FAULT = {"ACLSIM_FAULTS": "plan-cache"}


def _run(tmp: Path, variants: tuple[str, ...], env: dict, phases: tuple[str, ...]) -> dict:
    baseline = recorded_baseline(tmp, SOFTMAX, env, RunConfig(seed=0, variants=variants))
    config = RunConfig(seed=1, duration=1.0, phases=phases, fail_fast=False, variants=variants)
    session = Session(
        config, SOFTMAX, [], baseline_path=baseline, out_dir=tmp / "out", env=env,
        shrink_budget=0,  # no shrinking: nothing here reads a reproducer
    )  # fmt: skip
    return session.run().to_json()


def test_plan_cache_is_found_through_twins_with_the_field_named(tmp_path):
    report = _run(tmp_path, ("twins",), FAULT, ("serial", "isolated", "interleaved"))
    v = {p["name"]: p for p in report["phases"]}
    assert v["serial"]["verdict"] == "PASS"  # each phase 1 refreshes its slot before its launch
    assert v["isolated"]["verdict"] == "PASS"  # copies of one case write the same plan
    assert v["interleaved"]["verdict"] != "PASS"
    assert report["diagnosis"] == "cross-call-contamination", report["explanation"]
    assert "same shape, dtype T" in report["explanation"], report["explanation"]
    assert report["twins"] and all(t["field"] for t in report["twins"])


@pytest.mark.parametrize(
    ("variants", "env"), [((), FAULT), (("twins",), {})], ids=["fault-no-twins", "clean-twins"]
)
def test_plan_cache_needs_twins_and_the_clean_simulator_stays_clean(tmp_path, variants, env):
    report = _run(tmp_path, variants, env, ("serial", "interleaved"))
    assert report["diagnosis"] == "clean", report["explanation"]
    assert "twins" not in report
