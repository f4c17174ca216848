"""`make test`'s pytest step: its wall clock, its CPU time, pytest's own line, the slowest tests.

It runs the suite as ``make test`` does (``pytest -q -n auto --dist loadgroup``, with
``--durations=0``) and records one entry, under ``--key`` ("before" or "after"), in the results
file, keeping the other entries. On the shared 2-core machine the wall clock says more about the
other sessions than about the suite: the figure to compare is the CPU time (user + sys of the
whole run: the xdist workers and every process they start and wait for), and the idle wall is
estimated from it as CPU / cores (the suite keeps both workers busy to its end). The sum of the
per-test durations and the slowest tests come from ``--durations=0``.

    .venv/bin/python benchmarks/bench_make_test.py --key after --label loaded [-- PYTEST_ARGS...]
    .venv/bin/python benchmarks/bench_make_test.py --key before --log LOG --wall S --cpu S ...

``--log`` records a run made outside (its output, with ``--durations``; its wall and CPU seconds
as ``/usr/bin/time -f "%e %U %S"`` or bash's ``time`` gave them) instead of running one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import ROOT, machine_state, with_end_load

PYTEST = ["-q", "-n", "auto", "--dist", "loadgroup", "-p", "no:cacheprovider", "--durations=0"]
SUMMARY = re.compile(r"(\d+) passed(?:, (\d+) skipped)?[^\n]* in ([\d.]+)s")
DURATION = re.compile(r"^([\d.]+)s (call|setup|teardown) +(\S+)$", re.M)
TARGET_S = 180


def read_output(text: str, top: int = 10) -> dict[str, Any]:
    """pytest's summary line and ``--durations`` lines of ``text``: tests, seconds, slowest."""
    found = SUMMARY.findall(text)
    if not found:
        raise ValueError("no 'N passed ... in S s' line in the pytest output")
    passed, skipped, seconds = found[-1]
    rows = [(float(s), f"{when} {node}") for s, when, node in DURATION.findall(text)]
    rows.sort(reverse=True)
    return {
        "tests": int(passed),
        "skipped": int(skipped or 0),
        "pytest_s": float(seconds),
        "durations_sum_s": round(sum(s for s, _ in rows), 1),
        "slowest": [f"{s:.2f}s {what}" for s, what in rows[:top]],
    }


def run_suite(extra: list[str]) -> tuple[str, float, float]:
    """The suite's output, wall seconds and CPU seconds (its processes, children included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *PYTEST, *extra],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-2000:], sep="\n", file=sys.stderr)
    return proc.stdout + proc.stderr, wall, cpu


def entry(text: str, wall: float, cpu: float, cores: int) -> dict[str, Any]:
    return {
        **read_output(text),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "idle_wall_estimate_s": round(cpu / cores),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--key", default="after", help="the entry to write (before, after, ...)")
    ap.add_argument("--label", default="")
    ap.add_argument("--note", default="")
    ap.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--log", type=Path, help="record this pytest output instead of a run")
    ap.add_argument("--wall", type=float, help="with --log: the run's wall seconds")
    ap.add_argument("--cpu", type=float, help="with --log: the run's user + sys seconds")
    ap.add_argument("--commit", help="with --log: the commit the run tested")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/make_test.json")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args(argv)
    state = machine_state(args.label)
    if args.log:
        if args.wall is None or args.cpu is None:
            ap.error("--log needs --wall and --cpu")
        text, wall, cpu = args.log.read_text(), args.wall, args.cpu
        state = {**state, "command": f"pytest {' '.join(PYTEST)} (recorded from {args.log})"}
        if args.commit:
            state["commit"] = args.commit
    else:
        text, wall, cpu = run_suite(args.pytest_args)
    result = json.loads(args.out.read_text()) if args.out.is_file() else {}
    result.update(
        what="`make test`'s pytest step (pytest -n auto --dist loadgroup over the cores; the "
        "lint and browser steps take ~6 s more): wall, CPU of all its processes, and the idle "
        "wall estimated as CPU / cores",
        target_s=TARGET_S,
    )
    result[args.key] = {
        **entry(text, wall, cpu, args.cores),
        "machine": with_end_load(state),
        "note": args.note,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    e = result[args.key]
    print(f"{args.key}: {e['tests']} tests, wall {e['wall_s']} s, CPU {e['cpu_s']} s, "
          f"idle estimate {e['idle_wall_estimate_s']} s on {args.cores} cores")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
