"""benchmarks/results/detection.json and detection.md: the merged rows and the README's table.

The columns, as :data:`COLUMNS` prints them under the table (and the README's prose states):
*from exec* on both sides the same stopwatch, *in-process* each process's own clock, the ratio
framework / naive from exec per stream policy of the naive harness.
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

#: the measurement method; rows of a result file with another method are not merged
METHOD = (
    "processes from exec, first-failure line arrival (detect_runs.py); baseline record is the "
    "first command"
)

#: what each timing column measures, printed under the table
COLUMNS = (
    "**from exec**: seconds from the benchmark's `time.monotonic()` stamp taken just before it "
    "starts the process to the arrival, on that process's unbuffered output, of its first "
    "failure line: for the framework `first failure: ...` from `aclnn-stress run`, or for a "
    "fault found while recording the baseline (found first by `baseline record`) the "
    "`aclnn-stress: order-dependence: case ...` line of `aclnn-stress baseline record`, the "
    "user's first command; for the naive harness `naive: first failure ...` (a harness killed "
    "by the crash: the end of its output). Interpreter start and imports are included on both "
    "sides. For a numeric fault the framework's figure is `aclnn-stress gradcheck` from exec to "
    "its exit (the verdict is its last line). **in-process**: what each process's own clock "
    "says from its own start: the framework from `Session.run` (after the interpreter start, "
    "the imports, the argument parsing and the corpus load, while the first step's child sets "
    "itself up: docs/startup.md; `baseline record` prints no such clock: —), the "
    "naive harness from its first line after its imports. **ratio**: framework / naive median "
    "from exec, per stream policy of the naive harness."
)

#: why the naive harness cannot see a fault, printed beside a fault it missed in every run
MISS_REASON = {
    "grad-drift": "numeric: a baseline recorded on the same library agrees; only a "
    "finite-difference gradient check sees it",
    "softmax-grad-tail": "numeric: a baseline recorded on the same library agrees; only a "
    "finite-difference gradient check sees it",
    "view-staging": "only non-contiguous inputs are staged: the corpus as written has none "
    "(the framework's view variants make them; `--variants none` leaves the framework clean too)",
}


def _load_kept(path: Path, fresh: set[str]) -> list[dict]:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    if not isinstance(doc, dict) or doc.get("method") != METHOD:
        return []
    return [r for r in doc.get("rows", []) if isinstance(r, dict) and r.get("fault") not in fresh]


def write_results(
    out_dir: Path, rows: list[dict], state: dict, order: list[str], name: str = "detection"
) -> str:
    """Write NAME.json (rows of this run and kept ones) and NAME.md; return the md."""
    path = out_dir / f"{name}.json"
    kept = _load_kept(path, {r["fault"] for r in rows})
    names = [f or "(clean)" for f in order]
    merged = sorted(
        kept + rows, key=lambda r: names.index(r["fault"]) if r["fault"] in names else len(names)
    )
    doc = {"method": METHOD, "machine": state, "kept_rows_from_earlier_runs": len(kept)}
    doc["rows"] = merged
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)
    text = render(merged, state)
    (out_dir / f"{name}.md").write_text(text)
    return text


def render(rows: list[dict], state: dict) -> str:
    md = [
        "| fault | expected diagnosis | framework detected | diagnosis correct | "
        "framework from exec | naive detected (shared / per-thread) | "
        "naive from exec (shared / per-thread) | ratio from exec (shared / per-thread) | "
        "in-process: framework / naive (shared / per-thread) | found first by |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        md.append(_row(r))
    load = state.get("loadavg_start"), state.get("loadavg_end")
    md.append("")
    md.append(
        f"({state.get('label') or 'machine state not labelled'}; {state.get('date')}; "
        f"nproc {state.get('nproc')}; load average {load[0]} at the start, {load[1]} at the "
        f"end; `{state.get('command')}`; commit {state.get('commit')}; medians over the runs "
        "that detected; —: no run did)"
    )
    md.append("")
    md.append(COLUMNS)
    md.extend(_notes(rows))
    startups = [
        f"{r['fault']} {r['framework_median_startup_s']:.2f} s"
        for r in rows
        if r.get("framework_median_startup_s") is not None
    ]
    if startups:
        md.append("")
        md.append(
            "Framework start-up before `Session.run` (from exec minus in-process, median per "
            "fault): " + ", ".join(startups) + "."
        )
    misses = [r for r in rows if _naive_missed(r)]
    if misses:
        md.append("")
        md.append("Missed by the naive harness in every run, under both stream policies:")
        for r in misses:
            reason = MISS_REASON.get(
                r["fault"], f"not seen within its budget of {r.get('naive_budget_s')} s"
            )
            md.append(f"- {r['fault']}: {reason}")
    partial = [r for r in rows if _one_policy(r)]
    if partial:
        md.append("")
        md.append("Found by the naive harness under one stream policy only:")
        for r in partial:
            md.append(f"- {r['fault']}: only with {_one_policy(r)} streams")
    return "\n".join(md) + "\n"


def _notes(rows: list[dict]) -> list[str]:
    """What differs per row: fewer naive seeds, a baseline the naive side recorded itself."""
    out = []
    fewer = [
        r for r in rows if not r.get("found_at") and r.get("naive_seeds", r["seeds"]) != r["seeds"]
    ]
    if fewer:
        out += ["", "Seeds of the naive harness where nothing is expected to be found "
                "(its false-positive check, `--naive-seeds`): " + ", ".join(
                    f"{r['fault']} {r['naive_seeds']} (framework {r['seeds']})" for r in fewer
                ) + "."]  # fmt: skip
    own = [r for r in rows if r.get("naive_baseline_s") is not None]
    if own:
        out += ["", "Found at `baseline record`, so no baseline was written for the naive "
                "harness: it checks against the baseline a naive user records, every case "
                "serially at fresh addresses with no order check "
                "(benchmarks/naive_baseline.py; not timed): " + ", ".join(
                    f"{r['fault']} {r['naive_baseline_s']:.1f} s" for r in own
                ) + "."]  # fmt: skip
    return out


def _one_policy(row: dict) -> str:
    """The one stream policy under which the naive harness found the fault, or ""."""
    found = [s for s in ("shared", "per-thread") if row.get(f"naive_{s}_detected")]
    return found[0] if len(found) == 1 and row["fault"] != "(clean)" else ""


def _naive_missed(row: dict) -> bool:
    return row["fault"] != "(clean)" and not any(
        row.get(f"naive_{s}_detected") for s in ("shared", "per-thread")
    )


def _row(r: dict) -> str:
    n, nn = r["seeds"], r.get("naive_seeds", r["seeds"])
    gc = r.get("gradcheck")
    if gc:
        detected = (
            f"{'biased' if gc['biased'] else 'NOT biased'} (deterministic check, one input set)"
        )
        correct = f"stress run clean {r['framework_correct']}/{n}"
        fw_exec = f"{gc['wall_s']:.1f} s (gradcheck exit)"
        first_by = "gradcheck"
    else:
        detected = f"{r['framework_detected']}/{n}"
        if r.get("found_at"):
            detected += f" (at {r['found_at']}: no seed, {n} runs)"
        correct = f"{r['framework_correct']}/{n}"
        fw_exec = _fmt(r.get("framework_median_exec_s"))
        first_by = _phases(r)
    naive_det = (
        f"{r.get('naive_shared_detected', 0)}/{nn} / {r.get('naive_per-thread_detected', 0)}/{nn}"
    )
    naive_exec = (
        f"{_fmt(r.get('naive_shared_median_exec_s'))} / "
        f"{_fmt(r.get('naive_per-thread_median_exec_s'))}"
    )
    ratio = "—" if gc else f"{_ratio(r, 'shared')} / {_ratio(r, 'per-thread')}"
    inproc = (
        f"{_fmt(r.get('framework_median_inprocess_s'))} / "
        f"{_fmt(r.get('naive_shared_median_inprocess_s'))} / "
        f"{_fmt(r.get('naive_per-thread_median_inprocess_s'))}"
    )
    return (
        f"| {r['fault']} | {r['expected']} | {detected} | {correct} | {fw_exec} | {naive_det} | "
        f"{naive_exec} | {ratio} | {inproc} | {first_by} |"
    )


def _phases(row: dict) -> str:
    counts: dict[str, int] = {}
    for run in row.get("framework_runs", []):
        phase = run.get("first_failure_phase")
        if run.get("detected") and phase:
            counts[phase] = counts.get(phase, 0) + 1
    return ", ".join(f"{p} {k}" for p, k in sorted(counts.items(), key=lambda x: -x[1])) or "—"


def _ratio(row: dict, stream: str) -> str:
    """Framework / naive median from exec, from the unrounded runs that detected."""
    fw = [r["first_failure_exec_s"] for r in row.get("framework_runs", [])]
    nv = [r["first_failure_exec_s"] for r in row.get("naive_runs", {}).get(stream, [])]
    fw = [v for v in fw if v is not None]
    nv = [v for v in nv if v is not None]
    if not fw or not nv:
        return "—"
    return f"{statistics.median(fw) / statistics.median(nv):.2f}"


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f} s"
