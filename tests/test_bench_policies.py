"""benchmarks/bench_policies.py's hang figures: the slowest call per case against the baseline's
recorded p99, millisecond cases (p99 under floor / factor) split by concurrent and one-thread
phases, the slower cases as a ratio to their p99 (the figures README's "Hangs" quotes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_policies  # noqa: E402


def _call(case: str, phase: str, dur: float) -> dict:
    return {"type": "call", "case": case, "phase": phase, "dur": dur}


def test_hang_figures_split_phases_and_scale_slow_cases_by_their_p99(tmp_path):
    baseline = tmp_path / "b.json"
    cases = {"ms": {"call_p99_s": 0.002}, "slow": {"call_p99_s": 0.1}}
    baseline.write_text(json.dumps({"cases": cases}))
    journal = tmp_path / "results.jsonl"
    records = [
        _call("ms", "mixed", 0.3),
        _call("ms", "isolated", 0.5),
        _call("ms", "serial", 0.04),
        _call("ms", "interleaved", 0.07),
        _call("slow", "mixed", 0.45),
        _call("slow", "serial", 0.9),  # the slow case's slowest: 9 x its p99
        {"type": "phase-end", "phase": "mixed", "variant": "", "seconds": 1.0, "calls": 3},
    ]
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))
    got = bench_policies.hang_figures(str(journal), baseline)
    assert got["calls"] == 6
    assert (got["slowest_ms_case_concurrent"], got["slowest_ms_case_concurrent_s"]) == ("ms", 0.5)
    assert got["slowest_ms_case_one_thread_s"] == 0.07
    assert got["slow_cases_max_ratio_to_p99"] == [{"case": "slow", "ratio": 9.0}]
    assert bench_policies.recycle_step(str(journal)) is None
