"""Prototype table: every C function the binding calls, with its library, restype and argtypes.

Signatures follow spec/acl-api.md (CANN headers acl_rt.h, acl_base_rt.h, acl_meta.h): the
runtime and nnopbase. Operators (aclnnAdd, the mHC pair and any other) get theirs from their
header (:func:`stress.ops.signature.phase1_argtypes`). Functions are bound lazily by
:mod:`stress.acl._api`; ``optional`` ones are probed with a symbol lookup and may be absent on
older CANN releases.
"""

from __future__ import annotations

from ctypes import (
    POINTER,
    c_bool,
    c_char_p,
    c_float,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint16,
    c_uint32,
    c_uint64,
)
from ctypes import c_void_p as ptr
from dataclasses import dataclass

__all__ = ["ASCENDCL", "NNOPBASE", "OPAPI", "PROTOTYPES", "Prototype"]

ASCENDCL = "ascendcl"
NNOPBASE = "nnopbase"
OPAPI = "opapi"

aclError = c_int
aclnnStatus = c_int32


@dataclass(frozen=True)
class Prototype:
    """One C function: which library exports it and how to call it."""

    name: str
    library: str
    restype: object
    argtypes: tuple
    optional: bool = False


def _p(name, library, restype, *argtypes, optional=False):
    return Prototype(name, library, restype, tuple(argtypes), optional)


_T = ptr  # an opaque aclTensor* / aclScalar* / aclOpExecutor* / aclrtStream / aclrtContext
_WS = (POINTER(c_uint64), POINTER(ptr))  # uint64_t* workspaceSize, aclOpExecutor** executor
_RUN = (ptr, c_uint64, ptr, ptr)  # void* workspace, uint64_t size, aclOpExecutor*, aclrtStream

_TABLE = [
    # --- libascendcl: runtime ---------------------------------------------------------------
    _p("aclInit", ASCENDCL, aclError, c_char_p),
    _p("aclFinalize", ASCENDCL, aclError),
    _p("aclrtSetDevice", ASCENDCL, aclError, c_int32),
    _p("aclrtResetDevice", ASCENDCL, aclError, c_int32),
    _p("aclrtGetDevice", ASCENDCL, aclError, POINTER(c_int32)),
    _p("aclrtGetDeviceCount", ASCENDCL, aclError, POINTER(c_uint32)),
    _p("aclrtCreateContext", ASCENDCL, aclError, POINTER(ptr), c_int32),
    _p("aclrtDestroyContext", ASCENDCL, aclError, ptr),
    _p("aclrtSetCurrentContext", ASCENDCL, aclError, ptr),
    _p("aclrtGetCurrentContext", ASCENDCL, aclError, POINTER(ptr)),
    _p("aclrtCreateStream", ASCENDCL, aclError, POINTER(ptr)),
    _p("aclrtDestroyStream", ASCENDCL, aclError, ptr),
    _p("aclrtSynchronizeStream", ASCENDCL, aclError, ptr),
    _p("aclrtSynchronizeStreamWithTimeout", ASCENDCL, aclError, ptr, c_int32, optional=True),
    _p("aclrtSynchronizeDevice", ASCENDCL, aclError),
    _p("aclrtMalloc", ASCENDCL, aclError, POINTER(ptr), c_size_t, c_int),
    _p("aclrtFree", ASCENDCL, aclError, ptr),
    _p("aclrtMemcpy", ASCENDCL, aclError, ptr, c_size_t, ptr, c_size_t, c_int),
    _p("aclrtMemset", ASCENDCL, aclError, ptr, c_size_t, c_int32, c_size_t),
    _p("aclrtGetSocName", ASCENDCL, c_char_p, optional=True),
    _p("aclsysGetVersionStr", ASCENDCL, aclError, c_char_p, c_char_p, optional=True),
    _p("aclrtSetSysParamOpt", ASCENDCL, aclError, c_int, c_int64, optional=True),
    _p("aclrtGetSysParamOpt", ASCENDCL, aclError, c_int, POINTER(c_int64), optional=True),
    _p("aclrtCtxSetSysParamOpt", ASCENDCL, aclError, c_int, c_int64, optional=True),
    _p("aclGetRecentErrMsg", ASCENDCL, c_char_p),
    _p("aclrtMemcpyAsync", ASCENDCL, aclError, ptr, c_size_t, ptr, c_size_t, c_int, ptr),
    _p("aclrtMemsetAsync", ASCENDCL, aclError, ptr, c_size_t, c_int32, c_size_t, ptr),
    _p("aclrtCreateEvent", ASCENDCL, aclError, POINTER(ptr)),
    _p("aclrtDestroyEvent", ASCENDCL, aclError, ptr),
    _p("aclrtRecordEvent", ASCENDCL, aclError, ptr, ptr),
    _p("aclrtStreamWaitEvent", ASCENDCL, aclError, ptr, ptr),
    _p("aclrtSynchronizeEvent", ASCENDCL, aclError, ptr),
    _p("aclrtQueryEventStatus", ASCENDCL, aclError, ptr, POINTER(c_int), optional=True),
    _p("aclrtGetMemInfo", ASCENDCL, aclError, c_int, POINTER(c_size_t), POINTER(c_size_t)),
    _p("aclDataTypeSize", ASCENDCL, c_size_t, c_int),
    _p("aclFloatToFloat16", ASCENDCL, c_uint16, c_float),
    _p("aclFloat16ToFloat", ASCENDCL, c_float, c_uint16),
    # simulator extras (absent on real CANN)
    _p("aclsimLiveObjects", ASCENDCL, c_int64, c_int32, optional=True),
    _p("aclsimVersion", ASCENDCL, c_char_p, optional=True),
    _p("aclsimKnownFaults", ASCENDCL, c_char_p, optional=True),
    _p("aclsimFaultDescription", ASCENDCL, c_char_p, c_char_p, optional=True),
    # --- libnnopbase: tensors, scalars, executors ------------------------------------------
    _p(
        "aclCreateTensor",
        NNOPBASE,
        ptr,
        POINTER(c_int64),  # viewDims
        c_uint64,  # viewDimsNum
        c_int,  # aclDataType
        POINTER(c_int64),  # stride (elements; NULL = contiguous)
        c_int64,  # offset (elements)
        c_int,  # aclFormat
        POINTER(c_int64),  # storageDims
        c_uint64,  # storageDimsNum
        ptr,  # tensorData (device address, NULL for 0 elements)
    ),
    _p("aclDestroyTensor", NNOPBASE, aclnnStatus, _T),
    _p("aclCreateScalar", NNOPBASE, ptr, ptr, c_int),
    _p("aclDestroyScalar", NNOPBASE, aclnnStatus, _T),
    _p("aclCreateIntArray", NNOPBASE, ptr, POINTER(c_int64), c_uint64),
    _p("aclDestroyIntArray", NNOPBASE, aclnnStatus, ptr),
    _p("aclCreateFloatArray", NNOPBASE, ptr, POINTER(c_float), c_uint64),
    _p("aclDestroyFloatArray", NNOPBASE, aclnnStatus, ptr),
    _p("aclCreateBoolArray", NNOPBASE, ptr, POINTER(c_bool), c_uint64),
    _p("aclDestroyBoolArray", NNOPBASE, aclnnStatus, ptr),
    _p("aclCreateTensorList", NNOPBASE, ptr, POINTER(ptr), c_uint64),
    _p("aclDestroyTensorList", NNOPBASE, aclnnStatus, ptr),  # destroys the members too
    _p("aclCreateScalarList", NNOPBASE, ptr, POINTER(ptr), c_uint64),
    _p("aclDestroyScalarList", NNOPBASE, aclnnStatus, ptr),  # destroys the members too
    _p("aclGetViewShape", NNOPBASE, aclnnStatus, _T, POINTER(POINTER(c_int64)), POINTER(c_uint64)),
    _p(
        "aclGetViewStrides", NNOPBASE, aclnnStatus, _T, POINTER(POINTER(c_int64)), POINTER(c_uint64)
    ),
    _p(
        "aclGetStorageShape",
        NNOPBASE,
        aclnnStatus,
        _T,
        POINTER(POINTER(c_int64)),
        POINTER(c_uint64),
    ),
    _p("aclGetViewOffset", NNOPBASE, aclnnStatus, _T, POINTER(c_int64)),
    _p("aclGetFormat", NNOPBASE, aclnnStatus, _T, POINTER(c_int)),
    _p("aclGetDataType", NNOPBASE, aclnnStatus, _T, POINTER(c_int)),
    _p("aclGetIntArraySize", NNOPBASE, aclnnStatus, ptr, POINTER(c_uint64)),
    _p("aclGetFloatArraySize", NNOPBASE, aclnnStatus, ptr, POINTER(c_uint64)),
    _p("aclGetBoolArraySize", NNOPBASE, aclnnStatus, ptr, POINTER(c_uint64)),
    _p("aclGetTensorListSize", NNOPBASE, aclnnStatus, ptr, POINTER(c_uint64)),
    _p("aclGetScalarListSize", NNOPBASE, aclnnStatus, ptr, POINTER(c_uint64)),
    _p("aclSetAclOpExecutorRepeatable", NNOPBASE, aclnnStatus, _T),
    _p("aclDestroyAclOpExecutor", NNOPBASE, aclnnStatus, _T),
    _p("aclSetInputTensorAddr", NNOPBASE, aclnnStatus, _T, c_size_t, _T, ptr),
    _p("aclSetOutputTensorAddr", NNOPBASE, aclnnStatus, _T, c_size_t, _T, ptr),
]

PROTOTYPES: dict[str, Prototype] = {p.name: p for p in _TABLE}
