"""Start-up time of the CLI as a user sees it: wall time from exec to exit, as processes.

Each command (``aclnn-stress --version``, ``aclnn-stress --help``, ``aclnn-stress run --help``)
is run ``--runs`` times as a fresh process; the median, min and max wall times are written under
``--label`` (e.g. ``before`` / ``after``) into ``--json``, with the load average at the start and
end of the measurement (the numbers mean little without it: the development machine is shared).
Issue 31's target: ``--version`` and ``--help`` well under 0.1 s.

    .venv/bin/python benchmarks/bench_startup.py --label after [--runs 20]
        [--json benchmarks/results/startup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("aclnn-stress")
COMMANDS = (["--version"], ["--help"], ["run", "--help"])


def wall_times(argv: list[str], runs: int) -> list[float]:
    """Seconds from exec to exit of ``argv``, ``runs`` times (after one untimed warm-up run)."""
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
    return times


def measure(runs: int) -> dict:
    load_start = os.getloadavg()
    rows = []
    for args in COMMANDS:
        argv = [str(CLI), *args]
        t = wall_times(argv, runs)
        rows.append(
            {
                "command": " ".join(["aclnn-stress", *args]),
                "runs": runs,
                "median_s": round(statistics.median(t), 4),
                "min_s": round(min(t), 4),
                "max_s": round(max(t), 4),
            }
        )
    return {
        "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "loadavg_start": [round(x, 2) for x in load_start],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "how": "wall time of a fresh process from exec to exit (subprocess.run), one warm-up "
        "run first, then --runs timed runs",
        "results": rows,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=20, help="timed runs per command (>= 10)")
    p.add_argument("--label", default="now", help="key to store the measurement under")
    p.add_argument("--json", default=str(REPO / "benchmarks" / "results" / "startup.json"))
    args = p.parse_args(argv)
    if args.runs < 10:
        p.error(f"--runs must be >= 10, got {args.runs}")
    result = measure(args.runs)
    path = Path(args.json)
    data = json.loads(path.read_text()) if path.exists() else {}
    data[args.label] = result
    path.write_text(json.dumps(data, indent=1) + "\n")
    for row in result["results"]:
        print(
            f"{row['command']:<28} median {row['median_s']:.3f} s  "
            f"(min {row['min_s']:.3f}, max {row['max_s']:.3f}, {row['runs']} runs)"
        )
    print(f"load average {result['loadavg_start']} -> {result['loadavg_end']}; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
