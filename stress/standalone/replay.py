"""How the standalone script replays a failure: the API modes and memory it sets up.

The run journals every call's API mode (``mode``: absent for plain, ``repeat``, ``event``,
``pipeline``; for a repeatable executor the ``launch`` and whether it ran ``rebound``) and its
``allocator`` policy. :func:`replay_modes` reads the failing calls of the cases the script
reproduces and chooses what the script replays besides its plain calls:

- the API modes those calls failed in (when none of them failed, a case named with ``--case``,
  every mode the run drew: ``--modes``);
- the caching allocator (``RECYCLE``) when the run was diagnosed ``address-dependence``, ran
  ``--allocator recycle`` only, or every failing call of the cases ran in recycled memory.

It also says, for the script's docstring, where the run saw them fail (``seen``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from stress.config import MODES, RunConfig
from stress.journal.results import read_results
from stress.records import CallRecord
from stress.vocabulary import Diagnosis

__all__ = ["ReplayModes", "replay_modes"]


@dataclass(frozen=True)
class ReplayModes:
    """What the script replays besides plain calls, and where the run saw the failures."""

    modes: tuple[str, ...] = ()  # API modes other than plain, in MODES order
    recycle: bool = False  # the caching allocator
    seen: tuple[str, ...] = ()  # "3 call(s) in the repeat mode (launch 2, rebound)", ...


def _failing_calls(journal: Path, ids: Sequence[str]) -> list[CallRecord]:
    wanted = set(ids)
    return [
        r
        for r in read_results(journal, typed=True)
        if isinstance(r, CallRecord) and r.case in wanted and r.failed and not r.warmup
    ]


def _seen(failing: Sequence[CallRecord]) -> tuple[str, ...]:
    """One line per mode the failing calls ran in, with the launches of a repeatable one."""
    counts = Counter(r.mode or "plain" for r in failing)
    lines = []
    for mode in sorted(counts, key=lambda m: MODES.index(m) if m in MODES else len(MODES)):
        line = f"{counts[mode]} call(s) in the {mode} mode"
        launches = sorted({r.launch for r in failing if r.mode == mode and r.launch is not None})
        if launches:
            rebound = any(r.rebound for r in failing if r.mode == mode)
            line += f" (launch {', '.join(map(str, launches))}{', rebound' if rebound else ''})"
        lines.append(line)
    return tuple(lines)


def replay_modes(
    journal: Path, ids: Sequence[str], config: RunConfig, diagnosis: str
) -> ReplayModes:
    """The modes and memory the script replays the cases ``ids`` in (see the module)."""
    failing = _failing_calls(journal, ids)
    drawn = {r.mode for r in failing if r.mode} if failing else set(config.modes)
    modes = tuple(m for m in MODES if m != "plain" and m in drawn)
    recycle = (
        diagnosis == Diagnosis.ADDRESS_DEPENDENCE
        or config.allocator == "recycle"
        or (bool(failing) and all(r.allocator == "recycle" for r in failing))
    )
    return ReplayModes(modes, recycle, _seen(failing))
