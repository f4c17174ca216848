"""The simulator's opt-in faults (``ACLSIM_FAULTS``), at the mechanism level.

Each fault is a real mechanism (docs/simulator.md, "Faults"); here each one is shown to stay
silent under the conditions it must not fire in (a serial back-to-back loop, as the baseline and
the ``serial`` phase make) and to fire under its own condition: an interleaved pair
(tiling-race), two kernels executing at once on their own streams (shared-scratch, add-race),
a different predecessor (stale-tail), an empty batch (empty-skip), the large shape
(grad-drift), a phase 1 between another call's phase 1 and its kernel (crash), a phase 1
overlapping a kernel (hang).

``ACLSIM_FAULTS`` is read at aclInit, and this test process's runtime is initialised without
faults, so every scenario runs in a subprocess (:func:`run_snippet`) that prints one JSON line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stress.sim.faults import FAULTS

REPO = Path(__file__).resolve().parents[1]

# Shared by every snippet: a runtime, the shipped corpora, helpers for whole calls and for
# interleaved pairs, byte-exact comparison.
PRELUDE = r"""
import json, os, sys, threading, time, hashlib
import numpy as np
from stress import acl
from stress.corpus.parse import load_corpus
from stress.engine.call.inputs import InputCache
from stress.engine.call.prepared import OpCall

rt = acl.runtime("sim")
dev = rt.device(0)
ctx = dev.default_context
ctx.bind()
rt.set_deterministic(True)
stream = ctx.create_stream()
CASES = {c.id: c for c in load_corpus(["corpus/mhc.toml", "corpus/control.toml"])}
cache = InputCache(ctx, ctx.create_stream())

def call(cid, s=None, canary=0xAB):
    c = CASES[cid]
    with OpCall(ctx, c.spec, c.params, cache.get(c), canary=canary) as oc:
        return oc.run(s or stream)

def pair(a, b, s=None):
    # A.phase1, B.phase1, A.phase2, B.phase2, one sync (the interleaved phase)
    s = s or stream
    ca, cb = CASES[a], CASES[b]
    A = OpCall(ctx, ca.spec, ca.params, cache.get(ca))
    B = OpCall(ctx, cb.spec, cb.params, cache.get(cb))
    A.phase1(); B.phase1(); A.phase2(s); B.phase2(s); s.synchronize()
    out = A.collect(), B.collect()
    A.close(); B.close()
    return out

def same_arr(a, b):
    return bool(np.array_equal(a.view(np.uint8), b.view(np.uint8)))

def same(x, y):
    return all(same_arr(x[k], y[k]) for k in x)

def digests(out):
    return {k: hashlib.sha256(v.tobytes()).hexdigest() for k, v in out.items()}

def rel(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30))

def concurrent(cids, threads, rounds, per_thread_streams, ref):
    # barrier-aligned rounds of whole calls on `threads` threads; returns (bad, total)
    if per_thread_streams:
        streams = [ctx.create_stream() for _ in range(threads)]
    else:
        streams = [stream] * threads
    bar = threading.Barrier(threads)
    bad, total = [0], [0]
    lock = threading.Lock()
    def work(i):
        ctx.bind()
        for r in range(rounds):
            cid = cids[(i + r) % len(cids)]
            bar.wait()
            out = call(cid, streams[i])
            with lock:
                total[0] += 1
                bad[0] += not same(out, ref[cid])
    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts: t.start()
    for t in ts: t.join()
    return bad[0], total[0]

def emit(obj):
    print("RESULT " + json.dumps(obj), flush=True)
"""


def run_snippet(
    faults: str, code: str, *, timeout: float = 120.0
) -> tuple[subprocess.CompletedProcess, dict | None]:
    """Run PRELUDE + ``code`` in a fresh interpreter with ``ACLSIM_FAULTS=faults``.

    Returns the finished process and the JSON of its last ``RESULT`` line (None if none)."""
    env = {**os.environ, "ACLSIM_FAULTS": faults, "STRESS_BACKEND": "sim"}
    proc = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    results = [ln[7:] for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    return proc, (json.loads(results[-1]) if results else None)


def result_of(faults: str, code: str, **kw) -> dict:
    proc, res = run_snippet(faults, code, **kw)
    assert proc.returncode == 0 and res is not None, proc.stderr[-3000:]
    return res


ALL_FAULTS = tuple(FAULTS)  # the simulator's order (a test in test_acl_runtime.py checks it)


# ---- the switch ---------------------------------------------------------------------------------


def test_unknown_fault_fails_aclinit_with_the_known_names():
    proc, _ = run_snippet("tiling-race,bogus", "emit({})")
    assert proc.returncode != 0
    assert "unknown fault 'bogus' in ACLSIM_FAULTS" in proc.stderr
    assert "known faults: " + ",".join(ALL_FAULTS) in proc.stderr


def test_known_faults_are_listed_and_combinable():
    res = result_of(
        " tiling-race , stale-tail,hang ",
        """
        emit({"known": rt.api.aclsimKnownFaults().decode()})
        """,
    )
    assert res["known"] == ",".join(ALL_FAULTS)


def test_the_clean_simulator_lists_every_fault(rt):
    assert rt.api.aclsimKnownFaults().decode().split(",") == list(ALL_FAULTS)


# ---- tiling-race -------------------------------------------------------------------------------

TILING_RACE = """
ids = ["base-a", "base-b", "seq512", "small-c-fp16"]
ref = {i: call(i) for i in ids}
serial_bad = 0
for _ in range(2):                      # back to back, alternating shapes: never contaminated
    for i in ids:
        serial_bad += not same(call(i), ref[i])
cells = {}
for a in ids:
    for b in ids:
        ra, rb = pair(a, b)
        cells[a + "|" + b] = {
            "victim_same": same(ra, ref[a]),
            "aggressor_same": same(rb, ref[b]),
            "gradX_same": same_arr(ra["gradX"], ref[a]["gradX"]),
            "gradPhi_rel": rel(ra["gradPhi"], ref[a]["gradPhi"]),
        }
emit({"serial_bad": serial_bad, "cells": cells})
"""


def test_tiling_race_needs_another_shapes_phase1_between_phase1_and_the_kernel():
    res = result_of("tiling-race", TILING_RACE)
    assert res["serial_bad"] == 0
    cells = res["cells"]
    for key, cell in cells.items():
        a, b = key.split("|")
        assert cell["aggressor_same"], key  # the last phase 1 was its own
        assert cell["gradX_same"], key  # every token's gradX is still written, once
        if a == b:
            assert cell["victim_same"], key  # identical tiling: no harm
    # a different partition in between: the victim's result changes ...
    assert not cells["base-a|seq512"]["victim_same"]
    assert not cells["seq512|base-a"]["victim_same"]
    # ... grossly when the aggressor has fewer blocks (the reduction drops blocks)
    assert cells["base-a|base-b"]["gradPhi_rel"] > 0.1
    assert cells["seq512|small-c-fp16"]["gradPhi_rel"] > 0.1
    # (same tokens per block, more blocks than the victim's grid: bounded by its own grid)
    assert cells["base-b|small-c-fp16"]["victim_same"]


def test_tiling_race_interleaved_pairs_are_clean_without_the_fault():
    res = result_of("", TILING_RACE)
    assert res["serial_bad"] == 0
    cells = res["cells"]
    assert cells and all(c["victim_same"] and c["aggressor_same"] for c in cells.values())


# ---- shared-scratch ----------------------------------------------------------------------------

SHARED_SCRATCH = """
ids = ["base-a", "base-b"]
ref = {i: call(i) for i in ids}
serial_bad = sum(not same(call(i), ref[i]) for _ in range(3) for i in ids)
one_stream = concurrent(["base-a"], 4, 6, False, ref)
own_streams = concurrent(["base-a"], 4, 6, True, ref)
emit({"serial_bad": serial_bad, "one_stream": one_stream, "own_streams": own_streams})
"""


def test_shared_scratch_needs_kernels_executing_at_once():
    res = result_of("shared-scratch", SHARED_SCRATCH)
    assert res["serial_bad"] == 0
    assert res["one_stream"][0] == 0  # one stream worker: kernels one after the other
    assert res["own_streams"][0] >= 1, res  # the same case on 4 streams: their accumulations add up


# ---- stale-tail --------------------------------------------------------------------------------

STALE_TAIL = """
out = {}
fresh = ctx.create_stream()
first = call("base-b", fresh)               # a new worker: its buffer holds zeros
call("base-a"); after_a = [call("base-b") for _ in range(3)]
call("seq512"); after_seq = call("base-b")
call("base-a"); again_a = call("base-b")
no_tail = [call("base-a") for _ in range(2)]   # 24 blocks: every slot written, no tail
call("base-b"); a_after_b = call("base-a")
emit({
    "serial_repeat_same": all(same(x, after_a[0]) for x in after_a),
    "pred_changes_result": not same(after_seq, after_a[0]),
    "same_pred_same_result": same(again_a, after_a[0]),
    "fresh_differs": not same(first, after_a[0]),
    "gradX_untouched": same_arr(after_seq["gradX"], after_a[0]["gradX"]),
    "gradPhi_untouched": same_arr(after_seq["gradPhi"], after_a[0]["gradPhi"]),
    "gradBias_rel": rel(after_seq["gradBias"], after_a[0]["gradBias"]),
    "full_grid_unaffected": same(a_after_b, no_tail[0]) and same(no_tail[0], no_tail[1]),
})
"""


def test_stale_tail_depends_on_the_previous_kernel_of_another_shape():
    res = result_of("stale-tail", STALE_TAIL)
    assert res["serial_repeat_same"]  # serial replay: the same predecessor every time
    assert res["same_pred_same_result"]  # deterministic given the predecessor
    assert res["pred_changes_result"]  # another predecessor: another tail
    assert res["fresh_differs"]
    assert res["gradX_untouched"] and res["gradPhi_untouched"]
    assert res["gradBias_rel"] > 1e-3
    assert res["full_grid_unaffected"]  # base-a has 24 blocks: no tail to read


def test_stale_tail_is_per_stream_worker():
    res = result_of(
        "stale-tail",
        """
        s1, s2 = ctx.create_stream(), ctx.create_stream()
        call("base-a", s1); ref = call("base-b", s1)
        call("seq512", s2)                    # another worker's buffer: s1's tail unchanged
        emit({"same": same(call("base-b", s1), ref)})
        """,
    )
    assert res["same"]


# ---- empty-skip ----------------------------------------------------------------------------------

EMPTY = """
c = CASES["empty-batch"]
assert (c.params["B"], c.params["S"], c.params["C"]) == (0, 8, 128)
out = call("empty-batch", canary=0xAB)
emit({k: {"nbytes": int(v.nbytes),
          "canary": int(np.count_nonzero(v.view(np.uint8) == 0xAB)),
          "zero": int(np.count_nonzero(v.view(np.uint8) == 0))} for k, v in out.items()})
"""


def test_empty_skip_leaves_every_byte_of_the_outputs_unwritten():
    res = result_of("empty-skip", EMPTY)
    assert res["gradPhi"]["nbytes"] == 49152  # the report's reproduction
    assert res["gradX"]["nbytes"] == 0
    for name in ("gradPhi", "gradAlpha", "gradBias"):
        assert res[name]["canary"] == res[name]["nbytes"] > 0, name


def test_without_empty_skip_the_empty_batch_writes_zeros():
    res = result_of("", EMPTY)
    assert res["gradPhi"]["nbytes"] == 49152
    for name in ("gradPhi", "gradAlpha", "gradBias"):
        assert res[name]["zero"] == res[name]["nbytes"] > 0, name


# ---- grad-drift --------------------------------------------------------------------------------

DRIFT = """
res = {}
for cid in ["large-c", "seq512", "base-a"]:
    c = CASES[cid]
    ins = cache.get(c)
    out = call(cid)
    exp = c.spec.reference(c.params, ins)
    res[cid] = {
        "digests": digests(out),
        "repeat_same": same(out, call(cid)),
        "rel": {k: rel(out[k], exp[k]) for k in ("gradPhi", "gradBias", "gradAlpha")},
        "MK": int(c.params["B"] * c.params["S"] * c.params["N"] * c.params["C"]),
    }
emit(res)
"""


def test_grad_drift_only_above_the_size_threshold():
    drift = result_of("grad-drift", DRIFT, timeout=300)
    clean = result_of("", DRIFT, timeout=300)
    big = drift["large-c"]
    assert big["MK"] >= 2**21
    assert big["repeat_same"]  # deterministic: the stress protocol cannot see it
    assert big["rel"]["gradPhi"] > 3e-3 and big["rel"]["gradBias"] > 1e-3, big["rel"]
    rel = clean["large-c"]["rel"]
    assert rel and all(v < 1e-5 for v in rel.values()), rel
    # gradX has no reduction: untouched
    assert big["digests"]["gradX"] == clean["large-c"]["digests"]["gradX"]
    for cid in ("seq512", "base-a"):  # below 2^21: bit for bit the clean simulator
        assert drift[cid]["MK"] < 2**21
        assert drift[cid]["digests"] == clean[cid]["digests"], cid


# ---- add-race ----------------------------------------------------------------------------------

ADD_RACE = """
ids = ["add-f32", "add-bf16-broadcast", "add-fp16", "add-large"]
ref = {i: call(i) for i in ids}
serial_bad = sum(not same(call(i), ref[i]) for _ in range(3) for i in ids)
one_stream = concurrent(ids, 4, 8, False, ref)
own_streams = concurrent(ids, 4, 8, True, ref)
emit({"serial_bad": serial_bad, "one_stream": one_stream, "own_streams": own_streams})
"""


def test_add_race_needs_add_kernels_executing_at_once():
    res = result_of("add-race", ADD_RACE)
    assert res["serial_bad"] == 0
    assert res["one_stream"][0] == 0
    assert res["own_streams"][0] >= 1, res


# ---- crash -------------------------------------------------------------------------------------

CRASH = """
for i in ["base-a", "base-b", "empty-batch", "base-a"]:   # serial: phase 1 after the last sync
    for _ in range(2):
        call(i)
print("SERIAL-OK", flush=True)
pair(__PAIR__)
print("SURVIVED", flush=True)
"""


@pytest.mark.parametrize("pair", ['"base-a", "base-b"', '"base-b", "base-b"'])
def test_crash_kills_the_process_when_a_phase1_frees_a_queued_kernels_tiling(pair):
    proc, _ = run_snippet("crash", CRASH.replace("__PAIR__", pair))
    assert "SERIAL-OK" in proc.stdout, proc.stderr[-2000:]
    assert "SURVIVED" not in proc.stdout
    assert proc.returncode in (-signal.SIGSEGV, -signal.SIGABRT), proc.returncode


def test_without_crash_the_interleaved_pair_survives():
    proc, _ = run_snippet("", CRASH.replace("__PAIR__", '"base-a", "base-b"'))
    assert proc.returncode == 0 and "SURVIVED" in proc.stdout, proc.stderr[-2000:]


# ---- hang --------------------------------------------------------------------------------------

HANG = """
for i in ["base-a", "base-b", "large-c"]:
    for _ in range(2):
        call(i)
pair("base-a", "base-b"); pair("large-c", "base-a"); pair("base-b", "base-b")
print("SERIAL-INTERLEAVED-OK", flush=True)
threads = 4
streams = [ctx.create_stream() for _ in range(threads)]
done = [0]
def work(i):
    ctx.bind()
    for _ in range(200):
        call("base-a", streams[i])
        done[0] += 1
ts = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(threads)]
for t in ts: t.start()
last, still = -1, 0
while any(t.is_alive() for t in ts) and still < 3:
    time.sleep(1.0)
    still = still + 1 if done[0] == last else 0
    last = done[0]
emit({"alive": sum(t.is_alive() for t in ts), "done": done[0]})
os._exit(0)                 # deadlocked threads cannot be joined
"""


def test_hang_deadlocks_when_a_phase1_overlaps_a_kernel():
    try:
        proc, res = run_snippet("hang", HANG, timeout=90)
    except subprocess.TimeoutExpired as exc:  # run() killed it
        pytest.fail(f"the snippet did not report the deadlock: {exc.stdout!r}")
    assert "SERIAL-INTERLEAVED-OK" in proc.stdout, proc.stderr[-2000:]
    assert res is not None, proc.stderr[-2000:]
    assert res["alive"] >= 1 and res["done"] < 4 * 200, res  # stuck, no progress for 3 s


def test_without_hang_the_concurrent_calls_finish():
    res = result_of("", HANG.replace("range(200)", "range(10)"), timeout=90)
    assert res == {"alive": 0, "done": 40}
