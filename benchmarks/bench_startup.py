"""Start-up time of the CLI as a user sees it: wall time from exec to exit, as processes.

Each command (``aclnn-stress --version``, ``aclnn-stress --help``, ``aclnn-stress run --help``)
is run ``--runs`` times as a fresh process; the median, min and max wall times are written under
``--label`` (e.g. ``before`` / ``after``) into ``--json``, with the load average at the start and
end of the measurement (the numbers mean little without it: the development machine is shared).
Issue 31's target: ``--version`` and ``--help`` well under 0.1 s.

``--tree NAME=DIR`` (repeatable) compares source trees fairly on a loaded machine: each command
runs as ``python -m stress ...`` with ``PYTHONPATH=DIR``, the trees taking turns run by run, so
a change of load falls on all of them alike (an older tree: ``git archive REV stress | tar -x
-C DIR``).

    .venv/bin/python benchmarks/bench_startup.py --label after [--runs 20]
        [--json benchmarks/results/startup.json]
    .venv/bin/python benchmarks/bench_startup.py --label compare --tree before=/tmp/old \
        --tree after=.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("aclnn-stress")
COMMANDS = (["--version"], ["--help"], ["run", "--help"])


#: Where the commands run: an empty folder (``python -m`` puts the working directory first on
#: sys.path, which would shadow a --tree's PYTHONPATH when run from a checkout).
EMPTY = tempfile.mkdtemp(prefix="bench-startup-")


def _once(argv: list[str], env: dict[str, str] | None) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, env=env, cwd=EMPTY, check=True)
    return time.perf_counter() - t0


def _summary(command: str, t: list[float]) -> dict:
    return {
        "command": command,
        "runs": len(t),
        "median_s": round(statistics.median(t), 4),
        "min_s": round(min(t), 4),
        "max_s": round(max(t), 4),
    }


def measure(runs: int, trees: dict[str, Path]) -> dict:
    """Each command ``runs`` times per tree (after one untimed warm-up each), trees in turn."""
    from machine import precompile  # benchmarks/: on sys.path when run as a script

    bytecode = {name: precompile(d) for name, d in (trees or {"installed": REPO}).items()}
    load_start = os.getloadavg()
    rows: dict[str, list[dict]] = {name: [] for name in trees or {"installed": None}}
    for args in COMMANDS:
        if trees:
            how = {
                name: (
                    [sys.executable, "-m", "stress", *args],
                    {**os.environ, "PYTHONPATH": str(d)},
                )
                for name, d in trees.items()
            }
        else:
            how = {"installed": ([str(CLI), *args], None)}
        times: dict[str, list[float]] = {name: [] for name in how}
        for argv, env in how.values():
            _once(argv, env)
        for _ in range(runs):
            for name, (argv, env) in how.items():
                times[name].append(_once(argv, env))
        shown = " ".join(["aclnn-stress" if not trees else "python -m stress", *args])
        for name, t in times.items():
            rows[name].append(_summary(shown, t))
    return {
        "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "loadavg_start": [round(x, 2) for x in load_start],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "how": "wall time of a fresh process from exec to exit (subprocess.run), one warm-up "
        "run first, then --runs timed runs" + (", the trees taking turns" if trees else ""),
        "trees": {name: str(d) for name, d in trees.items()},
        "cwd": "an empty temporary folder",
        "bytecode": bytecode,
        "results": rows,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=20, help="timed runs per command (>= 10)")
    p.add_argument("--label", default="now", help="key to store the measurement under")
    p.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    p.add_argument("--json", default=str(REPO / "benchmarks" / "results" / "startup.json"))
    args = p.parse_args(argv)
    if args.runs < 10:
        p.error(f"--runs must be >= 10, got {args.runs}")
    trees = {}
    for text in args.tree:
        name, sep, folder = text.partition("=")
        if not sep or not (Path(folder) / "stress" / "__init__.py").is_file():
            p.error(f"--tree must be NAME=DIR with DIR/stress/__init__.py, got {text!r}")
        trees[name] = Path(folder).resolve()
    result = measure(args.runs, trees)
    path = Path(args.json)
    data = json.loads(path.read_text()) if path.exists() else {}
    data[args.label] = result
    path.write_text(json.dumps(data, indent=1) + "\n")
    for name, rows in result["results"].items():
        for row in rows:
            print(
                f"{name:<10} {row['command']:<30} median {row['median_s']:.3f} s  "
                f"(min {row['min_s']:.3f}, max {row['max_s']:.3f}, {row['runs']} runs)"
            )
    print(f"load average {result['loadavg_start']} -> {result['loadavg_end']}; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
