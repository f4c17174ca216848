"""Throughput of the engine's ``mixed`` phase against a bare ctypes loop making the same calls.

Both sides run T threads sharing one context and one stream for the same duration over the same
cases and host inputs. Per call both do: device malloc + H2D copy of every input, malloc +
canary memset of every output, aclCreateTensor/aclCreateScalar, GetWorkspaceSize, workspace
malloc when > 0, launch, synchronize, D2H copy of every output, sha256 of every output, destroy
and free. The bare loop does exactly that with the raw ctypes functions and nothing else; the
engine adds its pool with barrier-aligned rounds, per-call records, canary counting and baseline
matching. The ratio engine/bare is the engine's efficiency (target >= 0.8).

    .venv/bin/python benchmarks/bench_throughput.py [--corpus corpus/control.toml]
        [--threads 8] [--duration 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stress import acl
from stress.config import RunConfig
from stress.corpus.parse import load_corpus
from stress.engine.replay.phases import PhaseRunner
from stress.grading.digest import DEFAULT_CANARY
from stress.ops.spec import AttrArg, ScalarArg, TensorArg
from stress.records import CallRecord


def bare_call(raw, stream: int, case, inputs) -> None:
    """One call with raw ctypes functions only (the 'one-off script' baseline)."""
    p = case.params
    frees, tensors, scalars, outputs, args = [], [], [], [], []
    for arg in case.spec.args:
        if isinstance(arg, AttrArg):
            args.append(arg.value(p))
            continue
        if isinstance(arg, ScalarArg):
            buf = np.array([arg.value(p)], dtype=arg.dtype(p))
            s = raw.aclCreateScalar(buf.ctypes.data, int(acl.acl_dtype(buf.dtype)))
            scalars.append(s)
            args.append(s)
            continue
        assert isinstance(arg, TensorArg)
        if not arg.present(p):
            args.append(None)
            continue
        shape, dtype = tuple(arg.shape(p)), np.dtype(arg.dtype(p))
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        ptr = ctypes.c_void_p()
        if nbytes:
            raw.aclrtMalloc(ctypes.byref(ptr), nbytes, 0)
            frees.append(ptr.value)
            if arg.output:
                raw.aclrtMemset(ptr, nbytes, DEFAULT_CANARY, nbytes)
                outputs.append((ptr.value, shape, dtype, nbytes))
            else:
                host = np.ascontiguousarray(inputs[arg.name])
                raw.aclrtMemcpy(ptr, nbytes, host.ctypes.data, nbytes, 1)
        dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        strides, step = [], 1
        for d in reversed(shape):
            strides.append(step)
            step *= max(d, 1)
        st = (ctypes.c_int64 * max(len(shape), 1))(*strides[::-1])
        t = raw.aclCreateTensor(
            dims, len(shape), int(acl.acl_dtype(dtype)), st, 0, 2, dims, len(shape), ptr.value
        )
        tensors.append(t)
        args.append(t)
    size, executor = ctypes.c_uint64(), ctypes.c_void_p()
    getattr(raw, case.spec.function + "GetWorkspaceSize")(
        *args, ctypes.byref(size), ctypes.byref(executor)
    )
    ws = ctypes.c_void_p()
    if size.value:
        raw.aclrtMalloc(ctypes.byref(ws), size.value, 0)
        frees.append(ws.value)
    getattr(raw, case.spec.function)(ws, size.value, executor, stream)
    raw.aclrtSynchronizeStream(stream)
    for ptr, shape, dtype, nbytes in outputs:
        host = np.empty(shape, dtype)
        raw.aclrtMemcpy(host.ctypes.data, nbytes, ptr, nbytes, 2)
        hashlib.sha256(host.tobytes()).hexdigest()
    for t in tensors:
        raw.aclDestroyTensor(t)
    for s in scalars:
        raw.aclDestroyScalar(s)
    for ptr in frees:
        raw.aclrtFree(ptr)


def bare_loop(rt, cases, inputs, threads: int, duration: float) -> float:
    raw = rt.api.raw
    ctx = rt.device(0).create_context()
    stream = ctx.create_stream()
    counts = [0] * threads
    stop = time.monotonic() + duration

    def worker(w: int) -> None:
        raw.aclrtSetCurrentContext(ctx.handle)
        i = w
        while time.monotonic() < stop:
            case = cases[i % len(cases)]
            bare_call(raw, stream.handle, case, inputs[case.id])
            counts[w] += 1
            i += 1

    started = time.monotonic()
    ts = [threading.Thread(target=worker, args=(w,)) for w in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    elapsed = time.monotonic() - started
    stream.close()
    ctx.close()
    return sum(counts) / elapsed


def engine_mixed(rt, cases, threads: int, duration: float) -> float:
    calls = [0]

    def sink(rec) -> None:
        if isinstance(rec, CallRecord):
            calls[0] += 1

    config = RunConfig(seed=1, threads=threads, duration=duration)
    runner = PhaseRunner(rt, config, cases, [], None, sink)
    runner.prepare_inputs(cases)
    started = time.monotonic()
    status, _ = runner.run("mixed")
    elapsed = time.monotonic() - started
    assert status == "done"
    return calls[0] / elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--json", help="write the numbers to this file")
    args = ap.parse_args()
    rt = acl.runtime()
    rt.set_deterministic(True)
    rows = []
    for corpus in args.corpus or ["corpus/control.toml", "corpus/mhc.toml"]:
        cases = [c for c in load_corpus([corpus]) if not c.negative]
        probe = PhaseRunner(rt, RunConfig(), cases, [], None, lambda r: None)
        probe.prepare_inputs(cases)
        inputs = {c.id: probe.inputs.get(c) for c in cases}
        bare = bare_loop(rt, cases, inputs, args.threads, args.duration)
        engine = engine_mixed(rt, cases, args.threads, args.duration)
        rows.append(
            {
                "corpus": corpus,
                "threads": args.threads,
                "bare_calls_per_s": round(bare, 1),
                "engine_calls_per_s": round(engine, 1),
                "ratio": round(engine / bare, 3),
            }
        )
        print(
            f"{corpus}: bare {bare:8.1f} calls/s  engine(mixed) {engine:8.1f} calls/s  "
            f"ratio {engine / bare:.2f}",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
