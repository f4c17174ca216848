"""Diagnosis after detection: how long after its first failing call does a run's final
diagnosis stand, and where does that time go?

Issue 31's target: ``timing.diagnosis_s - timing.first_detection_s`` (report.json) <= 2 s on
every simulated fault but hang. Each run is the detection benchmark's framework run
(benchmarks/detect_runs.py): ``aclnn-stress run --stream both --duration 3`` (fail-fast; with
``--budget S`` as the detection table runs it, ``--budget 20``) over corpus/mhc.toml and
corpus/pool (and the fault's own corpus, ``Fault.corpus``, with its ``Fault.run_args``) with
corpus/control.toml as the control, against a baseline
recorded on the same faulty backend, started as a process. Beside report.json's timing, each
run keeps the steps that ran after the burst (from the journal: phase, variant, seconds, calls,
status) and when the console printed its ``first failure:`` and ``fail-fast:`` lines (seconds
from exec).

``--tree NAME=DIR`` (repeatable) compares source trees fairly on a loaded machine: every run
is ``python -m stress ...`` with ``PYTHONPATH=DIR`` from an empty folder, the trees taking
turns seed by seed, so a change of load falls on all of them alike (an older tree: ``git
archive REV stress | tar -x -C DIR``). Writes ``--json`` after every run.

    .venv/bin/python benchmarks/bench_diagnosis.py --seeds 2 --tree before=/tmp/old --tree after=.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_state, with_end_load

from stress.config import RunConfig
from stress.engine.run.session import Session
from stress.sim.faults import FAULTS

REPO = Path(__file__).resolve().parents[1]
CORPUS = ["corpus/mhc.toml", "corpus/pool/mul.toml", "corpus/pool/softmax.toml"]
CONTROL = ["corpus/control.toml"]
#: the faults issue 31 names (every fault the stress run diagnoses, but hang)
DEFAULT_FAULTS = (
    "tiling-race,tiling-ring,shared-scratch,stale-tail,scratch-pool,empty-skip,add-race,"
    "crash,view-staging,dirty-accumulator,executor-reuse"
)
TARGET_S = 2.0


def _abs(paths: list[str]) -> list[str]:
    return [str(REPO / p) for p in paths]


def corpus_of(fault: str) -> list[str]:
    """The detection benchmark's corpus for ``fault``: the standard one and its ``Fault.corpus``."""
    return _abs([*CORPUS, *FAULTS[fault].corpus])


def record_baseline(fault: str, path: Path) -> None:
    """The serial baseline on the faulty backend (setup: not timed)."""
    session = Session(
        RunConfig(seed=0), corpus_of(fault), _abs(CONTROL), env={"ACLSIM_FAULTS": fault}
    )
    session.record_baseline(path)


def _timed(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[list[tuple[float, str]], int]:
    """Run ``cmd``; its output lines with their arrival (seconds from exec), its exit status."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env={**os.environ, **env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    assert proc.stdout is not None
    lines = [(round(time.monotonic() - t0, 3), line.rstrip("\n")) for line in proc.stdout]
    return lines, proc.wait(timeout=900)


def _arrival(lines: list[tuple[float, str]], prefix: str) -> float | None:
    return next((at for at, line in lines if line.startswith(prefix)), None)


def _steps(out: Path) -> list[dict]:
    """The journal's phase-end records after the burst."""
    steps = []
    for line in (out / "results.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec.get("type") == "phase-end" and rec.get("phase") != "burst":
            steps.append(
                {
                    "step": f"{rec['phase']} {rec.get('variant', '')}".strip(),
                    "seconds": rec.get("seconds"),
                    "calls": rec.get("calls"),
                    "status": rec.get("status"),
                }
            )
    return steps


def one_run(
    fault: str, seed: int, tree: Path, baseline: Path, work: Path, dur: float, budget: float
) -> dict:
    out = work / f"run-{fault}-{seed}-{tree.name or 'tree'}-{time.monotonic_ns()}"
    cmd = [sys.executable, "-m", "stress", "run", "--stream", "both", "--duration", str(dur)]
    cmd += [*FAULTS[fault].run_args, *(["--budget", f"{budget:g}"] if budget else [])]
    cmd += ["--seed", str(seed), "--baseline", str(baseline), "--shrink-budget", "0"]
    cmd += [a for c in corpus_of(fault) for a in ("--corpus", c)]
    cmd += ["--control", _abs(CONTROL)[0], "--out", str(out)]
    env = {"ACLSIM_FAULTS": fault, "PYTHONPATH": str(tree)}
    load = os.getloadavg()[0]
    lines, code = _timed(cmd, env, cwd=str(work))
    try:
        report = json.loads((out / "report.json").read_text())
    except (OSError, ValueError):
        tail = " | ".join(line for _, line in lines[-3:])
        raise SystemExit(f"bench_diagnosis: the run did not report (exit {code}): {tail}") from None
    timing = report.get("timing") or {}
    first, diag = timing.get("first_detection_s"), timing.get("diagnosis_s")
    return {
        "fault": fault,
        "seed": seed,
        "diagnosis": report["diagnosis"],
        "correct": report["diagnosis"] == FAULTS[fault].expected,
        "exit": code,
        "first_detection_s": first,
        "diagnosis_s": diag,
        "gap_s": round(diag - first, 3) if first is not None and diag is not None else None,
        "console_first_failure_s": _arrival(lines, "first failure:"),
        "console_settled_s": _arrival(lines, "fail-fast:"),
        "wall_s": lines[-1][0] if lines else None,
        "load_1min": round(load, 2),
        "steps": _steps(out),
    }


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


def summary(runs: list[dict], trees: list[str]) -> list[dict]:
    """Per fault and tree: the median gap, the diagnoses and how many were right, and what the
    steps after the burst did (the median of their count and of their calls: the work, which
    a change of load does not move)."""
    rows = []
    for fault in dict.fromkeys(r["fault"] for r in runs):
        row: dict = {"fault": fault, "expected": str(FAULTS[fault].expected)}
        for tree in trees:
            mine = [r for r in runs if r["fault"] == fault and r["tree"] == tree]
            row[f"{tree}_median_gap_s"] = _median([r["gap_s"] for r in mine])
            row[f"{tree}_diagnoses"] = [r["diagnosis"] for r in mine]
            row[f"{tree}_correct"] = f"{sum(r['correct'] for r in mine)}/{len(mine)}"
            row[f"{tree}_median_steps"] = _median([len(r["steps"]) for r in mine])
            calls = [sum(s["calls"] or 0 for s in r["steps"]) for r in mine]
            row[f"{tree}_median_step_calls"] = _median(calls)
            row[f"{tree}_median_load"] = _median([r["load_1min"] for r in mine])
        rows.append(row)
    return rows


def _g(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


def render(result: dict) -> str:
    """The result as a Markdown table: per fault, each tree's median gap (diagnosis - first
    detection), correct diagnoses, steps after the burst and their calls, load."""
    trees = list(result["trees"])
    head = ["fault", "expected"] + [
        f"{t}: {k}" for t in trees for k in ("gap", "correct", "steps", "calls", "load")
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in summary(result["runs"], trees):
        cells = [row["fault"], row["expected"]]
        for t in trees:
            gap = row[f"{t}_median_gap_s"]
            cells += [
                "—" if gap is None else f"{gap:.1f} s",
                row[f"{t}_correct"],
                *(_g(row[f"{t}_median_{k}"]) for k in ("steps", "step_calls", "load")),
            ]
        lines.append("| " + " | ".join(cells) + " |")
    m = result["machine"]
    lines += [
        "",
        f"({result.get('label') or 'unlabelled'}; {m.get('date')}; nproc {m.get('nproc')}; "
        f"load average {m.get('loadavg_start')} at the start, {m.get('loadavg_end')} at the "
        f"end; `{m.get('command')}`; commit {m.get('commit')}; medians over the seeds; gap: "
        "report.json timing.diagnosis_s - timing.first_detection_s; steps and calls: the "
        "journal's steps after the burst)",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--faults", default=DEFAULT_FAULTS)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--seed-list", default="", help="comma-separated seeds (instead of 1..--seeds)")
    ap.add_argument("--tree", action="append", default=[], help="NAME=DIR (repeatable)")
    ap.add_argument("--phase-duration", type=float, default=3.0)
    ap.add_argument("--budget", type=float, default=0.0, help="--budget S (detection: 20)")
    ap.add_argument("--json", default=str(REPO / "benchmarks/results/diagnosis.json"))
    ap.add_argument("--label", default="")
    ap.add_argument("--render", metavar="JSON", help="only write JSON's Markdown table (.md)")
    args = ap.parse_args()
    if args.render:
        result = json.loads(Path(args.render).read_text())
        Path(args.render).with_suffix(".md").write_text(render(result))
        return 0
    trees = dict(t.split("=", 1) for t in args.tree) or {"current": str(REPO)}
    state = machine_state()
    work = Path(tempfile.mkdtemp(prefix="bench-diagnosis-"))
    runs: list[dict] = []
    for fault in args.faults.split(","):
        baseline = work / f"baseline-{fault}.json"
        record_baseline(fault, baseline)
        seeds = [int(x) for x in args.seed_list.split(",")] if args.seed_list else None
        for seed in seeds or range(1, args.seeds + 1):
            for name, tree in trees.items():
                got = one_run(
                    fault, seed, Path(tree), baseline, work, args.phase_duration, args.budget
                )
                r = {"tree": name, **got}
                runs.append(r)
                print(
                    f"{fault:17} seed {seed} {name:8} {r['diagnosis']:25} first "
                    f"{r['first_detection_s']} s, diagnosis {r['diagnosis_s']} s, gap "
                    f"{r['gap_s']} s (load {r['load_1min']})",
                    flush=True,
                )
                result = {
                    "label": args.label,
                    "target_gap_s": TARGET_S,
                    "machine": with_end_load(state),
                    "trees": trees,
                    "summary": summary(runs, list(trees)),
                    "runs": runs,
                }
                Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
                Path(args.json).with_suffix(".md").write_text(render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
