"""benchmarks/detect_runs.py times each side as a process from exec: the first-failure line's
arrival against a monotonic stamp taken before exec, which the process also gets (issue 32)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import detect_runs  # noqa: E402
from detect_table import render  # noqa: E402

CHILD = """
import os, time
time.sleep(0.3)
own = time.monotonic() - float(os.environ["BENCH_EXEC_T0"])
print(f"naive: first failure {own:.3f} s after exec (0.100 s after the harness start), "
      "case c1: differs from the serial baseline [after 7 calls]")
time.sleep(0.2)
"""


def test_the_first_failure_is_timed_from_exec_by_its_arrival():
    run = detect_runs.timed_process([sys.executable, "-c", CHILD], {}, timeout=60)
    assert run.returncode == 0 and not run.timed_out
    first = run.first(detect_runs._NAIVE_FIRST)
    assert first is not None
    arrival, match = first
    own = float(match.group(1))
    # the child's own clock against the same stamp: after its 0.3 s sleep, before the arrival
    assert 0.3 <= own <= arrival + 0.0005 < run.wall_s  # own: printed to 3 decimals
    assert run.wall_s >= 0.5  # the process ran on after the line: the wall is its exit
    assert match.group(3) == "c1" and match.group(4) == "differs from the serial baseline"


def test_a_killed_process_is_timed_out():
    run = detect_runs.timed_process(
        [sys.executable, "-c", "import time; time.sleep(30)"], {}, timeout=0.5
    )
    assert run.timed_out and run.returncode != 0 and run.wall_s < 20


def _row(fault: str, shared: int, per_thread: int) -> dict:
    run = {"first_failure_exec_s": 2.0, "detected": True, "first_failure_phase": "burst"}
    naive = {"first_failure_exec_s": 1.0, "detected": True}
    return {
        "fault": fault,
        "expected": "x",
        "seeds": 1,
        "framework_detected": 1,
        "framework_correct": 1,
        "framework_median_exec_s": 2.0,
        "framework_median_startup_s": 0.5,
        "naive_shared_detected": shared,
        "naive_per-thread_detected": per_thread,
        "naive_budget_s": 9.0,
        "naive_shared_median_exec_s": 1.0 if shared else None,
        "naive_per-thread_median_exec_s": 1.0 if per_thread else None,
        "framework_runs": [run],
        "naive_runs": {
            "shared": [naive] if shared else [],
            "per-thread": [naive] if per_thread else [],
        },
    }


def test_the_table_names_what_the_naive_harness_missed_and_why():
    text = render(
        [_row("tiling-race", 1, 1), _row("add-race", 0, 1), _row("mystery", 0, 0)],
        {"label": "test", "loadavg_start": [1.0], "loadavg_end": [2.0], "nproc": 2},
    )
    assert (
        "| tiling-race | x | 1/1 | 1/1 | 2.00 s | 1/1 / 1/1 | 1.00 s / 1.00 s | 2.00 / 2.00 |"
        in text
    )
    assert "- mystery: not seen within its budget of 9.0 s" in text
    assert "- add-race: only with per-thread streams" in text
    assert "test; None; nproc 2; load average [1.0] at the start, [2.0] at the end" in text


def test_a_fault_found_at_baseline_record_and_fewer_naive_seeds_are_stated():
    row = _row("stale-tail", 2, 2) | {"seeds": 3, "naive_seeds": 2, "naive_baseline_s": 4.25}
    row |= {"found_at": "baseline record", "framework_detected": 3, "framework_correct": 3}
    run = {"detected": True, "first_failure_phase": "baseline record", "first_failure_exec_s": 20.0}
    row["framework_runs"] = [run] * 3
    clean = _row("(clean)", 0, 0) | {"seeds": 10, "naive_seeds": 3, "framework_detected": 0}
    text = render([row, clean], {"nproc": 2})
    assert "| stale-tail | x | 3/3 (at baseline record: no seed, 3 runs) | 3/3 |" in text
    assert "| 2/2 / 2/2 |" in text and "| baseline record 3 |" in text
    assert "| 0/3 / 0/3 |" in text and "(clean) 3 (framework 10)." in text
    assert "stale-tail 2 (framework" not in text  # its naive seeds are the run's own
    assert "stale-tail 4.2 s" in text
    assert "**from exec**" in text and "`aclnn-stress baseline record`" in text


def test_what_a_fault_needs_comes_from_its_record_in_the_faults_table():
    import detection

    from stress.sim.faults import FAULTS

    assert detection.corpus_of("weight-cache")[-1] == "corpus/ops/matmul.toml"
    assert detection.corpus_of("dirty-accumulator")[-1] == "corpus/ops/layer_norm.toml"
    assert detection.corpus_of("") == detection.CORPUS == detection.corpus_of("tiling-race")
    assert detection.gradcheck_of("softmax-grad-tail") == [
        "--op",
        "corpus/ops/softmax_backward.toml",
    ]
    assert detection.gradcheck_of("grad-drift") == [] and detection.gradcheck_of("crash") is None
    numeric = [n for n, f in FAULTS.items() if f.gradcheck is not None]
    assert numeric and all(FAULTS[n].expected == "clean" for n in numeric)
    extra = [c for fault in FAULTS.values() for c in fault.corpus]
    assert extra  # every extra corpus the benchmark will load is shipped
    assert all((ROOT / c).is_file() for c in extra), extra


def test_a_faults_variants_reach_baseline_record_and_generated_corpora_stand_in(
    tmp_path, monkeypatch
):
    """plan-cache's twins need baseline entries: its --variants go to `baseline record` (the
    first thing measure_fault runs) and to the run alike; under --generated the fault's
    generated corpus replaces its shipped one."""
    import detection

    from stress.sim.faults import FAULTS

    assert detection.variants_of("plan-cache") == ("--variants", "default,twins")
    assert detection.variants_of("tiling-race") == () and detection.variants_of("") == ()
    seen: list[list[str]] = []

    class Recorded(Exception):
        pass

    def fake_record(fault, corpus, control, out, args=()):
        seen.append([*corpus, *args])
        raise Recorded

    monkeypatch.setattr(detection, "record_run", fake_record)
    with pytest.raises(Recorded):
        detection.measure_fault("plan-cache", 1, tmp_path, None)
    assert seen and seen[0][-2:] == ["--variants", "default,twins"]
    assert "corpus/ops/softmax.toml" in seen[0]  # its declared corpus: twins need one
    generating = [n for n, f in FAULTS.items() if f.generate]
    assert {"split-k", "plan-cache", "view-staging"} <= set(generating)
    for name in generating:  # the file each stands in for is in the corpus it is measured on
        assert FAULTS[name].generated_for in detection.corpus_of(name), name
    monkeypatch.setitem(detection.GENERATED, "split-k", str(tmp_path / "gen.toml"))
    files = detection.corpus_of("split-k")
    assert str(tmp_path / "gen.toml") in files and "corpus/ops/matmul.toml" not in files
