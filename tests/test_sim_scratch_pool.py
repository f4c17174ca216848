"""The shared-layer fault `scratch-pool` (nnopbase's output staging pool, nb_scratch_pool.c)
at the ctypes level, in child processes (faults are read at aclInit):

- with the fault, aclnnMul and aclnnAdd of different shapes but one output byte size, each
  on its own thread and stream, corrupt each other;
- without it, the same concurrent run is clean;
- with it, serial single-thread replay of the same calls is clean, and so is the SAME case on
  two threads (both stage identical bytes): only different calls in flight together corrupt.
"""

from __future__ import annotations

import json

import _rawacl as r
import pytest

CHILD = r"""
import json
import sys
import threading

import numpy as np
import _rawacl as r
from _simops import Session

mode, iters, until_bad = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
N = 1 << 20  # elements: (1024, 1024) for Mul, (N,) for Add -> same float32 output size
rng = np.random.default_rng(7)
a, b = (rng.standard_normal((1024, 1024)).astype(np.float32) for _ in range(2))
c, d = (rng.standard_normal(N).astype(np.float32) for _ in range(2))
# name -> (operator, inputs, output shape, expected)
cases = {"mul": ("aclnnMul", (a, b), (1024, 1024), a * b), "add": ("aclnnAdd", (c, d), (N,), c + d)}
bad = {"mul": 0, "add": 0}


def loop(name, n):
    acl = r.load()
    assert acl.aclrtSetDevice(0) == r.OK
    op, inputs, shape, want = cases[name]
    s = Session()
    try:
        args = [s.tensor(x)[0] for x in inputs]
        if op == "aclnnAdd":
            args.append(s.scalar(1.0, np.float32))
        o = s.output(shape, np.float32)
        for _ in range(n):
            assert acl.aclrtMemset(o.ptr, want.nbytes, 0xAB, want.nbytes) == r.OK
            assert s.call(op, *args, o.t) == r.OK, s.msg()
            bad[name] += not np.array_equal(o.read(), want)
            if until_bad and bad["mul"] + bad["add"]:
                break  # found: no need to run the rest
    finally:
        s.close()


if mode == "serial":
    for _ in range(iters):
        loop("mul", 1)
        loop("add", 1)
else:
    names = ("mul", "add") if mode == "mixed" else ("mul", "mul")
    ts = [threading.Thread(target=loop, args=(n, iters)) for n in names]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
print(json.dumps(bad))
"""


def run_child(mode: str, faults: str, iters: int, until_bad: bool = False) -> dict[str, int]:
    """Run the child; returns the number of corrupted results per operator."""
    argv = (mode, str(iters), "1" if until_bad else "0")
    proc = r.run_py(CHILD, env={"ACLSIM_FAULTS": faults}, timeout=120, args=argv)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_fault_corrupts_two_operators_in_flight_together():
    bad = run_child("mixed", "scratch-pool", 400, until_bad=True)
    assert bad["mul"] + bad["add"] > 0, bad


def test_without_the_fault_the_same_concurrent_run_is_clean():
    assert run_child("mixed", "", 40) == {"mul": 0, "add": 0}


@pytest.mark.parametrize("mode", ["serial", "isolated"])
def test_fault_is_invisible_to_serial_replay_and_to_one_case_on_two_threads(mode):
    assert run_child(mode, "scratch-pool", 20) == {"mul": 0, "add": 0}
