"""Runtime, devices, contexts and streams.

CANN state is process-wide, so there is one :class:`Runtime` per process (:func:`runtime`). The
*current context* is per thread: every thread that touches device memory or launches work must
bind a context first (:meth:`Context.bind`); a thread without one gets 107002. Threads that call
``aclrtSetDevice`` for the same device share that device's default context.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

from stress.acl._api import Api
from stress.acl._handle import OwnedHandle
from stress.acl.backend import Backend, discover
from stress.acl.enums import Status, SysParamOpt
from stress.acl.errors import AclContextError, BackendError, error_for

__all__ = ["Context", "Device", "Runtime", "Stream", "loaded_runtime", "runtime"]

LIVE_OBJECT_KINDS = (
    "allocations",
    "device_bytes",
    "tensors",
    "scalars",
    "executors",
    "streams",
    "contexts",
    "arrays",
    "lists",
    "events",
)


class Runtime:
    """The loaded CANN (or simulator) libraries, initialised with ``aclInit``."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.api = Api(backend)
        self.api.load_all()
        status = self.api.raw.aclInit(None)
        if status not in (Status.SUCCESS, Status.REPEAT_INITIALIZE):
            # the environment's fault (a bad ACLSIM_* or CANN setting): one line, exit 2
            err = error_for(status, "aclInit", self.api.recent_error_message())
            raise BackendError(f"cannot initialise CANN at {backend.root}: {err}") from err
        self._devices: dict[int, Device] = {}
        self._lock = threading.Lock()

    # -- facts ----------------------------------------------------------------------------
    @property
    def is_simulator(self) -> bool:
        """True when the loaded libraries are the bundled simulator (it exports aclsimVersion)."""
        return self.api.has("aclsimVersion")

    @property
    def device_count(self) -> int:
        count = ctypes.c_uint32()
        self.api.aclrtGetDeviceCount(ctypes.byref(count))
        return count.value

    @property
    def soc_name(self) -> str | None:
        if not self.api.has("aclrtGetSocName"):
            return None
        name = self.api.aclrtGetSocName()
        return name.decode() if name else None

    def version(self, package: str = "runtime") -> str | None:
        """``aclsysGetVersionStr(package)``; None where the API or the package is missing."""
        if not self.api.has("aclsysGetVersionStr"):
            return None
        buf = ctypes.create_string_buffer(128)
        status = self.api.raw.aclsysGetVersionStr(package.encode(), buf)
        if status != 0:
            self.api.recent_error_message()  # consume it: absence is not an error here
            return None
        return buf.value.decode(errors="replace")

    def live_objects(self) -> dict[str, int] | None:
        """Simulator bookkeeping of live allocations, tensors, executors...; None on real CANN."""
        if not self.api.has("aclsimLiveObjects"):
            return None
        fn = self.api.aclsimLiveObjects
        return {kind: int(fn(i)) for i, kind in enumerate(LIVE_OBJECT_KINDS)}

    def info(self) -> dict[str, Any]:
        """What ``aclnn-stress info`` prints."""
        return {
            "backend": self.backend.kind,
            "simulator": self.is_simulator,
            "root": str(self.backend.root),
            "libraries": {k: str(v) for k, v in self.backend.libraries.items()},
            "soc": self.soc_name,
            "version": self.version("runtime"),
            "device_count": self.device_count,
        }

    # -- devices and process-level options ------------------------------------------------
    def device(self, device_id: int = 0) -> Device:
        """The device ``device_id``, set on first use (``aclrtSetDevice``) and then shared."""
        with self._lock:
            dev = self._devices.get(device_id)
            if dev is None or dev.closed:
                dev = Device(self, device_id)
                self._devices[device_id] = dev
        dev.default_context.bind()
        return dev

    def set_deterministic(self, enabled: bool) -> None:
        """Process-level ``ACL_OPT_DETERMINISTIC`` (applies to ops launched afterwards)."""
        self.api.aclrtSetSysParamOpt(SysParamOpt.DETERMINISTIC, 1 if enabled else 0)

    def current_context_handle(self) -> int | None:
        """The calling thread's current context handle, or None when it has none."""
        handle = ctypes.c_void_p()
        status = self.api.raw.aclrtGetCurrentContext(ctypes.byref(handle))
        if status != 0:
            self.api.recent_error_message()
            return None
        return handle.value


class Device(OwnedHandle):
    """A device set with ``aclrtSetDevice`` (released by ``aclrtResetDevice``)."""

    def __init__(self, rt: Runtime, device_id: int) -> None:
        self.runtime = rt
        self.device_id = device_id
        rt.api.aclrtSetDevice(device_id)
        self._own(rt.api.aclrtResetDevice, device_id)
        handle = ctypes.c_void_p()
        rt.api.aclrtGetCurrentContext(ctypes.byref(handle))
        self.default_context = Context(rt, handle.value, device_id, default=True)

    def create_context(self) -> Context:
        """A new explicit context (``aclrtCreateContext`` makes it current on this thread)."""
        handle = ctypes.c_void_p()
        self.runtime.api.aclrtCreateContext(ctypes.byref(handle), self.device_id)
        return Context(self.runtime, handle.value, self.device_id, default=False)


def _destroy_context(api: Api, handle: int) -> None:
    api.aclrtDestroyContext(handle)


class Context(OwnedHandle):
    """An aclrt context: the device default one (not destroyed) or an explicit one."""

    def __init__(self, rt: Runtime, handle: int, device_id: int, *, default: bool) -> None:
        if not handle:
            raise BackendError(f"aclrt returned a NULL context for device {device_id}")
        self.runtime = rt
        self.handle = handle
        self.device_id = device_id
        self.is_default = default
        if not default:
            self._own(_destroy_context, rt.api, handle)

    def bind(self) -> None:
        """Make this the calling thread's current context (cheap; the last call wins)."""
        self.runtime.api.aclrtSetCurrentContext(self.handle)

    def is_current(self) -> bool:
        return self.runtime.current_context_handle() == self.handle

    def create_stream(self) -> Stream:
        """A new stream in this context (binds the context on the calling thread first)."""
        self.bind()
        handle = ctypes.c_void_p()
        self.runtime.api.aclrtCreateStream(ctypes.byref(handle))
        return Stream(self, handle.value)

    def set_deterministic(self, enabled: bool) -> None:
        """Context-level ``ACL_OPT_DETERMINISTIC`` (``aclrtCtxSetSysParamOpt``)."""
        self.bind()
        self.runtime.api.aclrtCtxSetSysParamOpt(SysParamOpt.DETERMINISTIC, 1 if enabled else 0)

    def __repr__(self) -> str:
        kind = "default" if self.is_default else "explicit"
        return f"<Context {kind} device={self.device_id} handle={self.handle:#x}>"


def call_with_context(api: Api, context_handle: int | None, name: str, *args: Any) -> None:
    """Call ``name``; if the thread has no current context, bind ``context_handle`` and retry.

    Used by release functions, which may run from the garbage collector on any thread.
    """
    try:
        getattr(api, name)(*args)
    except AclContextError:
        if not context_handle:
            raise
        api.aclrtSetCurrentContext(context_handle)
        getattr(api, name)(*args)


def _destroy_stream(api: Api, context_handle: int, handle: int) -> None:
    call_with_context(api, context_handle, "aclrtSynchronizeStream", handle)
    call_with_context(api, context_handle, "aclrtDestroyStream", handle)


class Stream(OwnedHandle):
    """An aclrt stream: work launched on it runs in order, asynchronously to the host."""

    def __init__(self, context: Context, handle: int) -> None:
        self.context = context
        self.handle = handle
        self._own(_destroy_stream, context.runtime.api, context.handle, handle)

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.handle)

    def synchronize(self, timeout_ms: int | None = None) -> None:
        """Wait for the stream's work; ``timeout_ms`` uses the timeout API where it exists.

        Raises :class:`~stress.acl.errors.AclTimeoutError` (507046) on timeout and the kernel's
        error when launched work failed.
        """
        api = self.context.runtime.api
        if timeout_ms is not None and api.has("aclrtSynchronizeStreamWithTimeout"):
            api.aclrtSynchronizeStreamWithTimeout(self.handle, int(timeout_ms))
        else:
            api.aclrtSynchronizeStream(self.handle)

    def __repr__(self) -> str:
        return f"<Stream handle={self.handle:#x} device={self.context.device_id}>"


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()


def runtime(backend: Backend | str | None = None) -> Runtime:
    """The process's :class:`Runtime`, created on first call.

    ``backend`` is a :class:`Backend`, a kind (``"auto"``, ``"sim"``, ``"cann"``) or None for
    ``$STRESS_BACKEND``. CANN state is process-wide: asking for a different backend once one is
    loaded raises :class:`BackendError`.
    """
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            chosen = backend if isinstance(backend, Backend) else discover(backend)
            _runtime = Runtime(chosen)
        elif backend is not None:
            wanted = backend.kind if isinstance(backend, Backend) else backend
            if wanted not in ("auto", _runtime.backend.kind):
                raise BackendError(
                    f"this process already loaded the {_runtime.backend.kind} backend from "
                    f"{_runtime.backend.root}; CANN cannot be loaded twice: use a new process"
                )
        return _runtime


def loaded_runtime() -> Runtime | None:
    """The process's :class:`Runtime` if one was created, else None (loads nothing)."""
    return _runtime
