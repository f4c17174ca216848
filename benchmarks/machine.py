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
