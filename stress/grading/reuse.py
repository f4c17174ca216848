"""Executor reuse: a case that fails only when its repeatable executor is launched again.

In the ``repeat`` mode (:mod:`stress.engine.call.repeatable`) one executor is launched several
times: ``launch`` 0 is what a single-use executor does, 1 the same addresses again, 2 and later
after every tensor was rebound to other buffers (``rebound``). A case whose every failing call
is such a later launch, while its first launches and its plain calls pass, keeps state from an
earlier launch of its executor — a pointer, a cached argument, a consumed buffer — that the
rebinding should have replaced: ``executor-reuse``. :class:`ReuseTally` folds one case's calls
of one phase; :meth:`ReuseTally.evidence` says what it found ("" for nothing).
"""

from __future__ import annotations

from stress.records import CallRecord
from stress.vocabulary import is_failure

__all__ = ["ReuseTally"]


class ReuseTally:
    """One case's graded calls of one phase: failures of first launches vs later ones."""

    __slots__ = ("again", "again_failed", "first", "first_failed", "rebound_failed")

    def __init__(self) -> None:
        self.first = 0  # plain calls and launch 0 of a repeatable executor
        self.first_failed = 0
        self.again = 0  # launches >= 1 of a repeatable executor
        self.again_failed = 0
        self.rebound_failed = 0  # of which after rebinding

    def add(self, r: CallRecord) -> None:
        failed = is_failure(r)
        if r.mode == "repeat" and (r.launch or 0) >= 1:
            self.again += 1
            self.again_failed += failed
            self.rebound_failed += failed and bool(r.rebound)
        else:
            self.first += 1
            self.first_failed += failed

    def evidence(self) -> str:
        """Why the case's failures are its executor's reuse, or "" when they are not."""
        if not self.again_failed or self.first_failed or not self.first:
            return ""
        where = (
            f"{self.rebound_failed} after rebinding its buffers"
            if self.rebound_failed == self.again_failed
            else f"{self.rebound_failed} of them after rebinding its buffers"
        )
        return (
            f"{self.again_failed} of {self.again} later launches of its repeatable executor "
            f"fail ({where}) while its {self.first} first launches and plain calls pass"
        )
