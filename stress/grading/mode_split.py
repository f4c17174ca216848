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
found ("" for nothing).
"""

from __future__ import annotations

from stress.records import CallRecord
from stress.vocabulary import is_failure

__all__ = ["MODE_WORDS", "ModeTally", "mode_of"]

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


def mode_of(evidence: str) -> str:
    """The mode an :meth:`ModeTally.evidence` line names ("" for none)."""
    head = evidence.split(_MODE + " (", 1)
    return head[0].rsplit(" ", 1)[-1] if len(head) == 2 else ""
