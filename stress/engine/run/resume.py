"""``aclnn-stress run --resume DIR``: continue a stopped or killed run where it stopped.

The journal says everything needed: its header holds the configuration, the corpora and the
baseline path; every phase with a ``done`` phase-end is finished and is not run again (nor is
the baseline, which exists by then). The run appends to the same ``results.jsonl``: first a
``note`` saying it was resumed, then the phases that had not finished. A phase that starts
again replaces its unfinished attempt when the journal is graded
(:func:`stress.grading.assemble.grade_journal`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stress.errors import ConfigError
from stress.journal.lines import RunEnd, RunHeader
from stress.journal.results import RESULTS_FILE, read_results
from stress.records import PhaseResult
from stress.vocabulary import PhaseStatus

__all__ = ["Resumed", "resume_point"]


@dataclass(frozen=True)
class Resumed:
    """A stopped run's journal, read back: what to keep and what is finished."""

    header: RunHeader
    done: frozenset[tuple[str, str]]  # (phase, variant) of the finished phases
    path: Path  # the journal: the resumed session folds it into its grading (run-end left out)

    def records(self) -> Iterator[Any]:
        """The stopped run's records (read again, one line at a time, typed), without its
        run-end."""
        return (r for r in read_results(self.path, typed=True) if not isinstance(r, RunEnd))


def _drop_torn_line(path: Path) -> None:
    """Cut a last line the kill tore in half, so that appending starts on a fresh line."""
    with open(path, "rb+") as fh:
        data = fh.read()
        if data and not data.endswith(b"\n"):
            fh.truncate(data.rfind(b"\n") + 1)
            fh.flush()
            os.fsync(fh.fileno())


def resume_point(out: Path) -> Resumed:
    """The resume point of the run directory ``out`` (one-line errors when there is none)."""
    path = out / RESULTS_FILE
    header: RunHeader | None = None
    last_end: RunEnd | None = None
    done: set[tuple[str, str]] = set()
    for r in read_results(path, typed=True):  # streamed: a long run's journal is not held
        if isinstance(r, RunHeader) and header is None:
            header = r
        elif isinstance(r, RunEnd):
            last_end = r
        elif isinstance(r, PhaseResult) and r.status == PhaseStatus.DONE:
            done.add((r.phase, r.variant))
    if header is None:
        raise ConfigError(f"{path}: no results to resume; start a new run instead")
    if last_end is not None and last_end.status == PhaseStatus.DONE:
        raise ConfigError(f"{out}: the run finished; nothing to resume (`aclnn-stress report`)")
    _drop_torn_line(path)
    return Resumed(header, frozenset(done), path)
