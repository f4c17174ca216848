"""The binding against the simulator: handles, errors, threads, two-stage calls, leaks."""

from __future__ import annotations

import ctypes
import gc
import json
import subprocess
import sys
import threading

import ml_dtypes
import numpy as np
import pytest

from stress import acl
from stress.acl.errors import AclContextError, AclParamError, BackendError, error_for


def _live(rt):
    return rt.live_objects()


def test_info_names_the_simulator(rt):
    info = rt.info()
    assert info["backend"] == "sim" and info["simulator"] is True
    assert "aclsim" in info["soc"].lower() and "aclsim" in info["version"].lower()
    assert info["device_count"] == 8
    assert set(info["libraries"]) >= {"lib64/libascendcl.so", "lib64/libnnopbase.so"}


def test_error_carries_code_api_and_recent_message(rt, ctx):
    ptr = ctypes.c_void_p()
    with pytest.raises(AclParamError) as info:
        rt.api.aclrtMalloc(ctypes.byref(ptr), 0, 0)
    err = info.value
    assert err.code == 100000 and err.api == "aclrtMalloc"
    assert "size" in err.message  # read from aclGetRecentErrMsg on the failing thread
    assert rt.api.recent_error_message() == ""  # reading cleared it


def test_error_for_picks_subclasses():
    assert isinstance(error_for(107002, "x"), AclContextError)
    assert isinstance(error_for(161002, "x"), AclParamError)
    assert isinstance(error_for(561002, "x"), acl.AclnnError)
    assert type(error_for(123, "x")) is acl.AclError


def test_unknown_and_missing_symbols(rt):
    with pytest.raises(AttributeError):
        rt.api.aclNotAFunction  # noqa: B018
    assert rt.api.has("aclrtSynchronizeStreamWithTimeout")
    assert rt.api.has("aclsimLiveObjects")


def test_runtime_is_process_wide(rt):
    assert acl.runtime() is rt
    with pytest.raises(BackendError, match="cannot be loaded twice"):
        acl.runtime("cann")


def test_thread_without_context_gets_107002_then_binds(rt, device):
    results = {}

    def worker():
        try:
            acl.DeviceBuffer(device.default_context, 64)
        except AclContextError as exc:
            results["unbound"] = exc.code
        device.default_context.bind()
        with acl.DeviceBuffer(device.default_context, 64) as buf:
            buf.upload(b"x" * 64)
            results["bound"] = buf.download()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert results == {"unbound": 107002, "bound": b"x" * 64}


def test_buffer_roundtrip_fill_and_release(rt, ctx):
    before = _live(rt)
    buf = acl.DeviceBuffer(ctx, 100)
    assert _live(rt)["allocations"] == before["allocations"] + 1
    data = np.arange(25, dtype=np.float32)
    buf.upload(data)
    assert np.array_equal(np.frombuffer(buf.download(), np.float32), data)
    buf.fill(0xAB)
    assert buf.download() == b"\xab" * 100
    with pytest.raises(ValueError, match="into a 100-byte buffer"):
        buf.upload(b"0" * 101)
    buf.close()
    buf.close()  # idempotent
    assert buf.closed and _live(rt) == before
    with pytest.raises(ValueError, match="nbytes > 0"):
        acl.DeviceBuffer(ctx, 0)


def test_dropped_handles_are_released_by_gc(rt, ctx):
    before = _live(rt)
    t = acl.DeviceTensor.from_array(ctx, np.ones((4, 4), np.float32))
    s = acl.Scalar(ctx, 2.0, np.float32)
    assert _live(rt)["tensors"] == before["tensors"] + 1
    del t, s
    gc.collect()
    assert _live(rt) == before


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.int64, np.uint8, np.bool_]
)
def test_tensor_roundtrip_all_dtypes(ctx, dtype):
    host = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    with acl.DeviceTensor.from_array(ctx, host) as t:
        assert t.acl_dtype == acl.acl_dtype(dtype)
        back = t.download()
    assert back.dtype == host.dtype and np.array_equal(back, host)


def test_empty_tensor_has_null_data_and_no_allocation(rt, ctx):
    before = _live(rt)
    with acl.DeviceTensor(ctx, (0, 3), np.float32) as t:
        assert t.buffer is None and t.ptr is None and t.download().shape == (0, 3)
        assert _live(rt)["allocations"] == before["allocations"]
        assert _live(rt)["tensors"] == before["tensors"] + 1
    assert _live(rt) == before


def test_dtype_mapping_rejects_unknown():
    with pytest.raises(TypeError):
        acl.acl_dtype(np.dtype("U3"))
    assert acl.numpy_dtype(acl.DataType.BF16) == np.dtype(ml_dtypes.bfloat16)


def _add_args(ctx, a, b, alpha=1.0):
    out = acl.DeviceTensor(ctx, np.broadcast_shapes(a.shape, b.shape), a.dtype)
    ta, tb = acl.DeviceTensor.from_array(ctx, a), acl.DeviceTensor.from_array(ctx, b)
    sc = acl.Scalar(ctx, alpha, np.float32)
    return [ta, tb, sc, out]


def test_two_stage_add_matches_numpy(rt, ctx, stream):
    a = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    b = np.arange(5, dtype=np.float32)
    before = _live(rt)
    objs = _add_args(ctx, a, b, 0.5)
    call = acl.run(ctx, stream, "aclnnAdd", *objs)
    stream.synchronize()
    got = objs[3].download()
    call.close()
    for o in objs:
        o.close()
    np.testing.assert_array_equal(got, a + np.float32(0.5) * b)
    assert call.workspace is None or call.workspace_size > 0
    assert _live(rt) == before


def test_single_use_executor_and_repeatable(rt, ctx, stream):
    a = np.ones((2, 2), np.float32)
    objs = _add_args(ctx, a, a)
    call = acl.prepare(ctx, "aclnnAdd", *objs)
    call.launch(stream)
    with pytest.raises(RuntimeError, match="single-use"):
        call.launch(stream)
    # the C side refuses a second launch of the consumed executor too
    with pytest.raises(acl.AclError):
        rt.api.aclnnAdd(None, 0, call.executor, stream.handle)
    stream.synchronize()
    call.close()
    before = _live(rt)
    rep = acl.prepare(ctx, "aclnnAdd", *objs, repeatable=True)
    assert _live(rt)["executors"] == before["executors"] + 1
    rep.launch(stream)
    rep.launch(stream)
    stream.synchronize()
    rep.close()
    assert _live(rt)["executors"] == before["executors"]
    for o in objs:
        o.close()


def test_prepared_but_never_launched_call_releases_its_executor(rt, ctx):
    a = np.ones((2, 2), np.float32)
    objs = _add_args(ctx, a, a)
    before = _live(rt)
    call = acl.prepare(ctx, "aclnnAdd", *objs)
    assert _live(rt)["executors"] == before["executors"] + 1
    call.close()
    assert _live(rt)["executors"] == before["executors"]
    for o in objs:
        o.close()


def test_add_shape_error_is_161002_with_message(ctx):
    a = np.ones((2, 3), np.float32)
    b = np.ones((4,), np.float32)
    objs = [acl.DeviceTensor.from_array(ctx, a), acl.DeviceTensor.from_array(ctx, b)]
    objs += [acl.Scalar(ctx, 1.0, np.float32), acl.DeviceTensor(ctx, (2, 3), np.float32)]
    with pytest.raises(AclParamError) as info:
        acl.prepare(ctx, "aclnnAdd", *objs)
    assert info.value.code == 161002 and info.value.message
    for o in objs:
        o.close()


def test_context_per_thread_and_explicit_contexts(rt, device):
    extra = device.create_context()
    try:
        assert extra.is_current()
        device.default_context.bind()
        assert not extra.is_current()
        seen = {}

        def worker():
            extra.bind()  # a context created on one thread may be bound on another
            seen["current"] = rt.current_context_handle()

        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert seen["current"] == extra.handle
        assert rt.current_context_handle() == device.default_context.handle
    finally:
        extra.close()


def test_stream_synchronize_with_timeout(ctx, stream):
    stream.synchronize(timeout_ms=1000)
    stream.synchronize()


def test_deterministic_option_round_trips(rt, ctx):
    rt.set_deterministic(True)
    value = ctypes.c_int64()
    rt.api.aclrtGetSysParamOpt(acl.SysParamOpt.DETERMINISTIC, ctypes.byref(value))
    assert value.value == 1
    rt.set_deterministic(False)
    rt.api.aclrtGetSysParamOpt(acl.SysParamOpt.DETERMINISTIC, ctypes.byref(value))
    assert value.value == 0


def test_cann_kind_loads_a_cann_layout_root(tmp_path):
    """STRESS_BACKEND=cann with ASCEND_HOME_PATH at the simulator tree: the real-CANN code path."""
    from stress import sim

    code = (
        "from stress import acl; rt = acl.runtime();"
        "print(rt.backend.kind, rt.is_simulator, rt.device_count)"
    )
    env = {"STRESS_BACKEND": "cann", "ASCEND_HOME_PATH": str(sim.root()), "ACLSIM_DEVICES": "3"}
    import os

    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["cann", "True", "3"]


def test_sim_faults_command_lists_the_known_faults(capsys):
    from stress import cli
    from stress.sim.faults import FAULTS

    assert cli.main(["sim", "faults", "--json"]) == 0
    faults = json.loads(capsys.readouterr().out)
    # the simulator's list and the framework's table of expected diagnoses agree exactly
    assert [f["name"] for f in faults] == list(FAULTS)
    for f in faults:
        known = FAULTS[f["name"]]
        assert (f["expected"], f["found_by"], tuple(f["targets"])) == (
            known.expected,
            known.found_by,
            known.targets,
        )
        assert f["description"].startswith("aclnn"), f  # names the operator it lives in
        # the targets are aclnn functions, as the simulator's description names them first
        assert f["targets"] and all(t.startswith("aclnn") for t in f["targets"]), f
        assert f["description"].startswith(f["targets"][0]), f
        named = f["description"].split(":", 1)[0]  # "aclnnAdd/Mul/Matmul..." or one function
        assert all(t.removeprefix("aclnn") in named for t in f["targets"]), f
    assert cli.main(["sim", "faults"]) == 0
    table = capsys.readouterr().out
    assert "cross-call-contamination" in table and "tiling-race:" in table


def test_fault_description_of_an_unknown_name_is_null():
    api = acl.runtime("sim").api
    assert api.aclsimFaultDescription(b"no-such-fault") is None
    assert b"lock" in api.aclsimFaultDescription(b"hang")


def test_operator_symbols_come_from_the_domain_libraries(rt):
    """Current CANN splits the operators by domain (libopapi_math.so: Add; _transformer: mHC);
    the binding looks there before libopapi.so and says where each function came from."""
    assert rt.api.library_of("aclnnAdd").endswith("lib64/libopapi_math.so")
    assert rt.api.library_of("aclnnAddGetWorkspaceSize").endswith("lib64/libopapi_math.so")
    assert rt.api.library_of("aclnnMhcPreSinkhornBackward").endswith(
        "lib64/libopapi_transformer.so"
    )
    assert rt.api.library_of("aclCreateTensor").endswith("lib64/libnnopbase.so")
