"""ctypes binding of the CANN runtime (libascendcl), nnopbase and aclnn operator libraries.

Typical use::

    from stress import acl

    rt = acl.runtime()                      # STRESS_BACKEND=auto|sim|cann
    ctx = rt.device(0).default_context      # aclrtSetDevice; bind ctx in every worker thread
    stream = ctx.create_stream()
    a = acl.DeviceTensor.from_array(ctx, x)
    ...
    call = acl.run(ctx, stream, "aclnnAdd", a, b, alpha, out)
    stream.synchronize()
    call.close()
"""

from stress.acl._prototypes import OPAPI, Prototype
from stress.acl.backend import BACKEND_KINDS, Backend, discover
from stress.acl.enums import DataType, Format, MallocPolicy, MemcpyKind, Status, SysParamOpt
from stress.acl.errors import (
    AclContextError,
    AclDeviceError,
    AclError,
    AclKernelError,
    AclMemoryError,
    AclnnError,
    AclNullHandleError,
    AclParamError,
    AclStateError,
    AclTimeoutError,
    BackendError,
)
from stress.acl.memory import DeviceBuffer
from stress.acl.params import BoolArray, FloatArray, IntArray, ScalarList, TensorList
from stress.acl.runtime import Context, Device, Runtime, Stream, loaded_runtime, runtime
from stress.acl.tensor import DeviceTensor, Scalar, acl_dtype, numpy_dtype
from stress.acl.twostage import PreparedCall, prepare, run

__all__ = [
    "BACKEND_KINDS",
    "OPAPI",
    "AclContextError",
    "AclDeviceError",
    "AclError",
    "AclKernelError",
    "AclMemoryError",
    "AclNullHandleError",
    "AclParamError",
    "AclStateError",
    "AclTimeoutError",
    "AclnnError",
    "Backend",
    "BackendError",
    "BoolArray",
    "Context",
    "DataType",
    "Device",
    "DeviceBuffer",
    "DeviceTensor",
    "FloatArray",
    "Format",
    "IntArray",
    "MallocPolicy",
    "MemcpyKind",
    "PreparedCall",
    "Prototype",
    "Runtime",
    "Scalar",
    "ScalarList",
    "Status",
    "Stream",
    "SysParamOpt",
    "TensorList",
    "acl_dtype",
    "discover",
    "loaded_runtime",
    "numpy_dtype",
    "prepare",
    "run",
    "runtime",
]
