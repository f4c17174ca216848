"""One timed run of each side of benchmarks/detection.py, each a process from exec.

Both sides are timed the same way, as a user at a terminal sees them: the benchmark takes
``time.monotonic()`` just before it starts the process (``exec``) and passes it in
``BENCH_EXEC_T0``; the process's output is read line by line as it comes (``PYTHONUNBUFFERED``:
a pipe is then as prompt as a terminal), and the time to detect is when the process's first
failure line arrived, on the same CLOCK_MONOTONIC:

* the framework: ``aclnn-stress run ...`` prints ``first failure: <x> s after the start, ...``
  where its start is ``Session.run`` (after the interpreter start, the imports and the argument
  parsing); that line's arrival is the "from exec" figure, <x> the "in-process" one;
* the naive harness (benchmarks/naive_harness.py) prints ``naive: first failure <x> s after
  exec (<y> s after the harness start)``: the arrival is the "from exec" figure (<x>, its own
  clock against the same stamp, is kept as a cross-check), <y> the "in-process" one. A crash
  kills it before it can print: then the time its output ended (its death) is the figure.

The framework's first command is ``aclnn-stress baseline record`` (a user must record before
``run`` can compare). For a fault that command already finds (order-dependence: a case differs
in another case's recycled memory from its recording at fresh addresses) it exits 1 with the
finding ``aclnn-stress: <diagnosis>: case ...`` and writes no baseline: that line's arrival
from exec is the framework's time to detect, and the command has no in-process clock. The naive
harness then gets the baseline a naive user records, serially with no order check
(benchmarks/naive_baseline.py, not timed).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from stress.journal.results import read_results
from stress.vocabulary import is_failure

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "stress"]
NAIVE = [sys.executable, str(Path(__file__).with_name("naive_harness.py"))]
NAIVE_BASELINE = [sys.executable, str(Path(__file__).with_name("naive_baseline.py"))]
#: a finding ``baseline record`` exits 1 with: ``aclnn-stress: <diagnosis>: case <id> ...``
_RECORD_FINDING = re.compile(r"^aclnn-stress: ([a-z]+(?:-[a-z]+)*): case (\S+)")
_FW_FIRST = re.compile(r"first failure: ([0-9.]+) s after the start, case (\S+) in (\w+)")
_NAIVE_FIRST = re.compile(
    r"naive: first failure ([0-9.]+) s after exec \(([0-9.]+) s after the harness start\), "
    r"case (\S+): (.*?)(?: \[after \d+ calls\])?$"
)


@dataclass(frozen=True)
class Timed:
    """A finished process: its lines with their arrival (seconds from exec), exit status, wall."""

    lines: tuple[tuple[float, str], ...]
    returncode: int
    wall_s: float
    timed_out: bool

    def first(self, pattern: re.Pattern[str]) -> tuple[float, re.Match[str]] | None:
        for at, line in self.lines:
            m = pattern.search(line)
            if m:
                return at, m
        return None


def timed_process(cmd: list[str], env: dict[str, str], timeout: float) -> Timed:
    """Run ``cmd`` from exec, stamping each output line as it arrives (see the module doc)."""
    t0 = time.monotonic()
    full_env = {**os.environ, **env, "PYTHONUNBUFFERED": "1", "BENCH_EXEC_T0": repr(t0)}
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        bufsize=1,
    )
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    lines: list[tuple[float, str]] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.monotonic() - t0, line.rstrip("\n")))
        proc.wait()
    finally:
        timer.cancel()
    wall = time.monotonic() - t0
    return Timed(tuple(lines), proc.returncode, round(wall, 3), killed.is_set())


def _broken(what: str, run: Timed) -> str:
    """The one-line error for a side that did not run (exit status and its last output)."""
    tail = " | ".join(line for _, line in run.lines[-3:])
    state = "timed out" if run.timed_out else f"exit {run.returncode}"
    return f"detection: {what} did not run ({state}): {tail}"


def _journal_first(out: Path) -> tuple[str | None, float | None]:
    """The first failing call record's phase, and its in-process time (Session.run based)."""
    if not (out / "results.jsonl").exists():
        return None, None
    for rec in read_results(out):
        if rec.get("type") == "call" and not rec.get("warmup") and is_failure(rec):
            return rec.get("phase"), rec.get("elapsed")
    return None, None


def _report(out: Path) -> dict:
    import json

    try:
        return json.loads((out / "report.json").read_text())
    except (OSError, ValueError):
        return {}


def _corpus_args(corpus: list[str], control: list[str]) -> list[str]:
    return [a for c in corpus for a in ("--corpus", c)] + ["--control", control[0]]


def record_run(
    fault: str, corpus: list[str], control: list[str], out: Path, args: tuple[str, ...] = ()
) -> dict:
    """``aclnn-stress baseline record`` from exec: the baseline written, or the finding line;
    ``args``: the variants the fault needs (twins have baseline entries of their own)."""
    cmd = [*CLI, "baseline", "record", *_corpus_args(corpus, control), *args, "--out", str(out)]
    run = timed_process(cmd, {"ACLSIM_FAULTS": fault}, timeout=900)
    finding = run.first(_RECORD_FINDING)
    if run.returncode == 0 and out.exists():
        return {"found": False, "exit": 0, "wall_s": run.wall_s}
    if run.returncode != 1 or finding is None or finding[1].group(1) == "error":
        raise SystemExit(_broken("aclnn-stress baseline record", run))
    return {
        "found": True,
        "diagnosis": finding[1].group(1),
        "exit": run.returncode,
        "wall_s": run.wall_s,
        "first_failure_exec_s": round(finding[0], 3),
        "first_failure_inprocess_s": None,
        "first_failure_phase": "baseline record",
        "case": finding[1].group(2),
    }


def naive_baseline(fault: str, corpus: list[str], out: Path) -> float:
    """The naive side's own serial baseline (no order check); its wall seconds."""
    cmd = [*NAIVE_BASELINE, *[a for c in corpus for a in ("--corpus", c)], "--out", str(out)]
    run = timed_process(cmd, {"ACLSIM_FAULTS": fault}, timeout=900)
    if run.returncode != 0:
        raise SystemExit(_broken("the naive baseline", run))
    return run.wall_s


def framework_run(
    fault: str,
    seed: int,
    corpus: list[str],
    control: list[str],
    baseline: Path,
    out: Path,
    duration: float,
    run_args: tuple[str, ...] = (),
) -> dict:
    """``aclnn-stress run`` (both stream policies, fail-fast) against ``baseline``; ``run_args``:
    the flags the fault needs (its ``Fault.run_args``)."""
    cmd = [*CLI, "run", "--stream", "both", "--duration", str(duration), "--seed", str(seed)]
    cmd += [*_corpus_args(corpus, control), *run_args]
    cmd += ["--baseline", str(baseline), "--shrink-budget", "0", "--out", str(out)]
    run = timed_process(cmd, {"ACLSIM_FAULTS": fault}, timeout=900)
    report = _report(out)
    if "diagnosis" not in report:  # the CLI itself failed: a broken benchmark, not a finding
        raise SystemExit(_broken("aclnn-stress run", run))
    diagnosis = report["diagnosis"]
    first = run.first(_FW_FIRST)
    phase, journal_s = _journal_first(out)
    return {
        "diagnosis": diagnosis,
        "exit": run.returncode,
        "wall_s": run.wall_s,
        "first_failure_exec_s": round(first[0], 3) if first else None,
        "first_failure_inprocess_s": float(first[1].group(1)) if first else journal_s,
        "first_failure_phase": phase or (first[1].group(3) if first else None),
        "diagnosis_inprocess_s": (report.get("timing") or {}).get("diagnosis_s"),
    }


def gradcheck_run(fault: str, args: list[str]) -> dict:
    """``aclnn-stress gradcheck`` with the declaration's own [gradcheck] case and sample
    (deterministic: one input set), timed from exec to its exit (the verdict comes last)."""
    run = timed_process([*CLI, "gradcheck", *args], {"ACLSIM_FAULTS": fault}, timeout=900)
    if run.returncode not in (0, 1):
        raise SystemExit(_broken("aclnn-stress gradcheck", run))
    return {
        "command": "aclnn-stress gradcheck " + " ".join(args),
        "exit": run.returncode,
        "biased": run.returncode == 1,
        "wall_s": run.wall_s,
        "summary": [line for _, line in run.lines if "biased" in line][:3],
    }


def naive_run(
    fault: str,
    seed: int,
    corpus: list[str],
    baseline: Path,
    budget: float,
    stream: str,
    call_timeout: float,
) -> dict:
    """The naive harness for ``budget`` seconds under one stream policy."""
    cmd = [*NAIVE, *[a for c in corpus for a in ("--corpus", c)], "--baseline", str(baseline)]
    cmd += ["--duration", f"{budget:.1f}", "--seed", str(seed), "--stream", stream]
    cmd += ["--call-timeout", f"{call_timeout:g}"]
    run = timed_process(cmd, {"ACLSIM_FAULTS": fault}, timeout=budget + call_timeout + 120)
    first = run.first(_NAIVE_FIRST)
    crashed = run.returncode < 0  # killed by a signal (the simulated crash: SIGSEGV)
    if run.timed_out or (first is None and run.returncode > 0):
        raise SystemExit(_broken("the naive harness", run))
    result = {
        "stream": stream,
        "exit": run.returncode,
        "wall_s": run.wall_s,
        "detected": first is not None or crashed,
        "first_failure_exec_s": round(first[0], 3) if first else (run.wall_s if crashed else None),
        "own_clock_exec_s": float(first[1].group(1)) if first else None,
        "first_failure_inprocess_s": float(first[1].group(2)) if first else None,
        "why": first[1].group(4)
        if first
        else (f"crashed (exit {run.returncode})" if crashed else None),
    }
    if crashed and run.lines:
        result["last_lines"] = [line for _, line in run.lines[-3:]]
    return result
