"""What the run's defaults cost and buy, as a user sees it: ``aclnn-stress run`` processes timed
from exec, over ``make stress``'s corpus (the figures README's "Hangs", "Stream policies" and
"Allocator policies" paragraphs quote).

- ``hang``: one clean ``--budget 20`` run; per case its slowest call against the baseline's
  ``call_p99_s``: the slowest call of a millisecond case (p99 under ``--hang-floor`` /
  ``--hang-factor`` = 15 ms) in concurrent and in one-thread phases, and the largest
  slowest/p99 ratio of the slower cases (what the floor and the factor must leave room for).
- ``stream``: ``--budget 14`` under ``--stream shared`` and ``--stream both`` (seeds 1..N,
  the two policies alternating which goes first), and the same under
  ``ACLSIM_FAULTS=shared-scratch`` and ``scratch-pool``: verdict, first detection, diagnosis.
- ``allocator``: ``--stream both --budget 14`` with ``--allocator both`` and ``fresh``, and the
  recycled shuffled step's own time and calls.

Each simulator's baseline (clean, and each fault's) is recorded first, untimed. Writes one JSON
object with the machine state.

    .venv/bin/python benchmarks/bench_policies.py [--seeds 2] [--only hang,stream,allocator]
        [--label "loaded, 8 helpers"] [--out benchmarks/results/policies.json]
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
from typing import Any

from machine import machine_state, with_end_load

ROOT = Path(__file__).resolve().parents[1]
CLI = str(Path(sys.executable).with_name("aclnn-stress"))
CORPUS = ["corpus/mhc.toml", "corpus/pool/mul.toml", "corpus/pool/softmax.toml"]
CORPUS_ARGS = [a for c in CORPUS for a in ("--corpus", c)]
ONE_THREAD = {"serial", "shuffled", "interleaved"}
FLOOR_S, FACTOR = 0.75, 50.0


def run_cli(args: list[str], faults: str = "") -> dict[str, Any]:
    """One ``aclnn-stress run`` from exec: wall time, verdict, timing and its journal's path."""
    out = Path(tempfile.mkdtemp(prefix="bench-policies-"))
    env = {**os.environ, "ACLSIM_FAULTS": faults}
    cmd = [CLI, "run", *CORPUS_ARGS, "--quiet", "--json", "--out", str(out), *args]
    load = round(os.getloadavg()[0], 2)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report = {}
    return {
        "args": args,
        "faults": faults,
        "rc": proc.returncode,
        "loadavg_1min_before": load,
        "wall_s": round(wall, 2),
        "verdict": report.get("verdict"),
        "diagnosis": report.get("diagnosis"),
        "timing": report.get("timing"),
        "journal": str(out / "results.jsonl"),
    }


def _records(journal: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(journal).read_text().splitlines() if line]


def hang_figures(journal: str, baseline: Path) -> dict[str, Any]:
    """The slowest calls of a clean run against each case's recorded p99."""
    p99 = {k: c.get("call_p99_s") for k, c in json.loads(baseline.read_text())["cases"].items()}
    slowest: dict[tuple[str, bool], float] = {}
    for r in _records(journal):
        if r.get("type") == "call" and isinstance(r.get("dur"), (int, float)):
            key = (r["case"], r["phase"] in ONE_THREAD)
            slowest[key] = max(slowest.get(key, 0.0), r["dur"])
    small = FLOOR_S / FACTOR
    out: dict[str, Any] = {"calls": sum(1 for r in _records(journal) if r.get("type") == "call")}
    for one_thread, name in ((False, "concurrent"), (True, "one_thread")):
        ms = {
            c: d for (c, o), d in slowest.items() if o == one_thread and (p99.get(c) or 1) < small
        }
        worst = max(ms, key=ms.__getitem__, default=None)
        out[f"slowest_ms_case_{name}_s"] = round(ms[worst], 3) if worst else None
        out[f"slowest_ms_case_{name}"] = worst
    ratios = {c: d / p99[c] for (c, _), d in slowest.items() if p99.get(c) and p99[c] >= small}
    top = sorted(ratios.items(), key=lambda kv: -kv[1])[:3]
    out["slow_cases_max_ratio_to_p99"] = [{"case": c, "ratio": round(r, 1)} for c, r in top]
    return out


def recycle_step(journal: str) -> dict[str, Any] | None:
    for r in _records(journal):
        if r.get("type") == "phase-end" and r.get("variant") == "allocator=recycle":
            return {"phase": r["phase"], "seconds": r["seconds"], "calls": r["calls"]}
    return None


def record_baseline(faults: str) -> None:
    """The fault's own baseline (``baselines/<stems>.sim-<fault>.json``), recorded untimed."""
    env = {**os.environ, "ACLSIM_FAULTS": faults}
    cmd = [CLI, "baseline", "record", *CORPUS_ARGS]
    subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, check=True, timeout=600)


def bench_stream(seeds: int) -> list[dict[str, Any]]:
    rows = []
    for faults in ("", "shared-scratch", "scratch-pool"):
        if faults:
            record_baseline(faults)
        for seed in range(1, seeds + 1):
            order = ("shared", "both") if seed % 2 else ("both", "shared")
            for policy in order:
                args = ["--stream", policy, "--budget", "14", "--seed", str(seed)]
                row = run_cli(args, faults)
                rows.append({"stream": policy, "seed": seed, **row})
                print(json.dumps({k: rows[-1][k] for k in ("stream", "faults", "wall_s")}))
    return rows


def _without_journals(value: Any) -> Any:
    """The result without the runs' temporary journal paths (gone once the run is read)."""
    if isinstance(value, dict):
        return {k: _without_journals(v) for k, v in value.items() if k != "journal"}
    if isinstance(value, list):
        return [_without_journals(v) for v in value]
    return value


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--only", default="hang,stream,allocator")
    ap.add_argument("--label", default="")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/policies.json")
    args = ap.parse_args()
    state = machine_state(args.label)
    baseline = ROOT / "baselines" / "control+mhc+mul+softmax.sim.json"
    if not baseline.exists():
        record_baseline("")
    result: dict[str, Any] = {"corpus": CORPUS, "baseline": str(baseline.relative_to(ROOT))}
    only = set(args.only.split(","))
    if "hang" in only:
        row = run_cli(["--stream", "both", "--budget", "20", "--seed", "1"])
        result["hang"] = {**row, **hang_figures(row["journal"], baseline)}
    if "stream" in only:
        result["stream"] = bench_stream(args.seeds)
    if "allocator" in only:
        rows = []
        for policy in ("both", "fresh"):
            row = run_cli(["--stream", "both", "--budget", "14", "--allocator", policy])
            rows.append({"allocator": policy, **row, "recycle_step": recycle_step(row["journal"])})
        result["allocator"] = rows
    result = {**with_end_load(state), **_without_journals(result)}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
