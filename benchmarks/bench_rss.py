"""RSS of a long run's process tree (the CLI and its phase children), sampled once a second.

The promise (issue #19, docs/reliability.md): over a long run the RSS of the process tree stays
within 10 % of its value after the first minute. This runs ``aclnn-stress run`` with
``--budget S`` (no fail-fast, so it runs its whole budget), sums the RSS of the process and all
its descendants from /proc every ``--interval`` seconds, and reports the reference value (the
first sample after ``--warmup`` seconds), the maximum and the last sample after it, and whether
they stay within the tolerance.

    .venv/bin/python benchmarks/bench_rss.py --budget 600 --warmup 60      # the full 10-minute run
    .venv/bin/python benchmarks/bench_rss.py --budget 40 --warmup 10       # a smoke run
        [--corpus corpus/mhc.toml] [--threads 8] [--json benchmarks/results/rss.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOLERANCE = 0.10


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    kids = [int(p) for p in text.split()]
    return kids + [g for k in kids for g in _children(k)]


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_mib(pid: int) -> float:
    """RSS of ``pid`` and every descendant, in MiB."""
    return sum(_rss_kib(p) for p in [pid, *_children(pid)]) / 1024


def measure(args: argparse.Namespace) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench-rss-"))
    cmd = [
        sys.executable,
        "-m",
        "stress",
        "run",
        "--corpus",
        args.corpus,
        "--control",
        args.control,
        "--budget",
        str(args.budget),
        "--threads",
        str(args.threads),
        "--no-fail-fast",
        "--seed",
        "1",
        "--quiet",
        "--out",
        str(out / "run"),
        "--baseline",
        str(out / "baseline.json"),
        "--record-baseline",
    ]
    env = {**os.environ, "STRESS_BACKEND": os.environ.get("STRESS_BACKEND", "sim")}
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    start = time.monotonic()
    samples: list[tuple[float, float, float]] = []  # seconds, tree MiB, CLI process MiB
    while proc.poll() is None:
        now = round(time.monotonic() - start, 2)
        samples.append((now, round(tree_rss_mib(proc.pid), 1), round(_rss_kib(proc.pid) / 1024, 1)))
        time.sleep(args.interval)
    stderr = proc.stderr.read() if proc.stderr else ""
    after = [rss for t, rss, _ in samples if t >= args.warmup and rss > 0]
    parent = [own for t, _, own in samples if t >= args.warmup and own]
    reference = after[0] if after else None
    peak = max(after, default=None)
    return {
        "command": " ".join(cmd[1:]),
        "exit_code": proc.returncode,
        "stderr_tail": stderr.strip().splitlines()[-1:] if proc.returncode > 1 else [],
        "seconds": round(time.monotonic() - start, 1),
        "warmup_s": args.warmup,
        "reference_mib": reference,
        "peak_after_warmup_mib": peak,
        "last_mib": after[-1] if after else None,
        "cli_process_mib": {"reference": parent[0], "last": parent[-1]} if parent else None,
        "within_tolerance": bool(reference and peak and peak <= reference * (1 + TOLERANCE)),
        "tolerance": TOLERANCE,
        "samples": samples,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default="corpus/mhc.toml")
    p.add_argument("--control", default="corpus/control.toml")
    p.add_argument("--budget", type=float, default=600.0, help="seconds of the run (default 600)")
    p.add_argument("--warmup", type=float, default=60.0, help="reference sample time (default 60)")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--interval", type=float, default=1.0)
    p.add_argument("--json", metavar="PATH", help="write the result as JSON")
    args = p.parse_args()
    result = measure(args)
    summary = {k: v for k, v in result.items() if k != "samples"}
    print(json.dumps(summary, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
