"""Detection power: does the framework find each simulated fault, how fast, with the right name,
and does a competent naive harness find it too?

For every fault of the simulator (``ACLSIM_FAULTS``) and for the clean simulator, over several
seeds, each side started as a process from exec as a user would start it (benchmarks/
detect_runs.py says how each is timed):

* the framework: ``aclnn-stress run --stream both`` (fail-fast, 3 s concurrent phases) over
  corpus/mhc.toml and corpus/pool with corpus/control.toml as the control, against a baseline
  recorded on the same faulty backend (as a user with that library would record it).
  Detected = diagnosis not ``clean``; correct = the diagnosis the fault should produce.
  ``grad-drift`` and ``softmax-grad-tail`` are numeric: the stress run must stay clean, and
  ``aclnn-stress gradcheck`` with the declaration's own [gradcheck] case (deterministic: one
  input set, run once per fault, not per seed) must say ``biased``;
* the naive harness (benchmarks/naive_harness.py): the same corpus *with* the control cases,
  the same baseline, sha256/tolerance and canary per call, a call watchdog at the framework's
  timeout, 8 threads, run once per stream policy (shared, per-thread) with the framework's
  median wall time as its budget.

Writes ``benchmarks/results/detection.json`` (machine state, command, every run) and
``detection.md`` (the README's table) after every fault; rows of faults not measured in this
run are kept (same method only), so ``--faults`` fills in gaps.

    .venv/bin/python benchmarks/detection.py --seeds 10 --label idle  # README's table, 1-1.5 h
    .venv/bin/python benchmarks/detection.py --seeds 1 --faults tiling-race,crash   # a smoke
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from detect_runs import framework_run, gradcheck_run, naive_run
from detect_table import METHOD, render, write_results
from machine import machine_state, with_end_load

from stress.config import RunConfig
from stress.engine.run.session import Session
from stress.sim.faults import FAULTS

EXPECTED = {name: fault.expected for name, fault in FAULTS.items()} | {"": "clean"}
CORPUS = ["corpus/mhc.toml", "corpus/pool/mul.toml", "corpus/pool/softmax.toml"]
CONTROL = ["corpus/control.toml"]
#: a fault in an operator the standard corpus does not call: that operator's shipped corpus too
FAULT_CORPUS = {"dirty-accumulator": ["corpus/ops/layer_norm.toml"]}
STREAMS = ("shared", "per-thread")
#: the gradcheck that should say ``biased`` under each numeric fault: the declaration's own
#: [gradcheck] case and element sample (no elements chosen for the fault)
GRADCHECK_ARGS = {
    "grad-drift": [],
    "softmax-grad-tail": ["--op", "corpus/ops/softmax_backward.toml"],
}


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


def startup(run: dict) -> float | None:
    """Seconds from exec to ``Session.run`` in one framework run: its first failure from exec
    minus the same failure in-process (None when it found nothing)."""
    a, b = run.get("first_failure_exec_s"), run.get("first_failure_inprocess_s")
    return None if a is None or b is None else round(a - b, 3)


def corpus_of(fault: str) -> list[str]:
    """The corpus a fault is measured on: the standard one, plus its operator's if needed."""
    return [*CORPUS, *FAULT_CORPUS.get(fault, [])]


def record_baseline(fault: str, path: Path) -> None:
    """The serial baseline on the faulty backend (setup: not timed)."""
    session = Session(RunConfig(seed=0), corpus_of(fault), CONTROL, env={"ACLSIM_FAULTS": fault})
    session.record_baseline(path)


def measure_fault(fault: str, seeds: int, work: Path, args: argparse.Namespace) -> dict:
    """Every run of one fault: framework per seed, naive per seed and stream policy."""
    name = fault or "(clean)"
    baseline = work / f"baseline-{fault or 'clean'}.json"
    record_baseline(fault, baseline)
    fw = []
    for seed in range(1, seeds + 1):
        out = work / f"run-{fault or 'clean'}-{seed}"
        r = framework_run(
            fault, seed, corpus_of(fault), CONTROL, baseline, out, args.phase_duration
        )
        r["detected"] = r["diagnosis"] != "clean"
        r["correct"] = r["diagnosis"] == EXPECTED[fault]
        r["startup_s"] = startup(r)
        fw.append(r)
        print(
            f"{name:17} seed {seed:2} framework: {r['diagnosis']:25} first failure "
            f"{r['first_failure_exec_s']} s from exec ({r['first_failure_inprocess_s']} s "
            f"in-process, {r['first_failure_phase']}), wall {r['wall_s']} s",
            flush=True,
        )
    gradcheck = gradcheck_run(fault, GRADCHECK_ARGS[fault]) if fault in GRADCHECK_ARGS else None
    if gradcheck:
        print(f"{name:17} gradcheck: biased={gradcheck['biased']} {gradcheck['wall_s']} s")
    budget = args.naive_budget or _median([r["wall_s"] for r in fw]) or 30.0
    naive: dict[str, list[dict]] = {s: [] for s in STREAMS}
    for stream in STREAMS:
        for seed in range(1, seeds + 1):
            r = naive_run(
                fault, seed, [*corpus_of(fault), *CONTROL], baseline, budget, stream, 10.0
            )
            naive[stream].append(r)
            print(
                f"{name:17} seed {seed:2} naive {stream:10}: detected={r['detected']} "
                f"at {r['first_failure_exec_s']} s from exec ({r['why']})",
                flush=True,
            )
    return {
        "fault": name,
        "expected": EXPECTED[fault] + (" + gradcheck biased" if gradcheck else ""),
        "seeds": seeds,
        "framework_detected": sum(r["detected"] for r in fw),
        "framework_correct": sum(r["correct"] for r in fw)
        if not gradcheck
        else sum(r["diagnosis"] == "clean" for r in fw),
        "framework_median_exec_s": _median([r["first_failure_exec_s"] for r in fw]),
        "framework_median_inprocess_s": _median([r["first_failure_inprocess_s"] for r in fw]),
        "framework_median_startup_s": _median([r["startup_s"] for r in fw]),
        "framework_median_wall_s": _median([r["wall_s"] for r in fw]),
        "framework_median_diagnosis_inprocess_s": _median(
            [r["diagnosis_inprocess_s"] for r in fw if r["correct"]]
        ),
        "gradcheck": gradcheck,
        "naive_budget_s": round(budget, 1),
        **{f"naive_{s}_detected": sum(r["detected"] for r in naive[s]) for s in STREAMS},
        **{
            f"naive_{s}_median_exec_s": _median([r["first_failure_exec_s"] for r in naive[s]])
            for s in STREAMS
        },
        **{
            f"naive_{s}_median_inprocess_s": _median(
                [r["first_failure_inprocess_s"] for r in naive[s]]
            )
            for s in STREAMS
        },
        "framework_runs": fw,
        "naive_runs": naive,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--faults", default=",".join(FAULTS), help="comma-separated (default all)")
    ap.add_argument("--no-clean", action="store_true", help="skip the clean simulator's row")
    ap.add_argument("--phase-duration", type=float, default=3.0, help="default 3 s")
    ap.add_argument(
        "--naive-budget", type=float, default=None, help="default: framework's median wall"
    )
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--label", default="", help='machine state label, e.g. "idle"')
    ap.add_argument(
        "--render-only", action="store_true", help="only re-render detection.md from the json"
    )
    args = ap.parse_args()
    if args.render_only:
        doc = json.loads((Path(args.out) / "detection.json").read_text())
        text = render(doc["rows"], doc["machine"])
        (Path(args.out) / "detection.md").write_text(text)
        print(text, end="")
        return 0
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = sorted(set(faults) - set(FAULTS))
    if unknown or args.seeds < 1:
        ap.error(
            f"unknown fault(s) {unknown}; known: {', '.join(FAULTS)}" if unknown else "--seeds >= 1"
        )
    faults += [] if args.no_clean else [""]
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    state = machine_state(args.label)
    rows: list[dict] = []
    text = ""
    with tempfile.TemporaryDirectory(prefix="detect-") as tmp:
        for fault in faults:
            rows.append(measure_fault(fault, args.seeds, Path(tmp), args))
            text = write_results(out_dir, rows, with_end_load(state), list(EXPECTED))
    print(text, end="")
    print(f"(method: {METHOD})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
