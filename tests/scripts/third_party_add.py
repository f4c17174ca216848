"""aclnnAdd through ctypes, the way a CANN user script does it (cf. the CANN aclnn examples).

Run with ASCEND_HOME_PATH pointing at a CANN install (or the aclnn-stress simulator root). It
relies on aclrtSetDevice's default context, passes a NULL workspace when the size is 0 and exits
without destroying anything.  Prints PASS and exits 0 when the result matches numpy.
"""

import ctypes
import os
import sys
from ctypes import POINTER, byref, c_char_p, c_int, c_int32, c_int64, c_size_t, c_uint64, c_void_p

import numpy as np

ACL_FLOAT = 0
ACL_FORMAT_ND = 2
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2

lib64 = os.path.join(os.environ["ASCEND_HOME_PATH"], "lib64")
ascendcl = ctypes.CDLL(os.path.join(lib64, "libascendcl.so"), mode=ctypes.RTLD_GLOBAL)
nnopbase = ctypes.CDLL(os.path.join(lib64, "libnnopbase.so"), mode=ctypes.RTLD_GLOBAL)
opapi = ctypes.CDLL(os.path.join(lib64, "libopapi.so"), mode=ctypes.RTLD_GLOBAL)

ascendcl.aclInit.argtypes = [c_char_p]
ascendcl.aclrtSetDevice.argtypes = [c_int32]
ascendcl.aclrtCreateStream.argtypes = [POINTER(c_void_p)]
ascendcl.aclrtMalloc.argtypes = [POINTER(c_void_p), c_size_t, c_int]
ascendcl.aclrtMemcpy.argtypes = [c_void_p, c_size_t, c_void_p, c_size_t, c_int]
ascendcl.aclrtSynchronizeStream.argtypes = [c_void_p]
ascendcl.aclGetRecentErrMsg.restype = c_char_p
nnopbase.aclCreateTensor.restype = c_void_p
nnopbase.aclCreateTensor.argtypes = [
    POINTER(c_int64), c_uint64, c_int, POINTER(c_int64), c_int64, c_int, POINTER(c_int64),
    c_uint64, c_void_p,
]  # fmt: skip
nnopbase.aclCreateScalar.restype = c_void_p
nnopbase.aclCreateScalar.argtypes = [c_void_p, c_int]
opapi.aclnnAddGetWorkspaceSize.argtypes = [
    c_void_p, c_void_p, c_void_p, c_void_p, POINTER(c_uint64), POINTER(c_void_p),
]  # fmt: skip
opapi.aclnnAdd.argtypes = [c_void_p, c_uint64, c_void_p, c_void_p]


def check(ret, what):
    if ret != 0:
        msg = ascendcl.aclGetRecentErrMsg()
        sys.exit(f"{what} failed with {ret}: {msg.decode() if msg else ''}")


def device_tensor(host):
    """Copy a host array to the device; return (device pointer, aclTensor*)."""
    dev = c_void_p()
    check(ascendcl.aclrtMalloc(byref(dev), host.nbytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
    check(
        ascendcl.aclrtMemcpy(dev, host.nbytes, host.ctypes.data, host.nbytes,
                             ACL_MEMCPY_HOST_TO_DEVICE),
        "aclrtMemcpy",
    )  # fmt: skip
    shape = (c_int64 * host.ndim)(*host.shape)
    strides = (c_int64 * host.ndim)(*(s // host.itemsize for s in host.strides))
    tensor = nnopbase.aclCreateTensor(
        shape, host.ndim, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, host.ndim, dev
    )
    if not tensor:
        sys.exit("aclCreateTensor returned NULL")
    return dev, tensor


def main():
    check(ascendcl.aclInit(None), "aclInit")
    check(ascendcl.aclrtSetDevice(0), "aclrtSetDevice")  # default context, no aclrtCreateContext
    stream = c_void_p()
    check(ascendcl.aclrtCreateStream(byref(stream)), "aclrtCreateStream")

    rng = np.random.default_rng(0)
    self_host = rng.standard_normal((2, 3, 4)).astype(np.float32)
    other_host = rng.standard_normal((3, 4)).astype(np.float32)
    out_host = np.zeros((2, 3, 4), np.float32)
    _, self_t = device_tensor(self_host)
    _, other_t = device_tensor(other_host)
    out_dev, out_t = device_tensor(out_host)
    alpha_value = ctypes.c_float(1.5)
    alpha = nnopbase.aclCreateScalar(byref(alpha_value), ACL_FLOAT)

    ws_size = c_uint64(0)
    executor = c_void_p()
    check(
        opapi.aclnnAddGetWorkspaceSize(self_t, other_t, alpha, out_t, byref(ws_size),
                                       byref(executor)),
        "aclnnAddGetWorkspaceSize",
    )  # fmt: skip
    workspace = None
    if ws_size.value > 0:
        workspace = c_void_p()
        check(ascendcl.aclrtMalloc(byref(workspace), ws_size.value, 0), "aclrtMalloc workspace")
    check(opapi.aclnnAdd(workspace, ws_size.value, executor, stream), "aclnnAdd")
    check(ascendcl.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")

    result = np.empty_like(out_host)
    check(
        ascendcl.aclrtMemcpy(result.ctypes.data, result.nbytes, out_dev, result.nbytes,
                             ACL_MEMCPY_DEVICE_TO_HOST),
        "aclrtMemcpy back",
    )  # fmt: skip
    expected = self_host + np.float32(1.5) * other_host
    if not np.allclose(result, expected, rtol=1e-6, atol=1e-6):
        sys.exit(f"mismatch: max abs diff {np.abs(result - expected).max()}")
    print("PASS")
    # no cleanup: tensors, buffers, the stream and the device are left to process exit


if __name__ == "__main__":
    main()
