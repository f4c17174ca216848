"""Which cases run together, in an order that states its coverage at every point.

The interleaved phase and the mixed rounds cannot run every combination of a big corpus: the
ordered pairs grow as N². Both therefore draw their partners from a seeded design whose
coverage is known however early the phase stops.

Interleaved (:func:`pair_rounds`). A seeded permutation ``p`` of the N cases and a seeded order
of the offsets ``1 .. N-1`` (offset 0, each case with itself, last). Round ``j`` with offset
``r`` runs the N ordered pairs ``(p[i], p[(i + r) mod N])``. Every ordered pair occurs in exactly
one round, so all N rounds are the full N² matrix; after ``j`` complete rounds with non-zero
offsets every case has been the victim of ``j`` distinct aggressors and the aggressor of ``j``
distinct victims. The phase always completes :data:`MIN_PARTNERS` rounds (k = 3, a cost of 3·N
pairs, linear like the serial phase) and then goes on round by round until its share of the
budget is spent or the matrix is complete: every pair when N² fits, else each case interleaved
with at least k distinct others.

Mixed (:func:`mixed_pick`). The rounds deal the cases out in epochs of R = ⌈N/T⌉ rounds: epoch
``e`` is a seeded permutation of the N cases, and worker ``w`` of the epoch's ``j``-th round takes
its position ``(j·T + w) mod N``. Every case therefore runs at least once per epoch, and the T
cases of a round are distinct when T ≤ N, so **after one epoch every case has been in flight
with at least min(T, N) − 1 distinct others** (:func:`mixed_target`); each further epoch draws
them afresh. The mixed rounds (and the control's) always complete one epoch whatever their time
share (:class:`stress.engine.replay.sampling.AtLeastRounds`): R rounds, a cost linear in N.

The same seed gives the same pairs and the same rounds. The coverage actually reached is read
back from the journal by :mod:`stress.grading.coverage`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np

__all__ = ["MIN_PARTNERS", "epoch_rounds", "mixed_pick", "mixed_target", "pair_rounds"]

#: k: the distinct partners every case gets in the interleaved phase whatever the budget.
MIN_PARTNERS = 3


def pair_rounds(n: int, seed: int, salt: int = 3) -> Iterator[list[tuple[int, int]]]:
    """The interleaved phase's rounds of ordered pairs (indices into the case list)."""
    if n <= 0:
        return
    rng = np.random.default_rng([seed, salt])
    perm = [int(i) for i in rng.permutation(n)]
    offsets = [int(r) for r in rng.permutation(np.arange(1, n))] + [0]
    for r in offsets:
        yield [(perm[i], perm[(i + r) % n]) for i in range(n)]


def epoch_rounds(n: int, threads: int) -> int:
    """R: the rounds of one mixed epoch (every case dealt at least once)."""
    return max(1, -(-n // max(1, threads)))


def mixed_target(n: int, threads: int) -> int:
    """The distinct others every case meets in one mixed epoch: min(T, N) - 1."""
    return max(0, min(threads, n) - 1)


def mixed_pick(n: int, threads: int, seed: int, salt: int, rnd: int, worker: int) -> int:
    """The case index worker ``worker`` runs in round ``rnd`` of a mixed phase."""
    epoch, j = divmod(rnd, epoch_rounds(n, threads))
    return int(_epoch(n, seed, salt, epoch)[(j * threads + worker) % n])


@functools.lru_cache(maxsize=64)
def _epoch(n: int, seed: int, salt: int, epoch: int) -> np.ndarray:
    return np.random.default_rng([seed, salt, epoch]).permutation(n)
