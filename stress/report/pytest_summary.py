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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stress.files import atomic_write_bytes
from stress.record_json import emit, parse
from stress.report_sections import Fingerprint
from stress.vocabulary import Diagnosis, RunVerdict, schema

__all__ = [
    "SUMMARY_SCHEMA",
    "FailureLine",
    "PhaseLine",
    "PytestSummary",
    "RunLine",
    "backend_label",
    "merge_runs",
    "render_summary_markdown",
]

SUMMARY_SCHEMA = schema("pytest-summary")


def backend_label(backend: Mapping[str, Any]) -> str:
    """``sim``, or the backend fingerprint's kind."""
    return Fingerprint.from_json(backend).family("?")


@dataclass(frozen=True)
class PhaseLine:
    """A phase of a run in the summary: its label (``phase[variant]``), verdict and calls."""

    phase: str
    verdict: str
    calls: int

    def to_json(self) -> dict[str, Any]:
        return {"phase": self.phase, "verdict": self.verdict, "calls": self.calls}


@dataclass(frozen=True)
class FailureLine:
    """A failing (phase, case) of a run in the summary (``case`` None: the whole phase)."""

    phase: str
    case: str | None
    verdict: str
    detail: str | None

    def line(self) -> str:
        return f"{self.phase}: {self.case or '(phase)'} {self.verdict}" + (
            f" — {self.detail}" if self.detail else ""
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "case": self.case,
            "verdict": self.verdict,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class RunLine:
    """One stress run inside pytest: a line of its worker's ``runs.jsonl``."""

    nodeid: str
    worker: str
    device: int
    backend: str
    seed: int | None
    out_dir: str
    diagnosis: str
    explanation: str
    verdict: str
    cases: list[str]
    phases: tuple[PhaseLine, ...]
    failures: tuple[FailureLine, ...]
    seconds: float
    session: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return self.diagnosis == Diagnosis.CLEAN

    def to_json(self) -> dict[str, Any]:
        out = emit(self, None)
        out["phases"] = [p.to_json() for p in self.phases]
        out["failures"] = [f.to_json() for f in self.failures]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunLine:
        try:
            phases = tuple(PhaseLine(**p) for p in data.get("phases", ()))
            failures = tuple(FailureLine(**f) for f in data.get("failures", ()))
        except TypeError as exc:
            raise ValueError(f"bad run line: {exc}") from None
        return parse(cls, {**data, "phases": phases, "failures": failures}, "run", {})


@dataclass(frozen=True)
class PytestSummary:
    """Every stress run of a pytest session (``summary.json``): the runs, each worker's
    device, the backends and the overall verdict."""

    session: str | None
    out: str
    runs: tuple[RunLine, ...]
    workers: Mapping[str, int]
    devices: list[int]
    devices_used: list[int]
    backends: list[str]
    clean: int
    findings: int
    verdict: str
    schema: str = SUMMARY_SCHEMA

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "session": self.session,
            "out": self.out,
            "runs": [r.to_json() for r in self.runs],
            "workers": dict(self.workers),
            "devices": self.devices,
            "devices_used": self.devices_used,
            "backends": self.backends,
            "clean": self.clean,
            "findings": self.findings,
            "verdict": self.verdict,
        }


def _read_runs(path: Path) -> list[RunLine]:
    runs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            runs.append(RunLine.from_json(json.loads(line)))
        except (json.JSONDecodeError, ValueError, AttributeError):
            continue  # a worker killed mid-line: keep what was complete
    return runs


def merge_runs(
    out_root: Path,
    bindings: Mapping[str, Mapping[str, Any]] | None = None,
    session: str | None = None,
) -> PytestSummary | None:
    """Merge ``out_root/*/runs.jsonl``; write ``summary.json`` and ``summary.md``.

    ``bindings`` maps a worker id to ``{"device": D, "device_count": N, "backend": ...}`` (what
    each worker reported at its end); with ``session``, only that session's runs are merged (an
    ``--stress-out`` reused by several sessions keeps every run, each summary its own).
    Returns the summary, or None when nothing ran.
    """
    runs: list[RunLine] = []
    if out_root.is_dir():
        for path in sorted(out_root.glob("*/runs.jsonl")):
            runs.extend(r for r in _read_runs(path) if session is None or r.session == session)
    bindings = dict(bindings or {})
    if not runs and not bindings:
        return None
    workers: dict[str, int] = {w: int(b["device"]) for w, b in bindings.items() if "device" in b}
    for r in runs:
        workers.setdefault(r.worker, r.device)
    findings = [r for r in runs if not r.clean]
    summary = PytestSummary(
        session=session,
        out=str(out_root),
        runs=tuple(sorted(runs, key=lambda r: (r.nodeid, r.out_dir))),
        workers=dict(sorted(workers.items())),
        devices=sorted(set(workers.values())),
        devices_used=sorted({r.device for r in runs}),
        backends=sorted({r.backend for r in runs}),
        clean=len(runs) - len(findings),
        findings=len(findings),
        verdict=str(RunVerdict.FINDINGS if findings else RunVerdict.CLEAN),
    )
    if out_root.is_dir() or runs:
        out_root.mkdir(parents=True, exist_ok=True)
        document = json.dumps(summary.to_json(), indent=1) + "\n"
        atomic_write_bytes(out_root / "summary.json", document.encode())
        atomic_write_bytes(out_root / "summary.md", render_summary_markdown(summary).encode())
        if runs:
            from stress.htmlreport import render_xdist_summary

            run_dirs = [Path(r.out_dir) for r in summary.runs if r.out_dir]
            render_xdist_summary(run_dirs, out_root / "summary.html")
    return summary


def render_summary_markdown(summary: PytestSummary) -> str:
    lines = [
        "# aclnn-stress: pytest summary",
        "",
        f"Verdict: **{summary.verdict}** — {len(summary.runs)} stress runs, "
        f"{summary.clean} clean, {summary.findings} with findings.",
        "",
        "Workers and devices: "
        + (", ".join(f"`{w}` → device {d}" for w, d in summary.workers.items()) or "none"),
        "",
        "| test | worker | device | diagnosis | phases | results |",
        "|---|---|---|---|---|---|",
    ]
    for r in summary.runs:
        phases = ", ".join(f"{p.phase} {p.verdict}" for p in r.phases)
        lines.append(
            f"| `{r.nodeid}` | {r.worker} | {r.device} | {r.diagnosis} | {phases} | `{r.out_dir}` |"
        )
    bad = [r for r in summary.runs if not r.clean]
    if bad:
        lines += ["", "## Findings", ""]
        for r in bad:
            lines.append(
                f"- `{r.nodeid}` ({r.worker}, device {r.device}): "
                f"**{r.diagnosis}** — {r.explanation}"
            )
            lines += [f"  - {f.line()}" for f in r.failures[:8]]
    return "\n".join(lines) + "\n"
