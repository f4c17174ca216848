"""`make stress` as a user runs it: wall time of N runs, their median, and the coverage each met.

Each run is ``make stress`` in this checkout (the venv and the baseline already there, as on a
second run); its wall clock is timed from the outside, with the CPU time (user + system) of its
whole process tree. From each run's output it reads the CLI
run's ``report.json`` (the ``reports:`` line) and checks the coverage statements ``make stress``
makes: every positive case interleaved with at least ``target`` distinct others, every case met
in the mixed rounds by at least its target, every phase clean; and the plugin step's
``N passed in S`` line. A run whose coverage falls short is counted and listed, not hidden.

    .venv/bin/python benchmarks/bench_make_stress.py [--runs 5] [--label loaded]
        [--out benchmarks/results/make_stress.json] [-- MAKE_ARGS...]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import ROOT, machine_state, with_end_load

REPORTS = re.compile(r"reports: (\S+/report\.json)")
PASSED = re.compile(r"(\d+) passed[^\n]* in ([\d.]+)s")


def coverage_shortfalls(report: dict[str, Any]) -> list[str]:
    """The coverage statements ``report`` (a CLI run's report.json) does not meet."""
    cov = report.get("coverage") or {}
    short = []
    for phase in ("interleaved", "mixed"):
        c = cov.get(phase)
        if c is None:
            short.append(f"{phase}: did not run")
        elif c["min_partners"] < c.get("target", 0):
            short.append(f"{phase}: >= {c['min_partners']} others, target {c['target']}")
    if report.get("diagnosis") != "clean":
        short.append(f"diagnosis {report.get('diagnosis')}")
    return short


def _children_cpu() -> float:
    """User + system CPU seconds of this process's waited-for children (the whole tree)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one_run(make_args: list[str]) -> dict[str, Any]:
    start, cpu = time.monotonic(), _children_cpu()
    proc = subprocess.run(
        ["make", "stress", *make_args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    wall = time.monotonic() - start
    out = proc.stdout + proc.stderr
    run: dict[str, Any] = {
        "rc": proc.returncode,
        "wall_s": round(wall, 2),
        # CPU of the process tree: what a loaded machine's wall clock does not show
        "cpu_s": round(_children_cpu() - cpu, 2),
    }
    found = REPORTS.search(out)
    if found:
        report = json.loads((ROOT / found.group(1)).read_text())
        run["coverage"] = report.get("coverage")
        run["shortfalls"] = coverage_shortfalls(report)
    else:
        run["shortfalls"] = ["no report.json line in the output"]
    passed = PASSED.findall(out)
    if passed:
        run["plugin_tests"], run["plugin_pytest_s"] = int(passed[-1][0]), float(passed[-1][1])
    return run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/make_stress.json")
    ap.add_argument("make_args", nargs="*", help="extra make arguments (after --)")
    args = ap.parse_args(argv)
    state = machine_state(args.label)
    runs = []
    for i in range(args.runs):
        runs.append(one_run(args.make_args))
        r = runs[-1]
        print(
            f"run {i + 1}: {r['wall_s']} s ({r['cpu_s']} s CPU), rc {r['rc']}, "
            f"shortfalls {r['shortfalls'] or 'none'}"
        )
    walls = [r["wall_s"] for r in runs]
    result = {
        "what": "`make stress` wall clock, venv and baseline already in place",
        "machine": with_end_load(state),
        "make_args": args.make_args,
        "runs": runs,
        "walls_s": walls,
        "median_s": round(statistics.median(walls), 2),
        "median_cpu_s": round(statistics.median(r["cpu_s"] for r in runs), 2),
        "target_s": 15,
        "coverage_met": sum(1 for r in runs if not r["shortfalls"] and r["rc"] == 0),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"median {result['median_s']} s over {args.runs}; coverage met {result['coverage_met']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
