"""The depth-3 fault ``tiling-ring``: found by the PCT schedules, never by the pairs alone.

Per seed, two runs of the interleaved phase over the shipped corpus (``corpus/mhc.toml``) with
``ACLSIM_FAULTS=tiling-ring``, against a baseline recorded with the same fault:

* ``pairs-only``: the whole pair matrix (every ordered pair, A.phase1, B.phase1, A.phase2,
  B.phase2) and no PCT schedule;
* ``pct``: the same pairs, then the phase's PCT schedules
  (``stress.engine.replay.interleave.PCT_SCHEDULES`` without --budget, or the phase's share of
  ``--budget`` when given).

Found = some call of the interleaved phase failed. Also counted: failing schedules, and the
first schedule that failed (how many a run needs).

Full run (issue #15: ≥ 9/10 seeds by PCT, 0/10 by the pairs):
    .venv/bin/python benchmarks/bench_pct.py --seeds 10
Writes ``benchmarks/results/pct.json`` and ``.md``.
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
config = RunConfig(phases=("interleaved",), seed=seed,
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
    first_pct = min((r["round"] for r in calls if "group" in r), default=None)
    return {
        "mode": mode,
        "seed": seed,
        "found": pair_fail > 0 or bool(bad_schedules),
        "pair_failures": pair_fail,
        "failing_schedules": len(bad_schedules),
        "first_failing_schedule": None
        if not bad_schedules or first_pct is None
        else bad_schedules[0] - first_pct,
        "coverage": report["coverage"].get("interleaved", {}),
        "diagnosis": report["diagnosis"],
        "seconds": round(seconds, 1),
    }


def _table(rows: list[dict], budget: str) -> str:
    lines = [
        f"`ACLSIM_FAULTS={FAULT}`, interleaved phase over corpus/mhc.toml, budget {budget} "
        "(none: every pair, then the default schedule count).",
        "",
        "| mode | seeds found | pair failures | failing schedules / run (median) | "
        "first failing schedule (median) | seconds / run (median) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for mode in ("pairs-only", "pct"):
        rs = [r for r in rows if r["mode"] == mode]
        if not rs:
            continue
        firsts = sorted(
            r["first_failing_schedule"] for r in rs if r["first_failing_schedule"] is not None
        )
        fails = sorted(r["failing_schedules"] for r in rs)
        secs = sorted(r["seconds"] for r in rs)
        lines.append(
            f"| {mode} | {sum(r['found'] for r in rs)}/{len(rs)} | "
            f"{sum(r['pair_failures'] for r in rs)} | {fails[len(fails) // 2]} / "
            f"{rs[0]['coverage'].get('schedules')} | "
            f"{firsts[len(firsts) // 2] if firsts else '—'} | {secs[len(secs) // 2]} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budget", default="none", help="--budget of each run (default none)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="pct-") as tmp:
        work = Path(tmp)
        baseline = work / "baseline.json"
        subprocess.run(
            [sys.executable, "-m", "stress", "baseline", "record", "--corpus",
             "corpus/mhc.toml", "--out", str(baseline)],
            cwd=ROOT, env={**os.environ, "ACLSIM_FAULTS": FAULT}, check=True,
            capture_output=True,
        )  # fmt: skip
        for seed in range(1, args.seeds + 1):
            for mode in ("pairs-only", "pct"):
                r = _run(mode, seed, baseline, work / f"{mode}-{seed}", args.budget)
                rows.append(r)
                print(json.dumps(r), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pct.json").write_text(
        json.dumps({"fault": FAULT, "budget": args.budget, "rows": rows}, indent=2) + "\n"
    )
    (out / "pct.md").write_text(_table(rows, args.budget))
    print(_table(rows, args.budget), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
