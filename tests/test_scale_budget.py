"""Work per phase proportional to what the phase runs, not to the corpus (issue #31 item 6):
the pair rounds' k-partner floor only for corpora it fits, the mixed epoch's floor capped in
time under --budget, the corpus files parsed once before the phase children are forked."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

from stress.corpus import preload
from stress.engine.replay.interleave import PARTNERS_UP_TO, InterleavedPhase
from stress.engine.replay.sampling import AtLeastRounds
from stress.pairs import MIN_PARTNERS

REPO = Path(__file__).resolve().parents[1]


class _Phase(InterleavedPhase):
    def __init__(self) -> None:
        self.config = SimpleNamespace(seed=3)
        self._confirmed = threading.Event()
        self.calls: list[tuple[str, str]] = []

    def _interleave(self, worker, i, group, **extra) -> None:
        self.calls.append((group[0], group[1]))


def test_a_small_corpus_meets_k_partners_whatever_the_share() -> None:
    phase, n = _Phase(), 40
    past = time.monotonic() - 1.0  # the share is already spent
    done = phase._pair_rounds(None, [f"c{k}" for k in range(n)], past)
    assert done == len(phase.calls) >= MIN_PARTNERS * n // 2
    partners: dict[str, set[str]] = {}
    for a, b in phase.calls:
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
    assert len(partners) == n and min(len(p) for p in partners.values()) >= MIN_PARTNERS


def test_a_corpus_past_the_floor_stops_at_its_share() -> None:
    phase = _Phase()
    cases = [f"c{k}" for k in range(PARTNERS_UP_TO + 1)]
    assert phase._pair_rounds(None, cases, time.monotonic() - 1.0) == 0 == len(phase.calls)
    # without a deadline (no --budget) every pair still runs, round by round
    phase = _Phase()
    assert phase._pair_rounds(None, cases[:10], None) == len(phase.calls) > 0


def test_the_least_rounds_yield_once_their_time_cap_is_spent() -> None:
    long_ago = time.monotonic() - 10.0
    assert not AtLeastRounds(0.5, None, 5).exhausted(long_ago, 0)  # the floor holds
    assert AtLeastRounds(0.5, None, 5, 2.0).exhausted(long_ago, 0)  # capped: the budget wins
    assert not AtLeastRounds(0.5, None, 5, 20.0).exhausted(long_ago, 0)
    assert AtLeastRounds(0.5, None, 5).exhausted(long_ago, 5)


def test_warm_files_are_parsed_once_and_a_changed_file_again(tmp_path: Path) -> None:
    corpus = tmp_path / "c.toml"
    corpus.write_bytes((REPO / "corpus" / "control.toml").read_bytes())
    preload.warm([corpus])
    first, second = preload.load([corpus]), preload.load([corpus])
    assert first and first is not second and all(a is b for a, b in zip(first, second, strict=True))
    corpus.write_text(corpus.read_text().replace('id = "add-large"', 'id = "add-big"'))
    again = preload.load([corpus])
    assert "add-big" in {c.id for c in again} and "add-large" not in {c.id for c in again}
    assert preload.load([corpus])[0] is not first[0]  # never warmed: parsed each time
