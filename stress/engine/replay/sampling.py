"""How much of a phase runs: seeded case samples under ``--budget``, and budgets that end a
phase earlier or later than its time share on purpose.

Case samples. ``serial`` (N·(K+1) calls), ``shuffled`` (N·K calls) and ``isolated`` (one pool
run per case) do work per case that grows with the corpus. Under ``--budget`` each gets a time
share from the scheduler (:mod:`stress.engine.run.schedule`) and takes the cases in a seeded order,
in chunks of :data:`CHUNK`, until the share is spent, but never fewer than :data:`MIN_CASES`
cases (or all of them): a corpus that fits runs whole, a big one runs a seeded sample whose size
``report.json`` → ``coverage`` states (cases run / N, :mod:`stress.grading.coverage`). The
shuffled phase shuffles within each chunk (order dependence between the cases of one chunk).
Without ``--budget`` every case runs, in corpus order, as before.

Every sample takes first the cases past each operator's size thresholds (:func:`thresholds`:
its largest edge case per dimension and its large case), the way every run replays them
(:func:`stress.corpus.size_variants.sampled`): a kernel path entered only past a size (a K
split, a tiled row) is met on every seed, whatever else the sample holds.

A focused diagnostic step names its cases: ``config.focus`` runs exactly those (no sample);
``config.first`` (the focused shuffled step) puts them at the front of the sample, each of
their calls right after a call of another case (:func:`after_others`), and the step ends at
its deadline once their calls ran.

Budgets. A focused diagnostic step (``config.confirm``) ends at its first failing call
(:class:`UntilConfirmed`); the mixed rounds and the control always
complete one epoch, every case dealt once, whatever their time share (:class:`AtLeastRounds`;
the coverage that buys is in :mod:`stress.pairs`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stress.corpus.size_variants import tops
from stress.engine.replay import stop
from stress.engine.replay.phase_budget import Budget
from stress.vocabulary import VIEW_SEPARATOR, size_kind, split_view, variant_kind

__all__ = [
    "CHUNK",
    "MIN_CASES",
    "AtLeastRounds",
    "UntilConfirmed",
    "after_others",
    "case_chunks",
    "thresholds",
    "variant_groups",
]

#: Cases per chunk of a sampled phase (the deadline is checked between chunks).
CHUNK = 16
#: The fewest cases a sampled phase runs, however small its share.
MIN_CASES = 16


def case_chunks(
    n: int, seed: int, salt: int, sampled: bool, first: Sequence[int] = ()
) -> Iterator[list[int]]:
    """Indices of the cases a phase runs, chunk by chunk: all in corpus order (one chunk)
    unless ``sampled``, else a seeded permutation in chunks of :data:`CHUNK`, the indices
    ``first`` at its front (in the permutation's order: a sample always holds them)."""
    if not sampled:
        yield list(range(n))
        return
    perm = [int(i) for i in np.random.default_rng([seed, salt]).permutation(n)]
    ahead = set(first)
    perm = [i for i in perm if i in ahead] + [i for i in perm if i not in ahead]
    for i in range(0, n, CHUNK):
        yield perm[i : i + CHUNK]


def thresholds(cases: Sequence[Any]) -> list[Any]:
    """The cases of ``cases`` past each operator's size thresholds, in their order: its
    largest edge case per dimension (:func:`stress.corpus.size_variants.tops`) and its large
    case."""
    large = {c.id for c in cases if c.id.rpartition(VIEW_SEPARATOR)[2].startswith("large-")}
    large |= {c.id for c in tops([c for c in cases if size_kind(c.id) == "edge"])}
    return [c for c in cases if c.id in large]


def variant_groups(cases: Sequence[Any]) -> list[list[Any]]:
    """The cases of each variant kind that has two or more, in case order: the view variants
    (every layout one kind: an operator's non-contiguous path), the empties, the edge sizes,
    the twins. A round drawn from one group has several calls on the path that kind opens
    (a staging copy, a split past a threshold, a cache entry per field) in flight at once."""
    groups: dict[str, list[Any]] = {}
    for c in cases:
        kind = variant_kind(c.id)
        if kind:
            groups.setdefault("view" if split_view(c.id)[1] else kind, []).append(c)
    return [g for g in groups.values() if len(g) >= 2]


def after_others(order: list[tuple[Any, int]], first: Set[str]) -> list[tuple[Any, int]]:
    """A shuffled single-threaded ``order`` of (case, rep) calls with the calls of the cases
    in ``first`` (by id) taken first, each right after a call of another case (the next in
    the shuffled order, while there are others): the state a case left behind meets each of
    them at once, and a focused step that ends at its deadline has run them."""
    if not first:
        return order
    mine = [c for c in order if c[0].id in first]
    others = [c for c in order if c[0].id not in first]
    paired = [call for k, own in enumerate(mine) for call in [*others[k : k + 1], own]]
    return paired + others[len(mine) :]


@dataclass
class UntilConfirmed(Budget):
    """A budget that also ends once ``found`` is set (a confirming step's first failure)."""

    found: threading.Event = field(default_factory=threading.Event)

    def exhausted(self, started: float, rounds_done: int) -> bool:
        return self.found.is_set() or super().exhausted(started, rounds_done)

    def spent(self, started: float) -> bool:
        return self.found.is_set() or super().spent(started)


@dataclass
class AtLeastRounds(Budget):
    """A time budget that first completes ``least`` rounds (a stop request still ends it) —
    for at most ``most_s`` seconds when given (under --budget: a corpus too big for ``least``
    rounds in its share does not outrun the run's budget; coverage says how far it got)."""

    least: int = 0
    most_s: float | None = None

    def exhausted(self, started: float, rounds_done: int) -> bool:
        capped = self.most_s is not None and time.monotonic() - started >= self.most_s
        if rounds_done < self.least and not capped and not stop.requested.is_set():
            return False
        return super().exhausted(started, rounds_done)
