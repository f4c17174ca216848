"""Mode dependence: a case that fails only in one API mode while its plain calls pass.

Every phase draws each call's API mode (:mod:`stress.engine.replay.modes`): ``plain`` (one
thread, a single-use executor, the launch stream synchronized), ``repeat``, ``event`` (the
outputs consumed on a second stream after an event), ``pipeline`` (phase 1 on one thread, the
launch on another). A case whose every failing call ran in one mode other than ``plain``, while
its plain calls pass, depends on how the caller drives the API — state phase 1 leaves in its
thread, work the operator finishes after its launch is ordered on the stream — not on its
inputs: ``mode-dependence``, naming the mode. (A repeatable executor failing only on its later
launches is the narrower ``executor-reuse``, :mod:`stress.grading.reuse`, checked first.)
:class:`ModeTally` folds one case's calls of one phase; :meth:`ModeTally.evidence` says what it
found ("" for nothing), :func:`mode_counts` reads its counts back.

Serially one failing call in a mode whose plain call passes is the evidence (each case runs
once per mode there). On many threads a race can happen to hit one mode's calls only, so the
diagnosis asks more of a concurrent phase's evidence (:func:`strong`): at least
:data:`MIN_PLAIN` plain calls passing, two of the mode's calls failing and at least half.
"""

from __future__ import annotations

import re

from stress.records import CallRecord
from stress.vocabulary import is_failure

__all__ = ["MIN_PLAIN", "MODE_WORDS", "ModeTally", "mode_counts", "mode_of", "strong"]

#: Plain calls that must pass beside a concurrent phase's failing mode (:func:`strong`).
MIN_PLAIN = 4

#: What each non-plain mode does differently, for the explanation.
MODE_WORDS = {
    "repeat": "a repeatable executor launched several times",
    "event": "the outputs consumed on a second stream after an event",
    "pipeline": "phase 1 on one thread, the launch on another",
}


class ModeTally:
    """One case's graded calls of one phase, counted and failed per API mode."""

    __slots__ = ("calls", "failed")

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.failed: dict[str, int] = {}

    def add(self, r: CallRecord) -> None:
        mode = r.mode or "plain"
        self.calls[mode] = self.calls.get(mode, 0) + 1
        if is_failure(r):
            self.failed[mode] = self.failed.get(mode, 0) + 1

    def evidence(self) -> str:
        """Why the case's failures are its mode's, or "" when they are not."""
        if len(self.failed) != 1 or not self.calls.get("plain") or "plain" in self.failed:
            return ""
        ((mode, failed),) = self.failed.items()
        what = MODE_WORDS.get(mode, mode)
        return (
            f"{failed} of {self.calls[mode]} calls in the {mode}{_MODE} ({what}) fail while its "
            f"{self.calls['plain']} plain calls pass"
        )


_MODE = " mode"
_COUNTS = re.compile(r"^(\d+) of (\d+) calls in the (\S+) mode \(.*\) fail while its (\d+) plain")


def mode_counts(evidence: str) -> tuple[str, int, int, int] | None:
    """(mode, failed, calls in that mode, plain calls) of an evidence line; None for ""."""
    m = _COUNTS.match(evidence)
    return None if m is None else (m[3], int(m[1]), int(m[2]), int(m[4]))


def mode_of(evidence: str) -> str:
    """The mode an :meth:`ModeTally.evidence` line names ("" for none)."""
    counts = mode_counts(evidence)
    return counts[0] if counts else ""


def strong(evidence: str) -> bool:
    """Whether the evidence also holds on many threads: :data:`MIN_PLAIN` plain calls pass, and
    at least two and at least half the mode's calls fail."""
    counts = mode_counts(evidence)
    if counts is None:
        return False
    _, failed, calls, plain = counts
    return plain >= MIN_PLAIN and failed >= 2 and 2 * failed >= calls
