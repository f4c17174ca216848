"""The run header: the journal's first record (``"type": "run"``), everything grading,
re-rendering and ``--resume`` need to read the journal back without the corpus files —
the config, the backend's fingerprint, the cases as declared, the baseline's summary and the
simulator faults that were on.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from stress.baseline.store import Baseline
from stress.config import RunConfig
from stress.corpus.parse import Case
from stress.engine.isolation.messages import BackendInfo
from stress.journal.lines import RunHeader
from stress.journal.results import RESULTS_SCHEMA
from stress.vocabulary import VERSION

__all__ = ["run_header"]


def run_header(
    config: RunConfig,
    corpus: tuple[Sequence[str], Sequence[str]],
    cases: tuple[Sequence[Case], Sequence[Case]],
    env: Mapping[str, str],
    info: BackendInfo,
    path: Path,
    baseline: Baseline,
) -> RunHeader:
    """The header of a run's journal: ``corpus`` and ``cases`` are (the corpus, the control
    corpus), ``env`` the children's extra environment, ``info`` the backend-info job's answer,
    ``path`` and ``baseline`` the baseline graded against."""
    return RunHeader(
        schema=RESULTS_SCHEMA,
        version=VERSION,
        started=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        config=config.to_json(),
        backend={**info.fingerprint, "device_count": info.info.get("device_count")},
        corpus=list(corpus[0]),
        control=list(corpus[1]),
        cases=[c.to_json() for c in cases[0]],
        control_cases=[c.to_json() for c in cases[1]],
        baseline={"path": str(path), "cases": baseline.summary()},
        faults=os.environ.get("ACLSIM_FAULTS", "") or env.get("ACLSIM_FAULTS", ""),
    )
