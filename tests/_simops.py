"""A ctypes harness for the simulator's real-signature operators (Add family, Mul, Matmul,
RmsNorm, Softmax, ReduceSum, Cat, LayerNorm), written the way a third-party script binds CANN:
the libraries loaded by ``_rawacl.load()``, prototypes declared here, status codes checked by
hand.  ``Session`` owns the device buffers and handles of one test and frees them at the end.
"""

from __future__ import annotations

import ctypes
from ctypes import POINTER, byref, c_bool, c_double, c_int8, c_int32, c_int64, c_uint64, c_void_p

import _rawacl as r
import ml_dtypes
import numpy as np

P = c_void_p
WS = [POINTER(c_uint64), POINTER(P)]
RUN = [P, c_uint64, P, P]

#: numpy dtype -> aclDataType (the 12 dtypes of the math operators)
ACL_DT: dict[np.dtype, int] = {
    np.dtype(np.float32): 0,
    np.dtype(np.float16): 1,
    np.dtype(np.int8): 2,
    np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4,
    np.dtype(np.int16): 6,
    np.dtype(np.int64): 9,
    np.dtype(np.float64): 11,
    np.dtype(np.bool_): 12,
    np.dtype(np.complex64): 16,
    np.dtype(np.complex128): 17,
    np.dtype(ml_dtypes.bfloat16): 27,
}

#: function -> (library, argtypes); all return aclnnStatus (int32)
OPS: dict[str, tuple[str, list]] = {
    "aclnnAddsGetWorkspaceSize": ("math", [P, P, P, P, *WS]),
    "aclnnInplaceAddGetWorkspaceSize": ("math", [P, P, P, *WS]),
    "aclnnInplaceAddsGetWorkspaceSize": ("math", [P, P, P, *WS]),
    "aclnnMulGetWorkspaceSize": ("math", [P, P, P, *WS]),
    "aclnnInplaceMulGetWorkspaceSize": ("math", [P, P, *WS]),
    "aclnnReduceSumGetWorkspaceSize": ("math", [P, P, c_bool, c_int32, P, *WS]),
    "aclnnCatGetWorkspaceSize": ("math", [P, c_int64, P, *WS]),
    "aclnnMatmulGetWorkspaceSize": ("nn", [P, P, P, c_int8, *WS]),
    "aclnnRmsNormGetWorkspaceSize": ("nn", [P, P, c_double, P, P, *WS]),
    "aclnnSoftmaxGetWorkspaceSize": ("nn", [P, c_int64, P, *WS]),
    "aclnnLayerNormGetWorkspaceSize": ("nn", [P, P, P, P, c_double, P, P, P, *WS]),
}
_SECOND = {
    "aclnnAdd": "math", "aclnnAdds": "math", "aclnnInplaceAdd": "math",
    "aclnnInplaceAdds": "math", "aclnnMul": "math", "aclnnInplaceMul": "math",
    "aclnnReduceSum": "math", "aclnnCat": "math", "aclnnMatmul": "nn", "aclnnRmsNorm": "nn",
    "aclnnSoftmax": "nn", "aclnnLayerNorm": "nn",
}  # fmt: skip
OPS.update({name: (lib, RUN) for name, lib in _SECOND.items()})
OPS["aclnnAddGetWorkspaceSize"] = ("math", [P, P, P, P, *WS])

_bound: dict[str, object] = {}


def fn(name: str):
    """The operator function `name` from libopapi_<domain>.so, prototype bound."""
    if name not in _bound:
        acl = r.load()
        lib, argtypes = OPS[name]
        f = getattr(ctypes.CDLL(str(acl.root / "lib64" / f"libopapi_{lib}.so")), name)
        f.restype, f.argtypes = c_int32, argtypes
        _bound[name] = f
    return _bound[name]


def bits_view(arr: np.ndarray) -> np.ndarray:
    """The array's bytes as unsigned integers of its element size (compares NaN payloads too)."""
    if arr.dtype.kind == "c":
        return np.ascontiguousarray(arr).view(np.uint64 if arr.itemsize == 16 else np.uint32)
    return np.ascontiguousarray(arr).view(
        {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[arr.itemsize]
    )


class Session:
    """Device memory and handles of one test; ``close()`` frees everything."""

    def __init__(self) -> None:
        self.acl = r.load()
        self.ptrs: list[int] = []
        self.tensors: list[int] = []
        self.others: list[tuple[str, int]] = []
        self.stream = r.create_stream(self.acl)

    # ---- tensors ----
    def tensor(
        self, arr: np.ndarray, layout: str = "contiguous", fill: int = 0xAB
    ) -> tuple[int, int, tuple]:
        """Upload arr and describe it; layout "strided" stores it with doubled strides and an
        offset of 3 elements, "transposed" with its last two dims swapped in storage.  Returns
        (tensor, device pointer, (strides, offset, storage elements))."""
        arr = np.asarray(arr)
        shape = arr.shape
        nd = arr.ndim
        contig = [int(np.prod(shape[i + 1 :], dtype=np.int64)) for i in range(nd)]
        if layout == "strided" and arr.size:
            strides, offset = [2 * s for s in contig], 3
        elif layout == "transposed" and nd >= 2 and arr.size:
            perm = [*range(nd - 2), nd - 1, nd - 2]
            t_shape = [shape[p] for p in perm]
            t_contig = [int(np.prod(t_shape[i + 1 :], dtype=np.int64)) for i in range(nd)]
            strides = [0] * nd
            for i, p in enumerate(perm):
                strides[p] = t_contig[i]
            offset = 0
        else:
            strides, offset = contig, 0
        n_storage = offset + sum((d - 1) * s for d, s in zip(shape, strides, strict=True)) + 1
        n_storage = n_storage if arr.size else 0
        storage = np.zeros(max(n_storage, 1), dtype=arr.dtype)
        if arr.size:
            view = np.lib.stride_tricks.as_strided(
                storage[offset:], shape, [s * arr.itemsize for s in strides]
            )
            view[...] = arr
        nbytes = max(storage.nbytes, 1)
        ptr = r.malloc(self.acl, nbytes)
        ctypes.memset(ptr, fill, nbytes)
        self.ptrs.append(ptr)
        if arr.size:
            assert self.acl.aclrtMemcpy(ptr, nbytes, storage.ctypes.data, storage.nbytes, 1) == r.OK
        t = r.make_tensor(
            self.acl, shape, ACL_DT[arr.dtype], ptr, strides, offset, [max(n_storage, 1)]
        )
        self.tensors.append(t)
        return t, ptr, (strides, offset, n_storage)

    def output(self, shape, dtype, layout: str = "contiguous") -> Out:
        """An output tensor prefilled with the canary 0xAB (so unwritten bytes show)."""
        arr = np.zeros(shape, dtype=dtype)
        t, ptr, geo = self.tensor(arr, layout, fill=0xAB)
        ctypes.memset(ptr, 0xAB, max(geo[2] * arr.itemsize, 1))
        return Out(self, t, ptr, tuple(shape), np.dtype(dtype), geo)

    def scalar(self, value, dtype) -> int:
        buf = np.array([value], dtype=dtype)
        s = self.acl.aclCreateScalar(buf.ctypes.data, ACL_DT[np.dtype(dtype)])
        assert s, self.acl.msg()
        self.others.append(("aclDestroyScalar", s))
        return s

    def int_array(self, values) -> int:
        values = list(values)
        a = self.acl.aclCreateIntArray(r.i64s(values), len(values))
        assert a, self.acl.msg()
        self.others.append(("aclDestroyIntArray", a))
        return a

    # ---- calls ----
    def call(self, op: str, *args) -> int:
        """Two-stage call of `op` with the given first-stage arguments; synchronises.  Returns
        the first non-zero status (the message stays readable by ``msg()``) or 0."""
        ws, ex = c_uint64(), c_void_p()
        rc = fn(op + "GetWorkspaceSize")(*args, byref(ws), byref(ex))
        if rc:
            return rc
        work = r.malloc(self.acl, ws.value) if ws.value else None
        if work:
            self.ptrs.append(work)
        rc = fn(op)(work, ws.value, ex, self.stream)
        if rc:
            return rc
        return self.acl.aclrtSynchronizeStream(self.stream)

    def msg(self) -> str:
        return self.acl.msg()

    def close(self) -> None:
        for t in self.tensors:
            self.acl.aclDestroyTensor(t)
        for destroy, h in self.others:
            getattr(self.acl, destroy)(h)
        for p in self.ptrs:
            self.acl.aclrtFree(p)
        self.acl.aclrtDestroyStream(self.stream)
        self.acl.aclGetRecentErrMsg()


class Out:
    """An output tensor and how to read its view back."""

    def __init__(self, s: Session, t: int, ptr: int, shape, dtype, geo) -> None:
        self.s, self.t, self.ptr, self.shape, self.dtype, self.geo = s, t, ptr, shape, dtype, geo

    def read(self) -> np.ndarray:
        strides, offset, n_storage = self.geo
        if n_storage == 0:
            return np.zeros(self.shape, dtype=self.dtype)
        storage = np.empty(n_storage, dtype=self.dtype)
        rc = self.s.acl.aclrtMemcpy(
            storage.ctypes.data, storage.nbytes, self.ptr, storage.nbytes, 2
        )
        assert rc == r.OK
        view = np.lib.stride_tricks.as_strided(
            storage[offset:], self.shape, [st * self.dtype.itemsize for st in strides]
        )
        return np.array(view)


def values(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """Seeded test values of dtype: full-range small integers, wide int32/int64 (so sums and
    products wrap), random bools, normal floats scaled by 4, complex with both parts."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = (int(info.min), int(info.max)) if dtype.itemsize <= 2 else (-(10**6), 10**6)
        if dtype.itemsize == 8:
            lo, hi = -(10**12), 10**12
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) * 4 + 1j * rng.standard_normal(shape) * 4).astype(dtype)
    return (rng.standard_normal(shape) * 4).astype(np.float32).astype(dtype)
