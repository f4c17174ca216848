"""A big case within the machine: one mHC backward case of B = 64, S = 4096, C = 1024 (5.7 GB of
tensors, under the default --max-case-bytes of a quarter of a 24 GB host), run as a user would,
with the process tree's memory sampled.

The promise (issue #31 item 3, stress/engine/run/in_flight.py): the run never puts more calls in
flight than half the memory the host reports available fits, so either it is refused before
anything is allocated, with one line naming the case, or it runs with fewer threads and says so —
and the process tree's PSS stays under the half it states.

    .venv/bin/python benchmarks/bench_big_case.py                 # the issue's case
    .venv/bin/python benchmarks/bench_big_case.py --B 8 --S 1024  # a case that runs (fewer threads)

Writes ``benchmarks/results/big_case.json``: the case, its bytes, the host's MemAvailable at the
start, the stated limit, the exit code and the one line (refused) or the note (ran), the wall
time from exec, and the tree's peak PSS.
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

from bench_rss import _children, _pss_kib
from machine import machine_state, with_end_load

REPO = Path(__file__).resolve().parents[1]
CASE = """[defaults]
op = "mhc_pre_sinkhorn_backward"
N = 4
num_iters = 20
dtype = "bf16"

[[case]]
id = "big"
description = "B={B} S={S} C={C}"
B = {B}
S = {S}
C = {C}
seed = 1
"""


def _available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def _tree_pss(pid: int) -> int:
    return sum(_pss_kib(p) for p in [pid, *_children(pid)]) * 1024


def measure(args: argparse.Namespace, work: Path) -> dict:
    corpus = work / "big.toml"
    corpus.write_text(CASE.format(B=args.B, S=args.S, C=args.C), encoding="utf-8")
    cmd = [sys.executable, "-m", "stress", "run", "--corpus", str(corpus)]
    cmd += ["--control", str(REPO / "corpus/control.toml"), "--record-baseline"]
    cmd += ["--baseline", str(work / "b.json"), "--budget", str(args.budget)]
    cmd += ["--variants", "none", "--out", str(work / "out"), *args.extra]
    available = _available()
    env = {**os.environ, "STRESS_BACKEND": "sim"}
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_pss(proc.pid))
        time.sleep(0.1)
    wall = time.monotonic() - t0
    out, err = proc.communicate()
    lines = (out + err).splitlines()
    said = [ln for ln in lines if "memory" in ln and ("error" in ln or "instead of" in ln)]
    return {
        "case": {"B": args.B, "S": args.S, "C": args.C},
        "command": " ".join(cmd[1:]),
        "host_available_bytes": available,
        "stated_limit_bytes": available // 2,
        "exit": proc.returncode,
        "said": said[:2] or lines[-3:],
        "wall_s_from_exec": round(wall, 2),
        "peak_tree_pss_bytes": peak,
        "under_limit": peak <= available // 2,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--B", type=int, default=64)
    ap.add_argument("--S", type=int, default=4096)
    ap.add_argument("--C", type=int, default=1024)
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--label", default="")
    ap.add_argument("--json", default=str(REPO / "benchmarks/results/big_case.json"))
    ap.add_argument("extra", nargs="*", help="more run arguments (after --)")
    args = ap.parse_args()
    state = machine_state(args.label)
    with tempfile.TemporaryDirectory(prefix="big-case-") as tmp:
        row = measure(args, Path(tmp))
    doc = {"machine": with_end_load(state), "run": row}
    Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(row, indent=2))
    return 0 if row["under_limit"] else 1


if __name__ == "__main__":
    sys.exit(main())
