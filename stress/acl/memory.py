"""Device memory: :class:`DeviceBuffer` (``aclrtMalloc``/``aclrtFree``) and host<->device copies.

Copies and frees need a current context on the calling thread (bind one with
:meth:`stress.acl.runtime.Context.bind`).
"""

from __future__ import annotations

import ctypes

import numpy as np

from stress.acl._handle import OwnedHandle
from stress.acl.enums import MallocPolicy, MemcpyKind
from stress.acl.runtime import Context, call_with_context

__all__ = ["DeviceBuffer"]


def _free(api, context_handle: int, ptr: int) -> None:
    call_with_context(api, context_handle, "aclrtFree", ptr)


def _host_bytes(data: np.ndarray | bytes | bytearray | memoryview) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    return np.frombuffer(data, dtype=np.uint8)


class DeviceBuffer(OwnedHandle):
    """``nbytes`` (> 0) of device memory owned by this object."""

    def __init__(
        self, context: Context, nbytes: int, policy: MallocPolicy = MallocPolicy.HUGE_FIRST
    ) -> None:
        if nbytes <= 0:
            raise ValueError(f"DeviceBuffer needs nbytes > 0 (aclrtMalloc refuses 0), got {nbytes}")
        self.context = context
        self.nbytes = int(nbytes)
        api = context.runtime.api
        ptr = ctypes.c_void_p()
        api.aclrtMalloc(ctypes.byref(ptr), self.nbytes, int(policy))
        self.ptr: int = ptr.value
        self._own(_free, api, context.handle, self.ptr)

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.ptr)

    def upload(self, data: np.ndarray | bytes | bytearray | memoryview) -> None:
        """Copy host data (any array, copied C-contiguous, or bytes) to the buffer's start."""
        host = _host_bytes(data)
        if host.nbytes > self.nbytes:
            raise ValueError(f"upload of {host.nbytes} bytes into a {self.nbytes}-byte buffer")
        if host.nbytes:
            self.context.runtime.api.aclrtMemcpy(
                self.ptr, self.nbytes, host.ctypes.data, host.nbytes, MemcpyKind.HOST_TO_DEVICE
            )

    def download_into(self, out: np.ndarray) -> np.ndarray:
        """Copy ``out.nbytes`` bytes from the buffer's start into the C-contiguous ``out``."""
        if not out.flags.c_contiguous:
            raise ValueError("download_into needs a C-contiguous array")
        if out.nbytes > self.nbytes:
            raise ValueError(f"download of {out.nbytes} bytes from a {self.nbytes}-byte buffer")
        if out.nbytes:
            self.context.runtime.api.aclrtMemcpy(
                out.ctypes.data, out.nbytes, self.ptr, out.nbytes, MemcpyKind.DEVICE_TO_HOST
            )
        return out

    def download(self, nbytes: int | None = None) -> bytes:
        """The first ``nbytes`` (default all) bytes of the buffer."""
        out = np.empty(self.nbytes if nbytes is None else nbytes, dtype=np.uint8)
        return self.download_into(out).tobytes()

    def fill(self, byte: int) -> None:
        """Set every byte to ``byte`` (``aclrtMemset``), e.g. a canary before a call."""
        self.context.runtime.api.aclrtMemset(self.ptr, self.nbytes, int(byte) & 0xFF, self.nbytes)

    def __repr__(self) -> str:
        return f"<DeviceBuffer {self.nbytes} B at {self.ptr:#x}>"
