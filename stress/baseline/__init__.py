"""Baselines: what each case gives alone, serially, on one backend. The file format and its
checks are in :mod:`.store`; recording one (K runs plus a second-canary run) in :mod:`.record`."""

from stress.baseline.store import (
    BASELINE_SCHEMA,
    Baseline,
    CaseBaseline,
    OutputBaseline,
    backend_tag,
    default_baseline_path,
)

__all__ = [
    "BASELINE_SCHEMA",
    "Baseline",
    "CaseBaseline",
    "OutputBaseline",
    "backend_tag",
    "default_baseline_path",
]
