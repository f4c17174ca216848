"""Merging the stress runs of every pytest(-xdist) worker into one summary.

Each worker appends one JSON line per stress run to ``<--stress-out>/<worker>/runs.jsonl`` (its
own file: no two processes write one file). At the end of the session the controller reads them
all and writes ``<--stress-out>/summary.json``, ``summary.md`` and ``summary.html`` (linking each
run's ``report.html``): every run with its test id,
worker, device, diagnosis and per-phase verdicts, the device each worker was bound to, and the
overall verdict. Each run's own ``results.jsonl``/``report.md`` stay in its directory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stress.files import atomic_write_bytes
from stress.vocabulary import Diagnosis, RunVerdict, schema

__all__ = ["SUMMARY_SCHEMA", "merge_runs", "render_summary_markdown"]

SUMMARY_SCHEMA = schema("pytest-summary")


def _read_runs(path: Path) -> list[dict[str, Any]]:
    runs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            runs.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a worker killed mid-line: keep what was complete
    return runs


def merge_runs(
    out_root: Path,
    bindings: Mapping[str, Mapping[str, Any]] | None = None,
    session: str | None = None,
) -> dict[str, Any] | None:
    """Merge ``out_root/*/runs.jsonl``; write ``summary.json`` and ``summary.md``.

    ``bindings`` maps a worker id to ``{"device": D, "device_count": N, "backend": ...}`` (what
    each worker reported at its end); with ``session``, only that session's runs are merged (an
    ``--stress-out`` reused by several sessions keeps every run, each summary its own).
    Returns the summary, or None when nothing ran.
    """
    runs: list[dict[str, Any]] = []
    if out_root.is_dir():
        for path in sorted(out_root.glob("*/runs.jsonl")):
            runs.extend(
                r for r in _read_runs(path) if session is None or r.get("session") == session
            )
    bindings = dict(bindings or {})
    if not runs and not bindings:
        return None
    workers: dict[str, int] = {w: int(b["device"]) for w, b in bindings.items() if "device" in b}
    for r in runs:
        workers.setdefault(r["worker"], r["device"])
    findings = [r for r in runs if r.get("diagnosis") != Diagnosis.CLEAN]
    summary = {
        "schema": SUMMARY_SCHEMA,
        "session": session,
        "out": str(out_root),
        "runs": sorted(runs, key=lambda r: (r.get("nodeid", ""), r.get("out_dir", ""))),
        "workers": dict(sorted(workers.items())),
        "devices": sorted(set(workers.values())),
        "devices_used": sorted({r["device"] for r in runs}),
        "backends": sorted({r.get("backend", "?") for r in runs}),
        "clean": len(runs) - len(findings),
        "findings": len(findings),
        "verdict": str(RunVerdict.FINDINGS if findings else RunVerdict.CLEAN),
    }
    if out_root.is_dir() or runs:
        out_root.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(
            out_root / "summary.json", (json.dumps(summary, indent=1) + "\n").encode()
        )
        atomic_write_bytes(out_root / "summary.md", render_summary_markdown(summary).encode())
        if runs:
            from stress.htmlreport import render_xdist_summary

            run_dirs = [Path(r["out_dir"]) for r in summary["runs"] if r.get("out_dir")]
            render_xdist_summary(run_dirs, out_root / "summary.html")
    return summary


def render_summary_markdown(summary: Mapping[str, Any]) -> str:
    lines = [
        "# aclnn-stress: pytest summary",
        "",
        f"Verdict: **{summary['verdict']}** — {len(summary['runs'])} stress runs, "
        f"{summary['clean']} clean, {summary['findings']} with findings.",
        "",
        "Workers and devices: "
        + (", ".join(f"`{w}` → device {d}" for w, d in summary["workers"].items()) or "none"),
        "",
        "| test | worker | device | diagnosis | phases | results |",
        "|---|---|---|---|---|---|",
    ]
    for r in summary["runs"]:
        phases = ", ".join(f"{p['phase']} {p['verdict']}" for p in r.get("phases", []))
        lines.append(
            f"| `{r.get('nodeid', '')}` | {r['worker']} | {r['device']} | {r['diagnosis']} | "
            f"{phases} | `{r.get('out_dir', '')}` |"
        )
    bad = [r for r in summary["runs"] if r.get("diagnosis") != Diagnosis.CLEAN]
    if bad:
        lines += ["", "## Findings", ""]
        for r in bad:
            lines.append(
                f"- `{r.get('nodeid', '')}` ({r['worker']}, device {r['device']}): "
                f"**{r['diagnosis']}** — {r.get('explanation', '')}"
            )
            for f in r.get("failures", [])[:8]:
                lines.append(
                    f"  - {f['phase']}: {f.get('case') or '(phase)'} {f['verdict']}"
                    + (f" — {f['detail']}" if f.get("detail") else "")
                )
    return "\n".join(lines) + "\n"
