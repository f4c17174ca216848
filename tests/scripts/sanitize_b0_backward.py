"""aclnnMhcPreSinkhornBackward with B = 0 through plain ctypes, reading every output back.

The shape of the problem report's failing case (B = 0, S = 8, N = 4, C = 128): every input and
gradX are empty (NULL data), gradPhi [24, 512], gradAlpha [3] and gradBias [24] are not. The
outputs are allocated with aclrtMalloc and never written by the script, so whatever it reads
back is what the operator wrote. Run with ASCEND_HOME_PATH pointing at a CANN install or the
aclnn-stress simulator root; uses only the documented ABI (no `stress` import), so the
simulator's sanitizer applies by the environment alone:

    ACLSIM_SANITIZE=initcheck ACLSIM_FAULTS=empty-skip python sanitize_b0_backward.py

Prints one line per output (name, bytes, the device address) and exits 0.
"""

import ctypes
import os
import sys
from ctypes import POINTER, byref, c_char_p, c_double, c_int, c_int32, c_int64, c_uint64, c_void_p

import numpy as np

ACL_FLOAT, ACL_FLOAT16 = 0, 1
ACL_FORMAT_ND = 2
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_DEVICE_TO_HOST = 2
B, S, N, C = 0, 8, 4, 128
D, K, ITERS = N * N + 2 * N, N * C, 20

lib64 = os.path.join(os.environ["ASCEND_HOME_PATH"], "lib64")
ascendcl = ctypes.CDLL(os.path.join(lib64, "libascendcl.so"), mode=ctypes.RTLD_GLOBAL)
nnopbase = ctypes.CDLL(os.path.join(lib64, "libnnopbase.so"), mode=ctypes.RTLD_GLOBAL)
opapi = ctypes.CDLL(os.path.join(lib64, "libopapi.so"), mode=ctypes.RTLD_GLOBAL)

ascendcl.aclInit.argtypes = [c_char_p]
ascendcl.aclrtSetDevice.argtypes = [c_int32]
ascendcl.aclrtCreateStream.argtypes = [POINTER(c_void_p)]
ascendcl.aclrtMalloc.argtypes = [POINTER(c_void_p), ctypes.c_size_t, c_int]
ascendcl.aclrtMemcpy.argtypes = [c_void_p, ctypes.c_size_t, c_void_p, ctypes.c_size_t, c_int]
ascendcl.aclrtSynchronizeStream.argtypes = [c_void_p]
ascendcl.aclGetRecentErrMsg.restype = c_char_p
nnopbase.aclCreateTensor.restype = c_void_p
nnopbase.aclCreateTensor.argtypes = [
    POINTER(c_int64), c_uint64, c_int, POINTER(c_int64), c_int64, c_int, POINTER(c_int64),
    c_uint64, c_void_p,
]  # fmt: skip
opapi.aclnnMhcPreSinkhornBackwardGetWorkspaceSize.argtypes = (
    [c_void_p] * 12 + [c_double] + [c_void_p] * 4 + [POINTER(c_uint64), POINTER(c_void_p)]
)
opapi.aclnnMhcPreSinkhornBackward.argtypes = [c_void_p, c_uint64, c_void_p, c_void_p]


def check(ret, what):
    if ret != 0:
        msg = ascendcl.aclGetRecentErrMsg()
        sys.exit(f"{what} failed with {ret}: {msg.decode() if msg else ''}")


def tensor(shape, dtype):
    """An ND tensor; device memory (left unwritten) unless it is empty."""
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    dev = c_void_p()
    if n:
        check(ascendcl.aclrtMalloc(byref(dev), n, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
    dims = (c_int64 * len(shape))(*shape)
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    acl_dtype = ACL_FLOAT16 if dtype == np.float16 else ACL_FLOAT
    handle = nnopbase.aclCreateTensor(dims, len(shape), acl_dtype, (c_int64 * len(shape))(*strides),
                                      0, ACL_FORMAT_ND, dims, len(shape), dev)  # fmt: skip
    if not handle:
        sys.exit("aclCreateTensor returned NULL")
    return handle, dev, n, shape, dtype


def main():
    check(ascendcl.aclInit(None), "aclInit")
    check(ascendcl.aclrtSetDevice(0), "aclrtSetDevice")
    stream = c_void_p()
    check(ascendcl.aclrtCreateStream(byref(stream)), "aclrtCreateStream")
    f16, f32 = np.float16, np.float32
    inputs = [tensor((B, S, C), f16), tensor((B, S, N), f32), tensor((B, S, N * N), f32),
              tensor((B, S, N, C), f16), tensor((D, K), f32), tensor((3,), f32),
              tensor((D,), f32), tensor((B, S, N), f32), tensor((B, S, D), f32),
              tensor((B, S, 1), f32), tensor((2 * ITERS, B, S, N), f32),
              tensor((2 * ITERS, B, S, N, N), f32)]  # fmt: skip
    names = ["gradX", "gradPhi", "gradAlpha", "gradBias"]
    outputs = [tensor((B, S, N, C), f16), tensor((D, K), f32), tensor((3,), f32),
               tensor((D,), f32)]  # fmt: skip
    ws, executor = c_uint64(0), c_void_p()
    check(opapi.aclnnMhcPreSinkhornBackwardGetWorkspaceSize(
        *(t[0] for t in inputs), 1e-6, *(t[0] for t in outputs), byref(ws), byref(executor)),
        "aclnnMhcPreSinkhornBackwardGetWorkspaceSize")  # fmt: skip
    workspace = c_void_p()
    if ws.value:
        check(ascendcl.aclrtMalloc(byref(workspace), ws.value, 0), "aclrtMalloc workspace")
    check(opapi.aclnnMhcPreSinkhornBackward(workspace, ws.value, executor, stream),
          "aclnnMhcPreSinkhornBackward")  # fmt: skip
    check(ascendcl.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")
    for name, (_, dev, n, shape, dtype) in zip(names, outputs, strict=True):
        if not n:
            print(f"{name}: empty")
            continue
        host = np.empty(shape, dtype)
        check(ascendcl.aclrtMemcpy(host.ctypes.data, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST),
              "aclrtMemcpy back")  # fmt: skip
        print(f"{name}: {n} bytes at 0x{dev.value:x}, all zero: {not host.any()}")
    check(ascendcl.aclFinalize(), "aclFinalize")


if __name__ == "__main__":
    main()
