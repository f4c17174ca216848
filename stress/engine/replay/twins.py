"""A case with its twins in flight: the interleaved phase's first pairs.

A twin (:mod:`stress.corpus.twins`) differs from its case in one field (a dtype, an
attribute); a cache keyed on every field but that one (a tiling or plan cache keyed on the
shape) is shared by the two calls only while both are in flight. The seeded pair rounds of
:mod:`stress.pairs` meet a given case and twin only by chance once the corpus is larger than
k + 1 cases, so the interleaved phase first runs every case with each of its twins, both ways
round (A.phase1, B.phase1, A.phase2, B.phase2, then B first): 2 pairs per twin, a cost linear
in the corpus. The PCT schedules and the mixed rounds draw twins as any other cases.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from stress.corpus.parse import Case
from stress.corpus.twins import twin_of

__all__ = ["run_twin_pairs", "twin_pairs"]


def twin_pairs(cases: Sequence[Case]) -> list[tuple[int, int]]:
    """Ordered (case, twin) and (twin, case) index pairs of every twin in ``cases`` whose
    case is there too, in case order."""
    index = {c.id: i for i, c in enumerate(cases)}
    out = []
    for j, c in enumerate(cases):
        i = index.get(twin_of(c.id))
        if i is not None:
            out += [(i, j), (j, i)]
    return out


def run_twin_pairs(
    cases: Sequence[Case],
    interleave: Callable[[int, list[Case]], None],
    stop: Callable[[], bool],
) -> int:
    """Run ``interleave(number, [a, b])`` for every twin pair until ``stop()``; the count."""
    n = 0
    for a, b in twin_pairs(cases):
        if stop():
            break
        interleave(n, [cases[a], cases[b]])
        n += 1
    return n
