"""Pair sampling with a stated coverage: the interleaved rounds and the mixed epochs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from stress.grading.coverage import coverage, describe
from stress.pairs import MIN_PARTNERS, epoch_rounds, mixed_pick, mixed_target, pair_rounds


@pytest.mark.parametrize("n", [1, 2, 7, 30])
def test_all_rounds_are_every_ordered_pair_exactly_once(n: int) -> None:
    pairs = [p for rnd in pair_rounds(n, seed=5) for p in rnd]
    assert len(pairs) == n * n
    assert set(pairs) == {(a, b) for a in range(n) for b in range(n)}


def test_after_k_rounds_every_case_has_k_distinct_victims_and_aggressors() -> None:
    n = 300
    rounds = pair_rounds(n, seed=11)
    first = [next(rounds) for _ in range(MIN_PARTNERS)]
    aggressors, victims = defaultdict(set), defaultdict(set)
    for rnd in first:
        for a, b in rnd:
            aggressors[a].add(b)
            victims[b].add(a)
    assert n > 0
    assert all(len(aggressors[c]) == MIN_PARTNERS for c in range(n))
    assert all(len(victims[c]) == MIN_PARTNERS for c in range(n))
    assert all(c not in aggressors[c] for c in range(n))  # self-pairs come last


def test_same_seed_same_pairs_other_seed_other_pairs() -> None:
    assert list(pair_rounds(50, seed=3)) == list(pair_rounds(50, seed=3))
    assert list(pair_rounds(50, seed=3)) != list(pair_rounds(50, seed=4))


@pytest.mark.parametrize("n, t", [(30, 4), (7, 8), (300, 8), (9, 3)])
def test_mixed_epochs_give_every_case_min_t_n_minus_1_partners(n: int, t: int) -> None:
    r = epoch_rounds(n, t)
    assert r == -(-n // t)
    for e in range(3):
        rounds = [[mixed_pick(n, t, 9, 5, e * r + j, w) for w in range(t)] for j in range(r)]
        assert {c for rnd in rounds for c in rnd} == set(range(n))  # every case, each epoch
        if t <= n:
            assert all(len(set(rnd)) == t for rnd in rounds)  # T distinct cases per round
        partners: dict[int, set[int]] = defaultdict(set)
        for rnd in rounds:
            for c in rnd:
                partners[c].update(set(rnd) - {c})
        assert min(len(partners[c]) for c in range(n)) >= mixed_target(n, t) == min(t, n) - 1
    again = [mixed_pick(n, t, 9, 5, j, w) for j in range(r) for w in range(t)]
    assert again == [mixed_pick(n, t, 9, 5, j, w) for j in range(r) for w in range(t)]


def _call(phase: str, case: str, **extra: object) -> dict[str, object]:
    return {"type": "call", "phase": phase, "case": case, **extra}


def test_coverage_read_back_from_records() -> None:
    header = {
        "cases": [{"id": i, "expect": None} for i in "abc"]
        + [{"id": "bad", "expect": {"status": 1}}]
    }
    calls = [
        _call("interleaved", "a", aggressor="b", order="first", round=0),
        _call("interleaved", "b", aggressor="a", order="second", round=0),
        _call("interleaved", "c", aggressor="c", order="first", round=1),
        _call("interleaved", "c", aggressor="c", order="second", round=1),
        _call("mixed", "a", round=0, variant=""),
        _call("mixed", "bad", round=0, variant=""),
        _call("mixed", "c", round=1, variant=""),
    ]
    cov = coverage(header, calls)
    assert cov["interleaved"] == {
        "pairs_total": 9,
        "pairs_run": 2,
        "min_partners": 0,  # c met only itself
        "target": MIN_PARTNERS - 1,  # three cases: at most two others
        "schedules": 0,
    }
    assert cov["mixed"]["pairs_total"] == 6
    assert cov["mixed"]["pairs_run"] == 1
    assert cov["mixed"]["min_partners"] == 0
    assert describe(cov)[0].startswith("interleaved: 2/9 pairs")


def _run(corpus: Path, out: Path, baseline: Path, budget: str) -> dict:
    # n is the case count: no view variants
    cmd = [sys.executable, "-m", "stress", "run", "--corpus", str(corpus), "--baseline",
           str(baseline), "--record-baseline", "--budget", budget, "--phases",
           "interleaved", "--out", str(out), "--quiet", "--seed", "7",
           "--variants", "none"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "coverage: interleaved:" in (out / "report.md").read_text().replace("- ", "", 1)
    return json.loads((out / "report.json").read_text())


def _pairs(out: Path) -> list[tuple[str, str]]:
    recs = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return [(r["case"], r["aggressor"]) for r in recs if r.get("order") == "first"]


def _generated(tmp_path: Path, n: int) -> Path:
    corpus = tmp_path / f"add{n}.toml"
    subprocess.run([sys.executable, "-m", "stress", "corpus", "generate", "--op", "add",
                    "--count", str(n), "--max-elements", "64", "--out", str(corpus)],
                   check=True, capture_output=True)  # fmt: skip
    return corpus


def _check_sampled(tmp_path: Path, n: int) -> None:
    """Under --budget the phase stops after its share, with every case interleaved with >= k
    others, and the same seed runs the same pairs."""
    corpus, base = _generated(tmp_path, n), tmp_path / "b.json"
    first = _run(corpus, tmp_path / "r1", base, "3")
    cov = first["coverage"]["interleaved"]
    assert cov["pairs_total"] == n * n
    assert MIN_PARTNERS * n <= cov["pairs_run"] < cov["pairs_total"]
    assert cov["min_partners"] >= MIN_PARTNERS
    _run(corpus, tmp_path / "r2", base, "3")
    a, b = _pairs(tmp_path / "r1"), _pairs(tmp_path / "r2")
    common = min(len(a), len(b))
    assert common >= MIN_PARTNERS * n and a[:common] == b[:common]


def test_a_generated_corpus_samples_pairs_within_its_budget(tmp_path: Path) -> None:
    """The short version: N = 80 (6 400 pairs do not fit a 3 s budget)."""
    _check_sampled(tmp_path, 80)


@pytest.mark.slow
def test_a_300_case_corpus_samples_pairs_within_its_budget(tmp_path: Path) -> None:
    """N = 300 would be 90 000 pairs (two CLI runs, ~20 s)."""
    _check_sampled(tmp_path, 300)
