"""Prefill dependence: a serial result that changes with what its buffers held before the call.

Every call's outputs *and* workspace are prefilled with the call's canary byte, and the byte
alternates between calls (:func:`stress.grading.canaries.call_canary`; the record's
``canary``). A kernel that reads a buffer before writing it — an accumulator that never zeroes
its workspace, an operator that adds into its output — then gives one result per byte: wrong
*values*, not canary bytes left over (those are ``unwritten``, :mod:`stress.grading.canaries`).
Serially nothing else differs between two calls of a case, so a case whose results split by
the prefill byte reads uninitialised memory:

- the calls under one byte all match the baseline and the calls under the other all differ
  from it (a tolerance-graded case too), or
- every byte's calls agree on one digest, the bytes' digests differ, and some call differs
  from the baseline.

:class:`PrefillTally` folds one case's calls of a phase (constant memory);
:func:`dependence` says what it found ("" for nothing) and names the outputs whose digests
split by the byte and whether the case has a workspace (both are prefilled with the same byte,
so the record cannot tell which one was read; a case without a workspace read an output).
"""

from __future__ import annotations

from stress.records import CallRecord, CaseVerdict
from stress.vocabulary import Status

__all__ = ["PrefillTally", "dependence", "prefill_dependent"]

_CAP = 4  # distinct digests kept per byte (more: the results vary anyway)


class _Byte:
    """The calls of one case under one prefill byte."""

    __slots__ = ("digests", "matched", "mismatched", "outputs")

    def __init__(self) -> None:
        self.matched = 0
        self.mismatched = 0
        self.digests: set[str] = set()
        self.outputs: dict[str, set[str]] = {}

    def add(self, r: CallRecord) -> None:
        if r.match is True:
            self.matched += 1
        elif r.match is False:
            self.mismatched += 1
        if r.digest is not None and len(self.digests) <= _CAP:
            self.digests.add(r.digest)
        for name, d in (r.outputs or {}).items():
            seen = self.outputs.setdefault(name, set())
            if len(seen) <= _CAP:
                seen.add(d)

    @property
    def calls(self) -> int:
        return self.matched + self.mismatched


class PrefillTally:
    """One case's successful calls of one phase, by prefill byte, and its workspace size."""

    __slots__ = ("bytes", "workspace")

    def __init__(self) -> None:
        self.bytes: dict[int, _Byte] = {}
        self.workspace = 0

    def add(self, r: CallRecord) -> None:
        """Fold one graded call in (calls without a success or a byte are ignored)."""
        if r.status != Status.OK or r.canary is None:
            return
        self.bytes.setdefault(r.canary, _Byte()).add(r)
        self.workspace = max(self.workspace, r.workspace or 0)


def _splits(tally: PrefillTally) -> bool:
    groups = [g for g in tally.bytes.values() if g.calls]
    if len(groups) < 2 or max(g.calls for g in groups) < 2:
        return False  # one byte, or one call per byte: nothing to compare
    if not any(g.mismatched for g in groups):
        return False
    clean = any(g.mismatched == 0 for g in groups)
    wrong = any(g.matched == 0 for g in groups)
    if clean and wrong and all(g.matched == 0 or g.mismatched == 0 for g in groups):
        return True
    digests = [g.digests for g in groups]
    return all(len(d) == 1 for d in digests) and len(set().union(*digests)) == len(groups)


def _split_outputs(tally: PrefillTally) -> list[str]:
    """The outputs whose digests under different bytes never agree."""
    groups = [g for g in tally.bytes.values() if g.calls]
    names = sorted({n for g in groups for n in g.outputs})
    out = []
    for name in names:
        seen = [g.outputs.get(name, set()) for g in groups]
        if all(seen) and sum(len(s) for s in seen) == len(set().union(*seen)):
            out.append(name)
    return out


def dependence(tally: PrefillTally) -> str:
    """What the case's results depend on, in a few words ("" when they do not split by byte)."""
    if not _splits(tally):
        return ""
    per_byte = ", ".join(
        f"{byte:#04x}: {g.mismatched} of {g.calls} differ from the baseline"
        for byte, g in sorted(tally.bytes.items())
        if g.calls
    )
    outputs = _split_outputs(tally)
    where = ", ".join(outputs) if outputs else "its result"
    buffer = (
        f"its workspace ({tally.workspace} bytes) or the prior contents of {where}"
        if tally.workspace
        else f"the prior contents of {where} (it has no workspace)"
    )
    return f"{where} change with the prefill byte ({per_byte}): reads {buffer}"


def prefill_dependent(cases: tuple[CaseVerdict, ...] | list[CaseVerdict]) -> str:
    """The explanation of ``uninitialized-read`` for cases of a serial phase ("" for none)."""
    hits = [c for c in cases if c.prefill]
    if not hits:
        return ""
    shown = "; ".join(f"{c.id}: {c.prefill}" for c in hits[:3])
    return (
        "a serial result changes with the prior contents of its buffers (outputs and workspace "
        "are prefilled with a byte that alternates between calls), so the kernel reads memory "
        "before writing it: " + shown + (" ..." if len(hits) > 3 else "")
    )
