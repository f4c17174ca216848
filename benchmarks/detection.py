"""Detection power: does the framework find each simulated fault, how fast, with the right name,
and does a competent naive harness find it too?

For every fault of the simulator (``ACLSIM_FAULTS``) and for the clean simulator, over several
seeds, each side started as a process from exec as a user would start it (benchmarks/
detect_runs.py says how each is timed). What a fault needs beyond the standard corpus
(corpus/mhc.toml, corpus/pool; corpus/control.toml as the control) comes from its record in
stress/sim/faults.py: ``Fault.corpus`` (its operator's shipped corpus), ``Fault.run_args``
(flags for ``aclnn-stress run``), ``Fault.variants`` (``--variants`` for ``baseline record``
and the run alike: twins need baseline entries), ``Fault.gradcheck`` (a numeric fault's
gradcheck), ``Fault.generate`` (``--generated COUNT``: the fault's operator corpus drawn by
``aclnn-stress corpus generate`` in place of its shipped one): a new fault needs no edit here.

* the framework: first ``aclnn-stress baseline record`` on the faulty backend, as a user with
  that library would record it. When that command already finds the fault (exit 1,
  ``order-dependence: case ...``: stale-tail, weight-cache) it is the framework's whole run:
  detected at baseline record, timed from its exec to that line, ``--record-runs`` times (it
  takes no seed). Otherwise the baseline is setup (not timed) and ``aclnn-stress run --stream
  both`` (fail-fast; 3 s concurrent phases, or ``--budget``) runs per seed against it.
  Detected = diagnosis not ``clean``; correct = the diagnosis the fault should produce
  (``Fault.expected``). A numeric fault (``grad-drift``, ``softmax-grad-tail``): the stress
  run must stay clean, and ``aclnn-stress gradcheck`` with the declaration's own [gradcheck]
  case (deterministic: one input set, run once per fault, not per seed) must say ``biased``;
* the naive harness (benchmarks/naive_harness.py): the same corpus *with* the control cases,
  the same baseline (or, when baseline record refused to write one, the serial baseline a naive
  user records without an order check: benchmarks/naive_baseline.py, not timed), sha256/
  tolerance and canary per call, a call watchdog at the framework's timeout, 8 threads, run per
  seed and stream policy (shared, per-thread) with the framework's median wall time as budget.

Fewer seeds where nothing is expected to be found, stated in the table: ``--naive-seeds N``
(the naive harness on the clean row and the numeric faults: its false-positive check) and
``--numeric-seeds N`` (the framework's stress runs under a numeric fault, which must stay
clean). The clean row's framework runs always take ``--seeds``. Timing stays serial: one
process at a time, no parallel jobs.

``--budget S`` passes ``--budget`` to ``aclnn-stress run`` (it overrides ``--phase-duration``):
without it the interleaved phase runs every pair of the corpus with its variants (77 cases:
~5 900 pairs per stream policy), so a run that finds nothing is bounded only by the corpus (a
loaded smoke was still in it after 9 min); with it a clean run takes about the budget.

Run time (estimate for the idle 2-core machine, from the idle in-process table of 2026-12-04
and the loaded smokes; the loaded machine takes several times as long): per seed a detecting
row costs ~15 s (framework ~7 s wall, naive ~4 s per stream policy), ``hang`` ~36 s, the clean
row with ``--budget 20`` ~70 s (framework ~23 s, naive the same budget under two policies), a
numeric row the same; each row's baseline record ~7 s, a fault found at baseline record ~90 s
in all. With 16 faults, ``--seeds 10 --budget 20`` alone ~70 min; with ``--naive-seeds 3
--numeric-seeds 3`` (make bench-detect) ~52 min; with the framework's diagnosis within 2 s of
the first failure (issue 31) ~45 min. Each row prints its own wall and the running total, so
the first rows tell how the estimate holds.

Writes ``benchmarks/results/detection.json`` (machine state, command, every run) and
``detection.md`` (the README's table; ``--name`` another stem) after every fault; rows of
faults not measured in this run are kept (same method only), so ``--faults`` fills in gaps.

    .venv/bin/python benchmarks/detection.py --seeds 10 --naive-seeds 3 --numeric-seeds 3 \
        --budget 20 --label idle                       # the README table (make bench-detect)
    .venv/bin/python benchmarks/detection.py --seeds 1 --faults tiling-race,crash   # a smoke
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from detect_runs import CLI, framework_run, gradcheck_run, naive_baseline, naive_run, record_run
from detect_table import METHOD, render, write_results
from machine import machine_state, precompile, with_end_load

from stress.sim.faults import FAULTS

EXPECTED = {name: fault.expected for name, fault in FAULTS.items()} | {"": "clean"}
CORPUS = ["corpus/mhc.toml", "corpus/pool/mul.toml", "corpus/pool/softmax.toml"]
CONTROL = ["corpus/control.toml"]
STREAMS = ("shared", "per-thread")


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


def startup(run: dict) -> float | None:
    """Seconds from exec to ``Session.run`` in one framework run: its first failure from exec
    minus the same failure in-process (None when it found nothing)."""
    a, b = run.get("first_failure_exec_s"), run.get("first_failure_inprocess_s")
    return None if a is None or b is None else round(a - b, 3)


#: fault -> the corpus ``--generated`` drew for it (``Fault.generate``), standing in for the
#: shipped file ``Fault.generated_for``
GENERATED: dict[str, str] = {}


def corpus_of(fault: str) -> list[str]:
    """The corpus a fault is measured on: the standard one, plus what its ``Fault.corpus``
    names (its operator's shipped corpus when the standard one does not call it); under
    ``--generated`` the generated corpus in place of the operator's shipped one."""
    files = [*CORPUS, *(FAULTS[fault].corpus if fault else ())]
    if fault in GENERATED:
        files = [GENERATED[fault] if f == FAULTS[fault].generated_for else f for f in files]
    return files


def variants_of(fault: str) -> tuple[str, ...]:
    """``--variants`` for ``baseline record`` and ``run`` alike, when the fault needs more than
    the default (``Fault.variants``: twins need baseline entries of their own)."""
    v = FAULTS[fault].variants if fault else ""
    return ("--variants", v) if v else ()


def generate_corpora(faults: list[str], count: int, seed: int, work: Path) -> None:
    """``aclnn-stress corpus generate`` for each fault's operator (``Fault.generate``), into
    :data:`GENERATED`."""
    for fault in faults:
        out = work / f"generated-{fault}.toml"
        cmd = [*CLI, "corpus", "generate", *FAULTS[fault].generate, "--count", str(count)]
        cmd += ["--seed", str(seed), "--out", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"detection: {fault}: corpus generate failed: {proc.stderr[-500:]}")
        GENERATED[fault] = str(out)


def gradcheck_of(fault: str) -> list[str] | None:
    """The gradcheck arguments of a numeric fault (its ``Fault.gradcheck``), else None."""
    args = FAULTS[fault].gradcheck if fault else None
    return None if args is None else list(args)


def _framework(fault: str, seeds: int, work: Path, baseline: Path, args) -> list[dict]:
    """``aclnn-stress run`` per seed against the recorded baseline."""
    name, fw = fault or "(clean)", []
    for seed in range(1, seeds + 1):
        out = work / f"run-{fault or 'clean'}-{seed}"
        run_args = (*(FAULTS[fault].run_args if fault else ()), *variants_of(fault))
        run_args += _budget_args(args)
        r = framework_run(
            fault, seed, corpus_of(fault), CONTROL, baseline, out, args.phase_duration, run_args
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
    return fw


def _budget_args(args: argparse.Namespace) -> tuple[str, ...]:
    """``--budget S`` for ``aclnn-stress run`` (it overrides ``--duration``), when given."""
    return ("--budget", f"{args.budget:g}") if args.budget else ()


def _at_record(fault: str, first: dict, runs: int, work: Path) -> list[dict]:
    """A fault ``baseline record`` finds: that command, ``runs`` times (it takes no seed: the
    repeats time it, they cannot find anything new), is the framework's whole run."""
    fw = [first]
    for i in range(2, runs + 1):
        again = work / f"again-{fault}-{i}.json"
        r = record_run(fault, corpus_of(fault), CONTROL, again, variants_of(fault))
        if not r["found"]:
            raise SystemExit(f"detection: {fault}: baseline record found it once, not run {i}")
        fw.append(r)
    for i, r in enumerate(fw, 1):
        r["detected"] = True
        r["correct"] = r["diagnosis"] == EXPECTED[fault]
        r["startup_s"] = None
        print(
            f"{fault:17} record {i:2} framework: {r['diagnosis']:25} at baseline record, "
            f"{r['first_failure_exec_s']} s from exec (case {r['case']}), wall {r['wall_s']} s",
            flush=True,
        )
    return fw


def _naive(fault: str, seeds: int, baseline: Path, budget: float) -> dict[str, list[dict]]:
    name = fault or "(clean)"
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
    return naive


def measure_fault(fault: str, seeds: int, work: Path, args: argparse.Namespace) -> dict:
    """Every run of one fault: the baseline record (the user's first command), then the
    framework per seed and the naive harness per seed and stream policy."""
    name = fault or "(clean)"
    baseline = work / f"baseline-{fault or 'clean'}.json"
    first = record_run(fault, corpus_of(fault), CONTROL, baseline, variants_of(fault))
    gc_args = gradcheck_of(fault)
    quiet = gc_args is not None or not fault  # rows where no detection is expected
    naive_seeds = (args.naive_seeds or seeds) if quiet else seeds
    naive_baseline_s = None
    if first["found"]:
        fw = _at_record(fault, first, args.record_runs, work)
        naive_baseline_s = naive_baseline(fault, [*corpus_of(fault), *CONTROL], baseline)
    else:
        fw_seeds = (args.numeric_seeds or seeds) if gc_args is not None else seeds
        fw = _framework(fault, fw_seeds, work, baseline, args)
    gradcheck = gradcheck_run(fault, gc_args) if gc_args is not None else None
    if gradcheck:
        print(f"{name:17} gradcheck: biased={gradcheck['biased']} {gradcheck['wall_s']} s")
    budget = args.naive_budget or _median([r["wall_s"] for r in fw]) or 30.0
    naive = _naive(fault, naive_seeds, baseline, budget)
    return _row(fault, fw, gradcheck, budget, naive, naive_seeds, naive_baseline_s)


def _row(fault, fw, gradcheck, budget, naive, naive_seeds, naive_baseline_s) -> dict:
    at_record = bool(fw and fw[0].get("first_failure_phase") == "baseline record")
    return {
        "fault": fault or "(clean)",
        "expected": EXPECTED[fault] + (" + gradcheck biased" if gradcheck else ""),
        "seeds": len(fw),
        "found_at": "baseline record" if at_record else None,
        "framework_detected": sum(r["detected"] for r in fw),
        "framework_correct": sum(r["correct"] for r in fw)
        if not gradcheck
        else sum(r["diagnosis"] == "clean" for r in fw),
        "framework_median_exec_s": _median([r["first_failure_exec_s"] for r in fw]),
        "framework_median_inprocess_s": _median([r["first_failure_inprocess_s"] for r in fw]),
        "framework_median_startup_s": _median([r["startup_s"] for r in fw]),
        "framework_median_wall_s": _median([r["wall_s"] for r in fw]),
        "framework_median_diagnosis_inprocess_s": _median(
            [r.get("diagnosis_inprocess_s") for r in fw if r["correct"]]
        ),
        "gradcheck": gradcheck,
        "naive_seeds": naive_seeds,
        "naive_baseline_s": naive_baseline_s,
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
        "--budget",
        type=float,
        default=None,
        help="pass --budget S to aclnn-stress run (overrides --phase-duration): without it the "
        "interleaved phase runs every pair of the corpus with its variants, which bounds the "
        "rows that find nothing only by the corpus",
    )
    ap.add_argument(
        "--naive-budget", type=float, default=None, help="default: framework's median wall"
    )
    ap.add_argument(
        "--naive-seeds",
        type=int,
        default=0,
        help="seeds of the naive harness on the rows where nothing is expected to be found "
        "(the clean row, the numeric faults): its false-positive check (default --seeds)",
    )
    ap.add_argument(
        "--numeric-seeds",
        type=int,
        default=0,
        help="seeds of the framework's stress run under a numeric fault (it must stay clean; "
        "the finding is the one deterministic gradcheck) (default --seeds)",
    )
    ap.add_argument(
        "--record-runs",
        type=int,
        default=3,
        help="times a fault that baseline record finds is recorded (it takes no seed) (3)",
    )
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument(
        "--name",
        default="detection",
        help="results file stem: OUT/NAME.json and NAME.md (default detection, the README's)",
    )
    ap.add_argument(
        "--generated",
        type=int,
        default=0,
        metavar="COUNT",
        help="measure each fault on COUNT cases `aclnn-stress corpus generate` draws for its "
        "operator (its Fault.generate) in place of the operator's shipped corpus; only faults "
        "with a generate record",
    )
    ap.add_argument("--generated-seed", type=int, default=0, help="corpus generate's --seed")
    ap.add_argument("--label", default="", help='machine state label, e.g. "idle"')
    ap.add_argument(
        "--render-only", action="store_true", help="only re-render detection.md from the json"
    )
    args = ap.parse_args()
    if args.render_only:
        doc = json.loads((Path(args.out) / f"{args.name}.json").read_text())
        text = render(doc["rows"], doc["machine"])
        (Path(args.out) / f"{args.name}.md").write_text(text)
        print(text, end="")
        return 0
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = sorted(set(faults) - set(FAULTS))
    if (
        unknown
        or min(args.seeds, args.record_runs) < 1
        or min(args.naive_seeds, args.numeric_seeds) < 0
    ):
        ap.error(
            f"unknown fault(s) {unknown}; known: {', '.join(FAULTS)}"
            if unknown
            else "--seeds and --record-runs >= 1, --naive-seeds and --numeric-seeds >= 0"
        )
    no_generate = [f for f in faults if args.generated and not FAULTS[f].generate]
    if args.generated < 0 or no_generate:
        ap.error(
            f"--generated: no Fault.generate record for {', '.join(no_generate)}"
            if no_generate
            else "--generated COUNT >= 0"
        )
    faults += [] if args.no_clean else [""]
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    state = {**machine_state(args.label), **precompile()}  # both sides read bytecode
    rows: list[dict] = []
    text = ""
    with tempfile.TemporaryDirectory(prefix="detect-") as tmp:
        started = time.monotonic()
        if args.generated:
            generate_corpora(
                [f for f in faults if f], args.generated, args.generated_seed, Path(tmp)
            )
        for fault in faults:
            t0 = time.monotonic()
            rows.append(measure_fault(fault, args.seeds, Path(tmp), args))
            rows[-1]["row_wall_s"] = round(time.monotonic() - t0, 1)
            text = write_results(out_dir, rows, with_end_load(state), list(EXPECTED), args.name)
            print(
                f"{fault or '(clean)'}: row {rows[-1]['row_wall_s']} s, "
                f"total {time.monotonic() - started:.0f} s",
                flush=True,
            )
    print(text, end="")
    print(f"(method: {METHOD})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
