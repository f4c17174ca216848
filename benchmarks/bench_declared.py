"""Throughput of a declared ``add`` (tests/declarations/add.toml, read from aclnn_add.h) against
the hand-written ``add`` OpSpec (stress/ops/add.py) it replaces, on the same cases of
corpus/control.toml: the engine's ``mixed`` phase, alternating the two for ROUNDS rounds so that
machine noise hits both alike; the ratio is median(declared) / median(hand-written) calls/s
(target >= 0.95).

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

from bench_throughput import engine_mixed  # noqa: E402

from stress import acl  # noqa: E402
from stress.corpus.parse import load_corpus_file  # noqa: E402
from stress.ops.declaration import load_declaration  # noqa: E402
from stress.ops.declared import corpus_cases, to_opspec  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="write the numbers to this file")
    args = ap.parse_args()
    rt = acl.runtime("sim")
    hand = [c for c in load_corpus_file(ROOT / "corpus/control.toml") if c.op == "add"]
    decl = load_declaration(ROOT / "tests/declarations/add.toml")
    declared = corpus_cases(decl, to_opspec(decl))
    assert sorted(c.id for c in declared) == sorted(c.id for c in hand)
    rates: dict[str, list[float]] = {"hand_written": [], "declared": []}
    for _ in range(args.rounds):
        rates["hand_written"].append(engine_mixed(rt, hand, args.threads, args.duration))
        rates["declared"].append(engine_mixed(rt, declared, args.threads, args.duration))
    med = {k: statistics.median(v) for k, v in rates.items()}
    result = {
        "threads": args.threads,
        "duration_s": args.duration,
        "rounds": args.rounds,
        "cases": len(hand),
        "calls_per_s": rates,
        "median_calls_per_s": med,
        "ratio_declared_over_hand_written": med["declared"] / med["hand_written"],
        "cpu_count": os.cpu_count(),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
