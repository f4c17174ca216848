"""Cost of the simulator sanitizer: hooks present but off vs compiled out, and on vs off.

1. Off: the same plain-ctypes workload (WORKLOAD: the mHC forward with its saved tensors and
   the backward, B=2 S=64 C=256, with every input uploaded and every output read back, 300
   times, timed inside the process with the helpers of tests/scripts/third_party_mhc_backward.py)
   against two simulator roots built from the same sources: the normal one and one with every
   hook compiled out (-DACLSIM_NO_SANITIZE via sanitize.h). Runs alternate; the minimum of N
   runs per root is compared (CPU-bound: the minimum is the least noisy).
   Target: off costs <= 2%.
2. On: `aclnn-stress run` over corpus/mhc.toml (serial, shuffled, interleaved, isolated, mixed,
   control; one iteration) with ACLSIM_SANITIZE=initcheck,racecheck,memcheck vs without.
   Target: on <= 20x slower.

    .venv/bin/python benchmarks/bench_sanitizer.py [--runs 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import machine_state  # noqa: E402

from stress.sim import _build  # noqa: E402

SCRIPT = ROOT / "tests" / "scripts" / "third_party_mhc_backward.py"

WORKLOAD = """
import sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import third_party_mhc_backward as t
B, S, N, C, D, I = 2, 64, 4, 256, 24, 20
t.check(t.ascendcl.aclInit(None), "aclInit")
t.check(t.ascendcl.aclrtSetDevice(0), "aclrtSetDevice")
stream = t.c_void_p()
t.check(t.ascendcl.aclrtCreateStream(t.byref(stream)), "aclrtCreateStream")
rng = np.random.default_rng(1)
x = t.DeviceArray(rng.standard_normal((B, S, N, C)).astype(np.float16))
phi = t.DeviceArray((rng.standard_normal((D, N * C)) / 32).astype(np.float32))
alpha = t.DeviceArray(np.full(3, 0.7, np.float32))
bias = t.DeviceArray(np.zeros(D, np.float32))
hin = t.DeviceArray(np.zeros((B, S, C), np.float16))
outs = [t.zeros(B, S, N), t.zeros(B, S, N * N), t.zeros(B, S, N), t.zeros(B, S, D),
        t.zeros(B, S, 1), t.zeros(2 * I, B, S, N), t.zeros(2 * I, B, S, N, N)]
g = [t.DeviceArray(np.ones((B, S, C), np.float16)), t.zeros(B, S, N), t.zeros(B, S, N * N)]
gx = t.DeviceArray(np.zeros((B, S, N, C), np.float16))
grads = [t.zeros(D, N * C), t.zeros(3), t.zeros(D)]
t0 = time.perf_counter()
for _ in range(300):
    for a in (x, phi, alpha, bias):
        a.upload(np.zeros(a.shape, a.dtype) + 0.5)
    t.two_stage("aclnnMhcPreSinkhorn", [x.tensor, phi.tensor, alpha.tensor, bias.tensor, N, I,
                1e-6, 1e-6, True, hin.tensor] + [o.tensor for o in outs], stream)
    t.two_stage("aclnnMhcPreSinkhornBackward", [a.tensor for a in g] + [x.tensor, phi.tensor,
                alpha.tensor, bias.tensor] + [o.tensor for o in outs[2:]] + [1e-6, gx.tensor]
                + [a.tensor for a in grads], stream)
    for a in [hin, *outs, gx, *grads]:
        a.download()
print(time.perf_counter() - t0)
"""


def no_hooks_root() -> Path:
    """A simulator root built from a copy of the sources with every hook compiled out."""
    tmp = Path(tempfile.mkdtemp(prefix="aclsim-nohooks-"))
    src = tmp / "src"
    shutil.copytree(_build.SRC_DIR, src)
    header = src / "internal" / "sanitize.h"
    header.write_text("#define ACLSIM_NO_SANITIZE 1\n" + header.read_text())
    return _build._build(False, src_dir=src)


def time_script(root: Path, env_extra: dict[str, str]) -> float:
    """Seconds of WORKLOAD's loop (measured inside the process: no start-up)."""
    env = {**os.environ, "ASCEND_HOME_PATH": str(root), **env_extra}
    argv = [sys.executable, "-c", WORKLOAD, str(SCRIPT.parent)]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the workload failed under {root}: {proc.stderr[-800:]}")
    return float(proc.stdout.split()[-1])


def time_cli(tmp: Path, name: str, env_extra: dict[str, str]) -> float:
    env = {**os.environ, **env_extra}
    argv = [sys.executable, "-m", "stress", "run", "--corpus", "corpus/mhc.toml",
            "--iterations", "1", "--threads", "4", "--out", str(tmp / name), "--quiet",
            "--record-baseline", "--baseline", str(tmp / f"{name}.base.json")]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    dt = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"aclnn-stress run failed: {proc.stdout[-500:]}{proc.stderr[-500:]}")
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--cli-runs", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ns = ap.parse_args()
    hooks, bare = _build.build(), no_hooks_root()
    t_hooks, t_bare, t_on = [], [], []
    for _ in range(ns.runs):
        t_bare.append(time_script(bare, {}))
        t_hooks.append(time_script(hooks, {}))
    for _ in range(max(1, ns.runs // 3)):
        t_on.append(time_script(hooks, {"ACLSIM_SANITIZE": "all"}))
    with tempfile.TemporaryDirectory() as d:
        cli_off = [time_cli(Path(d), f"off{i}", {}) for i in range(ns.cli_runs)]
        cli_on = [
            time_cli(Path(d), f"on{i}", {"ACLSIM_SANITIZE": "all",
                                          "ACLSIM_SANITIZE_LOG": str(Path(d) / f"on{i}.jsonl")})
            for i in range(ns.cli_runs)
        ]  # fmt: skip
    result = {
        "workload": "mHC forward+backward B=2 S=64 C=256, 300 iterations, plain ctypes",
        "runs": ns.runs,
        "script_s_no_hooks_min": min(t_bare),
        "script_s_hooks_off_min": min(t_hooks),
        "off_cost_pct": 100.0 * (min(t_hooks) / min(t_bare) - 1.0),
        "script_s_on_min": min(t_on),
        "script_on_slowdown": min(t_on) / min(t_hooks),
        "cli_mhc_s_off_min": min(cli_off),
        "cli_mhc_s_on_min": min(cli_on),
        "cli_mhc_on_slowdown": min(cli_on) / min(cli_off),
        "machine": machine_state(),
    }
    for k, v in result.items():
        print(f"{k:28s} {v:.4g}" if isinstance(v, float) else f"{k:28s} {v}")
    if ns.json:
        ns.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
