"""Detection power: does the framework find each simulated fault, how fast, with the right name?

For every fault of the simulator (``ACLSIM_FAULTS``) and for the clean simulator, over several
seeds with a fixed time budget per run:

* the framework: ``aclnn-stress run`` (every phase, both stream policies, phases in supervised
  children) against a baseline recorded on the same faulty backend, serially — as a user with
  that library would record it. Detected = diagnosis is not ``clean``; correct = the diagnosis
  is the one the fault should produce; time to detect = seconds from the start of the run to the
  first failing call record (a crash or hang counts when its phase ends).
  ``grad-drift`` and ``softmax-grad-tail`` are numeric faults: the stress run must stay clean
  and ``aclnn-stress gradcheck`` (on the mHC pair, on the declared softmax pair) must report
  ``biased``;
* the naive harness of the problem report (T threads, one context and stream, random cases,
  sha256 against the serial baseline, no barrier, no stage interleaving, stops at the first
  mismatch), with the same total time budget.

Writes ``benchmarks/results/detection.json`` and ``.md`` (the README shows the table) after
every fault; rows of faults not measured in this run are kept, so ``--faults`` fills in gaps.

    .venv/bin/python benchmarks/detection.py [--seeds 10] [--faults tiling-race,...]
        [--phase-duration 3] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stress.config import RunConfig
from stress.engine.isolation.supervise import run_child
from stress.engine.run.session import Session
from stress.journal.results import read_results
from stress.sim.faults import FAULTS
from stress.vocabulary import is_failure

# the run's expected diagnosis per fault (grad-drift: the stress protocol stays clean,
# gradcheck must say biased), and the clean simulator
EXPECTED = {name: fault.expected for name, fault in FAULTS.items()} | {"": "clean"}
# corpus/pool: two non-mHC operators whose outputs share one key of nnopbase's staging pool, so
# that the corpus meets `scratch-pool` too (the mHC operators do not use that pool)
CORPUS = ["corpus/mhc.toml", "corpus/pool/mul.toml", "corpus/pool/softmax.toml"]
CONTROL = ["corpus/control.toml"]
GRADCHECK_ELEMENTS = ["bias[8]", "bias[12]", "bias[23]", "phi[12,2048]", "phi[23,4095]"]
#: the gradcheck that should say ``biased`` under each numeric fault
GRADCHECK_ARGS = {
    "grad-drift": ["--fd", "reference", *[a for e in GRADCHECK_ELEMENTS for a in ("--element", e)]],
    "softmax-grad-tail": ["--op", "corpus/ops/softmax_backward.toml", "--sample", "4"],
}


def _first_failure(out: Path) -> tuple[float | None, str | None]:
    """Seconds from the run's start to its first failing call record, and that record's phase."""
    for rec in read_results(out):
        if rec.get("type") == "call" and not rec.get("warmup") and is_failure(rec):
            return rec.get("elapsed"), rec.get("phase")
    return None, None


def framework_run(fault: str, seed: int, baseline: Path, work: Path, duration: float) -> dict:
    env = {"ACLSIM_FAULTS": fault}
    config = RunConfig(seed=seed, streams=("shared", "per-thread"), duration=duration)
    out = work / f"run-{fault or 'clean'}-{seed}"
    started = time.monotonic()
    session = Session(
        config, CORPUS, CONTROL, baseline_path=baseline, out_dir=out, shrink_budget=0, env=env
    )
    os.environ["ACLSIM_FAULTS"] = fault  # the parent never loads the backend, but be explicit
    try:
        report = session.run().to_json()
    finally:
        os.environ.pop("ACLSIM_FAULTS", None)
    total = time.monotonic() - started
    diagnosis = report["diagnosis"]
    first_s, first_phase = _first_failure(out)
    result = {
        "diagnosis": diagnosis,
        "seconds": round(total, 1),
        "first_failure_s": first_s,
        "first_failure_phase": first_phase,
        "diagnosis_s": (report.get("timing") or {}).get("diagnosis_s"),
    }
    if fault in GRADCHECK_ARGS:
        t0 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "stress", "gradcheck", *GRADCHECK_ARGS[fault]],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=600,
        )
        result["gradcheck_exit"] = proc.returncode
        result["gradcheck_s"] = round(time.monotonic() - t0, 1)
        result["detected"] = proc.returncode == 1
        result["correct"] = proc.returncode == 1 and diagnosis == "clean"
        result["time_to_detect"] = result["gradcheck_s"]
    else:
        result["detected"] = diagnosis != "clean"
        result["correct"] = diagnosis == EXPECTED[fault]
        result["time_to_detect"] = first_s if result["detected"] else None
    return result


NAIVE = [sys.executable, str(Path(__file__).with_name("naive_harness.py"))]


def naive_run(fault: str, seed: int, baseline: Path, budget: float) -> dict:
    env = {"ACLSIM_FAULTS": fault}
    first: list[float] = []
    started = time.monotonic()

    def on_record(rec: dict) -> None:
        if rec.get("type") == "call" and not first:
            first.append(time.monotonic() - started)

    job = {
        "backend": "sim",
        "corpus": CORPUS,
        "baseline": str(baseline),
        "threads": 8,
        "duration": budget,
        "seed": seed,
    }
    # the naive harness reports only a mismatch, so it is silent for its whole budget when it
    # finds nothing: only silence past the budget (plus the framework's call timeout) is a hang
    silence = budget + RunConfig().call_timeout
    child = run_child(job, on_record, silence_timeout=silence, env=env, command=NAIVE)
    elapsed = time.monotonic() - started
    detected = bool(first) or child.status in ("crashed", "hung")
    when = first[0] if first else (elapsed if detected else None)
    return {
        "detected": detected,
        "time_to_detect": round(when, 2) if when else None,
        "status": child.status,
        "calls": child.end.get("calls"),
    }


def record_baseline(fault: str, path: Path) -> None:
    config = RunConfig(seed=0)
    Session(config, CORPUS, CONTROL, env={"ACLSIM_FAULTS": fault}).record_baseline(path)


def _median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 1) if values else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--faults", default=",".join(FAULTS))
    ap.add_argument(
        "--phase-duration",
        type=float,
        default=3.0,
        help="seconds per concurrent phase of the framework run (default 3)",
    )
    ap.add_argument(
        "--naive-budget",
        type=float,
        default=None,
        help="naive harness time budget (default: the framework's median run time)",
    )
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument(
        "--render-only",
        action="store_true",
        help="only re-render detection.md from the existing detection.json",
    )
    args = ap.parse_args()
    if args.render_only:
        print(_write(Path(args.out), []), end="")
        return 0
    faults = [f.strip() for f in args.faults.split(",") if f.strip()] + [""]
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    text = ""
    with tempfile.TemporaryDirectory(prefix="detect-") as tmp:
        work = Path(tmp)
        for fault in faults:
            name = fault or "(clean)"
            baseline = work / f"baseline-{fault or 'clean'}.json"
            record_baseline(fault, baseline)
            fw = []
            for seed in range(1, args.seeds + 1):
                r = framework_run(fault, seed, baseline, work, args.phase_duration)
                fw.append(r)
                print(
                    f"{name:15} seed {seed:2} framework: {r['diagnosis']:25} "
                    f"detect {r['time_to_detect']} s ({r['first_failure_phase']})  "
                    f"total {r['seconds']} s",
                    flush=True,
                )
            budget = args.naive_budget or _median([r["seconds"] for r in fw]) or 30.0
            nv = []
            for seed in range(1, args.seeds + 1):
                r = naive_run(fault, seed, baseline, budget)
                nv.append(r)
                print(
                    f"{name:15} seed {seed:2} naive:     detected={r['detected']} "
                    f"at {r['time_to_detect']} s ({r['status']})",
                    flush=True,
                )
            row = {
                "fault": name,
                "expected": EXPECTED[fault]
                + (" + gradcheck biased" if fault in GRADCHECK_ARGS else ""),
                "seeds": args.seeds,
                "framework_detected": sum(r["detected"] for r in fw),
                "framework_correct": sum(r["correct"] for r in fw),
                "framework_median_ttd_s": _median([r["time_to_detect"] for r in fw]),
                "framework_median_run_s": _median([r["seconds"] for r in fw]),
                "framework_median_diagnosis_s": _median(
                    [r.get("diagnosis_s") for r in fw if r["correct"]]
                ),
                "naive_detected": sum(r["detected"] for r in nv),
                "naive_median_ttd_s": _median([r["time_to_detect"] for r in nv]),
                "naive_budget_s": round(budget, 1),
                "framework_runs": fw,
                "naive_runs": nv,
            }
            if fault == "":
                row["framework_false_positives"] = sum(r["detected"] for r in fw)
                row["naive_false_positives"] = sum(r["detected"] for r in nv)
            rows.append(row)
            text = _write(out_dir, rows)
    print(text, end="")
    return 0


def _write(out_dir: Path, rows: list[dict]) -> str:
    """Write the JSON and the Markdown table, keeping rows of faults this run did not measure.

    Called after every fault, so an interrupted benchmark keeps what it measured and a later
    ``--faults`` run fills in the rest.
    """
    path = out_dir / "detection.json"
    fresh = {r["fault"] for r in rows}
    kept: list[dict] = []
    if path.exists():
        try:
            kept = [r for r in json.loads(path.read_text()) if r.get("fault") not in fresh]
        except (json.JSONDecodeError, AttributeError, TypeError):
            kept = []
    order = [f or "(clean)" for f in EXPECTED]
    merged = sorted(
        kept + rows, key=lambda r: order.index(r["fault"]) if r["fault"] in order else len(order)
    )
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(merged, indent=1) + "\n")
    os.replace(tmp, path)
    md = [
        "| fault | expected diagnosis | framework detected | diagnosis correct | "
        "median time to detect | median time to diagnosis | found first by | naive detected | "
        "naive median time | first detection ratio |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for r in merged:
        n = r["seeds"]
        md.append(
            f"| {r['fault']} | {r['expected']} | {r['framework_detected']}/{n} | "
            f"{r['framework_correct']}/{n} | {_fmt(r['framework_median_ttd_s'])} | "
            f"{_fmt(r.get('framework_median_diagnosis_s'))} | {_phases(r)} | "
            f"{r['naive_detected']}/{n} | {_fmt(r['naive_median_ttd_s'])} | {_ratio(r)} |"
        )
    text = "\n".join(md) + "\n"
    (out_dir / "detection.md").write_text(text)
    return text


def _phases(row: dict) -> str:
    """The phases whose records failed first, most frequent first (e.g. ``interleaved 10``)."""
    if row["fault"] in GRADCHECK_ARGS:
        return "gradcheck"
    counts = Counter(
        r.get("first_failure_phase") for r in row.get("framework_runs", []) if r.get("detected")
    )
    counts.pop(None, None)
    return ", ".join(f"{p} {n}" for p, n in counts.most_common()) or "—"


def _ratio(row: dict) -> str:
    """Framework / naive median time to the first failing call, from the unrounded runs (where
    the naive harness found the fault at all; the issue's target is <= 1.0)."""
    if row["fault"] in GRADCHECK_ARGS:
        return "—"
    fw = [r["time_to_detect"] for r in row.get("framework_runs", []) if r.get("time_to_detect")]
    nv = [r["time_to_detect"] for r in row.get("naive_runs", []) if r.get("time_to_detect")]
    if not fw or not nv:
        return "—"
    return f"{statistics.median(fw) / statistics.median(nv):.2f}"


def _fmt(v) -> str:
    return "—" if v is None else f"{v:.1f} s"


if __name__ == "__main__":
    sys.exit(main())
