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

Mixed (:func:`mixed_pick`). The rounds deal the cases out in epochs: epoch ``e`` is a seeded
permutation of the N cases, and the T workers of round ``r`` take its positions ``r·T .. r·T+T-1``
(wrapping into the next epoch). Every case therefore runs once per epoch (⌈N/T⌉ rounds), in
flight with T-1 others drawn afresh each epoch, instead of by independent draws that may leave
a case out of a short phase.

The same seed gives the same pairs and the same rounds. The coverage actually reached is read
back from the journal by :mod:`stress.engine.coverage`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np

__all__ = ["MIN_PARTNERS", "mixed_pick", "pair_rounds"]

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


def mixed_pick(n: int, threads: int, seed: int, salt: int, rnd: int, worker: int) -> int:
    """The case index worker ``worker`` runs in round ``rnd`` of a mixed phase."""
    pos = rnd * threads + worker
    epoch, at = divmod(pos, n)
    return int(_epoch(n, seed, salt, epoch)[at])


@functools.lru_cache(maxsize=64)
def _epoch(n: int, seed: int, salt: int, epoch: int) -> np.ndarray:
    return np.random.default_rng([seed, salt, epoch]).permutation(n)
