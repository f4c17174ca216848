"""The run header: the journal's first record (``"type": "run"``), everything grading,
re-rendering and ``--resume`` need to read the journal back without the corpus files —
the config, the backend's fingerprint, the cases as declared, the baseline's summary and the
simulator faults that were on.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stress import __version__
from stress.baseline.store import Baseline
from stress.report.journal import RESULTS_SCHEMA

if TYPE_CHECKING:
    from stress.engine.session import Session

__all__ = ["run_header"]


def run_header(
    session: Session, info: dict[str, Any], path: Path, baseline: Baseline
) -> dict[str, Any]:
    """The header of ``session``'s journal; ``info`` is the backend-info job's answer, ``path``
    and ``baseline`` the baseline graded against."""
    return {
        "type": "run",
        "schema": RESULTS_SCHEMA,
        "version": __version__,
        "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "config": session.config.to_json(),
        "backend": {**info["fingerprint"], "device_count": info["info"].get("device_count")},
        "corpus": list(session.corpus),
        "control": list(session.control),
        "cases": [c.to_json() for c in session.cases],
        "control_cases": [c.to_json() for c in session.control_cases],
        "baseline": {"path": str(path), "cases": baseline.summary()},
        "faults": os.environ.get("ACLSIM_FAULTS", "") or session.env.get("ACLSIM_FAULTS", ""),
    }
