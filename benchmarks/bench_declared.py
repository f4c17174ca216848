"""Throughput of the declared ``add`` (stress/ops/declarations/add.toml, read from aclnn_add.h;
since the swap the only ``add``: the hand-written stress/ops/add.py it replaced is gone) in the
engine's ``mixed`` phase, against a bare ctypes loop over the same cases of corpus/control.toml
(bench_throughput.bare_loop: raw functions, no engine, the 'one-off script' a user would
write), alternating the two for ROUNDS rounds so that machine noise hits both alike. The ratio
is median(engine, declared) / median(bare ctypes) calls/s. (Before the swap this compared the
declared add with the hand-written one: 0.987x; results in git history.)

    .venv/bin/python benchmarks/bench_declared.py [--threads 2] [--duration 2] [--rounds 3]
        [--json benchmarks/results/declared_add.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("STRESS_BACKEND", "sim")

from bench_throughput import bare_loop, engine_mixed  # noqa: E402
from machine import machine_state  # noqa: E402

from stress import acl  # noqa: E402
from stress.corpus.parse import load_corpus_file  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="write the numbers to this file")
    args = ap.parse_args()
    rt = acl.runtime("sim")
    cases = [c for c in load_corpus_file(ROOT / "corpus/control.toml") if c.op == "add"]
    assert all(c.spec.signature is not None for c in cases)  # declared, from the header
    inputs = {c.id: c.spec.generate(c.params, c.seed) for c in cases}
    rates: dict[str, list[float]] = {"bare_ctypes": [], "engine_declared": []}
    for _ in range(args.rounds):
        rates["bare_ctypes"].append(bare_loop(rt, cases, inputs, args.threads, args.duration))
        rates["engine_declared"].append(engine_mixed(rt, cases, args.threads, args.duration))
    med = {k: statistics.median(v) for k, v in rates.items()}
    result = {
        "threads": args.threads,
        "duration_s": args.duration,
        "rounds": args.rounds,
        "cases": len(cases),
        "calls_per_s": rates,
        "median_calls_per_s": med,
        "ratio_engine_declared_over_bare_ctypes": med["engine_declared"] / med["bare_ctypes"],
        "cpu_count": os.cpu_count(),
        "machine": machine_state(),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
