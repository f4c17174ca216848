"""Shrinking a failing mix to a minimal reproducer.

When ``mixed`` or ``interleaved`` fails, the interesting question is *which cases in flight*
corrupt which: the smallest set of cases (ideally one victim and one aggressor) that still
fails. :func:`ddmin` is Zeller's delta debugging over any list with a failure predicate;
:func:`write_corpus` writes a subset of cases back to TOML so the reproducer is a plain
``aclnn-stress run`` command.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from stress.corpus.parse import Case, corpus_text
from stress.files import atomic_write_bytes

__all__ = ["ddmin", "write_corpus"]

T = TypeVar("T")


def ddmin(
    items: Sequence[T],
    fails: Callable[[list[T]], bool],
    *,
    keep: Sequence[T] = (),
    max_trials: int | None = None,
) -> list[T]:
    """A 1-minimal sublist of ``items`` for which ``fails(keep + sublist)`` holds.

    ``fails(keep + items)`` is assumed true. ``keep`` (e.g. the victim) is always included and
    never removed. ``max_trials`` bounds the predicate calls (the best list found so far is
    returned when the bound is hit).
    """
    current = list(items)
    trials = 0
    n = 2

    def test(subset: list[T]) -> bool:
        nonlocal trials
        trials += 1
        return fails([*keep, *subset])

    while len(current) >= 1:
        if max_trials is not None and trials >= max_trials:
            break
        chunk = max(1, len(current) // n)
        subsets = [current[i : i + chunk] for i in range(0, len(current), chunk)]
        reduced = False
        for i, subset in enumerate(subsets):
            complement = [x for j, s in enumerate(subsets) if j != i for x in s]
            if max_trials is not None and trials >= max_trials:
                break
            if len(subsets) > 2 and test(subset):
                current, n, reduced = subset, 2, True
                break
            if max_trials is not None and trials >= max_trials:
                break
            if test(complement):
                current, n, reduced = complement, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(current):
                break
            n = min(len(current), n * 2)
        if not current:
            break
    return [*keep, *current]


def write_corpus(cases: Sequence[Case], path: str | Path, comment: str = "") -> Path:
    """Write ``cases`` as a corpus file that loads back to the same cases (same keys)."""
    path = Path(path)
    atomic_write_bytes(path, corpus_text(cases, comment).encode())
    return path
