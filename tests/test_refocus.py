"""What a sample takes first and what runs after a failure the burst missed: every sampled
phase starts with the cases past each operator's size thresholds, and the first phase to fail
after a clean burst sends the diagnostic phases that ran on samples back to its failing cases."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from test_focused_steps import _Pool, _runner

from stress.config import RunConfig
from stress.engine.replay.sampling import MIN_CASES, thresholds, variant_groups
from stress.engine.run.refocus import refocus_steps
from stress.engine.run.schedule import FOCUS, plan

EDGES = ["f@edge-K-33000", "m@edge-K-4096", "m@edge-K-32768", "m@edge-N-64", "m@large-M-9000"]


def _cases(ids: list[str], op: str = "aclnnMatmul") -> list[SimpleNamespace]:
    return [SimpleNamespace(id=i, op=op) for i in ids]


def test_thresholds_are_the_largest_edge_per_dimension_and_the_large_case() -> None:
    cases = _cases(["m", "m@pad", "m@empty-K", *EDGES]) + _cases(["s@edge-K-9"], "aclnnSoftmax")
    got = [c.id for c in thresholds(cases)]
    assert got == ["f@edge-K-33000", "m@edge-N-64", "m@large-M-9000", "s@edge-K-9"]
    assert thresholds(_cases(["m", "m@pad", "m@empty-K"])) == []


def test_a_sampled_phase_takes_the_threshold_cases_first_on_every_seed() -> None:
    ids = [f"c{k}" for k in range(40)] + EDGES
    want = {"f@edge-K-33000", "m@edge-N-64", "m@large-M-9000"}
    for seed in range(1, 6):
        config = RunConfig(budget_s=20.0, duration=1e-6, seed=seed)
        runner, calls = _runner(config, ids)
        runner.cases = _cases(ids)
        runner._phase_serial(_Pool())
        order = list(dict.fromkeys(c for c, _ in calls))
        assert len(order) == MIN_CASES  # the deadline (long past) ended the sample there
        assert set(order[:3]) == want


def _journal(tmp_path: Path, phase: str, variant: str, failing: list[str]) -> Path:
    path = tmp_path / "results.jsonl"
    lines = [{"type": "run"}]
    for k, case in enumerate(["a", "b", "c", "d"]):
        status = {"status": "ok", "match": case not in failing}
        lines.append({"type": "call", "phase": phase, "case": case, "variant": variant,
                      "round": k // 2, **status})  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def test_a_failure_after_a_clean_burst_runs_the_sampled_phases_on_its_cases(tmp_path) -> None:
    steps = plan(RunConfig(streams=("shared", "per-thread")))
    mixed = [k for k, s in enumerate(steps) if s.phase == "mixed"][-1]  # stream=per-thread
    journal = _journal(tmp_path, "mixed", steps[mixed].variant, ["c"])
    new, note = refocus_steps(steps[: mixed + 1], journal, _cases(["a", "b", "c", "d"]))
    pt = f"stream=per-thread {FOCUS}"
    assert [(s.phase, s.variant) for s in new] == [
        ("serial", FOCUS),
        ("shuffled", ""),
        ("isolated", pt),  # under the failing step's policy only
        ("interleaved", FOCUS),
    ]
    confirming = [s for s in new if s.phase != "serial"]
    assert confirming and all(s.confirm for s in confirming)
    focus = {s.phase: s for s in new}
    assert focus["serial"].focus == ("c",) and focus["isolated"].focus == ("c",)
    assert focus["shuffled"].first == ("c",)
    assert set(focus["interleaved"].focus) == {"c", "d"}  # with its round's partner
    assert "mixed stream=per-thread failed on 1 corpus case(s) (c)" in note
    # a failing phase that ran first of them: nothing sampled before it to go back to
    serial = next(k for k, s in enumerate(steps) if s.phase == "serial")
    journal = _journal(tmp_path, "serial", "", ["a"])
    assert refocus_steps(steps[: serial + 1], journal, _cases(["a", "b"])) == ([], "")
    # only control cases failing: no corpus case to focus on
    journal = _journal(tmp_path, "mixed", steps[mixed].variant, [])
    assert refocus_steps(steps[: mixed + 1], journal, _cases(["a"]))[0] == []


def test_variant_groups_put_each_kind_together() -> None:
    ids = ["a", "b", "a@pad", "b@transpose", "a@edge-K-9", "b@large-K-99", "a@empty-K", "c@offset"]
    groups = [[c.id for c in g] for g in variant_groups(_cases(ids))]
    assert groups == [["a@pad", "b@transpose", "c@offset"], ["a@edge-K-9", "b@large-K-99"]]


class _Rounds:
    """A pool that runs three windows of free calls, then ``rounds`` aligned rounds, on
    ``threads`` workers."""

    threads = 8

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds

    def run_free(self, task, budget) -> int:  # three windows of free-running calls
        for k in range(3 * self.threads):
            task(SimpleNamespace(index=k % self.threads), k)
        return 3

    def run(self, task, budget, fill=None, threads=None, fill_within=None) -> None:
        for rnd in range(self.rounds if threads is None else 1):
            for w in range(threads or self.threads):
                task(SimpleNamespace(index=w), rnd)


def test_the_burst_rounds_meet_views_together_and_thresholds_alone() -> None:
    plain = [f"p{k}" for k in range(20)]
    ids = [*plain, "a@pad", "b@transpose", "c@offset", "m@edge-K-4096", "m@edge-K-9000"]
    runner, _ = _runner(RunConfig(seed=3, budget_s=5.0, duration=0.2), ids)
    runner.cases, runner.control = _cases(ids), _cases(["add-1"])
    rounds: dict[int, list[str]] = {}

    def call(phase: str, worker: object, rnd: int, case: SimpleNamespace, **kw: object) -> None:
        if "rep" not in kw:  # the closing serial pass aside
            rounds.setdefault(rnd, []).append(case.id)

    runner._call = call  # type: ignore[method-assign]
    runner._budget = lambda b: b  # type: ignore[method-assign]
    runner._phase_burst(_Rounds(6))
    views = {"a@pad", "b@transpose", "c@offset"}
    assert set(rounds[1]) == views  # the opening's second window: one variant kind
    assert not set(rounds[0]) <= views | {"m@edge-K-4096", "m@edge-K-9000"}
    aligned = {r - 3: ids for r, ids in rounds.items() if r >= 3}  # after the 3 windows
    assert set(aligned[1]) == views  # a view round
    assert set(aligned[4]) == {"m@edge-K-4096", "m@edge-K-9000"}  # an edge-size round
    assert set(aligned[2]) == {"m@edge-K-9000"}  # the first self-race: the largest K
