"""Delta debugging and corpus round trips for minimal reproducers."""

from __future__ import annotations

import pytest

from stress.corpus.parse import load_corpus, load_corpus_file
from stress.corpus.shrink import ddmin, write_corpus


def test_ddmin_finds_the_failing_pair_with_few_trials():
    calls = []

    def fails(subset):
        calls.append(list(subset))
        return 3 in subset and 7 in subset

    assert sorted(ddmin(list(range(10)), fails)) == [3, 7]
    assert len(calls) < 30


def test_ddmin_keeps_the_victim_and_can_drop_everything_else():
    assert ddmin(list(range(6)), lambda s: 9 in s, keep=[9]) == [9]
    assert ddmin(list(range(6)), lambda s: 9 in s and 4 in s, keep=[9]) == [9, 4]


def test_ddmin_respects_the_trial_budget():
    calls = []

    def fails(subset):
        calls.append(1)
        return len(subset) >= 5

    result = ddmin(list(range(40)), fails, max_trials=3)
    assert len(calls) <= 3 and fails(result)


@pytest.mark.parametrize("path", ["corpus/mhc.toml", "corpus/control.toml"])
def test_written_corpus_loads_back_to_the_same_cases(tmp_path, path):
    cases = load_corpus([path])
    out = write_corpus(cases, tmp_path / "sub.toml", "a comment\nsecond line")
    again = load_corpus_file(out)
    assert [c.key for c in again] == [c.key for c in cases]
    assert out.read_text().startswith("# a comment\n# second line\n")
