"""The machine state every result file under benchmarks/results/ records beside its figures.

A timing means little without the load it was measured under: :func:`machine_state` gives the
load averages (at the start and, via :func:`with_end_load`, at the end), the CPU count this
process may use, the kernel, the Python, the git commit and the exact command line.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _commit() -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        timeout=10,
    ).stdout.strip()
    return proc.stdout.strip() + ("+dirty" if dirty else "") if proc.returncode == 0 else None


def precompile(tree: Path = ROOT) -> dict[str, Any]:
    """Write the bytecode of ``tree``'s ``stress`` package, as installing it from a wheel does,
    before anything is timed from exec; what it found is recorded beside the figures.

    The development machines set ``PYTHONDONTWRITEBYTECODE=1`` and a checkout carries no
    ``__pycache__``: every process the benchmark started (the CLI, its phase children started
    cold, the naive harness) compiled each ``stress`` module it imported from source, on every
    run — about 0.15 s of CPU in ``aclnn-stress run`` before ``Session.run`` on the loaded 2-core
    machine (median of 5, 0.62 s without bytecode against 0.47 s with it), which no user with
    an installed package pays. ``compileall`` writes the files whatever that variable says;
    Python reads them whatever it says (and compiles again, in memory, a module edited since)."""
    import compileall

    before = sum(1 for _ in (tree / "stress").rglob("__pycache__/*.pyc"))
    ok = compileall.compile_dir(tree / "stress", quiet=1)
    return {
        "bytecode": "precompiled (compileall) before timing",
        "pyc_before": before,
        "compile_ok": bool(ok),
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", ""),
    }


def machine_state(label: str = "") -> dict[str, Any]:
    """The load, CPUs, platform and command of this benchmark run (``label``: e.g. "idle" or
    "loaded machine, smoke"; also taken from ``$BENCH_LABEL``)."""
    return {
        "label": label or os.environ.get("BENCH_LABEL", ""),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "command": shlex.join([Path(sys.executable).name, *sys.argv]),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "machine": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
        "commit": _commit(),
    }


def with_end_load(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` with the load averages at the end of the run added."""
    return {**state, "loadavg_end": [round(x, 2) for x in os.getloadavg()]}
