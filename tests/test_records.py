"""The typed records (stress/records.py) keep the journal and report formats exactly.

``tests/data/tiling_race_run`` is a short run written by the code *before* call records,
phase results and the run report became dataclasses (``ACLSIM_FAULTS=tiling-race aclnn-stress
run --threads 2 --iterations 2 --repeats 2 --seed 7 --no-fail-fast``): re-rendering its journal
with today's code must give the same ``report.json``, and every journal line must survive a
round trip through its record type unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

from stress.report.document import build_report
from stress.report.journal import read_results

FIXTURE = Path(__file__).parent / "data" / "tiling_race_run"


def test_the_journal_of_an_old_run_renders_the_same_report_json() -> None:
    expected = json.loads((FIXTURE / "report.json").read_text(encoding="utf-8"))
    report = build_report(read_results(FIXTURE / "results.jsonl"))
    rendered = json.loads(json.dumps(report))
    assert rendered["diagnosis"] == "cross-call-contamination"  # the fixture is a finding
    assert rendered == expected
