"""Run ``python -m stress ...`` in a child process, optionally on a faulty simulator."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def stress_cli(
    *args: str, faults: str | None = None, timeout: float = 120, **kw
) -> subprocess.CompletedProcess:
    """The CLI's completed process (text output captured). With ``faults``, the child runs on
    the simulator with ``ACLSIM_FAULTS=faults`` from the repository root."""
    if faults is not None:
        kw.setdefault("cwd", REPO)
        kw["env"] = {
            **os.environ,
            **kw.get("env", {}),
            "ACLSIM_FAULTS": faults,
            "STRESS_BACKEND": "sim",
        }
    return subprocess.run(
        [sys.executable, "-m", "stress", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,
    )
