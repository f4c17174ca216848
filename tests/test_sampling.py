"""Seeded case samples under --budget and the budgets that end a phase early or late."""

from __future__ import annotations

import threading
import time
from collections import Counter

from stress.engine.replay import stop
from stress.engine.replay.sampling import (
    CHUNK,
    AtLeastRounds,
    UntilConfirmed,
    after_others,
    case_chunks,
)
from stress.grading.coverage import coverage, describe


def test_without_a_budget_every_case_in_corpus_order() -> None:
    assert list(case_chunks(40, seed=1, salt=11, sampled=False)) == [list(range(40))]


def test_a_sample_is_a_seeded_permutation_in_chunks() -> None:
    chunks = list(case_chunks(40, seed=1, salt=11, sampled=True))
    assert [len(c) for c in chunks] == [CHUNK, CHUNK, 40 - 2 * CHUNK]
    flat = [i for c in chunks for i in c]
    assert sorted(flat) == list(range(40)) and flat != list(range(40))
    assert chunks == list(case_chunks(40, seed=1, salt=11, sampled=True))
    assert chunks != list(case_chunks(40, seed=2, salt=11, sampled=True))


def test_the_cases_named_first_lead_the_sample_in_its_seeded_order() -> None:
    plain = [i for c in case_chunks(40, seed=1, salt=12, sampled=True) for i in c]
    first = [plain[-1], plain[30], plain[20]]  # cases a plain sample takes last
    chunks = list(case_chunks(40, seed=1, salt=12, sampled=True, first=first))
    assert [len(c) for c in chunks] == [CHUNK, CHUNK, 40 - 2 * CHUNK]
    assert chunks[0][:3] == [plain[20], plain[30], plain[-1]]  # in the permutation's order
    assert chunks[0][3:] == [i for i in plain if i not in first][: CHUNK - 3]
    unsampled = list(case_chunks(40, seed=1, salt=12, sampled=False, first=first))
    assert unsampled == [list(range(40))]  # a whole phase runs every case anyway


def test_a_focused_shuffle_takes_each_call_of_its_cases_right_after_another_case() -> None:
    class C:
        def __init__(self, id: str) -> None:
            self.id = id

    a, b, x, y = C("a"), C("b"), C("x"), C("y")
    order = [(a, 0), (x, 0), (b, 0), (x, 1), (y, 0), (a, 1), (b, 1), (y, 1)]
    got = after_others(order, {"x", "y"})
    # the failing cases' calls first, each after one of the others (in the shuffled order)
    assert got == [(a, 0), (x, 0), (b, 0), (x, 1), (a, 1), (y, 0), (b, 1), (y, 1)]
    assert Counter(got) == Counter(order)  # the same calls, reordered
    assert after_others(order, set()) == order
    lone = [(x, 0), (a, 0), (x, 1), (x, 2)]  # fewer others than its calls: the rest follow
    assert after_others(lone, {"x"}) == [(a, 0), (x, 0), (x, 1), (x, 2)]


def test_at_least_rounds_outlasts_its_time_but_not_a_stop_request() -> None:
    past = time.monotonic() - 10
    budget = AtLeastRounds(seconds=1.0, rounds=None, least=5)
    assert not budget.exhausted(past, 4) and budget.exhausted(past, 5)
    stop.requested.set()
    try:
        assert budget.exhausted(past, 0)
    finally:
        stop.requested.clear()


def test_until_confirmed_ends_at_the_first_failure() -> None:
    found = threading.Event()
    budget = UntilConfirmed(seconds=60.0, rounds=None, found=found)
    now = time.monotonic()
    assert not budget.exhausted(now, 1)
    found.set()
    assert budget.exhausted(now, 1)


def test_case_coverage_of_the_sampled_phases() -> None:
    header = {"cases": [{"id": f"c{i}"} for i in range(5)], "config": {"threads": 2}}
    calls = [{"phase": "serial", "case": "c0"}, {"phase": "serial", "case": "c3"}]
    calls += [{"phase": "serial", "case": "c1", "warmup": True}]  # warm-ups never count
    calls += [
        {"phase": "mixed", "case": "c0", "round": 0},
        {"phase": "mixed", "case": "c1", "round": 0},
    ]
    cov = coverage(header, calls)
    assert cov["serial"] == {"cases_total": 5, "cases_run": 2}
    assert "shuffled" not in cov and "isolated" not in cov
    assert cov["mixed"]["target"] == 1  # min(T, N) - 1 with T = 2
    assert describe(cov)[0] == "serial: 2/5 cases"
