"""benchmarks/bench_make_stress.py counts a `make stress` run as covered only when its report's
coverage meets the targets it states and the run is clean."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_make_stress import PASSED, REPORTS, coverage_shortfalls  # noqa: E402


def _report(inter: int, mixed: int, diagnosis: str = "clean") -> dict:
    pairs = {"pairs_total": 10, "pairs_run": 10, "schedules": 0}
    return {
        "diagnosis": diagnosis,
        "coverage": {
            "interleaved": {**pairs, "min_partners": inter, "target": 3},
            "mixed": {**pairs, "min_partners": mixed, "target": 7},
        },
    }


def test_a_run_meeting_its_targets_has_no_shortfall():
    assert coverage_shortfalls(_report(3, 7)) == []


def test_a_case_short_of_partners_or_a_finding_is_a_shortfall():
    assert coverage_shortfalls(_report(2, 7)) == ["interleaved: >= 2 others, target 3"]
    assert coverage_shortfalls(_report(3, 0)) == ["mixed: >= 0 others, target 7"]
    assert coverage_shortfalls(_report(3, 7, "self-race")) == ["diagnosis self-race"]
    assert coverage_shortfalls({"diagnosis": "clean"}) == [
        "interleaved: did not run",
        "mixed: did not run",
    ]


def test_the_report_and_the_plugin_lines_are_read_from_the_output():
    out = "reports: stress-out/x/report.json, stress-out/x/report.md\n11 passed in 10.85s\n"
    assert REPORTS.search(out).group(1) == "stress-out/x/report.json"
    assert PASSED.findall(out) == [("11", "10.85")]
