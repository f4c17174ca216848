"""Speed of the simulator's mHC kernels against the numpy reference.

The simulator is only useful for stress work if its kernels keep up with the reference the
results are graded against. Measured the same way on both sides:

* simulator: phase 1 (``...GetWorkspaceSize``, incl. the workspace allocation) + phase 2 +
  ``aclrtSynchronizeStream``, through the binding; inputs are uploaded and outputs allocated
  before the clock starts, nothing is downloaded;
* numpy: ``stress.ops._mhc_reference.forward`` / ``backward`` in float32 on host arrays.

Both report the median of ``--repeat`` runs after one warm-up. The backward on B=4, S=256, N=4,
C=1024 must take at most ``--max-ratio`` (3) times the reference, else the exit status is 1.

    .venv/bin/python benchmarks/bench_mhc_kernels.py [--repeat 7] [--max-ratio 3]
        [--deterministic] [--B 4 --S 256 --C 1024 --dtype bf16] [--json FILE --label L]

``--json`` writes the rows with the machine state (load average, nproc, the command).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("STRESS_BACKEND", "sim")

from machine import machine_state, with_end_load

from stress import acl
from stress.engine.call.prepared import OpCall, run_once
from stress.ops import _mhc_reference as ref
from stress.ops.mhc import MHC_PRE_SINKHORN, MHC_PRE_SINKHORN_BACKWARD
from stress.ops.spec import OpSpec


def median_ms(fn: Callable[[], float | None], repeat: int) -> float:
    """Median wall time of ``fn`` in ms (``fn`` may return its own measured seconds)."""
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        own = fn()
        times.append(own if own is not None else time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def sim_call(ctx: acl.Context, stream: acl.Stream, spec: OpSpec, params, inputs) -> float:
    """One call; returns the seconds of phase 1 + phase 2 + synchronize (upload excluded)."""
    with OpCall(ctx, spec, params, inputs) as call:
        t0 = time.perf_counter()
        call.phase1()
        call.phase2(stream)
        stream.synchronize()
        return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--B", type=int, default=4)
    ap.add_argument("--S", type=int, default=256)
    ap.add_argument("--C", type=int, default=1024)
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"))
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--max-ratio", type=float, default=3.0)
    ap.add_argument("--deterministic", action="store_true", help="ACL_OPT_DETERMINISTIC = 1")
    ap.add_argument("--json", default="", help="write the result here (with the machine state)")
    ap.add_argument("--label", default="", help='machine state label, e.g. "idle"')
    args = ap.parse_args(argv)
    state = machine_state(args.label)

    rt = acl.runtime("sim")
    ctx = rt.device(0).default_context
    ctx.bind()
    stream = ctx.create_stream()
    rt.set_deterministic(args.deterministic)

    raw = {"B": args.B, "S": args.S, "N": 4, "C": args.C, "dtype": args.dtype}
    fwd_p = MHC_PRE_SINKHORN.parse_params(raw, "bench")
    bwd_p = MHC_PRE_SINKHORN_BACKWARD.parse_params(raw, "bench")
    fwd_in = MHC_PRE_SINKHORN.generate(fwd_p, 0)
    bwd_in = MHC_PRE_SINKHORN_BACKWARD.generate(
        bwd_p, 0, forward=lambda s, p, i: run_once(ctx, stream, s, p, i)
    )

    def ref_fwd() -> None:
        ref.forward(fwd_in["x"], fwd_in["phi"], fwd_in["alpha"], fwd_in["bias"])

    saved = ("hPre", "hcBeforeNorm", "invRms", "sumOut", "normOut")

    def ref_bwd() -> None:
        ref.backward(
            *(bwd_in[k] for k in ("gradHin", "gradHPost", "gradHRes", "x", "phi", "alpha")),
            bwd_in["bias"],
            *(bwd_in[k] for k in saved),
        )

    rows = []
    for name, spec, params, inputs, ref_fn in (
        ("forward", MHC_PRE_SINKHORN, fwd_p, fwd_in, ref_fwd),
        ("backward", MHC_PRE_SINKHORN_BACKWARD, bwd_p, bwd_in, ref_bwd),
    ):
        sim_ms = median_ms(
            lambda s=spec, p=params, i=inputs: sim_call(ctx, stream, s, p, i), args.repeat
        )
        ref_ms = median_ms(lambda f=ref_fn: f(), args.repeat)
        rows.append((name, sim_ms, ref_ms, sim_ms / ref_ms))
    stream.close()

    shape = f"B={args.B} S={args.S} N=4 C={args.C} {args.dtype}"
    mode = "deterministic" if args.deterministic else "non-deterministic"
    print(f"mHC kernels, {shape}, {mode}, {os.cpu_count()} CPUs, median of {args.repeat}")
    print(f"{'':10}{'simulator ms':>14}{'numpy ms':>12}{'ratio':>8}")
    for name, sim_ms, ref_ms, ratio in rows:
        print(f"{name:10}{sim_ms:14.2f}{ref_ms:12.2f}{ratio:8.2f}")
    ratio = rows[1][3]
    if args.json:
        doc = {"machine": with_end_load(state), "shape": shape, "mode": mode}
        doc["repeat"] = args.repeat
        keys = ("kernel", "simulator_ms", "numpy_ms", "ratio")
        doc["rows"] = [
            dict(zip(keys, (n, round(a, 3), round(b, 3), round(r, 3)), strict=True))
            for n, a, b, r in rows
        ]
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    if ratio > args.max_ratio:
        print(f"FAIL: backward ratio {ratio:.2f} > {args.max_ratio}")
        return 1
    print(f"ok: backward ratio {ratio:.2f} <= {args.max_ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
