"""The depth-3 fault ``tiling-ring``: found by the PCT schedules, never by the pairs alone.

Per seed, two runs of the interleaved phase over the shipped corpus (``corpus/mhc.toml``) with
``ACLSIM_FAULTS=tiling-ring``, against a baseline recorded with the same fault:

* ``pairs-only``: the whole pair matrix (every ordered pair, A.phase1, B.phase1, A.phase2,
  B.phase2) and no PCT schedule;
* ``pct``: the same pairs, then the phase's PCT schedules
  (``stress.engine.replay.interleave.PCT_SCHEDULES`` without --budget, or the phase's share of
  ``--budget`` when given);
* ``random-orders`` (equal effort): the same pairs and the same number of three-call groups,
  each run in a random order of its six steps (at every step a uniformly chosen call that has
  a step left) instead of a PCT order;
* ``naive-free`` (equal effort): benchmarks/naive_harness.py, the free-running loop (8 threads,
  one shared stream, random cases), stopped after as many calls as the median ``pct`` run made
  in its interleaved phase; timed from exec (benchmarks/detect_runs.py).

Found = some call failed. Also counted: failing schedules, the first schedule that failed, and
the measured per-schedule hit rate (failing / run schedules) beside PCT's bound for n = 3
calls, k = 6 steps, d = 3: 1 / (n k^(d-1)) = 1/108.

Full run (issue #15: ≥ 9/10 seeds by PCT, 0/10 by the pairs):
    .venv/bin/python benchmarks/bench_pct.py --seeds 10
Writes ``benchmarks/results/pct.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from detect_runs import _NAIVE_FIRST, NAIVE, timed_process
from machine import machine_state, with_end_load

ROOT = Path(__file__).resolve().parents[1]
FAULT = "tiling-ring"

RUN = """
import json, sys
import stress.engine.replay.interleave as interleave
from stress import RunConfig, run_corpus
mode, seed, baseline, out, budget = sys.argv[1:6]
seed = int(seed)
if mode == "pairs-only":
    interleave.PCT_SCHEDULES = interleave.PCT_MIN_SCHEDULES = 0
if mode == "random-orders":
    def random_order(n, rng, depth=3):
        done, order = [0] * n, []
        while len(order) < 2 * n:
            c = [i for i in range(n) if done[i] < 2][int(rng.integers(sum(d < 2 for d in done)))]
            order.append((c, ("phase1", "phase2")[done[c]]))
            done[c] += 1
        return order
    interleave.pct_order = random_order
# the corpus as written (variants=()): the experiment is about orders of its 8 cases, and the
# derived variants would make the pair matrix 77 x 77
config = RunConfig(phases=("interleaved",), seed=seed, variants=(),
                   budget_s=float(budget) if budget != "none" else None)
report = run_corpus(["corpus/mhc.toml"], config=config, baseline=baseline, out=out,
                    record_missing=False, isolate=False).to_json()
print("REPORT " + json.dumps({"diagnosis": report["diagnosis"],
                              "coverage": report.get("coverage", {})}))
"""


def _run(mode: str, seed: int, baseline: Path, out: Path, budget: str) -> dict:
    env = {**os.environ, "ACLSIM_FAULTS": FAULT}
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", RUN, mode, str(seed), str(baseline), str(out), budget],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    seconds = time.monotonic() - t0
    line = [x for x in proc.stdout.splitlines() if x.startswith("REPORT ")]
    if not line:
        raise SystemExit(f"{mode} seed {seed} failed:\n{proc.stderr[-3000:]}")
    report = json.loads(line[-1][7:])
    recs = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    calls = [r for r in recs if r.get("type") == "call" and r.get("phase") == "interleaved"]
    pair_fail = sum(not r["match"] for r in calls if "aggressor" in r)
    bad_schedules = sorted({r["round"] for r in calls if "group" in r and not r["match"]})
    schedules = {r["round"] for r in calls if "group" in r}
    first_pct = min(schedules, default=None)
    return {
        "mode": mode,
        "seed": seed,
        "found": pair_fail > 0 or bool(bad_schedules),
        "pair_failures": pair_fail,
        "failing_schedules": len(bad_schedules),
        "schedules_run": len(schedules),
        "calls": len(calls),
        "first_failing_schedule": None
        if not bad_schedules or first_pct is None
        else bad_schedules[0] - first_pct,
        "coverage": report["coverage"].get("interleaved", {}),
        "diagnosis": report["diagnosis"],
        "seconds": round(seconds, 1),
    }


MODES = ("pairs-only", "pct", "random-orders")


def _naive(seed: int, baseline: Path, max_calls: int) -> dict:
    """The free-running naive loop, stopped after ``max_calls`` calls (or its first failure)."""
    cmd = [*NAIVE, "--corpus", "corpus/mhc.toml", "--baseline", str(baseline), "--seed", str(seed)]
    cmd += ["--duration", "120", "--max-calls", str(max_calls)]
    run = timed_process(cmd, {"ACLSIM_FAULTS": FAULT}, timeout=300)
    first = run.first(_NAIVE_FIRST)
    calls = [m for _, line in run.lines if (m := re.search(r"\[after (\d+) calls\]", line))]
    return {
        "mode": "naive-free",
        "seed": seed,
        "found": first is not None,
        "max_calls": max_calls,
        "calls_to_first_failure": int(calls[0].group(1)) if calls else None,
        "first_failure_exec_s": round(first[0], 3) if first else None,
        "seconds": run.wall_s,
    }


def _med(values: list) -> object:
    values = sorted(v for v in values if v is not None)
    return statistics.median(values) if values else "—"


def _table(rows: list[dict], budget: str, state: dict) -> str:
    lines = [
        f"`ACLSIM_FAULTS={FAULT}`, corpus/mhc.toml, budget {budget} (none: every pair, then "
        "the default schedule count). PCT's bound for a depth-3 bug over 3 calls of 2 steps: "
        f"a schedule hits it with probability >= 1/108 = {1 / 108:.4f}.",
        "",
        "| mode | seeds found | pair failures | failing schedules / run (median) | "
        "per-schedule hit rate (all runs) | first failing schedule (median) | "
        "calls / run (median) | seconds / run (median) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for mode in MODES:
        rs = [r for r in rows if r["mode"] == mode]
        if not rs:
            continue
        run = sum(r["schedules_run"] for r in rs)
        rate = f"{sum(r['failing_schedules'] for r in rs) / run:.3f}" if run else "—"
        lines.append(
            f"| {mode} | {sum(r['found'] for r in rs)}/{len(rs)} | "
            f"{sum(r['pair_failures'] for r in rs)} | {_med([r['failing_schedules'] for r in rs])}"
            f" / {_med([r['schedules_run'] for r in rs])} | {rate} | "
            f"{_med([r['first_failing_schedule'] for r in rs])} | "
            f"{_med([r['calls'] for r in rs])} | {_med([r['seconds'] for r in rs])} |"
        )
    nv = [r for r in rows if r["mode"] == "naive-free"]
    if nv:
        lines.append(
            f"| naive-free (8 threads, <= {nv[0]['max_calls']} calls) | "
            f"{sum(r['found'] for r in nv)}/{len(nv)} | — | — | — | — | "
            f"{_med([r['calls_to_first_failure'] for r in nv])} to the first failure | "
            f"{_med([r['first_failure_exec_s'] for r in nv])} from exec to the first failure |"
        )
    lines += [
        "",
        f"({state.get('label') or 'machine state not labelled'}; {state.get('date')}; nproc "
        f"{state.get('nproc')}; load average {state.get('loadavg_start')} at the start, "
        f"{state.get('loadavg_end')} at the end; `{state.get('command')}`; commit "
        f"{state.get('commit')})",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budget", default="none", help="--budget of each run (default none)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--label", default="", help='machine state label, e.g. "idle"')
    args = ap.parse_args()
    state = machine_state(args.label)
    rows = []
    with tempfile.TemporaryDirectory(prefix="pct-") as tmp:
        work = Path(tmp)
        baseline = work / "baseline.json"
        subprocess.run(
            [sys.executable, "-m", "stress", "baseline", "record", "--corpus",
             "corpus/mhc.toml", "--variants", "none", "--out", str(baseline)],
            cwd=ROOT, env={**os.environ, "ACLSIM_FAULTS": FAULT}, check=True,
            capture_output=True,
        )  # fmt: skip
        for seed in range(1, args.seeds + 1):
            for mode in MODES:
                r = _run(mode, seed, baseline, work / f"{mode}-{seed}", args.budget)
                rows.append(r)
                print(json.dumps(r), flush=True)
        max_calls = int(_med([r["calls"] for r in rows if r["mode"] == "pct"]))
        for seed in range(1, args.seeds + 1):
            r = _naive(seed, baseline, max_calls)
            rows.append(r)
            print(json.dumps(r), flush=True)
    state = with_end_load(state)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"fault": FAULT, "budget": args.budget, "machine": state, "rows": rows}
    (out / "pct.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out / "pct.md").write_text(_table(rows, args.budget, state))
    print(_table(rows, args.budget, state), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
