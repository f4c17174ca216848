"""aclnnAdd on the simulator through raw ctypes: numerics vs numpy/ml_dtypes (bit-exact),
broadcasting, strides, alpha, empty tensors, every error code, executor lifetimes, stream
semantics, concurrency, and an unmodified third-party style script."""

from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import sys
import threading
from ctypes import byref, c_uint64, c_void_p
from pathlib import Path

import _rawacl as r
import ml_dtypes
import numpy as np
import pytest

F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32 = np.dtype(np.int32)
ACL_DT = {F32: r.ACL_FLOAT, F16: r.ACL_FLOAT16, BF16: r.ACL_BF16, I32: r.ACL_INT32}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}
CANARY = 0xAB


@pytest.fixture(scope="module")
def acl():
    return r.load()


@pytest.fixture(autouse=True, scope="module")
def _quiet_gc():
    """Collect other tests' garbage once, then keep the cyclic GC off for this module: no
    finalizer of another test's objects may change the live counts a test checks."""
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


@pytest.fixture(scope="module")
def stream(acl):
    assert acl.aclrtSetDevice(0) == r.OK
    s = r.create_stream(acl)
    yield s
    assert acl.aclrtSetDevice(0) == r.OK
    assert acl.aclrtDestroyStream(s) == r.OK


class Dev:
    """Device buffers and handles of one test, released at the end (leaks are checked)."""

    def __init__(self, acl):
        self.acl = acl
        self.ptrs: list[int] = []
        self.tensors: list[int] = []
        self.scalars: list[int] = []

    def buffer(self, nbytes: int, fill: int = CANARY) -> int:
        p = r.malloc(self.acl, max(nbytes, 1))
        ctypes.memset(p, fill, max(nbytes, 1))
        self.ptrs.append(p)
        return p

    def put(self, arr: np.ndarray) -> int:
        """Upload a contiguous array; returns the device pointer."""
        arr = np.ascontiguousarray(arr)
        p = self.buffer(arr.nbytes)
        if arr.nbytes:
            assert self.acl.aclrtMemcpy(p, arr.nbytes, arr.ctypes.data, arr.nbytes, 1) == r.OK
        return p

    def tensor(self, shape, dtype, ptr, strides=None, offset=0, storage=None) -> int:
        t = r.make_tensor(self.acl, shape, ACL_DT[np.dtype(dtype)], ptr, strides, offset, storage)
        self.tensors.append(t)
        return t

    def array(self, arr: np.ndarray) -> tuple[int, int]:
        """Upload and describe; returns (tensor, ptr)."""
        p = self.put(arr)
        return self.tensor(arr.shape, arr.dtype, p), p

    def scalar(self, value, dtype=r.ACL_FLOAT) -> int:
        s = r.make_scalar(self.acl, value, dtype)
        self.scalars.append(s)
        return s

    def get(self, ptr: int, shape, dtype) -> np.ndarray:
        out = np.empty(shape, dtype)
        if out.nbytes:
            rc = self.acl.aclrtMemcpy(out.ctypes.data, out.nbytes, ptr, out.nbytes, 2)
            assert rc == r.OK, self.acl.msg()
        return out

    def close(self):
        for t in self.tensors:
            assert self.acl.aclDestroyTensor(t) == r.OK
        for s in self.scalars:
            assert self.acl.aclDestroyScalar(s) == r.OK
        for p in self.ptrs:
            assert self.acl.aclrtFree(p) == r.OK, self.acl.msg()


@pytest.fixture()
def dev(acl, ctx, stream):
    base = acl.live()
    d = Dev(acl)
    yield d
    assert acl.aclrtSynchronizeStream(stream) == r.OK, acl.msg()
    d.close()
    assert acl.live() == base


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    if a == b:
        return a
    if a == I32:
        return b
    if b == I32:
        return a
    return F32


def reference(x: np.ndarray, y: np.ndarray, alpha, out_dtype) -> np.ndarray:
    """float32 math (two roundings), rounded to the promoted type, then cast to out's dtype;
    int32 in int64 wrapped to 32 bits."""
    p = promote(x.dtype, y.dtype)
    with np.errstate(all="ignore"):
        if p == I32:
            wide = x.astype(np.int64) + np.int64(alpha) * y.astype(np.int64)
            res = (wide & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
            return res if out_dtype == I32 else res.astype(F32).astype(out_dtype)
        r32 = x.astype(F32) + np.float32(alpha) * y.astype(F32)
        return r32.astype(p).astype(out_dtype)


def assert_bits_equal(got: np.ndarray, want: np.ndarray, nan_bits: bool = False):
    """Bit-exact comparison; NaNs compared by position only unless nan_bits."""
    assert got.dtype == want.dtype and got.shape == want.shape
    gu = got.view(UINT[got.itemsize])
    wu = want.view(UINT[want.itemsize])
    if got.dtype != I32 and not nan_bits:
        gn, wn = np.isnan(got.astype(F32)), np.isnan(want.astype(F32))
        np.testing.assert_array_equal(gn, wn)
        gu, wu = gu[~gn], wu[~wn]
    gu, wu = gu.reshape(-1), wu.reshape(-1)
    bad = np.flatnonzero(gu != wu)
    if bad.size:
        i = bad[0]
        raise AssertionError(f"{bad.size} mismatches, first at {i}: got {gu[i]:#x} want {wu[i]:#x}")


def run_add(acl, stream, d: Dev, x, y, alpha=1.0, alpha_dtype=r.ACL_FLOAT, out_dtype=None):
    """Upload x, y; run aclnnAdd into a fresh canary-filled out; return the result."""
    out_dtype = np.dtype(out_dtype or promote(x.dtype, y.dtype))
    shape = np.broadcast_shapes(x.shape, y.shape)
    tx, _ = d.array(x)
    ty, _ = d.array(y)
    nbytes = int(np.prod(shape, dtype=np.int64)) * out_dtype.itemsize
    po = d.buffer(nbytes)
    to = d.tensor(shape, out_dtype, po)
    rc = r.run_add(acl, tx, ty, d.scalar(alpha, alpha_dtype), to, stream)
    assert rc == r.OK, acl.msg()
    assert acl.aclrtSynchronizeStream(stream) == r.OK, acl.msg()
    return d.get(po, shape, out_dtype)


def rand(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == I32:
        return rng.integers(-1000, 1000, size=shape, dtype=np.int32)
    return (rng.standard_normal(shape) * 4).astype(dtype)


# ---- numerics --------------------------------------------------------------------------------

PAIRS = [
    (F32, F32), (F16, F16), (BF16, BF16), (I32, I32), (F16, BF16), (BF16, F16),
    (I32, F16), (BF16, I32), (F16, F32), (F32, BF16), (F32, I32),
]  # fmt: skip
SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 5), (3, 1)), ((), (2, 3)), ((1,), (7, 1, 1))]


@pytest.mark.parametrize(("xd", "yd"), PAIRS, ids=lambda d: np.dtype(d).name)
def test_matches_numpy_with_broadcasting(acl, stream, dev, xd, yd):
    rng = np.random.default_rng(1)
    for (sx, sy), alpha in zip(SHAPES, (1.0, 2.0, -0.5, 3.0, 0.0), strict=True):
        x, y = rand(rng, sx, xd), rand(rng, sy, yd)
        if promote(x.dtype, y.dtype) == I32:
            alpha = int(alpha)
        got = run_add(acl, stream, dev, x, y, alpha)
        assert_bits_equal(got, reference(x, y, alpha, got.dtype))


@pytest.mark.parametrize(
    ("xd", "yd", "od"),
    [
        (F32, F32, F16),
        (F32, F32, BF16),
        (F16, F16, F32),
        (F16, BF16, BF16),
        (I32, I32, F32),
        (I32, I32, F16),
        (I32, I32, BF16),
        (BF16, BF16, F16),
    ],
    ids=lambda d: np.dtype(d).name,
)
def test_result_is_cast_to_out_dtype(acl, stream, dev, xd, yd, od):
    rng = np.random.default_rng(2)
    x, y = rand(rng, (5, 6), xd), rand(rng, (6,), yd)
    x.flat[0] = 70000 if xd == I32 else x.flat[0]  # overflow to inf in fp16
    got = run_add(acl, stream, dev, x, y, 1, out_dtype=od)
    assert_bits_equal(got, reference(x, y, 1, np.dtype(od)))


def special_f32(rng) -> np.ndarray:
    """float32 values that stress fp16/bf16 rounding: random bits, ties, subnormals, limits."""
    bits = rng.integers(0, 2**32, size=40000, dtype=np.uint64).astype(np.uint32)
    ties16 = (bits[:5000] & ~np.uint32(0x1FFF)) | np.uint32(0x1000)  # fp16 halfway (normal)
    ties_bf = (bits[5000:10000] & ~np.uint32(0xFFFF)) | np.uint32(0x8000)  # bf16 halfway
    near = rng.uniform(-(2.0**-13), 2.0**-13, 20000).astype(F32).view(np.uint32)  # fp16 subnormal
    k = np.arange(0, 2048, dtype=np.float64)
    sub_ties = ((k + 0.5) * 2.0**-24).astype(F32).view(np.uint32)  # exact fp16 subnormal ties
    edges = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 65504, 65519.996, 65520, 65536, -65520,
         2.0**-24, 2.0**-25, 2.0**-25 * 1.0000001, 2.0**-26, 2.0**-14, 2.0**-14 * (1 - 2**-11),
         6.1035156e-05, 3.4028235e38, 1.1754944e-38, 1e-45, 3.3895314e38, 3.3961776e38],
        dtype=F32,
    ).view(np.uint32)  # fmt: skip
    nans = np.array([0x7F800001, 0xFF812345, 0x7FC00000, 0x7FFFFFFF, 0xFFBFFFFF], np.uint32)
    return np.concatenate([bits, ties16, ties_bf, near, sub_ties, edges, nans]).view(F32)


@pytest.mark.parametrize("od", [F16, BF16], ids=["float16", "bfloat16"])
def test_float32_to_half_rounding_is_bit_exact(acl, stream, dev, od):
    x = special_f32(np.random.default_rng(3))
    y = np.full(x.shape, -0.0, F32)  # x + (-0) == x for every x, signed zeros included
    got = run_add(acl, stream, dev, x, y, 1.0, out_dtype=od)
    with np.errstate(all="ignore"):
        want = x.astype(od)
    # bf16 NaNs must match ml_dtypes exactly (0x7FC0 / 0xFFC0); fp16 NaNs by position
    assert_bits_equal(got, want, nan_bits=od == BF16)
    gn = got.view(np.uint16)[np.isnan(got.astype(F32))]
    assert ((gn & 0x7E00) == 0x7E00).all()  # quiet NaNs


@pytest.mark.parametrize("xd", [F16, BF16], ids=["float16", "bfloat16"])
def test_half_inputs_decode_exactly(acl, stream, dev, xd):
    x = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(xd)  # every bit pattern
    y = np.full(x.shape, -0.0, F32)
    got = run_add(acl, stream, dev, x, y, 1.0, out_dtype=F32)
    assert_bits_equal(got, x.astype(F32))


def test_int32_wraps_like_int64_then_truncation(acl, stream, dev):
    x = np.array([2**31 - 1, -(2**31), 5, -7, 0], np.int32)
    y = np.array([1, -1, 3, 2**30, 2**31 - 1], np.int32)
    for alpha in (1, 3, -2, 2**40 + 1):
        got = run_add(acl, stream, dev, x, y, alpha, alpha_dtype=r.ACL_INT64)
        assert_bits_equal(got, reference(x, y, alpha, I32))
    got = run_add(acl, stream, dev, x, y, 2.0, alpha_dtype=r.ACL_DOUBLE)  # integral float alpha
    assert_bits_equal(got, reference(x, y, 2, I32))
    assert run_add(acl, stream, dev, x, y, True, alpha_dtype=r.ACL_BOOL).tolist() == (
        reference(x, y, 1, I32).tolist()
    )


@pytest.mark.parametrize(
    ("alpha", "adt", "as_f32"),
    [
        (0.5, r.ACL_FLOAT16, 0.5),
        (1.0 / 3, r.ACL_BF16, float(np.float32(BF16.type(1.0 / 3)))),
        (1.0 / 3, r.ACL_DOUBLE, float(np.float32(1.0 / 3))),
        (2, r.ACL_INT32, 2.0),
        (-3, r.ACL_INT8, -3.0),
        (True, r.ACL_BOOL, 1.0),
        (2**40, r.ACL_INT64, 2.0**40),
    ],
)
def test_alpha_dtypes(acl, stream, dev, alpha, adt, as_f32):
    rng = np.random.default_rng(4)
    x, y = rand(rng, (4, 4), F32), rand(rng, (4, 4), F32)
    got = run_add(acl, stream, dev, x, y, alpha, alpha_dtype=adt)
    assert_bits_equal(got, reference(x, y, as_f32, F32))


def test_strided_views_and_offsets(acl, stream, dev):
    rng = np.random.default_rng(5)
    base = rand(rng, (4, 3), F32)  # storage (4, 3); view its transpose (3, 4)
    pb = dev.put(base)
    t_x = dev.tensor((3, 4), F32, pb, strides=(1, 3), storage=(4, 3))
    big = rand(rng, (4, 4), F32)  # view big[1:3, 1:3] via offset
    pg = dev.put(big)
    t_y = dev.tensor((2, 2), F32, pg, strides=(4, 1), offset=5, storage=(16,))
    row = rand(rng, (4,), F32)  # stride-0 broadcast written explicitly: (3, 4) view of 4 values
    pr = dev.put(row)
    t_row = dev.tensor((3, 4), F32, pr, strides=(0, 1), storage=(4,))
    alpha = dev.scalar(1.0)

    po = dev.buffer(3 * 4 * 2 * 4)  # out: every other element of a (3, 8) buffer
    t_o = dev.tensor((3, 4), F32, po, strides=(8, 2), storage=(24,))
    assert r.run_add(acl, t_x, t_row, alpha, t_o, stream) == r.OK
    po2 = dev.buffer(2 * 2 * 4)
    t_o2 = dev.tensor((2, 2), F32, po2)
    assert r.run_add(acl, t_y, t_y, alpha, t_o2, stream) == r.OK
    assert acl.aclrtSynchronizeStream(stream) == r.OK

    raw = dev.get(po, (3, 8), F32)
    np.testing.assert_array_equal(raw[:, ::2], base.T + row)
    assert (raw[:, 1::2].view(np.uint32) == 0xABABABAB).all()  # untouched between the strides
    np.testing.assert_array_equal(dev.get(po2, (2, 2), F32), 2 * big[1:3, 1:3])


def test_tensors_may_be_destroyed_right_after_phase_one(acl, stream, dev):
    x = np.arange(6, dtype=np.float32)
    px, po = dev.put(x), dev.buffer(24)
    tx = r.make_tensor(acl, (6,), r.ACL_FLOAT, px)
    to = r.make_tensor(acl, (6,), r.ACL_FLOAT, po)
    alpha = dev.scalar(1.0)
    ws, ex = c_uint64(), c_void_p()
    assert acl.aclnnAddGetWorkspaceSize(tx, tx, alpha, to, byref(ws), byref(ex)) == r.OK
    assert acl.aclDestroyTensor(tx) == acl.aclDestroyTensor(to) == r.OK
    assert acl.aclnnAdd(None, 0, ex, stream) == r.OK
    assert acl.aclrtSynchronizeStream(stream) == r.OK
    np.testing.assert_array_equal(dev.get(po, (6,), F32), 2 * x)


def test_is_deterministic(acl, stream, dev):
    rng = np.random.default_rng(6)
    x, y = rand(rng, (64, 33), BF16), rand(rng, (33,), F16)
    first = run_add(acl, stream, dev, x, y, 0.7)
    for _ in range(3):
        assert_bits_equal(run_add(acl, stream, dev, x, y, 0.7), first, nan_bits=True)


# ---- empty tensors -----------------------------------------------------------------------------


def test_empty_inputs_succeed_with_zero_workspace(acl, stream, dev):
    base = acl.aclsimLiveObjects(r.LIVE_EXECUTORS)
    tx = dev.tensor((0, 4), F32, None)
    ty = dev.tensor((4,), F32, dev.put(np.ones(4, F32)))
    to = dev.tensor((0, 4), F32, None)
    ws, ex = c_uint64(123), c_void_p()
    assert acl.aclnnAddGetWorkspaceSize(tx, ty, dev.scalar(1.0), to, byref(ws), byref(ex)) == 0
    assert ws.value == 0 and ex.value
    assert acl.aclnnAdd(None, 0, ex, stream) == r.OK
    assert acl.aclrtSynchronizeStream(stream) == r.OK
    assert acl.aclsimLiveObjects(r.LIVE_EXECUTORS) == base
    # validation still comes first: an empty self that does not broadcast is an error
    bad = dev.tensor((0, 3), F32, None)
    rc = acl.aclnnAddGetWorkspaceSize(bad, ty, dev.scalar(1.0), to, byref(ws), byref(ex))
    assert rc == r.NN_INVALID and "broadcast" in acl.msg()


# ---- phase 1 errors ----------------------------------------------------------------------------


def test_null_arguments(acl, dev):
    t = dev.tensor((2,), F32, dev.buffer(8))
    a = dev.scalar(1.0)
    ws, ex = c_uint64(), c_void_p()
    full = [t, t, a, t, byref(ws), byref(ex)]
    names = ["self", "other", "alpha", "out", "workspaceSize", "executor"]
    for i, name in enumerate(names):
        args = list(full)
        args[i] = None
        assert acl.aclnnAddGetWorkspaceSize(*args) == r.NN_NULLPTR
        assert acl.msg() == f"aclnnAddGetWorkspaceSize: {name} is NULL [161001]"


def phase1(acl, d: Dev, xs, xd, ys, yd, os_, od, alpha=1.0, adt=r.ACL_FLOAT):
    tx = d.tensor(xs, xd, d.buffer(4 * max(1, int(np.prod(xs)))))
    ty = d.tensor(ys, yd, d.buffer(4 * max(1, int(np.prod(ys)))))
    to = d.tensor(os_, od, d.buffer(4 * max(1, int(np.prod(os_)))))
    ws, ex = c_uint64(), c_void_p()
    rc = acl.aclnnAddGetWorkspaceSize(tx, ty, d.scalar(alpha, adt), to, byref(ws), byref(ex))
    return rc, acl.msg()


def test_invalid_arguments(acl, dev):
    base = acl.aclsimLiveObjects(r.LIVE_EXECUTORS)
    cases = [
        (((2,), F32, (2,), F32, (2,), I32), "cannot be cast to out dtype INT32"),
        (((2,), F16, (2,), I32, (2,), I32), "promoted type FLOAT16"),
        (((3,), F32, (4,), F32, (4,), F32), "cannot be broadcast"),
        (((3, 1), F32, (4,), F32, (3, 1), F32), "must equal the broadcast shape [3, 4]"),
        (((3, 4), F32, (4,), F32, (1, 3, 4), F32), "broadcast shape"),
        (((1,) * 9, F32, (1,), F32, (1,) * 9, F32), "has 9 dims (at most 8)"),
    ]
    for args, frag in cases:
        rc, msg = phase1(acl, dev, *args)
        assert rc == r.NN_INVALID and frag in msg and "[161002]" in msg, (args, msg)
    for alpha, adt in ((2.5, r.ACL_FLOAT), (float("nan"), r.ACL_DOUBLE), (0.5, r.ACL_BF16)):
        rc, msg = phase1(acl, dev, (2,), I32, (2,), I32, (2,), I32, alpha, adt)
        assert rc == r.NN_INVALID and "alpha" in msg and "INT32" in msg, msg
    # unsupported dtypes (UINT16 is not among aclnnAdd's 12)
    i64 = acl.aclCreateTensor(r.i64s([2]), 1, 7, None, 0, 2, r.i64s([2]), 1, None)
    dev.tensors.append(i64)
    t = dev.tensor((2,), F32, None)
    ws, ex = c_uint64(), c_void_p()
    rc = acl.aclnnAddGetWorkspaceSize(i64, t, dev.scalar(1.0), t, byref(ws), byref(ex))
    assert rc == r.NN_INVALID and "self dtype UINT16 is not supported" in acl.msg()
    # stale handles
    stale = r.make_tensor(acl, (2,), r.ACL_FLOAT, None)
    assert acl.aclDestroyTensor(stale) == r.OK
    rc = acl.aclnnAddGetWorkspaceSize(t, stale, dev.scalar(1.0), t, byref(ws), byref(ex))
    msg = acl.msg()
    assert rc == r.NN_INVALID and "other" in msg and "not a live aclTensor" in msg
    rc = acl.aclnnAddGetWorkspaceSize(t, t, 0x1234, t, byref(ws), byref(ex))
    assert rc == r.NN_INVALID and "alpha" in acl.msg()
    assert acl.aclsimLiveObjects(r.LIVE_EXECUTORS) == base  # failed phase 1 leaves nothing


# ---- executors ---------------------------------------------------------------------------------


def prepared(acl, d: Dev, n=4):
    x = np.arange(n, dtype=np.float32)
    tx, _ = d.array(x)
    po = d.buffer(4 * n)
    to = d.tensor((n,), F32, po)
    ws, ex = c_uint64(), c_void_p()
    assert acl.aclnnAddGetWorkspaceSize(tx, tx, d.scalar(1.0), to, byref(ws), byref(ex)) == 0
    return ex.value, po, x


def test_executor_is_single_use(acl, stream, dev):
    ex, po, x = prepared(acl, dev)
    assert acl.aclnnAdd(None, 0, ex, stream) == r.OK
    assert acl.aclnnAdd(None, 0, ex, stream) == r.NN_INVALID
    assert "already run or destroyed" in acl.msg()
    assert acl.aclDestroyAclOpExecutor(ex) == r.NN_INVALID
    assert acl.aclSetAclOpExecutorRepeatable(ex) == r.NN_INVALID
    assert acl.aclnnAdd(None, 0, None, stream) == r.NN_NULLPTR
    assert acl.aclnnAdd(None, 0, 0x5678, stream) == r.NN_INVALID  # garbage handle: no crash
    acl.msg()
    assert acl.aclrtSynchronizeStream(stream) == r.OK
    np.testing.assert_array_equal(dev.get(po, (4,), F32), 2 * x)


def test_destroying_a_never_run_executor_releases_it(acl, dev):
    base = acl.aclsimLiveObjects(r.LIVE_EXECUTORS)
    ex, _, _ = prepared(acl, dev)
    assert acl.aclsimLiveObjects(r.LIVE_EXECUTORS) == base + 1
    assert acl.aclDestroyAclOpExecutor(ex) == r.OK
    assert acl.aclsimLiveObjects(r.LIVE_EXECUTORS) == base
    assert acl.aclDestroyAclOpExecutor(None) == r.NN_INNER_NULLPTR  # 561103, as in CANN


def test_repeatable_executor(acl, stream, dev):
    base = acl.aclsimLiveObjects(r.LIVE_EXECUTORS)
    x = np.arange(4, dtype=np.float32)
    tx, _ = dev.array(x)
    tz, _ = dev.array(np.zeros(4, np.float32))
    po = dev.buffer(16)
    to = dev.tensor((4,), F32, po)
    ws, exv = c_uint64(), c_void_p()
    assert acl.aclnnAddGetWorkspaceSize(tx, tz, dev.scalar(1.0), to, byref(ws), byref(exv)) == 0
    ex = exv.value
    assert acl.aclSetAclOpExecutorRepeatable(ex) == r.OK
    for _ in range(3):
        assert acl.aclnnAdd(None, 0, ex, stream) == r.OK
    assert acl.aclrtSynchronizeStream(stream) == r.OK
    np.testing.assert_array_equal(dev.get(po, (4,), F32), x)
    # New addresses for other and out.  CANN sets the *tensor's* address and ignores the index
    # for op_api executors (nnopbase acl_op_api.cpp), so the index passed does not matter.
    y = np.full(4, 10, np.float32)
    py, po2 = dev.put(y), dev.buffer(16)
    assert acl.aclSetInputTensorAddr(ex, 7, tz, py) == r.OK
    assert acl.aclSetOutputTensorAddr(ex, 99, to, po2) == r.OK
    assert acl.aclSetInputTensorAddr(ex, 1, None, py) == r.NN_INNER_NULLPTR  # 561103
    assert "tensor is NULL" in acl.msg()
    assert acl.aclsimStreamDelay(stream, 30) == r.OK
    assert acl.aclnnAdd(None, 0, ex, stream) == r.OK
    assert acl.aclDestroyAclOpExecutor(ex) == r.OK  # while its launch is still queued
    assert acl.aclnnAdd(None, 0, ex, stream) == r.NN_INVALID
    acl.msg()
    assert acl.aclrtSynchronizeStream(stream) == r.OK
    np.testing.assert_array_equal(dev.get(po2, (4,), F32), x + y)
    np.testing.assert_array_equal(dev.get(po, (4,), F32), x)  # the old output is left alone
    assert acl.aclsimLiveObjects(r.LIVE_EXECUTORS) == base


def test_set_tensor_addr_retargets_every_use_of_the_tensor(acl, stream, dev):
    """Real nnopbase keeps the aclTensor in the executor: setting its address moves every input
    and output built from it (here self and other are one tensor), whatever the index; a NULL
    executor still sets the tensor's address and then returns 561103 (acl_op_api.cpp)."""
    ex, po, x = prepared(acl, dev)  # self and other are the same tensor
    assert acl.aclSetAclOpExecutorRepeatable(ex) == r.OK
    t = dev.tensor((4,), F32, dev.put(x))
    y = np.full(4, 3, np.float32)
    py = dev.put(y)
    assert acl.aclSetInputTensorAddr(None, 0, t, py) == r.NN_INNER_NULLPTR
    assert "executor is NULL" in acl.msg()
    # find the executor's shared input through a tensor the test owns: rebuild with one handle
    tx = dev.tensor((4,), F32, dev.put(x))
    to = dev.tensor((4,), F32, po)
    ws, exv = c_uint64(), c_void_p()
    assert acl.aclnnAddGetWorkspaceSize(tx, tx, dev.scalar(1.0), to, byref(ws), byref(exv)) == 0
    assert acl.aclSetInputTensorAddr(exv.value, 0, tx, py) == r.OK
    assert acl.aclnnAdd(None, 0, exv.value, stream) == r.OK
    assert acl.aclrtSynchronizeStream(stream) == r.OK
    np.testing.assert_array_equal(dev.get(po, (4,), F32), 2 * y)  # both operands moved
    assert acl.aclDestroyAclOpExecutor(ex) == r.OK
    assert acl.aclSetAclOpExecutorRepeatable(None) == r.NN_INNER_NULLPTR
    acl.msg()


def test_run_without_context_in_the_thread(acl, stream, dev):
    ex, _, _ = prepared(acl, dev)

    def run():
        return acl.aclnnAdd(None, 0, ex, stream), acl.msg()

    rc, msg = r.in_thread(run)
    assert rc == r.NN_RUNTIME and "107002" in msg and "[361001]" in msg
    assert acl.aclnnAdd(None, 0, ex, stream) == r.NN_INVALID  # consumed by the failed run
    acl.msg()


def test_null_stream_uses_the_default_stream_and_bad_streams_fail(acl, dev):
    ex, po, x = prepared(acl, dev)
    assert acl.aclnnAdd(None, 0, ex, None) == r.OK
    assert acl.aclrtSynchronizeStream(None) == r.OK
    np.testing.assert_array_equal(dev.get(po, (4,), F32), 2 * x)
    s = r.create_stream(acl)
    assert acl.aclrtDestroyStream(s) == r.OK
    ex, _, _ = prepared(acl, dev)
    assert acl.aclnnAdd(None, 0, ex, s) == r.NN_RUNTIME
    assert "not a live stream" in acl.msg()
    ex, _, _ = prepared(acl, dev)
    assert acl.aclnnAdd(c_void_p(0x40), 1 << 20, ex, None) == r.OK  # workspace unused: ignored
    assert acl.aclrtSynchronizeStream(None) == r.OK


# ---- stream semantics and runtime faults ---------------------------------------------------------


def test_output_is_written_only_when_the_stream_gets_there(acl, stream, dev):
    ex, po, x = prepared(acl, dev)
    assert acl.aclsimStreamDelay(stream, 300) == r.OK
    assert acl.aclnnAdd(None, 0, ex, stream) == r.OK
    assert ctypes.string_at(po, 16) == bytes([CANARY]) * 16  # queued, not run
    assert acl.aclrtSynchronizeStream(stream) == r.OK
    np.testing.assert_array_equal(dev.get(po, (4,), F32), 2 * x)


def test_fifo_order_on_one_stream(acl, stream, dev):
    x = np.arange(8, dtype=np.float32)
    tx, _ = dev.array(x)
    chain = [tx]
    ptrs = []
    for _ in range(5):  # each add reads the previous output: only FIFO gives 2**k * x
        p = dev.buffer(32)
        ptrs.append(p)
        chain.append(dev.tensor((8,), F32, p))
        assert r.run_add(acl, chain[-2], chain[-2], dev.scalar(1.0), chain[-1], stream) == r.OK
    assert acl.aclrtSynchronizeStream(stream) == r.OK
    np.testing.assert_array_equal(dev.get(ptrs[-1], (8,), F32), 32 * x)


def test_bad_device_pointers_become_a_sticky_stream_error(acl, stream, dev):
    x = np.ones(16, np.float32)
    po = dev.buffer(64)
    to = dev.tensor((16,), F32, po)
    freed = r.malloc(acl, 64)
    t_freed = dev.tensor((16,), F32, freed)
    assert acl.aclrtFree(freed) == r.OK
    host = np.ones(16, np.float32)
    t_host = dev.tensor((16,), F32, host.ctypes.data)
    small = dev.buffer(32)
    t_small = dev.tensor((16,), F32, small)  # 64-byte view of a 32-byte allocation
    t_null = dev.tensor((16,), F32, None)
    tx, _ = dev.array(x)
    for bad, where in ((t_freed, "input 0 (self)"), (t_host, "input 0 (self)"),
                       (t_small, "input 0 (self)"), (t_null, "input 0 (self)")):  # fmt: skip
        assert r.run_add(acl, bad, tx, dev.scalar(1.0), to, stream) == r.OK  # launch succeeds
        rc = acl.aclrtSynchronizeStream(stream)
        msg = acl.msg()
        assert rc == r.AICORE_EXCEPTION and "kernel aclnnAdd" in msg and where in msg, msg
        assert "[507015]" in msg
        assert acl.aclrtSynchronizeStream(stream) == r.OK  # cleared
    assert r.run_add(acl, tx, tx, dev.scalar(1.0), t_small, stream) == r.OK
    assert acl.aclrtSynchronizeStream(stream) == r.AICORE_EXCEPTION
    assert "output 0 (out)" in acl.msg()


def test_guard_damage_is_blamed_on_the_kernel(acl, stream, dev):
    x = np.ones(10, np.float32)
    tx, _ = dev.array(x)
    po = dev.buffer(40)
    to = dev.tensor((10,), F32, po)
    ctypes.memmove(po + 40, b"\xff" * 8, 8)  # simulate an overrun past `out`
    assert r.run_add(acl, tx, tx, dev.scalar(1.0), to, stream) == r.OK
    assert acl.aclrtSynchronizeStream(stream) == r.AICORE_EXCEPTION
    msg = acl.msg()
    assert "kernel aclnnAdd wrote past the end of device allocation" in msg and "40 bytes" in msg
    np.testing.assert_array_equal(dev.get(po, (10,), F32), 2 * x)  # free later is clean


# ---- concurrency -----------------------------------------------------------------------------


def test_threads_sharing_one_context_and_stream(acl, stream, dev):
    """The bug report's control: aclnnAdd with different cases on 8 threads is clean."""
    rng = np.random.default_rng(7)
    cases = []
    for i in range(8):
        xd, yd = PAIRS[i % len(PAIRS)]
        sx, sy = SHAPES[i % len(SHAPES)]
        x, y = rand(rng, (9, *np.broadcast_shapes(sx, sy)), xd), rand(rng, sy, yd)
        alpha = 2 if promote(x.dtype, y.dtype) == I32 else 0.25
        cases.append((x, y, alpha, reference(x, y, alpha, promote(x.dtype, y.dtype))))
    lock = threading.Lock()
    errors: list = []
    barrier = threading.Barrier(8)

    def worker(i):
        try:
            assert acl.aclrtSetDevice(0) == r.OK
            with lock:
                d = Dev(acl)
            x, y, alpha, want = cases[i]
            barrier.wait()
            for _ in range(10):
                got = run_add(acl, stream, d, x, y, alpha)
                assert_bits_equal(got, want)
            d.close()
            assert acl.aclrtResetDevice(0) == r.OK
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[0]


# ---- third-party script ----------------------------------------------------------------------

SCRIPT = Path(__file__).resolve().parent / "scripts" / "third_party_add.py"


def test_unmodified_third_party_script(acl):
    env = {**os.environ, "ASCEND_HOME_PATH": str(acl.root)}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "PASS"


def test_arch_lib_dir_loads_too(acl):
    code = (
        "import ctypes, os, platform\n"
        "d = os.path.join(os.environ['ASCEND_HOME_PATH'], platform.machine() + '-linux', 'lib64')\n"
        "libs = [ctypes.CDLL(os.path.join(d, n), mode=ctypes.RTLD_GLOBAL)\n"
        "        for n in ('libopapi.so', 'libnnopbase.so', 'libascendcl.so')]\n"  # any order
        "assert libs[2].aclInit(None) == 0\n"
        "print('ok')\n"
    )
    env = {**os.environ, "ASCEND_HOME_PATH": str(acl.root)}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
