"""Mode dependence: a case that fails only in one API mode while its plain calls pass.

Every phase draws each call's API mode (:mod:`stress.engine.replay.modes`): ``plain`` (one
thread, a single-use executor, the launch stream synchronized), ``repeat``, ``event`` (the
outputs consumed on a second stream after an event), ``pipeline`` (phase 1 on one thread, the
launch on another). A case whose every failing call ran in one mode other than ``plain``, while
its plain calls pass, depends on how the caller drives the API — state phase 1 leaves in its
thread, work the operator finishes after its launch is ordered on the stream — not on its
inputs: ``mode-dependence``, naming the mode. (A repeatable executor failing only on its later
launches is the narrower ``executor-reuse``, :mod:`stress.grading.reuse`, checked first.)
:class:`ModeTally` folds one case's calls of one phase; :meth:`ModeTally.split` gives what it
found as counts (:class:`~stress.report_sections.ModeSplit`, None for nothing), which the case's
verdict carries beside their sentence.

Serially one failing call in a mode whose plain call passes is the evidence (each case runs
once per mode there). On many threads a race can happen to hit one mode's calls only, so the
diagnosis asks more of a concurrent phase's evidence (``ModeSplit.strong``): at least
``MIN_PLAIN`` plain calls passing, two of the mode's calls failing and at least half.
"""

from __future__ import annotations

from stress.records import CallRecord
from stress.report_sections import ModeSplit
from stress.vocabulary import is_failure

__all__ = ["ModeTally"]


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

    def split(self) -> ModeSplit | None:
        """The case's failures as its mode's, or None when they are not one mode's."""
        if len(self.failed) != 1 or not self.calls.get("plain") or "plain" in self.failed:
            return None
        ((mode, failed),) = self.failed.items()
        return ModeSplit(mode, failed, self.calls[mode], self.calls["plain"])
