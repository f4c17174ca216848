"""The two-stage aclnn call: ``aclnnXxxGetWorkspaceSize`` then ``aclnnXxx``.

Phase 1 validates the arguments and creates an executor; phase 2 launches it on a stream. A
non-repeatable executor is consumed by phase 2 (running it again is an error), so each
:class:`PreparedCall` launches once unless prepared ``repeatable``. The workspace is allocated
only when phase 1 asks for more than 0 bytes (NULL is passed otherwise) and must outlive the
kernel: close the call after synchronizing the stream.

Splitting the phases lets the protocol interleave them across calls (A.phase1, B.phase1,
A.phase2, B.phase2), which is how host-side state shared between calls shows itself.

The two steps of that ABI are :func:`get_workspace` and :func:`launch`, used by both call
objects: :class:`PreparedCall` (binding level: the caller passes the argument handles and owns
them) and the engine's :class:`stress.engine.call.prepared.OpCall`, which builds its arguments
from an operator spec and owns every resource of the call in one finalizer.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

from stress.acl.memory import DeviceBuffer
from stress.acl.runtime import Context, Stream

__all__ = ["PreparedCall", "get_workspace", "launch", "prepare", "run"]


def get_workspace(
    api: Any, function: str, args: Sequence[Any], signature: Any = None
) -> tuple[int, int]:
    """Phase 1: ``<function>GetWorkspaceSize(*args, &size, &executor)``, checked.

    Returns (executor handle, workspace size in bytes). ``signature``: the operator's header
    signature, for operators outside the prototype table (see ``Api.operator``)."""
    phase1 = api.operator(function, signature)[0]
    size, executor = ctypes.c_uint64(), ctypes.c_void_p()
    status = phase1(*args, ctypes.byref(size), ctypes.byref(executor))
    if status:
        api.check(status, f"{function}GetWorkspaceSize")
    return executor.value, size.value


def launch(
    api: Any,
    function: str,
    workspace: int | None,
    workspace_size: int,
    executor: int,
    stream: Stream | None,
    signature: Any = None,
) -> None:
    """Phase 2: ``<function>(workspace, size, executor, stream)``, checked; ``workspace`` is
    None (NULL) when phase 1 asked for 0 bytes, ``stream`` None the default stream."""
    phase2 = api.operator(function, signature)[1]
    status = phase2(workspace, workspace_size, executor, stream.handle if stream else None)
    if status:
        api.check(status, function)


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
        workspace = self.workspace.ptr if self.workspace else None
        launch(self.context.runtime.api, self.name, workspace, self.workspace_size, self.executor,
               stream)  # fmt: skip
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
    executor, size = get_workspace(api, name, args)
    try:
        if repeatable:
            api.aclSetAclOpExecutorRepeatable(executor)
        return PreparedCall(context, name, executor, size, repeatable=repeatable)
    except Exception:
        api.raw.aclDestroyAclOpExecutor(executor)
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
