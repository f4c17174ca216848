"""Two canaries: an output element is *unwritten* only when it keeps whichever byte was there.

Every output is prefilled before a call. An element that still holds the prefill afterwards was
either never written or written with a value whose bytes happen to equal the prefill (fp16
0xABAB is -0.0587, a likely value in a large output). One byte cannot tell them apart; two can:
a never-written element keeps the first canary under the first and the second under the
second, a computed value equals at most one of them. So:

- the run alternates the canary between calls (:func:`call_canary`): the run's ``--canary`` on
  even turns, :func:`second_canary` on odd ones, so every case sees both in every phase that
  calls it more than once;
- a call's leftover canary elements are *confirmed* unwritten (``unwritten`` in its record, a
  failure) when the baseline, recorded with both canaries, found that output unwritten; else
  they are only *kept* (``kept``, with the ``canary`` byte of the call: not a failure by itself)
  and the grader calls the case ``UNWRITTEN`` only when the same output kept the canary under
  both bytes in the phase (:class:`stress.grading.verdicts.CaseTally`). A wrong value that
  happens to equal one canary is then graded as the mismatch it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from stress.baseline.store import CaseBaseline
from stress.grading.digest import canary_count

__all__ = ["SECOND_CANARY", "Survivors", "call_canary", "second_canary", "survivors"]

#: The second canary (the baseline's check run uses it too: stress.engine.replay.baseline).
SECOND_CANARY = 0x5A
_SECOND_FALLBACK = 0xA5  # when the run's own canary is SECOND_CANARY


def second_canary(canary: int) -> int:
    """The other byte the run prefills with: :data:`SECOND_CANARY` unless that is ``canary``."""
    return _SECOND_FALLBACK if canary & 0xFF == SECOND_CANARY else SECOND_CANARY


def call_canary(canary: int, turn: int) -> int:
    """The canary of the call on ``turn`` (0, 1, 2, ...): ``canary`` and the second in turn."""
    return canary if turn % 2 == 0 else second_canary(canary)


@dataclass(frozen=True)
class Survivors:
    """A call's output elements that still hold its canary, beyond the baseline's chance count:
    ``unwritten`` (confirmed by the baseline's second canary) and ``kept`` (not confirmed)."""

    unwritten: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)


def survivors(
    outputs: Mapping[str, np.ndarray],
    baseline: CaseBaseline | None,
    canary: int,
    baseline_canary: int,
) -> Survivors:
    """Which of ``outputs`` (prefilled with ``canary``) kept it, and whether that is confirmed.

    The baseline's ``canary_chance`` counts written elements equal to ``baseline_canary`` (the
    byte it was recorded with); it is subtracted only when the call used that byte."""
    unwritten: dict[str, int] = {}
    kept: dict[str, int] = {}
    for name, arr in outputs.items():
        recorded = baseline.outputs.get(name) if baseline is not None else None
        chance = recorded.canary_chance if recorded is not None and canary == baseline_canary else 0
        n = canary_count(arr, canary) - chance
        if n <= 0:
            continue
        if recorded is not None and recorded.unwritten > 0:
            unwritten[name] = n
        else:
            kept[name] = n
    return Survivors(unwritten, kept)
