"""Throughput of the engine's ``mixed`` phase against a bare ctypes loop making the same calls.

Both sides run T threads sharing one context and one stream for the same duration over the same
cases and host inputs. Per call both do: device malloc + H2D copy of every input, malloc +
canary memset of every output, aclCreateTensor/aclCreateScalar, GetWorkspaceSize, workspace
malloc when > 0, launch, synchronize, D2H copy of every output, sha256 of every output, destroy
and free. The bare loop does exactly that with the raw ctypes functions and nothing else; the
engine adds its pool with barrier-aligned rounds, per-call records, canary counting and baseline
matching. The ratio engine/bare is the engine's efficiency (target >= 0.8).

Protocol: ``--rounds`` (default 5) paired rounds per corpus, the order alternating between
rounds; medians with min–max; writes ``benchmarks/results/throughput.json`` and ``.md`` with
the machine state (load average, nproc) and the command.

    .venv/bin/python benchmarks/bench_throughput.py [--corpus corpus/control.toml]
        [--threads 8] [--duration 5] [--rounds 5] [--out benchmarks/results] [--label idle]
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_state, with_end_load

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


def _spread(values: list[float]) -> dict:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def measure(rt, corpus: str, threads: int, duration: float, rounds: int) -> dict:
    """``rounds`` paired samples of both sides, the order alternating (bare first in even
    rounds, the engine first in odd ones), so neither side always runs on a warmer machine."""
    cases = [c for c in load_corpus([corpus]) if not c.negative]
    probe = PhaseRunner(rt, RunConfig(), cases, [], None, lambda r: None)
    probe.prepare_inputs(cases)
    inputs = {c.id: probe.inputs.get(c) for c in cases}
    samples = []
    for i in range(rounds):
        sides = ("bare", "engine") if i % 2 == 0 else ("engine", "bare")
        got = {}
        for side in sides:
            if side == "bare":
                got[side] = bare_loop(rt, cases, inputs, threads, duration)
            else:
                got[side] = engine_mixed(rt, cases, threads, duration)
        samples.append({"order": list(sides), **{k: round(v, 1) for k, v in got.items()}})
        print(
            f"{corpus} round {i + 1} ({' then '.join(sides)}): bare {got['bare']:8.1f} "
            f"calls/s  engine(mixed) {got['engine']:8.1f} calls/s  "
            f"ratio {got['engine'] / got['bare']:.2f}",
            flush=True,
        )
    return {
        "corpus": corpus,
        "threads": threads,
        "duration_s": duration,
        "rounds": rounds,
        "bare_calls_per_s": _spread([x["bare"] for x in samples]),
        "engine_calls_per_s": _spread([x["engine"] for x in samples]),
        "ratio": _spread([x["engine"] / x["bare"] for x in samples]),
        "samples": samples,
    }


def _md(rows: list[dict], state: dict) -> str:
    def cell(d: dict, fmt: str) -> str:
        return f"{d['median']:{fmt}} ({d['min']:{fmt}}–{d['max']:{fmt}})"

    lines = [
        "| corpus | bare ctypes loop, calls/s | engine `mixed`, calls/s | ratio engine / bare |",
        "|---|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| `{r['corpus']}` | {cell(r['bare_calls_per_s'], '.0f')} | "
            f"{cell(r['engine_calls_per_s'], '.0f')} | {cell(r['ratio'], '.2f')} |"
        )
    r0 = rows[0] if rows else {}
    lines += [
        "",
        f"(median (min–max) of {r0.get('rounds')} paired rounds of {r0.get('duration_s')} s per "
        f"side, order alternating; {r0.get('threads')} threads; "
        f"{state.get('label') or 'machine state not labelled'}; {state.get('date')}; nproc "
        f"{state.get('nproc')}; load average {state.get('loadavg_start')} at the start, "
        f"{state.get('loadavg_end')} at the end; `{state.get('command')}`; commit "
        f"{state.get('commit')})",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=5, help="paired rounds (default 5, >= 1)")
    ap.add_argument("--out", default="benchmarks/results", help="throughput.json / .md here")
    ap.add_argument("--label", default="", help='machine state label, e.g. "idle"')
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    state = machine_state(args.label)
    rt = acl.runtime()
    rt.set_deterministic(True)
    corpora = args.corpus or [
        "tests/data/add_under_test.toml",
        "corpus/control.toml",
        "corpus/mhc.toml",
    ]
    rows = [measure(rt, c, args.threads, args.duration, args.rounds) for c in corpora]
    state = with_end_load(state)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"machine": state, "rows": rows}
    (out / "throughput.json").write_text(json.dumps(doc, indent=1) + "\n")
    text = _md(rows, state)
    (out / "throughput.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
