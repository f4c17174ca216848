"""The clean simulator gives PASS everywhere, diagnosis clean, over seeds and policies.

A stress tool that cries wolf is useless: every phase over the shipped corpus, under every
context/stream policy, must be clean. ``make test`` runs two seeds; the acceptance run (20 seeds)
is marked slow: ``make test-slow``.
"""

from __future__ import annotations

import pytest

from stress.config import RunConfig
from stress.engine.run.session import Session

CORPUS = ["corpus/mhc.toml"]
CONTROL = ["corpus/control.toml"]
POLICIES = [
    ("shared", ("shared",)),
    ("shared", ("per-thread",)),
    ("per-thread", ("per-thread",)),
]


@pytest.fixture(scope="module")
def shipped_baseline(tmp_path_factory):
    path = tmp_path_factory.mktemp("baseline") / "shipped.json"
    Session(RunConfig(), CORPUS, CONTROL).record_baseline(path)
    return path


def _run(tmp_path, baseline, seed, context, streams, iterations, **more):
    config = RunConfig(
        seed=seed, threads=8, context=context, streams=streams, iterations=iterations, **more
    )
    s = Session(
        config,
        CORPUS,
        CONTROL,
        baseline_path=baseline,
        out_dir=tmp_path / f"s{seed}",
        isolate=False,
    )
    return s.run().to_json()


def _assert_clean(report):
    bad = [
        (p["name"], p["variant"], c["id"], c["verdict"], c["detail"])
        for p in report["phases"]
        for c in p["cases"]
        if c["verdict"] != "PASS"
    ]
    assert not bad and report["diagnosis"] == "clean", bad


@pytest.mark.parametrize("seed", [1, 2])
def test_shipped_corpus_is_clean(tmp_path, shipped_baseline, seed):
    """Every phase, every variant, under a 12 s budget (unbounded, the interleaved phase runs
    every ordered pair of the corpus with its variants: thousands)."""
    context, streams = POLICIES[seed % len(POLICIES)]
    report = _run(tmp_path, shipped_baseline, seed, context, streams, None, budget_s=12.0)
    _assert_clean(report)
    assert {p["name"] for p in report["phases"]} >= {"serial", "interleaved", "mixed"}


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 120))
def test_twenty_seeds_every_policy_clean(tmp_path, shipped_baseline, seed):
    for context, streams in POLICIES:
        _assert_clean(
            _run(
                tmp_path / context / streams[0],
                shipped_baseline,
                seed,
                context,
                streams,
                iterations=4,
            )
        )
