"""Memory of a long run, per process (the CLI and its phase children), sampled once a second.

The promise (issue #19, docs/reliability.md): a long run does not grow. This runs
``aclnn-stress run`` with ``--budget S`` (no fail-fast, so it runs its whole budget) and reads,
every ``--interval`` seconds, each process's PSS from /proc/PID/smaps_rollup (a page shared by
k processes counts 1/k in each, so the tree's PSS is not inflated by the pages a forked child
shares with its parent, as a sum of RSS is) and its RSS. Reported:

* the CLI process's own PSS: its value at ``--warmup``, its peak while calls stream, its peak
  while the reports are rendered (after the last call record), and its least-squares slope
  (MiB/min) after the warm-up — the check: the slope over the run stays under 10 % of the
  reference, and the streaming peak within 10 % of it;
* each phase child's peak PSS and RSS (children live one phase each, so a tree total compared
  across phases compares different children);
* the tree's PSS and its slope after the warm-up.

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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_state, with_end_load

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


def _pss_kib(pid: int) -> int:
    """Proportional set size from /proc/PID/smaps_rollup (0 when the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_mib(pid: int) -> float:
    """RSS of ``pid`` and every descendant, in MiB (shared pages counted in each)."""
    return sum(_rss_kib(p) for p in [pid, *_children(pid)]) / 1024


def slope_mib_per_min(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, MiB) points, in MiB per minute."""
    if len(points) < 2:
        return None
    n = len(points)
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    if var == 0:
        return None
    return round(60 * sum((t - mt) * (v - mv) for t, v in points) / var, 3)


def sample(pid: int) -> dict[int, tuple[float, float]]:
    """PSS and RSS (MiB) of ``pid`` and each descendant."""
    return {p: (_pss_kib(p) / 1024, _rss_kib(p) / 1024) for p in [pid, *_children(pid)]}


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
    journal = out / "run" / "results.jsonl"
    rows: list[dict] = []  # per sample: t, cli pss/rss, tree pss/rss, children, streaming
    peaks: dict[int, list[float]] = {}  # child pid -> [peak pss, peak rss]
    last_size, streaming = 0, True
    while proc.poll() is None:
        now = round(time.monotonic() - start, 2)
        procs = sample(proc.pid)
        size = journal.stat().st_size if journal.exists() else 0
        if _ended(journal, size, last_size):
            streaming = False  # the run-end record is written: the reports render now
        last_size = size
        cli = procs.get(proc.pid, (0.0, 0.0))
        for pid, (pss, rss) in procs.items():
            if pid != proc.pid:
                peak = peaks.setdefault(pid, [0.0, 0.0])
                peak[0], peak[1] = max(peak[0], pss), max(peak[1], rss)
        rows.append(
            {
                "t": now,
                "cli_pss": round(cli[0], 1),
                "cli_rss": round(cli[1], 1),
                "tree_pss": round(sum(v[0] for v in procs.values()), 1),
                "tree_rss": round(sum(v[1] for v in procs.values()), 1),
                "children": len(procs) - 1,
                "streaming": streaming,
            }
        )
        time.sleep(args.interval)
    stderr = proc.stderr.read() if proc.stderr else ""
    return _summary(args, cmd, proc.returncode, stderr, time.monotonic() - start, rows, peaks)


def _ended(journal: Path, size: int, last: int) -> bool:
    """Whether the journal's tail (what was appended since ``last``) holds the run-end."""
    if size <= last:
        return False
    with journal.open("rb") as f:
        f.seek(max(last, size - 4096))
        return b'"type":"run-end"' in f.read()


def _summary(args, cmd, code, stderr, seconds, rows, peaks) -> dict:
    after = [r for r in rows if r["t"] >= args.warmup and r["cli_pss"] > 0]
    stream = [r for r in after if r["streaming"]]
    render = [r for r in after if not r["streaming"]]
    ref = after[0]["cli_pss"] if after else None
    cli_slope = slope_mib_per_min([(r["t"], r["cli_pss"]) for r in stream])
    minutes = (stream[-1]["t"] - stream[0]["t"]) / 60 if len(stream) > 1 else 0.0
    grows = None if cli_slope is None or not ref else cli_slope * minutes / ref
    stream_peak = max((r["cli_pss"] for r in stream), default=None)
    return {
        "command": " ".join(cmd[1:]),
        "exit_code": code,
        "stderr_tail": stderr.strip().splitlines()[-1:] if code > 1 else [],
        "seconds": round(seconds, 1),
        "warmup_s": args.warmup,
        "cli_pss_mib": {
            "at_warmup": ref,
            "peak_streaming": stream_peak,
            "peak_rendering": max((r["cli_pss"] for r in render), default=None),
            "slope_mib_per_min_streaming": cli_slope,
            "growth_over_run_fraction": None if grows is None else round(grows, 4),
        },
        "tree_pss_slope_mib_per_min": slope_mib_per_min([(r["t"], r["tree_pss"]) for r in after]),
        "tree_pss_peak_mib": max((r["tree_pss"] for r in after), default=None),
        "tree_rss_peak_mib": max((r["tree_rss"] for r in after), default=None),
        "children_peak_mib": [
            {"pid": pid, "pss": round(p[0], 1), "rss": round(p[1], 1)} for pid, p in peaks.items()
        ],
        "within_tolerance": bool(
            ref
            and grows is not None
            and abs(grows) <= TOLERANCE
            and stream_peak is not None
            and stream_peak <= ref * (1 + TOLERANCE)
        ),
        "tolerance": TOLERANCE,
        "samples": rows,
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
    p.add_argument("--label", default="", help='machine state label, e.g. "idle"')
    args = p.parse_args()
    state = machine_state(args.label)
    result = {"machine": None, **measure(args)}
    result["machine"] = with_end_load(state)
    summary = {k: v for k, v in result.items() if k != "samples"}
    print(json.dumps(summary, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
