"""Rows of the hostile sweep with their own choreography: kills, signals, two runs at once,
a full disk, a closed stdout."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _hostile_proc import HUNG, REPO, Files, Outcome, cli, env_of, limited, run_args


# -- rows with their own choreography (kills, concurrency, pipes) ---------------------------------
def kill_9_then_report(f: Files) -> Outcome:
    out = f.out()
    tmp = f.root / "tmp-kill9"
    tmp.mkdir()
    args = run_args(f.baseline, out, "--phases", "isolated,mixed", "--duration", "6")
    proc = subprocess.Popen(
        [sys.executable, "-m", "stress", *args],
        cwd=REPO,
        env=env_of({}, tmp),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if not _wait_for(out / "results.jsonl", '"phase-start"', 120):
        proc.kill()
        return Outcome(proc.wait(), "", "", "no phase started in 120 s")
    time.sleep(2)
    before = (out / "results.jsonl").read_text().splitlines()
    proc.kill()
    proc.wait()
    time.sleep(1.0)
    report = cli(("report", str(out)), f.root)
    problem = ""
    kept = before if before[-1].endswith("}") else before[:-1]
    if (out / "results.jsonl").read_text().splitlines()[: len(kept)] != kept:
        problem = "journal lines written before the kill are missing"
    elif list(tmp.iterdir()):
        problem = f"temp files left: {sorted(p.name for p in tmp.iterdir())}"
    elif "incomplete" not in report.stdout + report.stderr:
        problem = "the report does not say incomplete"
    return Outcome(report.code, report.stdout, report.stderr, problem)


def _wait_for(path: Path, needle: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and needle in path.read_text(errors="replace"):
            return True
        time.sleep(0.1)
    return False


def _valid_json(path: Path) -> bool:
    try:
        json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return True


def signal_run(sig: signal.Signals, record: bool) -> Callable[[Files], Outcome]:
    def go(f: Files) -> Outcome:
        out = f.out()
        baseline = f.root / f"new-{sig.name}.json" if record else f.baseline
        # 2000 repeats: with forked phase children a short recording can end before the signal
        extra = ("--record-baseline", "--repeats", "2000") if record else ("--duration", "30")
        args = run_args(
            baseline, out, "--phases", "serial" if record else "serial,isolated", *extra
        )
        args = tuple(a for a in args if a != "--quiet")  # the "recording it now" line
        err = f.root / f"{sig.name}-{record}.err"
        proc = subprocess.Popen(
            [sys.executable, "-m", "stress", *args],
            cwd=REPO,
            env=env_of({}, f.root),
            stdout=subprocess.DEVNULL,
            stderr=err.open("wb"),
        )
        needle, where = (
            ("recording it now", err) if record else ('"phase":"isolated"', out / "results.jsonl")
        )
        if not _wait_for(where, needle, 120):
            proc.kill()
            return Outcome(proc.wait(), "", err.read_text(), f"never saw {needle!r}")
        proc.send_signal(sig)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            return Outcome(HUNG, "", err.read_text(), "still running 30 s after the signal")
        text = err.read_text(errors="replace")
        problem = ""
        if record and "baseline recorded:" in text:  # it ended before the signal came
            if not _valid_json(baseline):
                problem = "the recorded baseline is not valid JSON"
        elif record and (baseline.exists() or "not written" not in text):
            problem = "a baseline was half-kept or the line does not say so"
        if not record and not (out / "report.json").is_file():
            problem = "no partial report.json"
        return Outcome(code, "", text, problem)

    return go


def _two_at_once(one: tuple[str, ...], two: tuple[str, ...], tmp: Path) -> list[tuple[int, str]]:
    """Start both CLI calls together; each one's exit code and stderr."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "stress", *argv],
            cwd=REPO,
            env=env_of({}, tmp),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv in (one, two)
    ]
    return [(p.wait(timeout=240), p.stderr.read()) for p in procs]  # type: ignore[union-attr]


def two_runs_one_out(f: Files) -> Outcome:
    out = f.out()
    args = run_args(f.baseline, out, "--phases", "serial")
    done = _two_at_once(args, args, f.root)
    codes = sorted(c for c, _ in done)
    loser = next((e for c, e in done if c == 2), "")
    problem = "" if codes == [0, 2] and "in use by pid" in loser else f"codes {codes}"
    problem = problem or _journal_parses(out / "results.jsonl")
    return Outcome(2 if codes == [0, 2] else max(codes), "", loser, problem)


def two_recordings_one_path(f: Files) -> Outcome:
    path = f.root / "shared-baseline.json"
    one, two = (run_args(path, f.out(), "--record-baseline") for _ in range(2))
    done = _two_at_once(one, two, f.root)
    codes = sorted(c for c, _ in done)
    problem = "" if 0 in codes and set(codes) <= {0, 2} else f"codes {codes}"
    try:
        json.loads(path.read_text())
    except (OSError, ValueError) as bad:
        problem = problem or f"the baseline is not whole JSON: {bad}"
    leftovers = [p.name for p in f.root.iterdir() if p.name.startswith(".shared-baseline")]
    problem = problem or (f"temp files left: {leftovers}" if leftovers else "")
    loser = next((e for c, e in done if c == 2), "")
    return Outcome(0 if not problem else max(codes), "", loser, problem)


def _journal_parses(path: Path) -> str:
    try:
        for line in path.read_text().splitlines():
            json.loads(line)
    except (OSError, ValueError) as bad:
        return f"{path}: {bad}"
    return ""


def disk_full(f: Files) -> Outcome:
    out = f.out()
    small = ((resource.RLIMIT_FSIZE, 64 << 10),)
    args = run_args(f.baseline, out, "--phases", "serial,isolated", "--duration", "1")
    full = cli(args, f.root, preexec_fn=limited(small), timeout=180)
    again = cli(("report", str(out)), f.root)
    problem = "" if again.code in (1, 3) else f"report DIR afterwards: exit {again.code}"
    if full.code == 2 and "results.jsonl" not in full.stderr:
        problem = "the line does not name the journal"
    return Outcome(full.code, full.stdout, full.stderr, problem)


def banner_after_error(f: Files) -> Outcome:
    """Without --quiet, a bad --out is the only line: no banner printed before it."""
    args = [a for a in run_args(f.baseline, Path(f.path("afile"))) if a != "--quiet"]
    done = cli(tuple(args), f.root)
    return Outcome(done.code, done.stdout, done.stderr, "banner printed" if done.stdout else "")
