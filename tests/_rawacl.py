"""Raw ctypes access to the simulator for its own tests, written the way a third-party script
would bind CANN (no stress.acl): load the three libraries with RTLD_GLOBAL, declare prototypes,
call, check status codes by hand.

``load()`` builds the simulator (``stress.sim.root()``), loads it and calls ``aclInit`` once per
process.  Helpers below create tensors and run aclnnAdd.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import (
    POINTER,
    c_bool,
    c_char_p,
    c_double,
    c_float,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stress import sim

# status codes
OK = 0
INVALID_PARAM = 100000
UNINITIALIZE = 100001
REPEAT_INITIALIZE = 100002
REPEAT_FINALIZE = 100037
INVALID_DEVICEID = 107001
CONTEXT_NULL = 107002
MEMORY_ALLOCATION = 207001
AICORE_EXCEPTION = 507015
SYNC_TIMEOUT = 507046
NN_NULLPTR = 161001
NN_INVALID = 161002
NN_RUNTIME = 361001

# aclDataType
ACL_FLOAT, ACL_FLOAT16, ACL_INT8, ACL_INT32 = 0, 1, 2, 3
ACL_INT64, ACL_DOUBLE, ACL_BOOL, ACL_BF16 = 9, 11, 12, 27
ACL_FORMAT_ND = 2

# aclsimLiveObjects kinds
LIVE_ALLOCS, LIVE_BYTES, LIVE_TENSORS, LIVE_SCALARS = 0, 1, 2, 3
LIVE_EXECUTORS, LIVE_STREAMS, LIVE_CONTEXTS, LIVE_ARRAYS = 4, 5, 6, 7
LIVE_LISTS, LIVE_EVENTS = 8, 9
NN_INNER_NULLPTR = 561103

# numpy dtype name -> aclDataType (ml_dtypes is imported only where bfloat16 values are made:
# it costs half a second, which matters for the child processes these tests start)
NP_TO_ACL = {"float32": ACL_FLOAT, "float16": ACL_FLOAT16, "bfloat16": ACL_BF16, "int32": ACL_INT32}

LIBS = ("libascendcl.so", "libnnopbase.so", "libopapi.so")

P = c_void_p
PROTOTYPES: dict[str, tuple[str, object, list]] = {
    # libascendcl
    "aclInit": ("ascendcl", c_int, [c_char_p]),
    "aclFinalize": ("ascendcl", c_int, []),
    "aclrtSetDevice": ("ascendcl", c_int, [c_int32]),
    "aclrtResetDevice": ("ascendcl", c_int, [c_int32]),
    "aclrtGetDevice": ("ascendcl", c_int, [POINTER(c_int32)]),
    "aclrtGetDeviceCount": ("ascendcl", c_int, [POINTER(c_uint32)]),
    "aclrtCreateContext": ("ascendcl", c_int, [POINTER(P), c_int32]),
    "aclrtDestroyContext": ("ascendcl", c_int, [P]),
    "aclrtSetCurrentContext": ("ascendcl", c_int, [P]),
    "aclrtGetCurrentContext": ("ascendcl", c_int, [POINTER(P)]),
    "aclrtCreateStream": ("ascendcl", c_int, [POINTER(P)]),
    "aclrtDestroyStream": ("ascendcl", c_int, [P]),
    "aclrtSynchronizeStream": ("ascendcl", c_int, [P]),
    "aclrtSynchronizeStreamWithTimeout": ("ascendcl", c_int, [P, c_int32]),
    "aclrtSynchronizeDevice": ("ascendcl", c_int, []),
    "aclrtMalloc": ("ascendcl", c_int, [POINTER(P), c_size_t, c_int]),
    "aclrtFree": ("ascendcl", c_int, [P]),
    "aclrtMallocHost": ("ascendcl", c_int, [POINTER(P), c_size_t]),
    "aclrtFreeHost": ("ascendcl", c_int, [P]),
    "aclrtMemcpy": ("ascendcl", c_int, [P, c_size_t, P, c_size_t, c_int]),
    "aclrtMemset": ("ascendcl", c_int, [P, c_size_t, c_int32, c_size_t]),
    "aclrtGetSocName": ("ascendcl", c_char_p, []),
    "aclsysGetVersionStr": ("ascendcl", c_int, [c_char_p, c_char_p]),
    "aclrtSetSysParamOpt": ("ascendcl", c_int, [c_int, c_int64]),
    "aclrtGetSysParamOpt": ("ascendcl", c_int, [c_int, POINTER(c_int64)]),
    "aclrtCtxSetSysParamOpt": ("ascendcl", c_int, [c_int, c_int64]),
    "aclrtCtxGetSysParamOpt": ("ascendcl", c_int, [c_int, POINTER(c_int64)]),
    "aclGetRecentErrMsg": ("ascendcl", c_char_p, []),
    "aclrtMemcpyAsync": ("ascendcl", c_int, [P, c_size_t, P, c_size_t, c_int, P]),
    "aclrtMemsetAsync": ("ascendcl", c_int, [P, c_size_t, c_int32, c_size_t, P]),
    "aclrtCreateEvent": ("ascendcl", c_int, [POINTER(P)]),
    "aclrtDestroyEvent": ("ascendcl", c_int, [P]),
    "aclrtRecordEvent": ("ascendcl", c_int, [P, P]),
    "aclrtStreamWaitEvent": ("ascendcl", c_int, [P, P]),
    "aclrtSynchronizeEvent": ("ascendcl", c_int, [P]),
    "aclrtQueryEventStatus": ("ascendcl", c_int, [P, POINTER(c_int)]),
    "aclrtGetMemInfo": ("ascendcl", c_int, [c_int, POINTER(c_size_t), POINTER(c_size_t)]),
    "aclDataTypeSize": ("ascendcl", c_size_t, [c_int]),
    "aclFloatToFloat16": ("ascendcl", ctypes.c_uint16, [c_float]),
    "aclFloat16ToFloat": ("ascendcl", c_float, [ctypes.c_uint16]),
    "aclsimLiveObjects": ("ascendcl", c_int64, [c_int32]),
    "aclsimVersion": ("ascendcl", c_char_p, []),
    "aclsimStreamDelay": ("ascendcl", c_int, [P, c_int32]),
    "aclsimKnownFaults": ("ascendcl", c_char_p, []),
    # libnnopbase
    "aclCreateTensor": (
        "nnopbase",
        P,
        [
            POINTER(c_int64),
            c_uint64,
            c_int,
            POINTER(c_int64),
            c_int64,
            c_int,
            POINTER(c_int64),
            c_uint64,
            P,
        ],
    ),
    "aclDestroyTensor": ("nnopbase", c_int32, [P]),
    "aclCreateScalar": ("nnopbase", P, [P, c_int]),
    "aclDestroyScalar": ("nnopbase", c_int32, [P]),
    "aclCreateIntArray": ("nnopbase", P, [POINTER(c_int64), c_uint64]),
    "aclDestroyIntArray": ("nnopbase", c_int32, [P]),
    "aclCreateFloatArray": ("nnopbase", P, [POINTER(c_float), c_uint64]),
    "aclDestroyFloatArray": ("nnopbase", c_int32, [P]),
    "aclCreateBoolArray": ("nnopbase", P, [POINTER(c_bool), c_uint64]),
    "aclDestroyBoolArray": ("nnopbase", c_int32, [P]),
    "aclSetAclOpExecutorRepeatable": ("nnopbase", c_int32, [P]),
    "aclDestroyAclOpExecutor": ("nnopbase", c_int32, [P]),
    "aclSetInputTensorAddr": ("nnopbase", c_int32, [P, c_size_t, P, P]),
    "aclSetOutputTensorAddr": ("nnopbase", c_int32, [P, c_size_t, P, P]),
    "aclCreateTensorList": ("nnopbase", P, [POINTER(P), c_uint64]),
    "aclCreateScalarList": ("nnopbase", P, [POINTER(P), c_uint64]),
    "aclDestroyTensorList": ("nnopbase", c_int32, [P]),
    "aclDestroyScalarList": ("nnopbase", c_int32, [P]),
    "aclGetViewShape": ("nnopbase", c_int32, [P, POINTER(POINTER(c_int64)), POINTER(c_uint64)]),
    "aclGetViewStrides": ("nnopbase", c_int32, [P, POINTER(POINTER(c_int64)), POINTER(c_uint64)]),
    "aclGetStorageShape": ("nnopbase", c_int32, [P, POINTER(POINTER(c_int64)), POINTER(c_uint64)]),
    "aclGetViewOffset": ("nnopbase", c_int32, [P, POINTER(c_int64)]),
    "aclGetFormat": ("nnopbase", c_int32, [P, POINTER(c_int)]),
    "aclGetDataType": ("nnopbase", c_int32, [P, POINTER(c_int)]),
    "aclGetIntArraySize": ("nnopbase", c_int32, [P, POINTER(c_uint64)]),
    "aclGetFloatArraySize": ("nnopbase", c_int32, [P, POINTER(c_uint64)]),
    "aclGetBoolArraySize": ("nnopbase", c_int32, [P, POINTER(c_uint64)]),
    "aclGetTensorListSize": ("nnopbase", c_int32, [P, POINTER(c_uint64)]),
    "aclGetScalarListSize": ("nnopbase", c_int32, [P, POINTER(c_uint64)]),
    "aclnnInit": ("nnopbase", c_int32, [c_char_p]),
    "aclnnFinalize": ("nnopbase", c_int32, []),
    # libopapi
    "aclnnAddGetWorkspaceSize": ("opapi", c_int32, [P, P, P, P, POINTER(c_uint64), POINTER(P)]),
    "aclnnAdd": ("opapi", c_int32, [P, c_uint64, P, P]),
}


class Acl:
    """The three libraries with prototypes bound; attribute access gives the function."""

    def __init__(self, root: Path) -> None:
        self.root = root
        lib64 = root / "lib64"
        self.libs = {
            name[3:-3]: ctypes.CDLL(str(lib64 / name), mode=ctypes.RTLD_GLOBAL) for name in LIBS
        }
        for fname, (lib, restype, argtypes) in PROTOTYPES.items():
            fn = getattr(self.libs[lib], fname)
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, fname, fn)

    def msg(self) -> str:
        return self.aclGetRecentErrMsg().decode()

    def live(self) -> dict[int, int]:
        return {k: self.aclsimLiveObjects(k) for k in range(10)}


_lock = threading.Lock()
_acl: Acl | None = None


def load() -> Acl:
    """Build, load and aclInit the simulator once for this process."""
    global _acl
    with _lock:
        if _acl is None:
            acl = Acl(sim.root())
            rc = acl.aclInit(None)
            assert rc in (OK, REPEAT_INITIALIZE), (rc, acl.msg())
            # Hold device 0 for the whole process, so its default context (and streams created
            # in it by fixtures) survive tests that set and reset the device.
            rc = acl.aclrtSetDevice(0)
            assert rc == OK, (rc, acl.msg())
            _acl = acl
        return _acl


# ---- helpers -------------------------------------------------------------------------------


def i64s(values) -> ctypes.Array:
    values = list(values)
    return (c_int64 * max(1, len(values)))(*values)


def malloc(acl: Acl, nbytes: int) -> int:
    p = c_void_p()
    rc = acl.aclrtMalloc(ctypes.byref(p), nbytes, 0)
    assert rc == OK, (rc, acl.msg())
    return p.value


def create_stream(acl: Acl) -> int:
    s = c_void_p()
    rc = acl.aclrtCreateStream(ctypes.byref(s))
    assert rc == OK, (rc, acl.msg())
    return s.value


def make_tensor(
    acl: Acl, shape, dtype: int, data: int | None, strides=None, offset: int = 0, storage=None
) -> int:
    shape = list(shape)
    storage = shape if storage is None else list(storage)
    t = acl.aclCreateTensor(
        i64s(shape),
        len(shape),
        dtype,
        None if strides is None else i64s(strides),
        offset,
        ACL_FORMAT_ND,
        i64s(storage),
        len(storage),
        data,
    )
    assert t, acl.msg()
    return t


def make_scalar(acl: Acl, value, dtype: int) -> int:
    ctype = {
        ACL_FLOAT: c_float,
        ACL_DOUBLE: c_double,
        ACL_INT32: c_int32,
        ACL_INT64: c_int64,
        ACL_INT8: ctypes.c_int8,
        ACL_BOOL: c_bool,
    }.get(dtype)
    if dtype in (ACL_FLOAT16, ACL_BF16):  # raw uint16 bits
        import ml_dtypes

        np_dt = np.float16 if dtype == ACL_FLOAT16 else ml_dtypes.bfloat16
        buf = ctypes.c_uint16(int(np.array(value, dtype=np_dt).view(np.uint16)))
    else:
        buf = ctype(value)
    s = acl.aclCreateScalar(ctypes.byref(buf), dtype)
    assert s, acl.msg()
    return s


@dataclass
class DevArray:
    """A numpy array uploaded to a device allocation (possibly with a strided view)."""

    ptr: int
    nbytes: int
    tensor: int


def upload(acl: Acl, arr: np.ndarray) -> DevArray:
    """Copy a contiguous array to device memory and describe it with a tensor."""
    arr = np.ascontiguousarray(arr)
    nbytes = max(arr.nbytes, 1)
    ptr = malloc(acl, nbytes)
    if arr.nbytes:
        rc = acl.aclrtMemcpy(ptr, nbytes, arr.ctypes.data, arr.nbytes, 1)
        assert rc == OK, (rc, acl.msg())
    t = make_tensor(acl, arr.shape, NP_TO_ACL[arr.dtype.name], ptr)
    return DevArray(ptr, nbytes, t)


def download(acl: Acl, ptr: int, nbytes: int, dtype, shape) -> np.ndarray:
    out = np.empty(shape, dtype=dtype)
    if out.nbytes:
        rc = acl.aclrtMemcpy(out.ctypes.data, out.nbytes, ptr, min(nbytes, out.nbytes), 2)
        assert rc == OK, (rc, acl.msg())
    return out


def run_add(acl: Acl, self_t: int, other_t: int, alpha_s: int, out_t: int, stream) -> int:
    """Two-stage aclnnAdd; returns the first non-zero status or 0."""
    ws = c_uint64()
    ex = c_void_p()
    rc = acl.aclnnAddGetWorkspaceSize(
        self_t, other_t, alpha_s, out_t, ctypes.byref(ws), ctypes.byref(ex)
    )
    if rc:
        return rc
    return acl.aclnnAdd(None, ws.value, ex, stream)


def in_thread(fn, *args):
    """Run fn(*args) on a fresh thread (no current context) and return its result."""
    box: dict = {}

    def body():
        try:
            box["result"] = fn(*args)
        except BaseException as exc:  # re-raised on the caller's thread
            box["error"] = exc

    t = threading.Thread(target=body)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "thread hung"
    if "error" in box:
        raise box["error"]
    return box["result"]


TESTS_DIR = Path(__file__).resolve().parent


def sim_source_files() -> list[Path]:
    from stress.sim import _build

    return _build.source_files()


def run_py(code: str, env: dict[str, str] | None = None, timeout: float = 60, args=()):
    """Run Python code in a child process that can `import _rawacl`; returns CompletedProcess."""
    import os
    import subprocess
    import sys

    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(TESTS_DIR), str(TESTS_DIR.parent), full_env.get("PYTHONPATH", "")]
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
