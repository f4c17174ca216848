"""aclnnMhcPreSinkhorn + aclnnMhcPreSinkhornBackward through ctypes, the way a CANN user script
does it (cf. the ops-transformer example test_aclnn_mhc_pre_sinkhorn_backward.cpp).

Run with ASCEND_HOME_PATH pointing at a CANN install with the mHC operators (or the aclnn-stress
simulator root). Uses only the documented ABI: the three libraries loaded with RTLD_GLOBAL,
aclrtSetDevice's default context, aclrtMalloc/aclrtMemcpy, aclCreateTensor, hcEps/normEps as C
doubles, a NULL workspace when its size is 0; exits without destroying anything.

The forward (needBackward=true) produces the saved tensors, which feed the backward directly.
gradHin is zero, so the loss L(bias, alpha) = sum(gradHPost * hPost) + sum(gradHRes * hRes)
only involves float32 outputs, and gradBias / gradAlpha are checked against central finite
differences of L computed with the forward (needBackward=false, NULL saved outputs).
Prints PASS and exits 0 when everything matches.
"""

import ctypes
import os
import sys
from ctypes import (
    POINTER,
    byref,
    c_bool,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint64,
    c_void_p,
)

import numpy as np

ACL_FLOAT, ACL_FLOAT16 = 0, 1
ACL_FORMAT_ND = 2
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2

B, S, N, C = 2, 4, 4, 128
D, K, ITERS = N * N + 2 * N, N * C, 20
HC_EPS = NORM_EPS = 1e-6

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
_WS = [POINTER(c_uint64), POINTER(c_void_p)]
_RUN = [c_void_p, c_uint64, c_void_p, c_void_p]
opapi.aclnnMhcPreSinkhornGetWorkspaceSize.argtypes = (
    [c_void_p] * 4 + [c_int64, c_int64, c_double, c_double, c_bool] + [c_void_p] * 8 + _WS
)
opapi.aclnnMhcPreSinkhorn.argtypes = _RUN
opapi.aclnnMhcPreSinkhornBackwardGetWorkspaceSize.argtypes = (
    [c_void_p] * 12 + [c_double] + [c_void_p] * 4 + _WS
)
opapi.aclnnMhcPreSinkhornBackward.argtypes = _RUN

ACL_TYPE = {np.dtype(np.float32): ACL_FLOAT, np.dtype(np.float16): ACL_FLOAT16}


def check(ret, what):
    if ret != 0:
        msg = ascendcl.aclGetRecentErrMsg()
        sys.exit(f"{what} failed with {ret}: {msg.decode() if msg else ''}")


class DeviceArray:
    """Device memory + an ND aclTensor for a host array's shape and dtype."""

    def __init__(self, host):
        self.shape, self.dtype, self.nbytes = host.shape, host.dtype, host.nbytes
        self.dev = c_void_p()
        check(ascendcl.aclrtMalloc(byref(self.dev), host.nbytes, ACL_MEM_MALLOC_HUGE_FIRST),
              "aclrtMalloc")  # fmt: skip
        self.upload(host)
        ndim = host.ndim
        shape = (c_int64 * ndim)(*host.shape)
        strides = (c_int64 * ndim)(*(s // host.itemsize for s in host.strides))
        self.tensor = nnopbase.aclCreateTensor(
            shape, ndim, ACL_TYPE[host.dtype], strides, 0, ACL_FORMAT_ND, shape, ndim, self.dev
        )
        if not self.tensor:
            sys.exit("aclCreateTensor returned NULL")

    def upload(self, host):
        host = np.ascontiguousarray(host, dtype=self.dtype)
        check(ascendcl.aclrtMemcpy(self.dev, self.nbytes, host.ctypes.data, host.nbytes,
                                   ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")  # fmt: skip

    def download(self):
        out = np.empty(self.shape, self.dtype)
        check(ascendcl.aclrtMemcpy(out.ctypes.data, out.nbytes, self.dev, out.nbytes,
                                   ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy back")  # fmt: skip
        return out


def two_stage(op, args, stream):
    ws_size = c_uint64(0)
    executor = c_void_p()
    check(getattr(opapi, op + "GetWorkspaceSize")(*args, byref(ws_size), byref(executor)),
          op + "GetWorkspaceSize")  # fmt: skip
    workspace = None
    if ws_size.value > 0:
        workspace = c_void_p()
        check(ascendcl.aclrtMalloc(byref(workspace), ws_size.value, ACL_MEM_MALLOC_HUGE_FIRST),
              "aclrtMalloc workspace")  # fmt: skip
    check(getattr(opapi, op)(workspace, ws_size.value, executor, stream), op)
    check(ascendcl.aclrtSynchronizeStream(stream), "aclrtSynchronizeStream")


def zeros(*shape):
    return DeviceArray(np.zeros(shape, np.float32))


def main():
    check(ascendcl.aclInit(None), "aclInit")
    check(ascendcl.aclrtSetDevice(0), "aclrtSetDevice")  # default context, no aclrtCreateContext
    stream = c_void_p()
    check(ascendcl.aclrtCreateStream(byref(stream)), "aclrtCreateStream")

    rng = np.random.default_rng(2024)
    x_host = rng.standard_normal((B, S, N, C)).astype(np.float16)
    phi_host = (rng.standard_normal((D, K)) / np.sqrt(K)).astype(np.float32)
    alpha_host = rng.uniform(0.5, 1.0, 3).astype(np.float32)
    bias_host = (0.5 * rng.standard_normal(D)).astype(np.float32)
    g_post = rng.standard_normal((B, S, N)).astype(np.float32)
    g_res = rng.standard_normal((B, S, N * N)).astype(np.float32)  # the flattened layout

    x, phi, alpha, bias = (DeviceArray(a) for a in (x_host, phi_host, alpha_host, bias_host))
    hin = DeviceArray(np.zeros((B, S, C), np.float16))
    h_post, h_res = zeros(B, S, N), zeros(B, S, N * N)
    saved = [zeros(B, S, N), zeros(B, S, D), zeros(B, S, 1), zeros(2 * ITERS, B, S, N),
             zeros(2 * ITERS, B, S, N, N)]  # fmt: skip

    def forward(need_backward):
        outs = [hin, h_post, h_res, *saved] if need_backward else [hin, h_post, h_res]
        tensors = [o.tensor for o in outs] + [None] * (8 - len(outs))
        two_stage("aclnnMhcPreSinkhorn",
                  [x.tensor, phi.tensor, alpha.tensor, bias.tensor, N, ITERS, HC_EPS, NORM_EPS,
                   need_backward, *tensors], stream)  # fmt: skip

    def loss():
        forward(False)
        return float(
            np.vdot(g_post.astype(np.float64), h_post.download().astype(np.float64))
            + np.vdot(g_res.astype(np.float64), h_res.download().astype(np.float64))
        )

    # forward with the saved tensors, then the backward reading them on the device
    forward(True)
    grad_hin = DeviceArray(np.zeros((B, S, C), np.float16))
    grad_x = DeviceArray(np.full((B, S, N, C), np.nan, np.float16))
    grad_phi, grad_alpha, grad_bias = zeros(D, K), zeros(3), zeros(D)
    two_stage("aclnnMhcPreSinkhornBackward",
              [grad_hin.tensor, DeviceArray(g_post).tensor, DeviceArray(g_res).tensor, x.tensor,
               phi.tensor, alpha.tensor, bias.tensor, *(s.tensor for s in saved), HC_EPS,
               grad_x.tensor, grad_phi.tensor, grad_alpha.tensor, grad_bias.tensor],
              stream)  # fmt: skip
    gx, gphi, galpha, gbias = (t.download() for t in (grad_x, grad_phi, grad_alpha, grad_bias))

    for name, value, shape in (("gradX", gx, (B, S, N, C)), ("gradPhi", gphi, (D, K)),
                               ("gradAlpha", galpha, (3,)), ("gradBias", gbias, (D,))):  # fmt: skip
        if value.shape != shape or not np.isfinite(value).all():
            sys.exit(f"{name}: shape {value.shape} (want {shape}) or non-finite values")
    # gradHin == 0: nothing flows into the pre group
    if gbias[:N].any() or gphi[:N].any() or galpha[0] != 0:
        sys.exit(f"pre-group gradients must be 0 with gradHin = 0: {gbias[:N]}, {galpha[0]}")

    def fd(host, dev, j, h):
        plus, minus = host.copy(), host.copy()
        plus[j] += h
        minus[j] -= h
        dev.upload(plus)
        lp = loss()
        dev.upload(minus)
        lm = loss()
        dev.upload(host)
        return (lp - lm) / (2 * h)

    h = 1e-2
    fd_bias = np.array([fd(bias_host, bias, j, h) for j in range(N, D)])
    fd_alpha = np.array([fd(alpha_host, alpha, j, h) for j in (1, 2)])
    worst = 0.0
    for name, got, want in (("gradBias", gbias[N:], fd_bias), ("gradAlpha", galpha[1:], fd_alpha)):
        err = np.abs(got - want)
        allowed = 2e-3 * np.abs(want).max() + 1e-2 * np.abs(want)
        if (err > allowed).any():
            sys.exit(f"{name} vs finite differences: max error {err.max():.3g}\n{got}\n{want}")
        worst = max(worst, float(err.max()))
    print(f"gradBias/gradAlpha match finite differences (max abs error {worst:.2g})")
    print("PASS")
    # no cleanup: tensors, buffers, the stream and the device are left to process exit


if __name__ == "__main__":
    main()
