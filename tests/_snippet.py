"""A test's Python script run in a fresh interpreter on the simulator (faults are read once,
at ``aclInit``, so each setting needs its own process), read back from its ``RESULT`` line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests._cli import REPO


def script_result(script: str, faults: str = "", timeout: float = 300) -> dict[str, Any]:
    """The JSON the script printed last as ``RESULT {...}``, run with ``ACLSIM_FAULTS=faults``;
    the script must exit 0 and print one."""
    env = {**os.environ, "ACLSIM_FAULTS": faults, "STRESS_BACKEND": "sim"}
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip
    lines = [ln[7:] for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1])
