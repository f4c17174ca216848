"""Exceptions raised by the binding.

A non-zero status becomes an :class:`AclError` carrying the code, the API name and the text of
``aclGetRecentErrMsg()`` read at once on the same thread (the message is thread-local and cleared
on read, so it must be fetched before anything else calls into the runtime).
"""

from __future__ import annotations

from stress.acl.enums import Status, status_name
from stress.errors import ConfigError

# The exceptions are public as ``stress.acl.*`` (its ``__all__`` lists them); ``error_for`` is
# the binding's own.


class BackendError(ConfigError):
    """The CANN libraries (or the simulator) cannot be found, built or loaded."""


class AclError(Exception):
    """A CANN call returned a non-zero status."""

    def __init__(self, code: int, api: str, message: str = "") -> None:
        self.code = code
        self.api = api
        self.message = message
        detail = f": {message}" if message else ""
        super().__init__(f"{api} failed with {code} ({status_name(code)}){detail}")


class AclParamError(AclError):
    """Invalid argument (100000, 107000, 161001, 161002)."""


class AclStateError(AclError):
    """Runtime not in the state the call needs (100001, 100002, 100037)."""


class AclContextError(AclError):
    """No current context on this thread, or a stream of another context (107002, 107003)."""


class AclDeviceError(AclError):
    """Bad or missing device (107001, 200002, 207004)."""


class AclMemoryError(AclError):
    """Allocation failure (200000, 207001, 207018)."""


class AclTimeoutError(AclError):
    """A wait timed out (507046, 107019, 107020, 507014)."""


class AclKernelError(AclError):
    """A kernel failed on the device (507015, 507035, 507000)."""


class AclnnError(AclError):
    """An aclnn operator failed inside (361001, 561xxx)."""


class AclNullHandleError(AclError):
    """A create function returned NULL instead of a status (e.g. aclCreateTensor)."""

    def __init__(self, api: str, message: str = "") -> None:
        super().__init__(-1, api, message)


_CLASS_BY_CODE: dict[int, type[AclError]] = {
    Status.INVALID_PARAM: AclParamError,
    Status.RT_PARAM_INVALID: AclParamError,
    Status.ACLNN_ERR_PARAM_NULLPTR: AclParamError,
    Status.ACLNN_ERR_PARAM_INVALID: AclParamError,
    Status.UNINITIALIZE: AclStateError,
    Status.REPEAT_INITIALIZE: AclStateError,
    Status.REPEAT_FINALIZE: AclStateError,
    Status.RT_CONTEXT_NULL: AclContextError,
    Status.RT_STREAM_CONTEXT: AclContextError,
    Status.RT_INVALID_DEVICEID: AclDeviceError,
    Status.INVALID_DEVICE: AclDeviceError,
    Status.RT_NO_DEVICE: AclDeviceError,
    Status.BAD_ALLOC: AclMemoryError,
    Status.RT_MEMORY_ALLOCATION: AclMemoryError,
    Status.RT_DEVICE_OOM: AclMemoryError,
    Status.RT_STREAM_SYNC_TIMEOUT: AclTimeoutError,
    Status.RT_WAIT_TIMEOUT: AclTimeoutError,
    Status.RT_TASK_TIMEOUT: AclTimeoutError,
    Status.RT_AICORE_TIMEOUT: AclTimeoutError,
    Status.RT_AICORE_EXCEPTION: AclKernelError,
    Status.RT_VECTOR_CORE_EXCEPTION: AclKernelError,
    Status.RT_INTERNAL: AclKernelError,
    Status.ACLNN_ERR_RUNTIME_ERROR: AclnnError,
}


def error_for(code: int, api: str, message: str = "") -> AclError:
    """The most specific :class:`AclError` subclass for ``code``."""
    cls = _CLASS_BY_CODE.get(code)
    if cls is None:
        cls = AclnnError if 561000 <= code < 562000 else AclError
    return cls(code, api, message)
