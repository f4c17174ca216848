"""The simulator's runtime (libascendcl) and nnopbase objects through raw ctypes: status codes,
per-thread contexts, streams, device memory and guard bytes, error messages, leaks, exit."""

from __future__ import annotations

import ctypes
import gc
import json
import os
import re
import shutil
import threading
import time
from ctypes import byref, c_char, c_int32, c_int64, c_uint32, c_void_p

import _rawacl as r
import numpy as np
import pytest

FILL = 0xCD  # fresh device memory


@pytest.fixture(scope="module")
def acl():
    return r.load()


@pytest.fixture(autouse=True, scope="module")
def _quiet_gc():
    """Collect other tests' garbage once, then keep the cyclic GC off for this module, so no
    finalizer of another test's objects frees simulator objects between a test's baseline and
    its leak check."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


@pytest.fixture()
def ctx(acl):
    """Device 0's default context, current on the test's thread."""
    assert acl.aclrtSetDevice(0) == r.OK
    cur = c_void_p()
    assert acl.aclrtGetCurrentContext(byref(cur)) == r.OK
    yield cur.value
    assert acl.aclrtResetDevice(0) == r.OK
    acl.aclGetRecentErrMsg()


@pytest.fixture()
def stream(acl, ctx):
    s = r.create_stream(acl)
    yield s
    assert acl.aclrtDestroyStream(s) == r.OK


def expect(acl, rc, code, *fragments):
    """Assert status `rc` == code and that the recent message mentions code and fragments."""
    msg = acl.msg()
    assert rc == code, (rc, msg)
    assert f"[{code}]" in msg, msg
    for frag in fragments:
        assert frag in msg, (frag, msg)
    return msg


def child(code: str, env: dict[str, str] | None = None, timeout: float = 60):
    """Run a snippet with `acl` bound to the raw libraries (NOT initialised) in a child process;
    the snippet prints JSON on its last line."""
    prelude = "import _rawacl as r, json, ctypes\nfrom stress import sim\nacl = r.Acl(sim.root())\n"
    proc = r.run_py(prelude + code, env=env, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- init, devices, system info ----------------------------------------------------------------


def test_init_twice_is_reported(acl):
    expect(acl, acl.aclInit(None), r.REPEAT_INITIALIZE, "aclInit")


def test_lifecycle_codes_in_a_fresh_process():
    res = child(
        "out = {}\n"
        "out['finalize_first'] = acl.aclFinalize(); out['m1'] = acl.msg()\n"
        "out['setdev'] = acl.aclrtSetDevice(0); out['m2'] = acl.msg()\n"
        "c = ctypes.c_void_p()\n"
        "out['ctx'] = acl.aclrtCreateContext(ctypes.byref(c), 0)\n"
        "out['init'] = acl.aclInit(None)\n"
        "out['init_bad_path'] = acl.aclInit(b'/nonexistent/acl.json')\n"
        "out['fin'] = acl.aclFinalize()\n"
        "out['fin2'] = acl.aclFinalize()\n"
        "out['bad_path'] = acl.aclInit(b'/nonexistent/acl.json'); out['m3'] = acl.msg()\n"
        "out['reinit'] = acl.aclInit(None)\n"
        "print(json.dumps(out))\n"
    )
    assert res["finalize_first"] == r.REPEAT_FINALIZE and "aclFinalize" in res["m1"]
    assert res["setdev"] == r.UNINITIALIZE and "aclInit" in res["m2"]
    assert res["ctx"] == r.UNINITIALIZE
    assert res["init"] == r.OK
    assert res["init_bad_path"] == r.REPEAT_INITIALIZE
    assert res["fin"] == r.OK and res["fin2"] == r.REPEAT_FINALIZE
    assert res["bad_path"] == r.INVALID_PARAM and "configPath" in res["m3"]
    assert res["reinit"] == r.OK


def test_device_count_default_and_invalid_ids(acl):
    n = c_uint32()
    count = int(os.environ.get("ACLSIM_DEVICES") or 8)  # 8 unless the runner overrides it
    assert acl.aclrtGetDeviceCount(byref(n)) == r.OK and n.value == count
    expect(acl, acl.aclrtGetDeviceCount(None), r.INVALID_PARAM, "count")
    for bad in (-1, count, 1000):
        expect(acl, acl.aclrtSetDevice(bad), r.INVALID_DEVICEID, "aclrtSetDevice", str(bad))
    c = c_void_p()
    expect(acl, acl.aclrtCreateContext(byref(c), count), r.INVALID_DEVICEID, "aclrtCreateContext")
    expect(acl, acl.aclrtResetDevice(99), r.INVALID_DEVICEID)


def test_aclsim_devices_env():
    res = child(
        "n = ctypes.c_uint32(); out = {'init': acl.aclInit(None)}\n"
        "acl.aclrtGetDeviceCount(ctypes.byref(n)); out['n'] = n.value\n"
        "out['dev2'] = acl.aclrtSetDevice(2); out['dev3'] = acl.aclrtSetDevice(3)\n"
        "print(json.dumps(out))\n",
        env={"ACLSIM_DEVICES": "3"},
    )
    assert res == {"init": 0, "n": 3, "dev2": 0, "dev3": r.INVALID_DEVICEID}
    for bad in ("abc", "-1", "65", "2x"):
        res = child(
            "out = {'init': acl.aclInit(None), 'msg': acl.msg()}\n"
            "c = ctypes.c_void_p(); out['after'] = acl.aclrtSetDevice(0)\n"
            "print(json.dumps(out))\n",
            env={"ACLSIM_DEVICES": bad},
        )
        assert res["init"] == r.INVALID_PARAM and "ACLSIM_DEVICES" in res["msg"], res
        assert res["after"] == r.UNINITIALIZE  # the failed aclInit left the process uninitialised


def test_aclsim_faults_env():
    code = "print(json.dumps({'init': acl.aclInit(None), 'msg': acl.msg()}))\n"
    assert child(code, env={"ACLSIM_FAULTS": ""})["init"] == r.OK
    assert child(code, env={"ACLSIM_FAULTS": " , "})["init"] == r.OK
    known = [n for n in r.load().aclsimKnownFaults().decode().split(",") if n]
    if known:  # every listed name is accepted, also several at once
        assert child(code, env={"ACLSIM_FAULTS": ",".join(known)})["init"] == r.OK
    res = child(code, env={"ACLSIM_FAULTS": "no_such_fault"})
    assert res["init"] == r.INVALID_PARAM
    assert "unknown fault 'no_such_fault'" in res["msg"] and "known faults" in res["msg"]


def test_soc_and_versions(acl):
    soc = acl.aclrtGetSocName().decode()
    assert soc.startswith("Ascend910B") and "aclsim" in soc
    buf = (c_char * 128)()
    for pkg in (b"runtime", b"driver", b"firmware", b"opp", b"toolkit", b"cann"):
        assert acl.aclsysGetVersionStr(pkg, buf) == r.OK
        assert buf.value.decode().startswith("9.2.0-aclsim.")
    expect(acl, acl.aclsysGetVersionStr(b"nope", buf), r.INVALID_PARAM, "nope")
    expect(acl, acl.aclsysGetVersionStr(None, buf), r.INVALID_PARAM, "pkgName")
    version = acl.aclsimVersion().decode()
    assert version.endswith("+" + acl.root.name)
    known = acl.aclsimKnownFaults().decode()
    names = [name for name in known.split(",") if name]
    assert names and all(re.fullmatch(r"[a-z0-9_-]+", name) for name in names), known
    assert acl.aclnnInit(None) == r.OK and acl.aclnnFinalize() == r.OK


# ---- contexts ---------------------------------------------------------------------------------


def test_new_thread_has_no_context_until_it_sets_one(acl, ctx):
    def no_context():
        out = {}
        s, p, d, cur = c_void_p(), c_void_p(), c_int32(), c_void_p()
        out["stream"] = (acl.aclrtCreateStream(byref(s)), acl.msg())
        out["malloc"] = (acl.aclrtMalloc(byref(p), 64, 0), acl.msg())
        out["ctxopt"] = (acl.aclrtCtxSetSysParamOpt(0, 1), acl.msg())
        out["getdev"] = acl.aclrtGetDevice(byref(d))
        out["getctx"] = acl.aclrtGetCurrentContext(byref(cur))
        out["sync_default"] = acl.aclrtSynchronizeStream(None)
        out["syncdev"] = acl.aclrtSynchronizeDevice()
        # then it works after binding the main thread's context
        assert acl.aclrtSetCurrentContext(ctx) == r.OK
        out["stream2"] = acl.aclrtCreateStream(byref(s))
        out["malloc2"] = acl.aclrtMalloc(byref(p), 64, 0)
        out["getdev2"] = (acl.aclrtGetDevice(byref(d)), d.value)
        assert acl.aclrtFree(p) == r.OK and acl.aclrtDestroyStream(s) == r.OK
        return out

    out = r.in_thread(no_context)
    for key in ("stream", "malloc", "ctxopt"):
        rc, msg = out[key]
        assert rc == r.CONTEXT_NULL and "no current context" in msg and "[107002]" in msg, key
    assert out["getdev"] == out["getctx"] == r.CONTEXT_NULL
    assert out["sync_default"] == out["syncdev"] == r.CONTEXT_NULL
    assert out["stream2"] == out["malloc2"] == r.OK and out["getdev2"] == (r.OK, 0)


def test_default_context_is_shared_by_threads_that_set_the_device(acl, ctx):
    def set_and_get():
        assert acl.aclrtSetDevice(0) == r.OK
        cur = c_void_p()
        assert acl.aclrtGetCurrentContext(byref(cur)) == r.OK
        assert acl.aclrtResetDevice(0) == r.OK
        return cur.value

    seen = {r.in_thread(set_and_get) for _ in range(3)}
    assert seen == {ctx}


def test_set_device_replaces_an_explicit_context(acl, ctx):
    c = c_void_p()
    assert acl.aclrtCreateContext(byref(c), 1) == r.OK
    cur, dev = c_void_p(), c_int32()
    assert acl.aclrtGetCurrentContext(byref(cur)) == r.OK and cur.value == c.value
    assert acl.aclrtGetDevice(byref(dev)) == r.OK and dev.value == 1
    assert acl.aclrtSetDevice(0) == r.OK
    assert acl.aclrtGetCurrentContext(byref(cur)) == r.OK and cur.value == ctx
    assert acl.aclrtResetDevice(0) == r.OK
    assert acl.aclrtDestroyContext(c) == r.OK


def test_context_created_in_one_thread_used_in_another(acl, ctx):
    def make():
        c = c_void_p()
        assert acl.aclrtCreateContext(byref(c), 2) == r.OK
        return c.value

    c = r.in_thread(make)
    assert acl.aclrtSetCurrentContext(c) == r.OK
    s = r.create_stream(acl)
    p = r.malloc(acl, 128)
    dev = c_int32()
    assert acl.aclrtGetDevice(byref(dev)) == r.OK and dev.value == 2
    assert acl.aclrtFree(p) == r.OK and acl.aclrtDestroyStream(s) == r.OK
    assert acl.aclrtDestroyContext(c) == r.OK
    cur = c_void_p()
    expect(acl, acl.aclrtGetCurrentContext(byref(cur)), r.CONTEXT_NULL)  # cleared on this thread
    assert acl.aclrtSetDevice(0) == r.OK and acl.aclrtResetDevice(0) == r.OK  # rebind for fixture


def test_destroy_context_errors(acl, ctx):
    expect(
        acl, acl.aclrtDestroyContext(ctx), r.INVALID_PARAM, "default context", "aclrtResetDevice"
    )
    expect(acl, acl.aclrtDestroyContext(None), r.INVALID_PARAM, "NULL")
    c = c_void_p()
    assert acl.aclrtCreateContext(byref(c), 0) == r.OK
    assert acl.aclrtDestroyContext(c) == r.OK
    expect(acl, acl.aclrtDestroyContext(c), r.INVALID_PARAM, "not a live context")
    expect(acl, acl.aclrtSetCurrentContext(c), r.INVALID_PARAM, "not a live context")
    expect(acl, acl.aclrtSetCurrentContext(0x1234), r.INVALID_PARAM)  # garbage: no crash
    assert acl.aclrtSetCurrentContext(ctx) == r.OK


def test_context_destroyed_by_another_thread_stops_resolving(acl, ctx):
    c = c_void_p()
    assert acl.aclrtCreateContext(byref(c), 0) == r.OK  # current here
    assert r.in_thread(acl.aclrtDestroyContext, c) == r.OK
    p = c_void_p()
    expect(acl, acl.aclrtMalloc(byref(p), 64, 0), r.CONTEXT_NULL)
    assert acl.aclrtSetCurrentContext(ctx) == r.OK


def test_reset_device_destroys_default_context_and_its_streams(acl, ctx):
    base = acl.live()
    assert acl.aclrtSetDevice(5) == r.OK
    d5 = c_void_p()
    assert acl.aclrtGetCurrentContext(byref(d5)) == r.OK
    s = r.create_stream(acl)
    assert acl.aclsimStreamDelay(s, 20) == r.OK
    assert acl.aclrtSetDevice(5) == r.OK  # ref count 2
    assert acl.aclrtResetDevice(5) == r.OK
    assert acl.aclrtSynchronizeStream(s) == r.OK  # still alive at count 1
    assert acl.aclrtResetDevice(5) == r.OK  # count 0: context and streams destroyed
    expect(acl, acl.aclrtSynchronizeStream(s), r.INVALID_PARAM, "not a live stream")
    expect(acl, acl.aclrtSetCurrentContext(d5), r.INVALID_PARAM)
    expect(acl, acl.aclrtResetDevice(5), r.INVALID_PARAM, "not set")
    assert acl.live() == base
    assert acl.aclrtSetCurrentContext(ctx) == r.OK


# ---- system parameters ------------------------------------------------------------------------


def test_sys_param_opts(acl, ctx):
    v = c_int64()
    expect(acl, acl.aclrtSetSysParamOpt(4, 1), r.INVALID_PARAM, "opt 4")
    expect(acl, acl.aclrtGetSysParamOpt(-1, byref(v)), r.INVALID_PARAM)
    expect(acl, acl.aclrtCtxSetSysParamOpt(9, 1), r.INVALID_PARAM)
    expect(acl, acl.aclrtGetSysParamOpt(0, None), r.INVALID_PARAM, "value")
    assert acl.aclrtGetSysParamOpt(0, byref(v)) == r.OK
    saved = v.value  # other tests in this process may have set it
    assert acl.aclrtCtxGetSysParamOpt(3, byref(v)) == r.OK
    default_ctx_opt3 = v.value
    c = c_void_p()
    assert acl.aclrtCreateContext(byref(c), 0) == r.OK
    try:
        assert acl.aclrtSetSysParamOpt(0, 1) == r.OK
        assert acl.aclrtCtxGetSysParamOpt(0, byref(v)) == r.OK and v.value == 1  # inherits
        assert acl.aclrtCtxSetSysParamOpt(0, 0) == r.OK
        assert acl.aclrtCtxGetSysParamOpt(0, byref(v)) == r.OK and v.value == 0  # overrides
        assert acl.aclrtGetSysParamOpt(0, byref(v)) == r.OK and v.value == 1
        assert acl.aclrtCtxSetSysParamOpt(3, 7) == r.OK
    finally:
        assert acl.aclrtSetSysParamOpt(0, saved) == r.OK
        assert acl.aclrtDestroyContext(c) == r.OK
        assert acl.aclrtSetCurrentContext(ctx) == r.OK
    assert acl.aclrtCtxGetSysParamOpt(3, byref(v)) == r.OK
    assert v.value == default_ctx_opt3  # the other context's setting stayed there


def test_sys_params_default_off_in_a_fresh_process():
    res = child(
        "v = ctypes.c_int64(); assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0\n"
        "out = [acl.aclrtGetSysParamOpt(k, ctypes.byref(v)) or v.value for k in range(4)]\n"
        "out += [acl.aclrtCtxGetSysParamOpt(k, ctypes.byref(v)) or v.value for k in range(4)]\n"
        "print(json.dumps(out))\n"
    )
    assert res == [0] * 8


# ---- error messages ---------------------------------------------------------------------------


def test_recent_error_message_is_per_thread_and_cleared_on_read(acl, ctx):
    assert acl.msg() == ""  # nothing pending: "" (not NULL)
    p = c_void_p()
    assert acl.aclrtMalloc(byref(p), 0, 0) == r.INVALID_PARAM
    assert r.in_thread(acl.msg) == ""  # other thread sees nothing
    assert acl.msg() == "aclrtMalloc: size must be > 0 (got 0) [100000]"
    assert acl.msg() == ""
    # a success does not clear a pending message; a later failure replaces it
    assert acl.aclrtMalloc(byref(p), 0, 0) == r.INVALID_PARAM
    assert acl.aclrtMalloc(byref(p), 16, 77) == r.INVALID_PARAM
    assert "policy 77" in acl.msg()

    def fail_in_thread():
        acl.aclrtSetDevice(99)
        return acl.msg()

    assert "deviceId 99" in r.in_thread(fail_in_thread)
    assert acl.msg() == ""


# ---- streams ----------------------------------------------------------------------------------


def test_stream_tasks_are_async_and_synchronize_waits(acl, stream):
    t0 = time.monotonic()
    assert acl.aclsimStreamDelay(stream, 150) == r.OK
    assert time.monotonic() - t0 < 0.1  # enqueue does not wait
    expect(acl, acl.aclrtSynchronizeStreamWithTimeout(stream, 10), r.SYNC_TIMEOUT, "10 ms")
    assert acl.aclrtSynchronizeStreamWithTimeout(stream, -1) == r.OK
    assert time.monotonic() - t0 >= 0.15
    assert acl.aclrtSynchronizeStreamWithTimeout(stream, 0) == r.OK  # nothing pending
    expect(acl, acl.aclrtSynchronizeStreamWithTimeout(stream, -2), r.INVALID_PARAM, "timeout")
    expect(acl, acl.aclsimStreamDelay(stream, -1), r.INVALID_PARAM)


def test_default_stream_and_synchronize_device(acl, ctx, stream):
    t0 = time.monotonic()
    assert acl.aclsimStreamDelay(None, 60) == r.OK  # NULL: the context's default stream
    assert acl.aclsimStreamDelay(stream, 80) == r.OK
    assert acl.aclrtSynchronizeDevice() == r.OK
    assert time.monotonic() - t0 >= 0.08
    assert acl.aclrtSynchronizeStream(None) == r.OK


def test_destroy_stream_runs_queued_work_first(acl, ctx):
    s = r.create_stream(acl)
    buf = np.zeros(4, np.float32)
    a = r.upload(acl, np.arange(4, dtype=np.float32))
    out = r.upload(acl, buf)
    alpha = r.make_scalar(acl, 1.0, r.ACL_FLOAT)
    assert acl.aclsimStreamDelay(s, 50) == r.OK
    assert r.run_add(acl, a.tensor, a.tensor, alpha, out.tensor, s) == r.OK
    assert acl.aclrtDestroyStream(s) == r.OK
    got = r.download(acl, out.ptr, out.nbytes, np.float32, (4,))
    np.testing.assert_array_equal(got, 2 * np.arange(4, dtype=np.float32))
    expect(acl, acl.aclrtDestroyStream(s), r.INVALID_PARAM, "not a live stream")
    expect(acl, acl.aclrtSynchronizeStream(s), r.INVALID_PARAM)
    expect(acl, acl.aclrtDestroyStream(None), r.INVALID_PARAM)
    expect(acl, acl.aclrtCreateStream(None), r.INVALID_PARAM)
    for h in (a, out):
        assert acl.aclDestroyTensor(h.tensor) == r.OK and acl.aclrtFree(h.ptr) == r.OK
    assert acl.aclDestroyScalar(alpha) == r.OK


# ---- device memory ----------------------------------------------------------------------------


def test_malloc_contract(acl, ctx):
    p = c_void_p()
    expect(acl, acl.aclrtMalloc(byref(p), 0, 0), r.INVALID_PARAM, "size must be > 0")
    expect(acl, acl.aclrtMalloc(None, 16, 0), r.INVALID_PARAM, "devPtr")
    expect(acl, acl.aclrtMalloc(byref(p), 16, 8), r.INVALID_PARAM, "policy 8")
    expect(acl, acl.aclrtMalloc(byref(p), 1 << 40, 0), r.MEMORY_ALLOCATION)
    for policy in (0, 1, 2, 0x100, 0x1000, 0x100000):
        ptrs = [r.malloc(acl, n) for n in (1, 33, 4096)]
        for q, n in zip(ptrs, (1, 33, 4096), strict=True):
            assert q % 64 == 0, policy
            assert ctypes.string_at(q, n) == bytes([FILL]) * n  # not zeroed
            assert acl.aclrtFree(q) == r.OK
    expect(acl, acl.aclrtFree(None), r.INVALID_PARAM)
    q = r.malloc(acl, 64)
    expect(acl, acl.aclrtFree(q + 8), r.INVALID_PARAM, "not its start")
    assert acl.aclrtFree(q) == r.OK
    expect(acl, acl.aclrtFree(q), r.INVALID_PARAM, "not a live device allocation")
    host = np.zeros(4)
    expect(acl, acl.aclrtFree(host.ctypes.data), r.INVALID_PARAM)


def test_guard_bytes_catch_writes_past_the_end(acl, ctx):
    base = acl.live()
    p = r.malloc(acl, 100)  # guard bytes 100..159 (rounded to 128, plus 32)
    ctypes.memmove(p, b"\1" * 100, 100)  # in bounds: fine
    assert acl.aclrtFree(p) == r.OK
    p = r.malloc(acl, 100)
    ctypes.memmove(p + 100, b"\0\0\0\0", 4)  # 4 bytes past the end
    msg = expect(acl, acl.aclrtFree(p), r.AICORE_EXCEPTION, "wrote past the end", "of 100 bytes")
    assert hex(p)[2:] in msg
    p = r.malloc(acl, 128)
    ctypes.memmove(p + 159, b"\0", 1)  # last guard byte
    expect(acl, acl.aclrtFree(p), r.AICORE_EXCEPTION)
    assert acl.live() == base  # freed anyway


def test_memcpy_and_memset(acl, ctx):
    src = np.arange(64, dtype=np.uint8)
    d1, d2 = r.malloc(acl, 64), r.malloc(acl, 64)
    assert acl.aclrtMemcpy(d1, 64, src.ctypes.data, 64, 1) == r.OK  # H2D
    assert acl.aclrtMemcpy(d2, 64, d1, 64, 3) == r.OK  # D2D
    back = np.zeros(64, np.uint8)
    assert acl.aclrtMemcpy(back.ctypes.data, 64, d2, 64, 2) == r.OK  # D2H
    np.testing.assert_array_equal(back, src)
    back2 = np.zeros(64, np.uint8)
    assert acl.aclrtMemcpy(back2.ctypes.data, 64, d2, 64, 4) == r.OK  # DEFAULT infers D2H
    assert acl.aclrtMemcpy(back.ctypes.data, 64, src.ctypes.data, 64, 0) == r.OK  # H2H
    np.testing.assert_array_equal(back2, src)
    assert acl.aclrtMemcpy(d1, 64, src.ctypes.data, 0, 1) == r.OK  # count 0: nothing
    expect(acl, acl.aclrtMemcpy(d1, 64, src.ctypes.data, 64, 8), r.INVALID_PARAM, "kind 8")  # 0..7
    expect(acl, acl.aclrtMemcpy(d1, 32, src.ctypes.data, 64, 1), r.INVALID_PARAM, "destMax")
    expect(acl, acl.aclrtMemcpy(d1 + 32, 64, src.ctypes.data, 64, 1), r.INVALID_PARAM,
           "not inside one live device allocation")  # fmt: skip
    expect(acl, acl.aclrtMemcpy(back.ctypes.data, 64, src.ctypes.data, 64, 1), r.INVALID_PARAM,
           "dst")  # fmt: skip
    expect(acl, acl.aclrtMemcpy(d1, 64, d2, 64, 1), r.INVALID_PARAM, "src", "device memory")
    expect(acl, acl.aclrtMemcpy(None, 64, d2, 64, 2), r.INVALID_PARAM, "dst is NULL")
    # memset: device and host, by address
    assert acl.aclrtMemset(d1, 64, 7, 64) == r.OK
    assert ctypes.string_at(d1, 64) == b"\7" * 64
    assert acl.aclrtMemset(back.ctypes.data, 64, 3, 64) == r.OK and (back == 3).all()
    expect(acl, acl.aclrtMemset(d1, 16, 0, 32), r.INVALID_PARAM, "maxCount")
    expect(acl, acl.aclrtMemset(d1 + 16, 64, 0, 64), r.INVALID_PARAM)
    expect(acl, acl.aclrtMemset(None, 64, 0, 64), r.INVALID_PARAM)
    assert acl.aclrtFree(d1) == r.OK and acl.aclrtFree(d2) == r.OK

    def no_context_copy():
        return acl.aclrtMemcpy(back.ctypes.data, 64, src.ctypes.data, 64, 0), acl.aclrtMemcpy(
            d1, 64, src.ctypes.data, 64, 1
        )

    assert r.in_thread(no_context_copy) == (r.OK, r.CONTEXT_NULL)


def test_host_memory(acl):
    p = c_void_p()
    assert acl.aclrtMallocHost(byref(p), 100) == r.OK and p.value % 64 == 0
    ctypes.memset(p, 1, 100)
    assert acl.aclrtFreeHost(p) == r.OK
    expect(acl, acl.aclrtFreeHost(p), r.INVALID_PARAM, "aclrtMallocHost")
    expect(acl, acl.aclrtMallocHost(byref(p), 0), r.INVALID_PARAM)
    expect(acl, acl.aclrtMallocHost(None, 8), r.INVALID_PARAM)


# ---- nnopbase objects -------------------------------------------------------------------------


def test_create_tensor_is_as_lenient_as_cann(acl):
    """Real aclCreateTensor returns NULL only for a NULL dims pointer with a non-zero count; it
    checks neither dtype, format, offset, the signs of dims or strides nor the dim count
    (hicann/opbase src/nnopbase/common/api/acl_op_api.cpp; spec/acl-api.md section 5)."""
    i64 = r.i64s
    ok = acl.aclCreateTensor(i64([2, 3]), 2, r.ACL_FLOAT, None, 0, r.ACL_FORMAT_ND, i64([2, 3]), 2,
                             None)  # fmt: skip
    assert ok and acl.aclDestroyTensor(ok) == r.OK
    empty = acl.aclCreateTensor(None, 0, r.ACL_FLOAT, None, 0, r.ACL_FORMAT_ND, None, 0, None)
    assert empty and acl.aclDestroyTensor(empty) == r.OK  # 0-d tensor
    accepted = [
        (i64([1] * 26), 26, 0, None, 0, 2, None, 0),  # more than 25 dims
        (i64([2, -1]), 2, 0, None, 0, 2, None, 0),  # negative dim
        (i64([2, 2]), 2, 0, i64([-2, 1]), 0, 2, None, 0),  # negative stride
        (i64([2]), 1, 0, None, -1, 2, None, 0),  # negative offset
        (i64([2]), 1, -1, None, 0, 2, None, 0),  # ACL_DT_UNDEFINED placeholder
        (i64([2]), 1, 99, None, 0, 2, None, 0),  # unknown dtype
        (i64([2]), 1, 0, None, 0, 99, None, 0),  # private format
        (i64([2]), 1, 0, None, 0, 2, i64([-3]), 1),  # negative storage dim
        (i64([1 << 40, 1 << 40]), 2, 0, None, 0, 2, None, 0),  # byte offsets overflow
    ]
    for args in accepted:
        t = acl.aclCreateTensor(*args, None)
        assert t, args
        assert acl.aclDestroyTensor(t) == r.OK
    for args, frag in (
        ((None, 2, 0, None, 0, 2, None, 0), "viewDims is NULL"),
        ((i64([2]), 1, 0, None, 0, 2, None, 3), "storageDims is NULL"),
    ):
        assert acl.aclCreateTensor(*args, None) is None, frag
        expect(acl, r.NN_NULLPTR, r.NN_NULLPTR, "aclCreateTensor", frag)
    assert acl.aclDestroyTensor(None) == r.OK
    t = acl.aclCreateTensor(i64([2]), 1, r.ACL_FLOAT, None, 0, 2, None, 0, None)
    assert acl.aclDestroyTensor(t) == r.OK
    expect(acl, acl.aclDestroyTensor(t), r.NN_INVALID, "not a live aclTensor")


def test_operators_refuse_what_creation_accepts(acl):
    """The lenient tensors fail where CANN's operators check (phase 1, 161002), with a message
    naming the argument: more than 25 dims, a negative dim."""
    i64 = r.i64s
    alpha = r.make_scalar(acl, 1.0, r.ACL_FLOAT)
    good = acl.aclCreateTensor(i64([2]), 1, r.ACL_FLOAT, None, 0, 2, None, 0, None)
    for args, frag in (
        ((i64([1] * 26), 26, 0, None, 0, 2, None, 0), "at most 25"),
        ((i64([2, -1]), 2, 0, None, 0, 2, None, 0), "negative"),
    ):
        t = acl.aclCreateTensor(*args, None)
        ws, ex = ctypes.c_uint64(), c_void_p()
        rc = acl.aclnnAddGetWorkspaceSize(t, good, alpha, good, byref(ws), byref(ex))
        expect(acl, rc, r.NN_INVALID, "aclnnAdd", "self", frag)
        assert acl.aclDestroyTensor(t) == r.OK
    assert acl.aclDestroyTensor(good) == acl.aclDestroyScalar(alpha) == r.OK


def test_tensor_getters(acl):
    """aclGetViewShape / ViewStrides / StorageShape return new arrays; ViewOffset, Format,
    DataType the values given at creation, whatever they are; NULL tensor or output -> 161001
    (acl_op_api.cpp)."""
    i64 = r.i64s
    t = acl.aclCreateTensor(i64([2, 3, 4]), 3, r.ACL_BF16, i64([12, -4, 1]), -5, 29, i64([7, 8]),
                            2, None)  # fmt: skip
    assert t
    for fn, want in ((acl.aclGetViewShape, [2, 3, 4]), (acl.aclGetViewStrides, [12, -4, 1]),
                     (acl.aclGetStorageShape, [7, 8])):  # fmt: skip
        arr, n = ctypes.POINTER(c_int64)(), ctypes.c_uint64()
        assert fn(t, byref(arr), byref(n)) == r.OK
        assert [arr[i] for i in range(n.value)] == want
        ctypes.CDLL(None).free(arr)
    off, fmt, dt = c_int64(), ctypes.c_int(), ctypes.c_int()
    assert acl.aclGetViewOffset(t, byref(off)) == acl.aclGetFormat(t, byref(fmt)) == r.OK
    assert acl.aclGetDataType(t, byref(dt)) == r.OK
    assert (off.value, fmt.value, dt.value) == (-5, 29, r.ACL_BF16)
    contiguous = acl.aclCreateTensor(i64([2, 3]), 2, 0, None, 0, 2, None, 0, None)
    arr, n = ctypes.POINTER(c_int64)(), ctypes.c_uint64()
    assert acl.aclGetViewStrides(contiguous, byref(arr), byref(n)) == r.OK
    assert [arr[i] for i in range(n.value)] == [3, 1]  # NULL stride: contiguous
    ctypes.CDLL(None).free(arr)
    assert acl.aclGetViewShape(None, byref(arr), byref(n)) == r.NN_NULLPTR
    assert acl.aclGetViewOffset(t, None) == r.NN_NULLPTR
    assert acl.aclGetDataType(None, byref(dt)) == r.NN_NULLPTR
    acl.msg()
    assert acl.aclDestroyTensor(t) == acl.aclDestroyTensor(contiguous) == r.OK


def test_array_and_list_sizes(acl):
    """aclGet{Int,Float,Bool}ArraySize and aclGet{Tensor,Scalar}ListSize give the size; NULL
    array or size pointer -> 161001 (acl_op_api.cpp)."""
    n = ctypes.c_uint64()
    ia = acl.aclCreateIntArray(r.i64s([1, 2, 3]), 3)
    fa = acl.aclCreateFloatArray((ctypes.c_float * 2)(1.0, 2.0), 2)
    ba = acl.aclCreateBoolArray(None, 0)
    for fn, h, want in ((acl.aclGetIntArraySize, ia, 3), (acl.aclGetFloatArraySize, fa, 2),
                        (acl.aclGetBoolArraySize, ba, 0)):  # fmt: skip
        assert fn(h, byref(n)) == r.OK and n.value == want
        assert fn(None, byref(n)) == r.NN_NULLPTR and fn(h, None) == r.NN_NULLPTR
    members = (c_void_p * 2)(*[r.make_scalar(acl, float(i), r.ACL_FLOAT) for i in range(2)])
    sl = acl.aclCreateScalarList(members, 2)
    assert acl.aclGetScalarListSize(sl, byref(n)) == r.OK and n.value == 2
    assert acl.aclGetTensorListSize(None, byref(n)) == r.NN_NULLPTR
    acl.msg()
    assert acl.aclDestroyScalarList(sl) == r.OK
    assert acl.aclDestroyIntArray(ia) == acl.aclDestroyFloatArray(fa) == r.OK
    assert acl.aclDestroyBoolArray(ba) == r.OK


def test_destroying_a_list_destroys_its_members(acl):
    """Real aclDestroyTensorList / aclDestroyScalarList call aclDestroyTensor / aclDestroyScalar
    on every member (acl_op_api.cpp), so destroying a member as well is a double free in CANN.
    The simulator detects both orders and fails with 161002 naming the rule."""
    base = acl.live()
    ts = [acl.aclCreateTensor(r.i64s([2]), 1, 0, None, 0, 2, None, 0, None) for _ in range(3)]
    tl = acl.aclCreateTensorList((c_void_p * 3)(*ts), 3)
    assert tl and acl.aclsimLiveObjects(r.LIVE_LISTS) == base[r.LIVE_LISTS] + 1
    assert acl.aclDestroyTensorList(tl) == r.OK
    assert acl.live() == base  # the members went with it
    expect(acl, acl.aclDestroyTensor(ts[0]), r.NN_INVALID, "not a live aclTensor")
    # the other order: a member destroyed first, then the list
    ts = [acl.aclCreateTensor(r.i64s([2]), 1, 0, None, 0, 2, None, 0, None) for _ in range(2)]
    tl = acl.aclCreateTensorList((c_void_p * 3)(ts[0], None, ts[1]), 3)  # NULL members allowed
    assert acl.aclDestroyTensor(ts[1]) == r.OK
    expect(acl, acl.aclDestroyTensorList(tl), r.NN_INVALID, "destroys its members")
    assert acl.live() == base
    assert acl.aclCreateTensorList(None, 2) is None
    expect(acl, r.NN_NULLPTR, r.NN_NULLPTR, "value is NULL")
    empty = acl.aclCreateTensorList(None, 0)
    assert empty and acl.aclDestroyTensorList(empty) == r.OK
    assert acl.aclDestroyTensorList(None) == acl.aclDestroyScalarList(None) == r.OK


def test_scalars_and_arrays(acl):
    base = acl.live()
    for value, dtype in ((1.5, r.ACL_FLOAT), (2.5, r.ACL_DOUBLE), (-3, r.ACL_INT32),
                         (1 << 40, r.ACL_INT64), (True, r.ACL_BOOL), (0.5, r.ACL_FLOAT16),
                         (0.5, r.ACL_BF16), (-7, r.ACL_INT8)):  # fmt: skip
        s = r.make_scalar(acl, value, dtype)
        assert acl.aclDestroyScalar(s) == r.OK
    assert acl.aclCreateScalar(None, r.ACL_FLOAT) is None
    expect(acl, r.NN_NULLPTR, r.NN_NULLPTR, "value is NULL")
    # real aclCreateScalar accepts complex and the 8/6/4-bit float types (spec/acl-api.md s5)
    x = (ctypes.c_double * 2)(1.0, 2.0)
    for dtype in (16, 17, 33, 34, 35, 36, 37, 38, 39, 40, 41):
        s = acl.aclCreateScalar(x, dtype)
        assert s, dtype
        assert acl.aclDestroyScalar(s) == r.OK
    assert acl.aclCreateScalar(x, 13) is None  # ACL_STRING is not a number
    expect(acl, r.NN_INVALID, r.NN_INVALID, "STRING")
    ia = acl.aclCreateIntArray(r.i64s([1, 2, 3]), 3)
    fa = acl.aclCreateFloatArray((ctypes.c_float * 2)(1.0, 2.0), 2)
    ba = acl.aclCreateBoolArray((ctypes.c_bool * 1)(True), 1)
    empty = acl.aclCreateIntArray(None, 0)
    assert ia and fa and ba and empty
    assert acl.aclsimLiveObjects(r.LIVE_ARRAYS) == base[r.LIVE_ARRAYS] + 4
    assert acl.aclCreateIntArray(None, 2) is None
    expect(acl, r.NN_NULLPTR, r.NN_NULLPTR, "value is NULL")
    assert acl.aclDestroyIntArray(ia) == acl.aclDestroyFloatArray(fa) == r.OK
    assert acl.aclDestroyBoolArray(ba) == acl.aclDestroyIntArray(empty) == r.OK
    expect(acl, acl.aclDestroyIntArray(ia), r.NN_INVALID)
    expect(acl, acl.aclDestroyFloatArray(ba), r.NN_INVALID)  # wrong kind of handle
    assert acl.live() == base


# ---- leaks and exit -----------------------------------------------------------------------------


def test_live_objects_return_to_baseline(acl, ctx):
    assert acl.aclsimLiveObjects(10) == -1 and acl.aclsimLiveObjects(-1) == -1
    base = acl.live()
    c = c_void_p()
    assert acl.aclrtCreateContext(byref(c), 0) == r.OK
    s = r.create_stream(acl)
    a = r.upload(acl, np.ones((4, 5), np.float32))
    out = r.upload(acl, np.zeros((4, 5), np.float32))
    alpha = r.make_scalar(acl, 1.0, r.ACL_FLOAT)
    live = acl.live()
    assert live[r.LIVE_ALLOCS] == base[r.LIVE_ALLOCS] + 2
    assert live[r.LIVE_BYTES] == base[r.LIVE_BYTES] + 160
    assert live[r.LIVE_TENSORS] == base[r.LIVE_TENSORS] + 2
    assert live[r.LIVE_STREAMS] == base[r.LIVE_STREAMS] + 1
    assert live[r.LIVE_CONTEXTS] == base[r.LIVE_CONTEXTS] + 1
    for _ in range(5):
        assert r.run_add(acl, a.tensor, a.tensor, alpha, out.tensor, s) == r.OK
    assert acl.aclrtSynchronizeStream(s) == r.OK
    assert acl.aclsimLiveObjects(r.LIVE_EXECUTORS) == base[r.LIVE_EXECUTORS]  # freed after run
    assert acl.aclDestroyTensor(a.tensor) == acl.aclDestroyTensor(out.tensor) == r.OK
    assert acl.aclrtFree(a.ptr) == acl.aclrtFree(out.ptr) == r.OK
    assert acl.aclDestroyScalar(alpha) == r.OK
    assert acl.aclrtDestroyStream(s) == r.OK
    assert acl.aclrtDestroyContext(c) == r.OK
    assert acl.aclrtSetCurrentContext(ctx) == r.OK
    assert acl.live() == base


def test_destroying_a_context_destroys_its_streams(acl, ctx):
    base = acl.live()
    c = c_void_p()
    assert acl.aclrtCreateContext(byref(c), 0) == r.OK
    s = r.create_stream(acl)
    assert acl.aclsimStreamDelay(s, 30) == r.OK
    assert acl.aclrtDestroyContext(c) == r.OK  # waits for the queued work, joins the worker
    expect(acl, acl.aclrtSynchronizeStream(s), r.INVALID_PARAM)
    assert acl.live() == base
    assert acl.aclrtSetCurrentContext(ctx) == r.OK


def test_process_exits_without_cleanup_and_without_waiting():
    code = (
        "import time\n"
        "assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0\n"
        "streams = [r.create_stream(acl) for _ in range(4)]\n"
        "p = r.malloc(acl, 1024)\n"
        "t = r.make_tensor(acl, [16], r.ACL_FLOAT, p)\n"
        "assert acl.aclsimStreamDelay(streams[0], 30000) == 0  # 30 s of queued work\n"
        "assert acl.aclsimStreamDelay(None, 30000) == 0\n"
        "print(json.dumps({'ok': True}))\n"
    )
    t0 = time.monotonic()
    assert child(code, timeout=20) == {"ok": True}
    assert time.monotonic() - t0 < 10


# ---- concurrency ------------------------------------------------------------------------------


def test_many_threads_hammer_the_registries(acl, ctx):
    base = acl.live()
    errors: list = []
    barrier = threading.Barrier(8)

    def worker(seed: int):
        try:
            rng = np.random.default_rng(seed)
            assert acl.aclrtSetDevice(0) == r.OK
            barrier.wait()
            s = r.create_stream(acl) if seed % 2 else None
            alpha = r.make_scalar(acl, 1.0, r.ACL_FLOAT)
            for i in range(25):
                n = int(rng.integers(1, 300))
                x = rng.standard_normal(n).astype(np.float32)
                a, out = r.upload(acl, x), r.upload(acl, np.zeros(n, np.float32))
                assert r.run_add(acl, a.tensor, a.tensor, alpha, out.tensor, s) == r.OK
                if i % 3 == 0:
                    assert acl.aclDestroyTensor(a.tensor) == r.OK  # before the kernel ran
                assert acl.aclrtSynchronizeStream(s) == r.OK
                got = r.download(acl, out.ptr, out.nbytes, np.float32, (n,))
                np.testing.assert_array_equal(got, x + x)
                if i % 3:
                    assert acl.aclDestroyTensor(a.tensor) == r.OK
                assert acl.aclDestroyTensor(out.tensor) == r.OK
                assert acl.aclrtFree(a.ptr) == r.OK and acl.aclrtFree(out.ptr) == r.OK
            assert acl.aclDestroyScalar(alpha) == r.OK
            if s:
                assert acl.aclrtDestroyStream(s) == r.OK
            assert acl.aclrtResetDevice(0) == r.OK
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[0]
    assert acl.live() == base


def test_handles_are_never_reused(acl):
    seen = set()
    for _ in range(50):
        t = acl.aclCreateTensor(r.i64s([1]), 1, r.ACL_FLOAT, None, 0, 2, None, 0, None)
        assert t not in seen
        seen.add(t)
        assert acl.aclDestroyTensor(t) == r.OK


# ---- the generic executor machinery, through a test operator added as one op_*.c file -----------

WS_TEST_OP = r"""
#include <string.h>
#include "aclsim_nnop.h"

typedef struct { int64_t overrun; } ws_attrs;

static int ws_kernel(aclsim_kernel_ctx *k)
{
    const ws_attrs *a = k->attrs;
    memset(k->workspace, 1, k->workspace_size + (size_t)a->overrun);
    float v = 42.0f;
    memcpy(k->outputs[0].data, &v, sizeof v);
    return 0;
}

ACLSIM_API aclnnStatus aclnnWsTestGetWorkspaceSize(aclTensor *out, int64_t overrun,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor)
{
    aclsim_tensor_desc d;
    int rc = aclsim_tensor_get("aclnnWsTestGetWorkspaceSize", "out", out, &d);
    if (rc)
        return rc;
    ws_attrs a = {overrun};
    aclsim_executor *ex = aclsim_executor_create("aclnnWsTest", ws_kernel, 100);
    if (!ex)
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    if ((rc = aclsim_executor_add_output(ex, "out", &d)) ||
        (rc = aclsim_executor_set_attrs(ex, &a, sizeof a))) {
        aclsim_executor_discard(ex);
        return rc;
    }
    return aclsim_executor_publish(ex, workspaceSize, executor);
}

ACLSIM_API aclnnStatus aclnnWsTest(void *ws, uint64_t size, aclOpExecutor *ex, aclrtStream s)
{
    return aclsim_executor_run("aclnnWsTest", ws, size, ex, s);
}

ACLSIM_API aclnnStatus aclnnOther(void *ws, uint64_t size, aclOpExecutor *ex, aclrtStream s)
{
    return aclsim_executor_run("aclnnOther", ws, size, ex, s);
}
"""

WS_TEST_CHILD = r"""
import ctypes, json, shutil, sys
from ctypes import byref, c_int64, c_uint64, c_void_p
from pathlib import Path
import _rawacl as r
from stress.sim import _build

src = Path(sys.argv[1])
root = _build._build(False, src)
acl = r.Acl(root)
op = acl.libs["opapi"]
op.aclnnWsTestGetWorkspaceSize.argtypes = [c_void_p, c_int64, ctypes.POINTER(c_uint64),
                                           ctypes.POINTER(c_void_p)]
op.aclnnWsTest.argtypes = op.aclnnOther.argtypes = [c_void_p, c_uint64, c_void_p, c_void_p]
assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0
s = r.create_stream(acl)
out_p = r.malloc(acl, 4)
out_t = r.make_tensor(acl, [1], r.ACL_FLOAT, out_p)
res = {}

def phase1(overrun=0):
    ws, ex = c_uint64(), c_void_p()
    assert op.aclnnWsTestGetWorkspaceSize(out_t, overrun, byref(ws), byref(ex)) == 0
    return ws.value, ex.value

def run(name, ws_ptr, size, overrun=0, fn=None):
    need, ex = phase1(overrun)
    res["need"] = need
    rc = (fn or op.aclnnWsTest)(ws_ptr, size, ex, s)
    res[name] = [rc, acl.msg()]
    return ex

w = r.malloc(acl, 100)
host = ctypes.create_string_buffer(100)
run("null_ws", None, 100)
run("small_size", w, 50)
run("host_ws", ctypes.addressof(host), 100)
small = r.malloc(acl, 60)
run("short_ws", small, 100)
mismatched = run("other_op", w, 100, fn=op.aclnnOther)  # not consumed by the wrong operator
run("ok", w, 100)
res["ok_sync"] = [acl.aclrtSynchronizeStream(s), acl.msg()]
res["out"] = ctypes.c_float.from_address(out_p).value
res["ws_written"] = ctypes.string_at(w, 100) == b"\1" * 100
run("overrun", w, 100, overrun=4)
res["overrun_sync"] = [acl.aclrtSynchronizeStream(s), acl.msg()]
w2 = r.malloc(acl, 100)
assert acl.aclsimStreamDelay(s, 50) == 0
run("freed_later", w2, 100)
assert acl.aclrtFree(w2) == 0  # before the kernel gets to run
res["freed_sync"] = [acl.aclrtSynchronizeStream(s), acl.msg()]
res["live_before_destroy"] = acl.aclsimLiveObjects(r.LIVE_EXECUTORS)
res["destroy_mismatched"] = acl.aclDestroyAclOpExecutor(mismatched)
res["live_executors"] = acl.aclsimLiveObjects(r.LIVE_EXECUTORS)
print(json.dumps(res))
"""


def test_executor_machinery_with_a_test_operator(tmp_path):
    from stress.sim import _build

    src = tmp_path / "src"
    for path in r.sim_source_files():
        rel = path.relative_to(_build.SRC_DIR)
        # no heavy kernels: aclnnAdd and its elementwise core only
        if rel.parts[0] != "opapi" or path.name in ("op_add.c", "op_binary.c", "op_binary.h"):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / rel)
    (src / "opapi/math/op_ws_test.c").write_text(WS_TEST_OP)
    proc = r.run_py(
        WS_TEST_CHILD + "\n",
        env={"ACLSIM_CACHE_DIR": str(tmp_path / "cache")},
        timeout=120,
        args=[str(src)],
    )
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["need"] == 100
    for key, frag in (("null_ws", "workspace"), ("small_size", "workspaceSize 50 is smaller"),
                      ("host_ws", "workspace"), ("short_ws", "not inside one live device"),
                      ("other_op", "was created by aclnnWsTestGetWorkspaceSize")):  # fmt: skip
        rc, msg = res[key]
        assert rc == r.NN_INVALID and frag in msg and "[161002]" in msg, (key, msg)
    assert res["ok"] == [r.OK, ""] and res["ok_sync"] == [r.OK, ""]
    assert res["out"] == 42.0 and res["ws_written"]
    rc, msg = res["overrun_sync"]
    assert rc == r.AICORE_EXCEPTION and "kernel aclnnWsTest wrote past the end" in msg
    rc, msg = res["freed_sync"]
    assert rc == r.AICORE_EXCEPTION and "workspace" in msg and "aclnnWsTest" in msg
    assert res["live_before_destroy"] == 1 and res["destroy_mismatched"] == r.OK
    assert res["live_executors"] == 0
