"""False positives with every variant on: `aclnn-stress run --variants all --record-baseline`
over each shipped corpus (corpus/*.toml, corpus/pool/*.toml, corpus/ops/*.toml) on the clean
simulator, over seeds, with a short budget. The run's defaults put every API mode and both
allocators on too (`--modes all --allocator both`), so one sweep is the clean check of issue 28
(every variant) and issue 29 (every mode).

Each run is one of: clean; a **false positive** (a finding: any diagnosis but clean and
incomplete, or a non-zero exit that is not an incomplete run); or **incomplete** (the run ended
before every phase made calls and found nothing in what it ran: not a finding, but not a clean
run either; counted apart). Writes benchmarks/results/variants_clean.json after every corpus
(machine state from machine.py).

    .venv/bin/python benchmarks/bench_variants_clean.py --seeds 10 --budget 6 --label idle
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_state, with_end_load

ROOT = Path(__file__).resolve().parent.parent
CLI = str(Path(sys.executable).parent / "aclnn-stress")


def shipped() -> list[str]:
    out: list[str] = []
    for pattern in ("corpus/*.toml", "corpus/pool/*.toml", "corpus/ops/*.toml"):
        out += sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(pattern))
    return [p for p in out if not p.endswith("control.toml")]


def run_one(corpus: str, seed: int, budget: float) -> dict[str, object]:
    cmd = [CLI, "run", "--corpus", corpus, "--variants", "all", "--record-baseline"]
    cmd += ["--budget", str(budget), "--seed", str(seed)]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("diagnosis:")]
    diagnosis = lines[-1].removeprefix("diagnosis: ") if lines else proc.stderr.strip()[-200:]
    clean = proc.returncode == 0 and diagnosis.startswith("clean")
    incomplete = not clean and diagnosis.startswith("incomplete")
    wall = round(time.monotonic() - start, 1)
    return {
        "seed": seed,
        "rc": proc.returncode,
        "clean": clean,
        "incomplete": incomplete,
        "false_positive": not clean and not incomplete,
        "diagnosis": diagnosis,
        "s": wall,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budget", type=float, default=10.0)
    ap.add_argument("--corpus", action="append", help="only these corpora (default: all shipped)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/variants_clean.json"))
    ap.add_argument("--note", default="", help="what else ran, e.g. 'loaded: 2 cores shared'")
    ap.add_argument("--label", default="", help='machine state label, e.g. "idle"')
    args = ap.parse_args()
    machine = machine_state(args.label)
    rows: list[dict[str, object]] = []
    for corpus in args.corpus or shipped():
        runs = [run_one(corpus, seed, args.budget) for seed in range(1, args.seeds + 1)]
        fp = sum(bool(r["false_positive"]) for r in runs)
        incomplete = sum(bool(r["incomplete"]) for r in runs)
        rows.append(
            {
                "corpus": corpus,
                "seeds": len(runs),
                "false_positives": fp,
                "incomplete": incomplete,
                "runs": runs,
            }
        )
        print(f"{corpus}: {fp}/{len(runs)} false positives, {incomplete} incomplete", flush=True)
        command = f"aclnn-stress run --variants all --record-baseline --budget {args.budget}"
        write_sweep(args.out, command, args.note, machine, rows)
    return 0 if all(r["false_positives"] == 0 for r in rows) else 1


def write_sweep(
    out: str, command: str, note: str, machine: dict[str, object], rows: list[dict[str, object]]
) -> None:
    """A clean sweep's result file (this one's and bench_modes_clean's): the run's command, the
    machine state with its load at the end, and the rows so far."""
    result = {
        "command": f"{command} --seed N --corpus C",
        "note": note,
        "cpus": os.cpu_count(),
        "machine": with_end_load(machine),
        "rows": rows,
    }
    Path(out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
