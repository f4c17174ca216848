"""The focused steps after a failure that a clean burst did not see.

After a failing burst the diagnostic phases run on its failing cases
(:func:`stress.engine.run.schedule.focus_steps`). A fault the burst missed is first seen in a
later phase, and under ``--budget`` the phases before it ran seeded *samples*
(:mod:`stress.engine.replay.sampling`) that may not have held the failing cases: a ``mixed``
failure beside a clean sampled ``isolated`` read as cross-call contamination although the
failing case, alone on many threads, fails too (a self-race), and a failure beside a clean
sampled ``serial`` or ``shuffled`` reads as a concurrent one although one thread shows it.
So the diagnostic phases that already ran (``serial``, ``shuffled``, ``isolated``,
``interleaved``: each rule reads one of them clean) run again, short and focused on the
failing cases, before the diagnosis may stand: every rule then reads its phases on the cases
that failed, whatever the sample held.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stress.corpus.parse import Case
from stress.engine.run.schedule import FOCUS, Step, burst_findings, focus_steps
from stress.journal.results import read_results

__all__ = ["REFOCUSED", "refocus_steps"]

#: The phases a diagnosis reads clean that run again on the failing cases.
REFOCUSED = ("serial", "shuffled", "isolated", "interleaved")


def refocus_steps(
    ran: Sequence[Step], journal: Path, corpus: Sequence[Case]
) -> tuple[list[Step], str]:
    """The focused steps after ``ran[-1]``, the first step to fail after a clean burst (its
    call records in the results file ``journal``), and the note that says so; no steps when
    none of its failing calls is a ``corpus`` case."""
    failed = ran[-1]
    records = read_results(journal, typed=True)
    found = burst_findings(records, [c.id for c in corpus], failed.phase)
    if not found.cases:
        return [], ""
    earlier, seen = [], set()
    for s in ran[:-1]:
        key = (s.phase, s.stream)
        if s.phase in REFOCUSED and not s.variant.startswith("allocator=") and key not in seen:
            seen.add(key)
            earlier.append(s)
    steps = [s for s in focus_steps(earlier, [failed], found) if s.confirm or FOCUS in s.variant]
    shown = ", ".join(found.cases[:6]) + (" ..." if len(found.cases) > 6 else "")
    names = ", ".join(f"{s.phase} {s.variant}".strip() for s in steps)
    note = (
        f"diagnosing: {failed.phase} {failed.variant}".rstrip()
        + f" failed on {len(found.cases)} corpus case(s) ({shown}) the burst did not; next, "
        + f"short and on them: {names}"
    )
    return steps, note if steps else ""


def refocus(steps: list[Step], i: int, results: Path, cases: Sequence[Case]) -> str:
    """A failure first seen in ``steps[i]`` after a clean burst: :func:`refocus_steps` put in
    after it (``steps`` changes in place); the note saying so, "" when there is none to add."""
    extra, note = refocus_steps(steps[: i + 1], results, cases)
    steps[i + 1 : i + 1] = extra
    return note
