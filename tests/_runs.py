"""Real ``aclnn-stress`` processes for the kill / signal / concurrency tests: start one, wait for
its journal to reach a record, signal it, look at its children."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests._cli import REPO

ADD = "corpus/ops/add.toml"  # 5 small cases: phases of a few seconds


def stress_args(baseline: Path, out: Path, *extra: str) -> list[str]:
    """``run`` over the small add corpus, no control, no shrinking."""
    return [
        "run",
        "--corpus",
        ADD,
        "--control",
        "none",
        "--baseline",
        str(baseline),
        "--out",
        str(out),
        "--shrink-budget",
        "0",
        *extra,
    ]


def start(args: list[str], tmp: Path, name: str, **kw) -> subprocess.Popen:
    """Start the CLI (its own TMPDIR under ``tmp``; stdout/stderr to ``tmp/name.{out,err}``)."""
    (tmp / "tmpdir").mkdir(exist_ok=True)
    env = {
        **os.environ,
        "STRESS_BACKEND": "sim",
        "TMPDIR": str(tmp / "tmpdir"),
        **kw.pop("env", {}),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "stress", *args],
        cwd=REPO,
        env=env,
        stdout=open(tmp / f"{name}.out", "wb"),
        stderr=open(tmp / f"{name}.err", "wb"),
        **kw,
    )


def wait_for(path: Path, needle: str, timeout: float = 90.0) -> None:
    """Until the text file ``path`` contains ``needle``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and needle in path.read_text(errors="replace"):
            return
        time.sleep(0.1)
    raise AssertionError(f"{path} never showed {needle!r} in {timeout} s")


def children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (Linux /proc): the fork server and the phase child it forked."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except FileNotFoundError:
        return found  # it ended meanwhile
    for task in tasks:
        try:
            direct = [int(t) for t in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue  # the thread ended meanwhile
        for kid in direct:
            found += [kid, *children(kid)] if alive(kid) else [kid]
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie nobody reaps counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def journal_lines(out: Path) -> list[str]:
    return (out / "results.jsonl").read_text().splitlines()


def every_line_parses(path: Path) -> list[dict]:
    """Each line of a JSONL file as a record (the assertion is that none fails to parse)."""
    return [json.loads(line) for line in path.read_text().splitlines()]
