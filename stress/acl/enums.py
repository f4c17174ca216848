"""AscendCL / aclnn enumerations and status codes (values from spec/acl-api.md §1-2)."""

from __future__ import annotations

import enum

__all__ = [
    "DataType",
    "Format",
    "MallocPolicy",
    "MemcpyKind",
    "Status",
    "SysParamOpt",
    "status_name",
]


class DataType(enum.IntEnum):
    """aclDataType."""

    UNDEFINED = -1
    FLOAT = 0
    FLOAT16 = 1
    INT8 = 2
    INT32 = 3
    UINT8 = 4
    INT16 = 6
    UINT16 = 7
    UINT32 = 8
    INT64 = 9
    UINT64 = 10
    DOUBLE = 11
    BOOL = 12
    STRING = 13
    COMPLEX64 = 16
    COMPLEX128 = 17
    BF16 = 27


class Format(enum.IntEnum):
    """aclFormat (the subset a binding needs; tensors here are always ND)."""

    UNDEFINED = -1
    NCHW = 0
    NHWC = 1
    ND = 2
    NC1HWC0 = 3
    FRACTAL_Z = 4
    FRACTAL_NZ = 29


class MemcpyKind(enum.IntEnum):
    """aclrtMemcpyKind."""

    HOST_TO_HOST = 0
    HOST_TO_DEVICE = 1
    DEVICE_TO_HOST = 2
    DEVICE_TO_DEVICE = 3
    DEFAULT = 4


class MallocPolicy(enum.IntEnum):
    """aclrtMemMallocPolicy (one value, no OR-ing)."""

    HUGE_FIRST = 0
    HUGE_ONLY = 1
    NORMAL_ONLY = 2


class SysParamOpt(enum.IntEnum):
    """aclSysParamOpt for aclrt(Ctx)SetSysParamOpt."""

    DETERMINISTIC = 0
    ENABLE_DEBUG_KERNEL = 1
    STRONG_CONSISTENCY = 2
    ENABLE_KERNEL_EARLY_START = 3


class Status(enum.IntEnum):
    """aclError / aclnnStatus values a binding reacts to."""

    SUCCESS = 0
    INVALID_PARAM = 100000
    UNINITIALIZE = 100001
    REPEAT_INITIALIZE = 100002
    REPEAT_FINALIZE = 100037
    BAD_ALLOC = 200000
    API_NOT_SUPPORT = 200001
    INVALID_DEVICE = 200002
    INTERNAL_ERROR = 500000
    FAILURE = 500001
    RT_FAILURE = 500003
    RT_PARAM_INVALID = 107000
    RT_INVALID_DEVICEID = 107001
    RT_CONTEXT_NULL = 107002
    RT_STREAM_CONTEXT = 107003
    RT_WAIT_TIMEOUT = 107019
    RT_TASK_TIMEOUT = 107020
    RT_MEMORY_ALLOCATION = 207001
    RT_NO_DEVICE = 207004
    RT_DEVICE_OOM = 207018
    RT_INTERNAL = 507000
    RT_AICORE_TIMEOUT = 507014
    RT_AICORE_EXCEPTION = 507015
    RT_VECTOR_CORE_EXCEPTION = 507035
    RT_STREAM_SYNC_TIMEOUT = 507046
    ACLNN_ERR_PARAM_NULLPTR = 161001
    ACLNN_ERR_PARAM_INVALID = 161002
    ACLNN_ERR_RUNTIME_ERROR = 361001
    ACLNN_ERR_INNER = 561000
    ACLNN_ERR_INNER_INFERSHAPE_ERROR = 561001
    ACLNN_ERR_INNER_TILING_ERROR = 561002
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR = 561003
    ACLNN_ERR_INNER_CREATE_EXECUTOR = 561101
    ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR = 561102
    ACLNN_ERR_INNER_NULLPTR = 561103
    ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND = 561107
    ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND = 561112


def status_name(code: int) -> str:
    """Symbolic name of a status code, or ``"UNKNOWN"``."""
    try:
        return Status(code).name
    except ValueError:
        return "UNKNOWN"
