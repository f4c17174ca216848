"""How long ``make hostile`` (tests/hostile_sweep.py) takes, and how many of its rows pass: the
figures docs/reliability.md quotes.

Runs the sweep as ``make hostile`` does (``-j 3`` unless ``--jobs``), timed from exec, and keeps
its summary line and each row's seconds (median, min–max) beside the machine state.

    .venv/bin/python benchmarks/bench_hostile.py [--jobs 3] [--label "loaded"]
        [--out benchmarks/results/hostile.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine import machine_state, with_end_load

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"^(\d+)/(\d+) rows pass in (\d+) s$")
ROW = re.compile(r"^(\S+)\s+(-?\d+)\s+(\d+\.\d)\s+(\S+)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/hostile.json")
    args = ap.parse_args()
    state = machine_state(args.label)
    cmd = [sys.executable, "tests/hostile_sweep.py", "-j", str(args.jobs)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    lines = proc.stdout.splitlines()
    summary = next((m for m in map(SUMMARY.match, lines) if m), None)
    seconds = [float(m.group(3)) for m in map(ROW.match, lines) if m]
    doc = {
        **with_end_load(state),
        "sweep": " ".join(["python", *cmd[1:]]),
        "rc": proc.returncode,
        "wall_s": round(wall, 1),
        "rows_pass": int(summary.group(1)) if summary else None,
        "rows": int(summary.group(2)) if summary else None,
        "sweep_own_s": int(summary.group(3)) if summary else None,
        "row_s_median": statistics.median(seconds) if seconds else None,
        "row_s_min_max": [min(seconds), max(seconds)] if seconds else None,
        "failing": [line for line in lines if (m := ROW.match(line)) and m.group(4) != "pass"],
    }
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps({k: v for k, v in doc.items() if k != "failing"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
