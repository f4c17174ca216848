"""False positives with every API mode and both allocator policies on: `aclnn-stress run
--modes all --allocator both --record-baseline` over each shipped corpus (corpus/*.toml,
corpus/pool/*.toml, corpus/ops/*.toml) on the clean simulator, over seeds, with a short budget.
Writes benchmarks/results/modes_clean.json (per corpus: the runs, how many were not clean, and
how many calls each mode made: the journal's coverage.modes).

    .venv/bin/python benchmarks/bench_modes_clean.py --seeds 3 --budget 6 --note "loaded: ..."
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from bench_variants_clean import CLI, ROOT, shipped, write_sweep  # same corpora, CLI, file
from machine import machine_state


def run_one(corpus: str, seed: int, budget: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="modes-clean-") as tmp:
        cmd = [CLI, "run", "--corpus", corpus, "--modes", "all", "--allocator", "both"]
        cmd += ["--record-baseline", "--baseline", f"{tmp}/baseline.json", "--out", f"{tmp}/out"]
        cmd += ["--budget", str(budget), "--seed", str(seed)]
        start = time.monotonic()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
        wall = round(time.monotonic() - start, 1)
        report = Path(tmp, "out", "report.json")
        data = json.loads(report.read_text()) if report.is_file() else {}
        diagnosis = data.get("diagnosis") or proc.stderr.strip()[-200:]
        clean = proc.returncode == 0 and diagnosis == "clean"
        kept = None
        if not clean:  # the run's journal and reports, for a look at what failed
            kept = Path(tempfile.gettempdir(), f"modes-clean-{Path(corpus).stem}-s{seed}")
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(Path(tmp, "out"), kept, dirs_exist_ok=True)
    modes = (data.get("coverage") or {}).get("modes", {})
    return {"seed": seed, "rc": proc.returncode, "clean": clean, "diagnosis": diagnosis,
            "modes": modes, "s": wall, **({"kept": str(kept)} if kept else {})}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--budget", type=float, default=6.0)
    ap.add_argument("--corpus", action="append", help="only these corpora (default: all shipped)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/modes_clean.json"))
    ap.add_argument("--note", default="", help="machine state, e.g. 'loaded: 2 cores shared'")
    args = ap.parse_args()
    rows: list[dict[str, object]] = []
    machine = machine_state()
    for corpus in args.corpus or shipped():
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        runs = [run_one(corpus, seed, args.budget) for seed in seeds]
        fp = sum(not r["clean"] for r in runs)
        piped = sum(int(r["modes"].get("pipeline", 0)) for r in runs)  # type: ignore[union-attr]
        rows.append({"corpus": corpus, "seeds": len(runs), "false_positives": fp,
                     "pipeline_calls": piped, "runs": runs})  # fmt: skip
        print(f"{corpus}: {fp}/{len(runs)} false positives, {piped} pipeline calls", flush=True)
    command = "aclnn-stress run --modes all --allocator both --record-baseline --budget"
    write_sweep(args.out, f"{command} {args.budget}", args.note, machine, rows)
    return 0 if all(r["false_positives"] == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
