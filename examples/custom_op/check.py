"""Call the custom operator aclnnMyScale through the framework's binding (run by build.py with
ASCEND_CUSTOM_OPP_PATH pointing at the package) and compare with numpy."""

from __future__ import annotations

import ctypes

import numpy as np

from stress import acl

_T = ctypes.c_void_p
_WS = (ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_void_p))
_RUN = (ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p)


def main() -> None:
    rt = acl.runtime("sim")
    api = rt.api
    api.add_prototype(
        acl.Prototype(
            "aclnnMyScaleGetWorkspaceSize",
            acl.OPAPI,
            ctypes.c_int32,
            (_T, ctypes.c_double, _T, *_WS),
        )
    )
    api.add_prototype(acl.Prototype("aclnnMyScale", acl.OPAPI, ctypes.c_int32, _RUN))
    ctx = rt.device(0).default_context
    ctx.bind()
    stream = ctx.create_stream()
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(4, 6)
    with acl.DeviceTensor.from_array(ctx, x) as tx, acl.DeviceTensor(ctx, x.shape, x.dtype) as ty:
        call = acl.run(ctx, stream, "aclnnMyScale", tx, ctypes.c_double(2.5), ty)
        stream.synchronize()
        call.close()
        got = ty.download()
    np.testing.assert_allclose(got, x * np.float32(2.5), rtol=1e-6)
    print(f"aclnnMyScale from {api.library_of('aclnnMyScale')}: OK ({x.size} elements)")
    stream.close()


if __name__ == "__main__":
    main()
