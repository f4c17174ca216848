"""The simulator sanitizer (ACLSIM_SANITIZE): each check in a fresh process, by the environment
alone, through plain ctypes programs (the sanitizer is configured at aclInit, process-wide)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stress import sim
from stress.sanitize import read_jsonl

SCRIPTS = Path(__file__).resolve().parent / "scripts"

PRELUDE = """
import ctypes, os, sys
from ctypes import byref, c_void_p, c_int64, c_size_t
lib64 = os.path.join(os.environ["ASCEND_HOME_PATH"], "lib64")
acl = ctypes.CDLL(os.path.join(lib64, "libascendcl.so"), mode=ctypes.RTLD_GLOBAL)
nn = ctypes.CDLL(os.path.join(lib64, "libnnopbase.so"), mode=ctypes.RTLD_GLOBAL)
acl.aclrtMemcpy.argtypes = [c_void_p, c_size_t, c_void_p, c_size_t, ctypes.c_int]
acl.aclrtMemset.argtypes = [c_void_p, c_size_t, ctypes.c_int32, c_size_t]
acl.aclrtMemsetAsync.argtypes = [c_void_p, c_size_t, ctypes.c_int32, c_size_t, c_void_p]
acl.aclrtFree.argtypes = [c_void_p]
acl.aclrtRecordEvent.argtypes = [c_void_p, c_void_p]
acl.aclrtStreamWaitEvent.argtypes = [c_void_p, c_void_p]
acl.aclrtSynchronizeStream.argtypes = [c_void_p]
acl.aclrtSynchronizeEvent.argtypes = [c_void_p]
acl.aclsimStreamDelay.argtypes = [c_void_p, ctypes.c_int32]
nn.aclCreateTensor.restype = c_void_p
I64P = ctypes.POINTER(c_int64)
nn.aclCreateTensor.argtypes = [I64P, ctypes.c_uint64, ctypes.c_int, I64P, c_int64, ctypes.c_int,
                               I64P, ctypes.c_uint64, c_void_p]
nn.aclDestroyTensor.argtypes = [c_void_p]
assert acl.aclInit(None) == 0, "aclInit"
assert acl.aclrtSetDevice(0) == 0
def malloc(n):
    p = c_void_p()
    assert acl.aclrtMalloc(byref(p), c_size_t(n), 0) == 0
    return p
def stream():
    s = c_void_p()
    assert acl.aclrtCreateStream(byref(s)) == 0
    return s
"""


def run_program(tmp_path: Path, body: str, tools: str, faults: str = "") -> tuple[list, str]:
    """Run PRELUDE + body under ACLSIM_SANITIZE=tools; (findings, stderr)."""
    log = tmp_path / "san.jsonl"
    prog = tmp_path / "prog.py"
    prog.write_text(PRELUDE + textwrap.dedent(body))
    env = {**os.environ, "ASCEND_HOME_PATH": str(sim.root()), "ACLSIM_SANITIZE": tools,
           "ACLSIM_SANITIZE_LOG": str(log), "ACLSIM_FAULTS": faults}  # fmt: skip
    proc = subprocess.run([sys.executable, str(prog)], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return read_jsonl(log), proc.stderr


def test_unknown_tool_fails_aclinit(tmp_path):
    prog = tmp_path / "p.py"
    prog.write_text(PRELUDE.split("assert acl.aclInit")[0] + textwrap.dedent("""
        acl.aclGetRecentErrMsg.restype = ctypes.c_char_p
        print(acl.aclInit(None), acl.aclGetRecentErrMsg().decode())
    """))  # fmt: skip
    env = {**os.environ, "ASCEND_HOME_PATH": str(sim.root()), "ACLSIM_SANITIZE": "initchek"}
    out = subprocess.run([sys.executable, str(prog)], env=env, capture_output=True, text=True)
    code, _, msg = out.stdout.strip().partition(" ")
    assert code != "0"
    assert "ACLSIM_SANITIZE" in msg and "initchek" in msg and "initcheck" in msg


@pytest.mark.parametrize("faults", ["", "empty-skip"])
def test_b0_script_initcheck(tmp_path, faults):
    """The standalone script, unchanged: findings for exactly the bytes it reads unwritten."""
    log = tmp_path / "san.jsonl"
    env = {**os.environ, "ASCEND_HOME_PATH": str(sim.root()), "ACLSIM_SANITIZE": "initcheck",
           "ACLSIM_SANITIZE_LOG": str(log), "ACLSIM_FAULTS": faults}  # fmt: skip
    proc = subprocess.run([sys.executable, str(SCRIPTS / "sanitize_b0_backward.py")], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = read_jsonl(log)
    if not faults:
        assert found == []
        assert "ERROR" not in proc.stderr
        return
    # gradPhi [24, 512], gradAlpha [3], gradBias [24] float32; gradX is empty
    got = sorted((f.tensor, f.bytes, f.offset, f.alloc_size) for f in found)
    assert got == [("gradAlpha", 12, 0, 12), ("gradBias", 96, 0, 96),
                   ("gradPhi", 24 * 512 * 4, 0, 24 * 512 * 4)]  # fmt: skip
    for f in found:
        assert (f.tool, f.kind) == ("initcheck", "uninitialized read")
        assert f.owner.startswith("aclnnMhcPreSinkhornBackward#")
        assert [c.op for c in f.calls] == ["aclrtMemcpy"]
    assert proc.stderr.count("====== ERROR: uninitialized read of size") == 3


def test_initcheck_partial_write(tmp_path):
    """Only the never-written byte range is reported, with its offset."""
    found, _ = run_program(tmp_path, """
        p = malloc(256)
        acl.aclrtMemset(p, 256, 1, 100)            # bytes 0..99
        acl.aclrtMemset(c_void_p(p.value + 200), 56, 2, 56)  # bytes 200..255
        host = ctypes.create_string_buffer(256)
        assert acl.aclrtMemcpy(host, 256, p, 256, 2) == 0
    """, "initcheck")  # fmt: skip
    assert [(f.kind, f.offset, f.bytes) for f in found] == [("uninitialized read", 100, 100)]


def test_memcheck_leaked_tensor(tmp_path):
    found, err = run_program(tmp_path, """
        p = malloc(64)
        q = malloc(32)
        dims = (c_int64 * 1)(16)
        t = nn.aclCreateTensor(dims, 1, 0, (c_int64 * 1)(1), 0, 2, dims, 1, p)  # leaked
        u = nn.aclCreateTensor(dims, 1, 0, (c_int64 * 1)(1), 0, 2, dims, 1, q)
        assert t and u
        nn.aclDestroyTensor(u)
        acl.aclrtFree(q)
        assert acl.aclFinalize() == 0
    """, "memcheck")  # fmt: skip
    kinds = sorted((f.kind, f.alloc_kind, f.bytes) for f in found)
    assert kinds == [("leak", "device", 64), ("object leak", "aclTensor", 1)]
    assert "====== SUMMARY: aclsim sanitizer: 2 finding(s)" in err


def test_memcheck_clean_program_has_no_leaks(tmp_path):
    found, _ = run_program(tmp_path, """
        p = malloc(64)
        dims = (c_int64 * 1)(16)
        t = nn.aclCreateTensor(dims, 1, 0, (c_int64 * 1)(1), 0, 2, dims, 1, p)
        nn.aclDestroyTensor(t)
        acl.aclrtFree(p)
        assert acl.aclFinalize() == 0
    """, "memcheck")  # fmt: skip
    assert found == []


def test_memcheck_double_free_use_after_free_out_of_bounds(tmp_path):
    found, _ = run_program(tmp_path, """
        p = malloc(64)
        q = malloc(64)
        host = ctypes.create_string_buffer(128)
        acl.aclrtMemcpy(host, 128, q, 128, 2)      # 64 bytes past q's end
        acl.aclrtFree(p)
        acl.aclrtMemcpy(host, 64, p, 64, 2)        # p is freed
        acl.aclrtFree(p)                           # twice
    """, "memcheck")  # fmt: skip
    got = [(f.kind, f.bytes) for f in found]
    assert got == [("illegal read", 128), ("use after free (read)", 64), ("double free", 0)]
    assert "64 bytes past the end" in found[0].note


RACE_BODY = """
    p = malloc(1024)
    s1, s2 = stream(), stream()
    acl.aclsimStreamDelay(s1, 50)                  # s1's write lands after s2's
    acl.aclrtMemsetAsync(p, 1024, 1, 1024, s1)
    {order}
    acl.aclrtMemsetAsync(p, 512, 2, 512, s2)
    acl.aclrtSynchronizeStream(s1)
    acl.aclrtSynchronizeStream(s2)
"""


def test_racecheck_unordered_streams(tmp_path):
    found, err = run_program(tmp_path, RACE_BODY.format(order="pass"), "racecheck")
    assert [(f.kind, f.bytes, f.offset) for f in found] == [("WAW", 512, 0)]
    assert {c.stream for c in found[0].calls} == {1, 2}
    assert all(c.file == "rt_copy.c" and c.line > 0 for c in found[0].calls)
    assert "Potential WAW hazard" in err


@pytest.mark.parametrize(
    "order",
    [
        "acl.aclrtSynchronizeStream(s1)",
        "e = c_void_p(); acl.aclrtCreateEvent(byref(e)); acl.aclrtRecordEvent(e, s1); "
        "acl.aclrtStreamWaitEvent(s2, e)",
        "e = c_void_p(); acl.aclrtCreateEvent(byref(e)); acl.aclrtRecordEvent(e, s1); "
        "acl.aclrtSynchronizeEvent(e)",
    ],
    ids=["sync", "event-wait", "event-sync"],
)
def test_racecheck_ordered_streams(tmp_path, order):
    found, _ = run_program(tmp_path, RACE_BODY.format(order=order), "racecheck")
    assert found == []


def test_sanitizer_off_writes_nothing(tmp_path):
    found, err = run_program(tmp_path, """
        p = malloc(64)
        host = ctypes.create_string_buffer(64)
        acl.aclrtMemcpy(host, 64, p, 64, 2)
        assert acl.aclFinalize() == 0
    """, "")  # fmt: skip
    assert found == [] and "======" not in err


def _cli_run(tmp_path: Path, faults: str, tools: str, *args: str) -> tuple[Path, list]:
    out = tmp_path / "run"
    log = tmp_path / "cli.jsonl"
    env = {**os.environ, "ACLSIM_FAULTS": faults, "ACLSIM_SANITIZE": tools,
           "ACLSIM_SANITIZE_LOG": str(log)}  # fmt: skip
    argv = [sys.executable, "-m", "stress", "run", "--out", str(out), "--quiet",
            "--record-baseline", "--baseline", str(tmp_path / "base.json"), *args]  # fmt: skip
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return out, read_jsonl(log)


#: The simulator sources of aclnnMhcPreSinkhornBackward's phase 1, faults and kernel.
_MHC_BWD_FILES = {
    "op_mhc_pre_sinkhorn_backward.c",
    "op_mhc_bwd_faults.c",
    "op_mhc_bwd_kernel.c",
    "op_mhc_bwd_block.c",
    "op_mhc_bwd_reduce.c",
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fault", "args", "region"),
    [
        ("tiling-race", ("--phases", "interleaved"), "mhc_bwd.tiling"),
        ("shared-scratch", ("--phases", "mixed", "--stream", "per-thread"), "mhc_bwd.scratch"),
    ],
)
def test_racecheck_names_both_racing_calls(tmp_path, fault, args, region):
    common = ("--corpus", "corpus/mhc.toml", "--control", "none", "--iterations", "1")
    _, found = _cli_run(tmp_path, fault, "racecheck", *common, "--threads", "4", *args)
    assert found, "no race found"
    for f in found:
        assert f.tool == "racecheck" and f.alloc_kind == region
        a, b = f.calls
        assert a.op == b.op == "aclnnMhcPreSinkhornBackward"
        assert a.call != b.call and a.call and b.call
        assert a.file in _MHC_BWD_FILES and b.file in _MHC_BWD_FILES and a.line and b.line
    if fault == "tiling-race":
        assert {(f.calls[0].stage, f.calls[1].stage) for f in found} == {("phase1", "phase2")}
    else:
        assert {c.stage for f in found for c in f.calls} == {"kernel"}
        assert all(f.calls[0].stream != f.calls[1].stream for f in found)


@pytest.mark.slow
def test_clean_corpora_have_no_findings(tmp_path):
    """Every shipped corpus (mHC + the control corpus's operators), every phase, both stream
    policies, all three tools: zero findings on the clean simulator."""
    corpora = sorted(Path("corpus").glob("*.toml"))
    args = [a for c in corpora if c.name != "control.toml" for a in ("--corpus", str(c))]
    _, found = _cli_run(tmp_path, "", "all", *args, "--iterations", "1", "--threads", "4",
                        "--stream", "both")  # fmt: skip
    assert found == [], [f.summary() for f in found]


@pytest.mark.slow
def test_sanitize_run_attaches_findings(tmp_path):
    from stress.cli.sanitize import main

    out, _ = _cli_run(tmp_path, "empty-skip", "", "--corpus", "corpus/mhc.toml", "--control",
                      "none", "--phases", "serial", "--iterations", "1")  # fmt: skip
    assert main([str(out)]) == 1
    report = json.loads((out / "report.json").read_text())
    assert report["diagnosis"] == "unwritten-output"
    assert report["sanitizer"]["explains"] == "unwritten-output"
    recs = [json.loads(x) for x in (out / "sanitize.jsonl").read_text().splitlines()]
    assert {r["tensor"] for r in recs} == {"gradPhi", "gradAlpha", "gradBias"}
    assert {r["rerun"] for r in recs} == {"empty-batch"}
    page = (out / "report.html").read_text()
    assert 'id="sanitizer-findings"' in page and "gradAlpha" in page
    assert main([str(out)]) == 2  # a second re-run refuses to overwrite


def test_initcheck_inplace_operator_reads_its_own_output(tmp_path):
    """An in-place call's output is also its input: launching it keeps the bytes' history."""
    found, _ = run_program(tmp_path, """
        op = ctypes.CDLL(os.path.join(lib64, "libopapi.so"), mode=ctypes.RTLD_GLOBAL)
        nn.aclCreateScalar.restype = c_void_p
        nn.aclCreateScalar.argtypes = [c_void_p, ctypes.c_int]
        op.aclnnInplaceAddGetWorkspaceSize.argtypes = [c_void_p] * 3 + [
            ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(c_void_p)]
        op.aclnnInplaceAdd.argtypes = [c_void_p, ctypes.c_uint64, c_void_p, c_void_p]
        dims = (c_int64 * 1)(16)
        host = (ctypes.c_float * 16)(*range(16))
        a, b = malloc(64), malloc(64)
        for p in (a, b):
            assert acl.aclrtMemcpy(p, 64, host, 64, 1) == 0
        ta = nn.aclCreateTensor(dims, 1, 0, (c_int64 * 1)(1), 0, 2, dims, 1, a)
        tb = nn.aclCreateTensor(dims, 1, 0, (c_int64 * 1)(1), 0, 2, dims, 1, b)
        one = ctypes.c_float(1.0)
        alpha = nn.aclCreateScalar(ctypes.addressof(one), 0)
        ws, ex = ctypes.c_uint64(0), c_void_p()
        assert op.aclnnInplaceAddGetWorkspaceSize(ta, tb, alpha, byref(ws), byref(ex)) == 0
        s = stream()
        assert op.aclnnInplaceAdd(None, 0, ex, s) == 0
        assert acl.aclrtSynchronizeStream(s) == 0
        out = (ctypes.c_float * 16)()
        assert acl.aclrtMemcpy(out, 64, a, 64, 2) == 0
        assert list(out) == [2.0 * i for i in range(16)]
    """, "initcheck")  # fmt: skip
    assert found == []


@pytest.mark.slow
def test_generic_operators_clean_under_initcheck_and_racecheck(tmp_path):
    """The generic operators (Add/Mul/ReduceSum/Cat/Matmul/Softmax/RmsNorm/LayerNorm) have no
    shipped corpus: their test files, run under the sanitizer, give zero findings (every output
    byte they read back was stored by a kernel)."""
    log = tmp_path / "ops.jsonl"
    env = {**os.environ, "ACLSIM_SANITIZE": "initcheck,racecheck", "ACLSIM_SANITIZE_LOG": str(log)}
    files = sorted(str(p) for p in Path(__file__).parent.glob("test_sim_op_*.py"))
    assert len(files) >= 5
    argv = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *files]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert read_jsonl(log) == [], [f.summary() for f in read_jsonl(log)][:5]


@pytest.mark.parametrize("faults", ["scratch-pool", ""])
def test_racecheck_sees_the_staging_pool_hand_over(tmp_path, faults):
    """nnopbase's staging pool hands a block to the next kernel under its mutex (release, then
    acquire: ordered); under `scratch-pool` a block still in use is handed out, so two kernels
    on two streams write one staging block unordered: racecheck names it and both calls.  Same
    concurrent Mul/Add child as tests/test_sim_scratch_pool.py."""
    import _rawacl
    from test_sim_scratch_pool import CHILD

    log = tmp_path / "san.jsonl"
    env = {"ACLSIM_FAULTS": faults, "ACLSIM_SANITIZE": "racecheck", "ACLSIM_SANITIZE_LOG": str(log)}
    proc = _rawacl.run_py(CHILD, env=env, timeout=300, args=("mixed", "30", "0"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = read_jsonl(log)
    if not faults:
        assert found == [], [f.summary() for f in found]
        return
    assert found, "no race on the staging pool"
    assert {f.alloc_kind for f in found} == {"nnopbase.stage"}
    pairs = {tuple(sorted(c.op for c in f.calls)) for f in found}
    assert ("aclnnAdd", "aclnnMul") in pairs
    assert all(
        c.file == "nb_scratch_pool.c" and c.stage == "kernel" for f in found for c in f.calls
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "corrupt sanitizer summary, not valid JSON"),
        ("[1, 2]", "is not a JSON object"),
        ('{"findings": 3}', "'findings' is not a list of objects"),
        ('{"reruns": [1]}', "'reruns' is not a list of objects"),
        ("[" * 5000 + "]" * 5000, "nests more than"),
    ],
)
def test_a_bad_earlier_sanitize_summary_is_one_line_naming_it(tmp_path, text, says):
    from stress.errors import ConfigError
    from stress.sanitize.rerun import _earlier

    (tmp_path / "sanitize.json").write_text(text)
    with pytest.raises(ConfigError, match=says) as err:
        _earlier(tmp_path, "tsan")
    assert "sanitize.json" in str(err.value) and "remove it to start over" in str(err.value)


def test_an_earlier_summary_keeps_the_other_tools_records(tmp_path):
    from stress.sanitize.rerun import _earlier

    (tmp_path / "sanitize.json").write_text(
        json.dumps({"findings": [{"via": "tsan", "k": 1}, {"k": 2}], "reruns": [{"via": "tsan"}]})
    )
    assert _earlier(tmp_path, "tsan") == ([{"k": 2}], [])
