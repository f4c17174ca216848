"""Stream-ordered copies, events, memory info, fp16 helpers and aclDataTypeSize, through the
raw ctypes binding (tests/_rawacl.py).  Each test's docstring names the real behaviour it copies
and where it is documented; "[RT]" is hicann/runtime include/external/acl/acl_rt.h and
acl_base_rt.h, "[RT doc]" its docs/zh/api_ref."""

from __future__ import annotations

import gc
from ctypes import byref, c_int, c_size_t, c_void_p

import _rawacl as r
import numpy as np
import pytest

HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE = 1, 2, 3
HOST_TO_BUF_TO_DEVICE, INNER_D2D, INTER_D2D = 5, 6, 7
NOT_READY, COMPLETE = 0, 1


@pytest.fixture(scope="module")
def acl():
    return r.load()


@pytest.fixture(autouse=True, scope="module")
def _quiet_gc():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


@pytest.fixture()
def ctx(acl):
    assert acl.aclrtSetDevice(0) == r.OK
    yield
    assert acl.aclrtResetDevice(0) == r.OK
    acl.aclGetRecentErrMsg()


@pytest.fixture()
def streams(acl, ctx):
    ss = [r.create_stream(acl) for _ in range(2)]
    yield ss
    for s in ss:
        assert acl.aclrtSynchronizeStream(s) == r.OK
        assert acl.aclrtDestroyStream(s) == r.OK


def _host(arr: np.ndarray) -> c_void_p:
    return c_void_p(arr.ctypes.data)


def test_memcpy_async_runs_in_stream_order(acl, streams):
    """aclrtMemcpyAsync is queued on the stream behind earlier tasks and returns at once; the
    copy is complete only after aclrtSynchronizeStream ([RT doc] memory management: "asynchronous
    ... call aclrtSynchronizeStream to make sure the copy is done").  A missing synchronize is
    visible: the destination still holds the old bytes."""
    s = streams[0]
    x = np.arange(256, dtype=np.float32)
    dev = r.malloc(acl, x.nbytes)
    back = np.zeros_like(x)
    assert acl.aclrtMemcpy(dev, x.nbytes, _host(np.zeros_like(x)), x.nbytes, HOST_TO_DEVICE) == 0
    assert acl.aclsimStreamDelay(s, 100) == r.OK  # the stream is busy for 100 ms
    assert acl.aclrtMemcpyAsync(dev, x.nbytes, _host(x), x.nbytes, HOST_TO_DEVICE, s) == r.OK
    assert acl.aclrtMemcpyAsync(_host(back), back.nbytes, dev, x.nbytes, DEVICE_TO_HOST, s) == 0
    np.testing.assert_array_equal(back, 0)  # not yet: the copies wait behind the delay
    assert acl.aclrtSynchronizeStream(s) == r.OK
    np.testing.assert_array_equal(back, x)
    assert acl.aclrtFree(dev) == r.OK


def test_memcpy_async_host_to_buf_to_device_copies_the_source_at_the_call(acl, streams):
    """ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE (5) stages the host data in a runtime buffer, so the
    host memory may be released as soon as the call returns ([RT] acl_rt.h aclrtMemcpyKind)."""
    s = streams[0]
    x = np.arange(64, dtype=np.int32)
    dev = r.malloc(acl, x.nbytes)
    assert acl.aclsimStreamDelay(s, 50) == r.OK
    src = x.copy()
    assert acl.aclrtMemcpyAsync(dev, x.nbytes, _host(src), x.nbytes, HOST_TO_BUF_TO_DEVICE, s) == 0
    src[:] = -1  # overwritten before the copy runs
    back = np.zeros_like(x)
    assert acl.aclrtMemcpyAsync(_host(back), back.nbytes, dev, x.nbytes, DEVICE_TO_HOST, s) == 0
    assert acl.aclrtSynchronizeStream(s) == r.OK
    np.testing.assert_array_equal(back, x)
    assert acl.aclrtFree(dev) == r.OK


def test_all_memcpy_kinds_are_accepted(acl, ctx):
    """aclrtMemcpyKind is 0..7 ([RT] acl_rt.h): 5 HOST_TO_BUF_TO_DEVICE, 6 INNER_DEVICE_TO_DEVICE
    (within one device), 7 INTER_DEVICE_TO_DEVICE (between devices); 8 is not a kind."""
    x = np.arange(16, dtype=np.uint8)
    a, b = r.malloc(acl, 16), r.malloc(acl, 16)
    back = np.zeros_like(x)
    assert acl.aclrtMemcpy(a, 16, _host(x), 16, HOST_TO_BUF_TO_DEVICE) == r.OK
    assert acl.aclrtMemcpy(b, 16, a, 16, INNER_D2D) == r.OK
    assert acl.aclrtMemcpy(a, 16, b, 16, INTER_D2D) == r.OK
    assert acl.aclrtMemcpy(_host(back), 16, a, 16, DEVICE_TO_HOST) == r.OK
    np.testing.assert_array_equal(back, x)
    assert acl.aclrtMemcpy(a, 16, b, 16, 8) == r.INVALID_PARAM
    assert "0..7" in acl.msg()
    assert acl.aclrtFree(a) == acl.aclrtFree(b) == r.OK


def test_memset_async_is_stream_ordered(acl, streams):
    """aclrtMemsetAsync(devPtr, maxCount, value, count, stream) is queued like a copy ([RT]
    acl_rt.h); count > maxCount is refused at the call (100000)."""
    s = streams[0]
    dev = r.malloc(acl, 32)
    back = np.zeros(32, np.uint8)
    assert acl.aclsimStreamDelay(s, 50) == r.OK
    assert acl.aclrtMemsetAsync(dev, 32, 7, 32, s) == r.OK
    assert acl.aclrtMemcpyAsync(_host(back), 32, dev, 32, DEVICE_TO_HOST, s) == r.OK
    assert acl.aclrtSynchronizeStream(s) == r.OK
    np.testing.assert_array_equal(back, 7)
    assert acl.aclrtMemsetAsync(dev, 8, 0, 16, s) == r.INVALID_PARAM
    assert "exceeds maxCount" in acl.msg()
    assert acl.aclrtFree(dev) == r.OK


def test_stream_wait_event_orders_two_streams(acl, streams):
    """aclrtRecordEvent(event, stream) queues a record; aclrtStreamWaitEvent(stream, event) makes
    the stream's later tasks wait until that record has run; aclrtQueryEventStatus reports
    ACL_EVENT_RECORDED_STATUS_COMPLETE (1) once it has, NOT_READY (0) before ([RT] acl_rt.h,
    [RT doc] event management).  Without the wait, stream B would copy before A's write."""
    a, b = streams
    x = np.arange(128, dtype=np.float32)
    dev = r.malloc(acl, x.nbytes)
    ev = c_void_p()
    assert acl.aclrtCreateEvent(byref(ev)) == r.OK
    status = c_int(-1)
    assert acl.aclrtQueryEventStatus(ev, byref(status)) == r.OK and status.value == NOT_READY
    assert acl.aclsimStreamDelay(a, 100) == r.OK
    assert acl.aclrtMemcpyAsync(dev, x.nbytes, _host(x), x.nbytes, HOST_TO_DEVICE, a) == r.OK
    assert acl.aclrtRecordEvent(ev, a) == r.OK
    assert acl.aclrtQueryEventStatus(ev, byref(status)) == r.OK and status.value == NOT_READY
    assert acl.aclrtStreamWaitEvent(b, ev) == r.OK
    back = np.zeros_like(x)
    assert acl.aclrtMemcpyAsync(_host(back), back.nbytes, dev, x.nbytes, DEVICE_TO_HOST, b) == 0
    assert acl.aclrtSynchronizeStream(b) == r.OK
    np.testing.assert_array_equal(back, x)  # b waited for a's copy
    assert acl.aclrtSynchronizeEvent(ev) == r.OK
    assert acl.aclrtQueryEventStatus(ev, byref(status)) == r.OK and status.value == COMPLETE
    assert acl.aclrtDestroyEvent(ev) == r.OK
    assert acl.aclrtDestroyEvent(ev) == r.INVALID_PARAM
    assert "not a live event" in acl.msg()
    assert acl.aclrtFree(dev) == r.OK


def test_event_destroyed_while_its_record_is_queued(acl, streams):
    """Destroying an event whose record is still queued is allowed ([RT doc]: the runtime
    releases it when the record has run); the stream still completes and no object leaks."""
    base = acl.aclsimLiveObjects(r.LIVE_EVENTS)
    ev = c_void_p()
    assert acl.aclrtCreateEvent(byref(ev)) == r.OK
    assert acl.aclsimLiveObjects(r.LIVE_EVENTS) == base + 1
    assert acl.aclsimStreamDelay(streams[0], 30) == r.OK
    assert acl.aclrtRecordEvent(ev, streams[0]) == r.OK
    assert acl.aclrtStreamWaitEvent(streams[1], ev) == r.OK
    assert acl.aclrtDestroyEvent(ev) == r.OK
    assert acl.aclrtSynchronizeStream(streams[1]) == r.OK
    assert acl.aclrtSynchronizeStream(streams[0]) == r.OK
    assert acl.aclsimLiveObjects(r.LIVE_EVENTS) == base


def test_event_needs_a_context(acl):
    """aclrtCreateEvent creates the event in the current context: without one it fails with
    ACL_ERROR_RT_CONTEXT_NULL (107002) ([RT doc] event management)."""

    def create():
        ev = c_void_p()
        return acl.aclrtCreateEvent(byref(ev)), acl.msg()

    rc, msg = r.in_thread(create)
    assert rc == r.CONTEXT_NULL and "no current context" in msg


def test_get_mem_info(acl, ctx):
    """aclrtGetMemInfo(attr, &free, &total) reports the memory of the current device for HBM
    kinds and of the host for DDR kinds ([RT] acl_rt.h aclrtMemAttr, [RT doc]); the simulator's
    device has a nominal 64 GiB and free drops by what is allocated."""
    free, total = c_size_t(), c_size_t()
    assert acl.aclrtGetMemInfo(1, byref(free), byref(total)) == r.OK  # ACL_HBM_MEM
    assert total.value == 64 << 30 and free.value <= total.value
    before = free.value
    dev = r.malloc(acl, 1 << 20)
    assert acl.aclrtGetMemInfo(1, byref(free), byref(total)) == r.OK
    assert before - free.value == 1 << 20
    assert acl.aclrtFree(dev) == r.OK
    assert acl.aclrtGetMemInfo(0, byref(free), byref(total)) == r.OK  # ACL_DDR_MEM: the host
    assert total.value > 0 and free.value <= total.value
    assert acl.aclrtGetMemInfo(10, byref(free), byref(total)) == r.INVALID_PARAM
    assert acl.aclrtGetMemInfo(1, None, byref(total)) == r.INVALID_PARAM
    acl.msg()


@pytest.mark.parametrize(
    "value", [0.0, -0.0, 1.0, -2.5, 0.1, 65504.0, 6.1e-5, 5.96e-8, 1234.5678, -0.333]
)
def test_float_to_float16_matches_ieee_half(acl, value):
    """aclFloatToFloat16 / aclFloat16ToFloat convert like IEEE binary16 with round to nearest
    even for finite values in range ([RT] acl_base_rt.h); numpy's float16 is the reference."""
    bits = acl.aclFloatToFloat16(value)
    assert bits == int(np.float32(value).astype(np.float16).view(np.uint16))
    assert acl.aclFloat16ToFloat(bits) == float(np.float16(np.float32(value)))


def test_fp16_helpers_saturate_as_the_current_header_documents(acl):
    """Current acl_base_rt.h: aclFloatToFloat16 maps NaN and +-Inf to +-65504 (0x7BFF / 0xFBFF);
    aclFloat16ToFloat maps +-Inf to +-65536 and NaN to 98304 ([RT] acl_base_rt.h @note)."""
    assert acl.aclFloatToFloat16(float("nan")) == 0x7BFF
    assert acl.aclFloatToFloat16(float("inf")) == 0x7BFF
    assert acl.aclFloatToFloat16(float("-inf")) == 0xFBFF
    assert acl.aclFloatToFloat16(1e6) == 0x7BFF
    assert acl.aclFloat16ToFloat(0x7C00) == 65536.0
    assert acl.aclFloat16ToFloat(0xFC00) == -65536.0
    assert acl.aclFloat16ToFloat(0x7E00) == 98304.0


def test_data_type_size(acl):
    """aclDataTypeSize(dataType): bytes of one element ([RT] acl_base_rt.h); the simulator gives
    0 for ACL_STRING, ACL_DT_UNDEFINED and the sub-byte types."""
    sizes = {0: 4, 1: 2, 2: 1, 3: 4, 4: 1, 6: 2, 7: 2, 8: 4, 9: 8, 10: 8, 11: 8, 12: 1,
             16: 8, 17: 16, 27: 2, 35: 1, 36: 1, 37: 1, 34: 1}  # fmt: skip
    for dtype, size in sizes.items():
        assert acl.aclDataTypeSize(dtype) == size, dtype
    for dtype in (-1, 13, 29, 40, 99):
        assert acl.aclDataTypeSize(dtype) == 0, dtype


def test_async_copy_refuses_bad_arguments_at_the_call(acl, streams):
    """Arguments are checked when aclrtMemcpyAsync is called (100000 for a range outside device
    memory, 107002 for a NULL stream without a current context)."""
    dev = r.malloc(acl, 16)
    host = np.zeros(64, np.uint8)
    rc = acl.aclrtMemcpyAsync(dev, 64, _host(host), 64, HOST_TO_DEVICE, streams[0])
    assert rc == r.INVALID_PARAM and "not inside one live device" in acl.msg()

    def no_ctx():
        return acl.aclrtMemcpyAsync(_host(host), 16, dev, 16, DEVICE_TO_HOST, None), acl.msg()

    rc, msg = r.in_thread(no_ctx)
    assert rc == r.CONTEXT_NULL, msg
    assert acl.aclrtFree(dev) == r.OK
