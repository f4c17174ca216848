"""`aclnn-stress sanitize DIR`: re-run a finished run's reproducers under the sanitizer.

Reads DIR/report.json (file formats only: no engine modules), then for the run's reproducer
(its reproducer's command, the minimal failing pair or mix) or, when there is none, for
each failing case of the phases alone (one serial call each), spawns
`python -m stress run ...` with ACLSIM_SANITIZE=initcheck,racecheck,memcheck and
ACLSIM_SANITIZE_LOG set (on the simulator), or under `mssanitizer --tool=<tool>` with its log
parsed (on a real CANN install).  Findings go to DIR/sanitize.json and DIR/sanitize.jsonl, and
report.json gains a "sanitizer" entry next to its diagnosis.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from stress.errors import ConfigError
from stress.files import atomic_write_bytes, load_json
from stress.journal.findings import TOOLS, Finding, finding_from_json, read_jsonl
from stress.records import RunReport, load_report
from stress.vocabulary import Verdict

from .hostsan import HOST_TOOLS, read_logs
from .mslog import parse_log

#: ``--tool``: the simulator's shadow-state checks (all three), or an instrumented variant.
SHADOW = "shadow"


@dataclass(frozen=True)
class Rerun:
    """One re-run: what it reproduces, the `run` arguments and the extra environment."""

    label: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class SanitizeResult:
    run_dir: Path
    reruns: tuple[Rerun, ...]
    findings: tuple[Finding, ...]
    labels: tuple[str, ...]  # the re-run each finding came from
    exit_codes: tuple[int, ...]


def _load_report(run_dir: Path) -> RunReport:
    path = run_dir / "report.json"
    if not path.is_file():
        raise ConfigError(f"{path}: no report.json; pass the --out folder of a finished run")
    return load_report(path, fix="re-render it: `aclnn-stress report`")


def _from_command(command: str) -> Rerun:
    """The reproducer's shell command: VAR=value ... aclnn-stress run ARGS."""
    words = shlex.split(command)
    env = []
    while words and "=" in words[0] and not words[0].startswith("-"):
        key, _, value = words.pop(0).partition("=")
        env.append((key, value))
    if len(words) < 2 or words[1] != "run":
        raise ConfigError(f"report.json: reproducer.command {command!r} is not an aclnn-stress run")
    return Rerun("reproducer", tuple(words[2:]), tuple(env))


def _failing_cases(report: RunReport) -> list[str]:
    ids: list[str] = []
    for phase in report.phases:
        for case in phase.cases:
            if case.verdict != Verdict.PASS and case.id not in ids:
                ids.append(case.id)
    return ids


def _case_corpus(report: RunReport, case_id: str, out: Path) -> Path | None:
    """A corpus file with just `case_id`, copied from the run's corpus files."""
    for name in report.corpus:
        path = Path(name)
        if not path.is_file():
            continue
        data = tomllib.loads(path.read_text())
        cases = [c for c in data.get("case", []) if c.get("id") == case_id]
        if cases:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(tomli_w.dumps({**data, "case": cases}))
            return out
    return None


def plan_reruns(report: RunReport, work: Path) -> list[Rerun]:
    """The reproducer, or one serial single-call run per failing case."""
    faults = ",".join(report.backend.get("faults", []) or [])
    repro = report.reproducer
    if repro is not None and repro.command:
        return [_from_command(repro.command)]
    reruns = []
    for case_id in _failing_cases(report):
        corpus = _case_corpus(report, case_id, work / f"{case_id}.toml")
        if corpus is None:
            continue
        args = ["--corpus", str(corpus), "--control", "none", "--phases", "serial",
                "--iterations", "1", "--repeats", "1", "--threads", "1"]  # fmt: skip
        if report.baseline:
            args += ["--baseline", report.baseline]
        reruns.append(Rerun(case_id, tuple(args), (("ACLSIM_FAULTS", faults),) if faults else ()))
    return reruns


def _spawn(argv: list[str], env: dict[str, str], timeout: float) -> int:
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    return proc.returncode


def _run_host_tool(rerun: Rerun, out: Path, tool: str, timeout: float) -> tuple[list[Finding], int]:
    """The re-run on the simulator's asan/tsan variant (its library hashes differ from the run's
    baseline snapshot, hence --force); the sanitizer's logs parsed into findings."""
    from stress.sim import _build, variant

    var = variant.get(tool)
    prefix = out / tool
    env = {**os.environ, **dict(rerun.env)}
    env.update(variant.runtime_env(var, _build._compiler(), str(prefix)))
    env.pop("ACLSIM_SANITIZE", None)
    argv = [
        sys.executable,
        "-m",
        "stress",
        "run",
        *rerun.args,
        "--force",
        "--out",
        str(out / "run"),
    ]
    rc = _spawn(argv, env, timeout)
    return read_logs(prefix, (str(_build.SRC_DIR),)), rc


def _run_one(
    rerun: Rerun, out: Path, on_cann: bool, timeout: float, tool: str = SHADOW
) -> tuple[list[Finding], int]:
    if tool in HOST_TOOLS:
        return _run_host_tool(rerun, out, tool, timeout)
    base = [sys.executable, "-m", "stress", "run", *rerun.args, "--out", str(out / "run")]
    env = {**os.environ, **dict(rerun.env)}
    if not on_cann:
        log = out / "aclsim.jsonl"
        env["ACLSIM_SANITIZE"] = ",".join(TOOLS)
        env["ACLSIM_SANITIZE_LOG"] = str(log)
        rc = _spawn(base, env, timeout)
        return read_jsonl(log), rc
    findings: list[Finding] = []
    rc = 0
    for tool in TOOLS:  # mssanitizer runs one tool at a time
        log = out / f"mssanitizer-{tool}.log"
        argv = ["mssanitizer", f"--tool={tool}", f"--log-file={log}"]
        base_t = [*base[:-1], str(out / f"run-{tool}")]
        rc = max(rc, _spawn([*argv, *base_t], env, timeout))
        if log.exists():
            findings += parse_log(log.read_text(errors="replace"), tool)
    return findings, rc


def _earlier(run_dir: Path, tool: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The records and re-runs of the other tools' earlier `sanitize` runs (sanitize.json), so
    a `--tool tsan` after the shadow checks adds to them instead of replacing them."""
    path = run_dir / "sanitize.json"
    if not path.is_file():
        return [], []
    fix = "remove it to start over"
    old = load_json(path, "sanitizer summary", fix=fix)
    if not isinstance(old, dict):
        raise ConfigError(f"{path}: the sanitizer summary is not a JSON object; {fix}")

    def entries(field: str) -> list[dict[str, Any]]:
        listed = old.get(field, [])
        if not isinstance(listed, list) or not all(isinstance(r, dict) for r in listed):
            raise ConfigError(f"{path}: '{field}' is not a list of objects; {fix}")
        return [r for r in listed if r.get("via", SHADOW) != tool]

    return entries("findings"), entries("reruns")


def _write(run_dir: Path, report: RunReport, result: SanitizeResult, tool: str) -> None:
    pairs = zip(result.labels, result.findings, strict=True)
    old_records, old_runs = _earlier(run_dir, tool)
    records = old_records + [f.to_json() | {"rerun": lab, "via": tool} for lab, f in pairs]
    atomic_write_bytes(
        run_dir / "sanitize.jsonl", "".join(json.dumps(r) + "\n" for r in records).encode()
    )
    every = [finding_from_json(r, "sanitize.json") for r in records]
    shown = {
        "file": "sanitize.json",
        "findings": len(records),
        "explains": str(report.diagnosis),
        "summary": sorted({f.summary() for f in every}),
    }
    report = report.replace(extra={**report.extra, "sanitizer": shown})
    summary = {
        "reruns": old_runs
        + [
            {"label": r.label, "args": list(r.args), "env": dict(r.env), "exit": rc, "via": tool}
            for r, rc in zip(result.reruns, result.exit_codes, strict=True)
        ],
        "findings": records,
        "report": shown,  # what report.json shows; re-renders keep it from here
    }
    atomic_write_bytes(run_dir / "sanitize.json", (json.dumps(summary, indent=2) + "\n").encode())
    document = json.dumps(report.to_json(), indent=1) + "\n"
    atomic_write_bytes(run_dir / "report.json", document.encode())
    if (run_dir / "report.html").is_file():  # the page lists the findings next to the diagnosis
        from stress.htmlreport import render_html

        render_html(run_dir)


def sanitize_run(run_dir: Path | str, timeout: float = 600.0, tool: str = SHADOW) -> SanitizeResult:
    """Re-run the reproducers of a finished run under the sanitizer (``tool``: the shadow-state
    checks, or the simulator's ``asan`` / ``tsan`` variant); write the findings there."""
    run_dir = Path(run_dir)
    report = _load_report(run_dir)
    on_cann = not report.backend.get("simulator", True)
    if on_cann and tool in HOST_TOOLS:
        raise ConfigError(
            f"--tool {tool}: the run was on a real CANN install; it needs the simulator"
        )
    work = run_dir / ("sanitize" if tool == SHADOW else f"sanitize-{tool}")
    if work.exists() and any(work.iterdir()):
        raise ConfigError(f"{work}: already holds a sanitizer re-run; remove it to run again")
    reruns = plan_reruns(report, work / "corpus")
    findings: list[Finding] = []
    labels: list[str] = []
    codes: list[int] = []
    for i, rerun in enumerate(reruns):
        out = work / f"{i:02d}-{rerun.label}"
        out.mkdir(parents=True, exist_ok=True)
        found, rc = _run_one(rerun, out, on_cann, timeout, tool)
        findings += found
        labels += [rerun.label] * len(found)
        codes.append(rc)
    result = SanitizeResult(run_dir, tuple(reruns), tuple(findings), tuple(labels), tuple(codes))
    _write(run_dir, report, result, tool)
    return result
