"""``aclnn-stress run --resume DIR``: continue a stopped or killed run where it stopped.

The journal says everything needed: its header holds the configuration, the corpora and the
baseline path; every phase with a ``done`` phase-end is finished and is not run again (nor is
the baseline, which exists by then). The run appends to the same ``results.jsonl``: first a
``note`` saying it was resumed, then the phases that had not finished. A phase that starts
again replaces its unfinished attempt when the journal is graded
(:func:`stress.report.document.grade_journal`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stress.errors import ConfigError
from stress.model import PhaseStatus
from stress.report.journal import RESULTS_FILE, read_results

__all__ = ["Resumed", "resume_point"]


@dataclass(frozen=True)
class Resumed:
    """A stopped run's journal, read back: what to keep and what is finished."""

    header: dict[str, Any]
    records: tuple[dict[str, Any], ...]
    done: frozenset[tuple[str, str]]  # (phase, variant) of the finished phases


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
    records = [dict(r) for r in read_results(path)]
    header = next((r for r in records if r["type"] == "run"), None)
    if header is None:
        raise ConfigError(f"{path}: no results to resume; start a new run instead")
    ends = [r for r in records if r["type"] == "run-end"]
    if ends and ends[-1].get("status") == PhaseStatus.DONE:
        raise ConfigError(f"{out}: the run finished; nothing to resume (`aclnn-stress report`)")
    _drop_torn_line(path)
    done = frozenset(
        (r.get("phase", "?"), r.get("variant", ""))
        for r in records
        if r["type"] == "phase-end" and r.get("status") == PhaseStatus.DONE
    )
    return Resumed(header, tuple(records), done)
