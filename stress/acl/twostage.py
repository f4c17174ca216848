"""The two-stage aclnn call: ``aclnnXxxGetWorkspaceSize`` then ``aclnnXxx``.

Phase 1 validates the arguments and creates an executor; phase 2 launches it on a stream. A
non-repeatable executor is consumed by phase 2 (running it again is an error), so each
:class:`PreparedCall` launches once unless prepared ``repeatable``. The workspace is allocated
only when phase 1 asks for more than 0 bytes (NULL is passed otherwise) and must outlive the
kernel: close the call after synchronizing the stream.

Splitting the phases lets the protocol interleave them across calls (A.phase1, B.phase1,
A.phase2, B.phase2), which is how host-side state shared between calls shows itself.
"""

from __future__ import annotations

import ctypes
from typing import Any

from stress.acl.memory import DeviceBuffer
from stress.acl.runtime import Context, Stream

__all__ = ["PreparedCall", "prepare", "run"]


class PreparedCall:
    """Phase 1 done: an executor and its workspace, ready to launch."""

    def __init__(
        self,
        context: Context,
        name: str,
        executor: int,
        workspace_size: int,
        *,
        repeatable: bool = False,
    ) -> None:
        self.context = context
        self.name = name
        self.executor = executor
        self.workspace_size = workspace_size
        self.repeatable = repeatable
        self.launches = 0
        self.workspace: DeviceBuffer | None = (
            DeviceBuffer(context, workspace_size) if workspace_size > 0 else None
        )
        self._closed = False

    def launch(self, stream: Stream | None) -> None:
        """Phase 2 on ``stream`` (None = the context's default stream, UNVERIFIED on CANN)."""
        if self._closed:
            raise RuntimeError(f"{self.name}: launch after close")
        if self.launches and not self.repeatable:
            raise RuntimeError(
                f"{self.name}: executor already launched (single-use; prepare with "
                "repeatable=True to run it again)"
            )
        api = self.context.runtime.api
        getattr(api, self.name)(
            self.workspace.ptr if self.workspace else None,
            self.workspace_size,
            self.executor,
            stream.handle if stream is not None else None,
        )
        self.launches += 1

    def close(self) -> None:
        """Free the workspace and release the executor if phase 2 did not consume it.

        Call after synchronizing the stream the call was launched on.
        """
        if self._closed:
            return
        self._closed = True
        api = self.context.runtime.api
        if self.repeatable or not self.launches:
            # Releasing a never-run, non-repeatable executor is UNVERIFIED on CANN: a failure
            # there is reported by the runtime's message, not raised (the executor may leak).
            status = api.raw.aclDestroyAclOpExecutor(self.executor)
            if status:
                api.recent_error_message()
        if self.workspace is not None:
            self.workspace.close()

    def __enter__(self) -> PreparedCall:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"<PreparedCall {self.name} workspace={self.workspace_size} launches={self.launches}>"
        )


def prepare(context: Context, name: str, *args: Any, repeatable: bool = False) -> PreparedCall:
    """Phase 1 of operator ``name`` (e.g. ``"aclnnAdd"``) with its arguments, minus the two
    trailing out-parameters, which this adds. Allocates the workspace when its size is > 0."""
    api = context.runtime.api
    size = ctypes.c_uint64()
    executor = ctypes.c_void_p()
    getattr(api, f"{name}GetWorkspaceSize")(*args, ctypes.byref(size), ctypes.byref(executor))
    if repeatable:
        api.aclSetAclOpExecutorRepeatable(executor.value)
    try:
        return PreparedCall(context, name, executor.value, size.value, repeatable=repeatable)
    except Exception:
        api.raw.aclDestroyAclOpExecutor(executor.value)
        raise


def run(context: Context, stream: Stream | None, name: str, *args: Any) -> PreparedCall:
    """Both phases back to back; returns the launched call (synchronize, then close it)."""
    call = prepare(context, name, *args)
    try:
        call.launch(stream)
    except Exception:
        call.close()
        raise
    return call
