"""One operator call on one case: upload, phase 1, workspace, phase 2, synchronize, download.

Every :class:`OpCall` has its own device inputs, canary-filled outputs, scalars, workspace (filled
with the same canary byte) and executor. The phases are separate methods so that the
protocol can interleave them across calls; :meth:`OpCall.run` does all of it back to back.
The calling thread must have a context bound (the constructor binds the given one).

This is the engine's hot path, so it talks to the raw ctypes functions and owns everything it
creates in one place (one finalizer for the whole call instead of one object per tensor); the
per-case argument layout (shapes, strides, dtype codes as ctypes arrays) is computed once and
cached. A call whose kernel may still be running (a synchronisation timed out) is *abandoned*:
its memory is never freed, because the kernel may still write it.
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from stress import acl
from stress.acl.enums import Format, MallocPolicy, MemcpyKind
from stress.acl.twostage import get_workspace, launch
from stress.engine.call.blockpool import BlockPool
from stress.engine.call.layout import ScalarSlot, TensorSlot, layout
from stress.engine.call.views import storage_bytes
from stress.grading.digest import DEFAULT_CANARY
from stress.ops.spec import (
    OpSpec,
    Params,
)

__all__ = ["OpCall", "run_once"]


def _release(raw, context_handle, executor, tensors, scalars, frees, others, free=None) -> None:
    """Free everything a call created (runs from close() or, as a fallback, from the GC)."""
    if context_handle:
        raw.aclrtSetCurrentContext(context_handle)
    if executor[0]:
        raw.aclDestroyAclOpExecutor(executor[0])  # never-run executor (UNVERIFIED on CANN)
    for destroy, handle in others:  # lists destroy their members, as on CANN
        getattr(raw, destroy)(handle)
    for t in tensors:
        raw.aclDestroyTensor(t)
    for s in scalars:
        raw.aclDestroyScalar(s)
    for ptr in frees:
        (free or raw.aclrtFree)(ptr)


class OpCall:
    """A single call of ``spec`` with ``params`` on device copies of ``host_inputs``."""

    def __init__(
        self,
        context: acl.Context,
        spec: OpSpec,
        params: Params,
        host_inputs: Mapping[str, np.ndarray],
        *,
        canary: int = DEFAULT_CANARY,
        layout_key: str | None = None,
        allocator: BlockPool | None = None,
        view: str = "",
    ) -> None:
        self.context = context
        self._allocator = allocator  # device memory from a pool instead of aclrtMalloc/aclrtFree
        self.spec = spec
        self.params = params
        self.canary = canary
        api = context.runtime.api
        self._api = api
        raw = api.raw
        self._raw = raw
        self._tensors: list[int] = []
        self._scalars: list[int] = []
        self._frees: list[int] = []
        self._others: list[tuple[str, int]] = []  # (destroy function, handle): lists, arrays
        self._executor = [0]  # set while phase 1's executor has not been consumed by phase 2
        self._outputs: list[tuple[TensorSlot, int | None]] = []
        self._args: list[Any] = []
        self.workspace_size = 0
        self._workspace: int | None = None
        self._finalizer = weakref.finalize(
            self,
            _release,
            raw,
            context.handle,
            self._executor,
            self._tensors,
            self._scalars,
            self._frees,
            self._others,
            allocator.free if allocator is not None else None,
        )
        self._finalizer.atexit = False
        context.bind()
        try:
            self._build(layout(spec, params, layout_key, view), host_inputs)
        except BaseException:
            self.close()
            raise

    def _check(self, status: int, name: str) -> None:
        if status:
            self._api.check(status, name)

    def _build(self, layout: tuple, host_inputs: Mapping[str, np.ndarray]) -> None:
        args = self._args
        for kind, slot in layout:
            if kind == "attr":
                args.append(slot)
            elif kind == "null":
                args.append(None)
            elif kind == "tensor":
                handle = self._tensor(slot, host_inputs)
                self._tensors.append(handle)
                args.append(handle)
            elif kind == "scalar":
                handle = self._scalar(slot)
                self._scalars.append(handle)
                args.append(handle)
            else:
                args.append(self._aggregate(kind, slot, host_inputs))

    def _aggregate(self, kind: str, slot: Any, host_inputs: Mapping[str, np.ndarray]) -> int:
        """A tensor list, scalar list or array; only the aggregate is destroyed later (a list
        destroys its members, as on CANN)."""
        raw = self._raw
        if kind == "array":
            create, destroy = slot.create, slot.destroy
            handle = getattr(raw, create)(slot.values, slot.n)
        else:
            tensors = kind == "tensor_list"
            create = "aclCreateTensorList" if tensors else "aclCreateScalarList"
            destroy = "aclDestroyTensorList" if tensors else "aclDestroyScalarList"
            members: list[int] = []
            handle = None
            try:
                for s in slot:
                    members.append(self._tensor(s, host_inputs) if tensors else self._scalar(s))
                handle = getattr(raw, create)((ctypes.c_void_p * max(len(members), 1))(*members),
                                              len(members))  # fmt: skip
            finally:
                if not handle:  # no list owns the members: free them here
                    free = raw.aclDestroyTensor if tensors else raw.aclDestroyScalar
                    for m in members:
                        free(m)
        if not handle:
            raise acl.AclNullHandleError(create, self._api.recent_error_message())
        self._others.append((destroy, handle))
        return handle

    def _scalar(self, slot: ScalarSlot) -> int:
        buf = ctypes.create_string_buffer(slot.raw, len(slot.raw))
        handle = self._raw.aclCreateScalar(buf, slot.acl_dtype)
        if not handle:
            raise acl.AclNullHandleError("aclCreateScalar", self._api.recent_error_message())
        return handle

    def _upload(self, slot: TensorSlot, ptr: int, host: np.ndarray) -> None:
        """Copy ``host`` (contiguous, checked against the slot) to the device at ``ptr``."""
        if slot.view is not None:  # a view variant: its storage, laid out
            host = storage_bytes(host, slot.view)
        self._check(
            self._raw.aclrtMemcpy(
                ptr, host.nbytes, host.ctypes.data, host.nbytes, MemcpyKind.HOST_TO_DEVICE
            ),
            "aclrtMemcpy",
        )

    def _tensor(self, slot: TensorSlot, host_inputs: Mapping[str, np.ndarray]) -> int:
        """Device memory (canary-filled for an output, uploaded otherwise) and its aclTensor."""
        raw = self._raw
        ptr = None
        if slot.nbytes:
            ptr = self._malloc(slot.alloc_nbytes)
            self._frees.append(ptr)
            if slot.output:
                self._check(
                    raw.aclrtMemset(ptr, slot.nbytes, self.canary, slot.nbytes), "aclrtMemset"
                )
            else:
                host = np.ascontiguousarray(host_inputs[slot.name])
                if host.nbytes != slot.nbytes or host.dtype != slot.dtype:
                    raise ValueError(
                        f"{self.spec.name}: input {slot.name} is {host.dtype}"
                        f"{list(host.shape)}, the layout wants {slot.dtype}{list(slot.shape)}"
                    )
                self._upload(slot, ptr, host)
        ndim = len(slot.shape)
        offset, storage, nstorage = 0, slot.dims, ndim
        if slot.view is not None:
            offset, storage, nstorage = slot.view.offset, slot.storage_dims, len(slot.view.storage)
        handle = raw.aclCreateTensor(
            slot.dims, ndim, slot.acl_dtype, slot.strides, offset, Format.ND, storage, nstorage, ptr
        )
        if not handle:
            raise acl.AclNullHandleError("aclCreateTensor", self._api.recent_error_message())
        if slot.output or slot.inout:
            self._outputs.append((slot, ptr))
        return handle

    def phase1(self) -> int:
        """``GetWorkspaceSize`` (creates the executor), then the workspace allocation.

        Returns the workspace size."""
        spec = self.spec
        self._executor[0], size = get_workspace(
            self._api, spec.function, self._args, spec.signature
        )
        self.workspace_size = size
        if size:
            self._workspace = self._malloc(size)
            self._frees.append(self._workspace)
            # prefilled like the outputs, with the call's canary (stress.grading.prefill): a
            # kernel that reads its workspace before writing it then gives a result that changes
            # with the byte, instead of the same wrong value whatever the allocator left there
            self._check(
                self._raw.aclrtMemset(self._workspace, size, self.canary, size), "aclrtMemset"
            )
        return size

    def _malloc(self, nbytes: int) -> int:
        """Device memory for the call: from its allocator, else ``aclrtMalloc``."""
        if self._allocator is not None:
            return self._allocator.malloc(nbytes)
        dev = ctypes.c_void_p()
        self._check(
            self._raw.aclrtMalloc(ctypes.byref(dev), nbytes, MallocPolicy.HUGE_FIRST), "aclrtMalloc"
        )
        return dev.value

    def phase2(self, stream: acl.Stream | None) -> None:
        """Launch the executor on ``stream`` (asynchronous); it is consumed."""
        if not self._executor[0]:
            raise RuntimeError(f"{self.spec.name}: phase2 without a phase-1 executor")
        executor = self._executor[0]
        self._executor[0] = 0  # consumed by phase 2, even when it fails (single-use)
        spec = self.spec
        launch(self._api, spec.function, self._workspace, self.workspace_size, executor, stream,
               spec.signature)  # fmt: skip

    def collect(self) -> dict[str, np.ndarray]:
        """Download every output (call after synchronizing the stream)."""
        return self._download(self._outputs)

    def _download(self, outputs: Iterable[tuple[TensorSlot, int | None]]) -> dict[str, np.ndarray]:
        """Each output slot copied from its device address (left unfilled when it has none)."""
        out: dict[str, np.ndarray] = {}
        for slot, ptr in outputs:
            host = np.empty(slot.shape, slot.dtype)
            if ptr is not None:
                self._check(
                    self._raw.aclrtMemcpy(
                        host.ctypes.data, slot.nbytes, ptr, slot.nbytes, MemcpyKind.DEVICE_TO_HOST
                    ),
                    "aclrtMemcpy",
                )
            out[slot.name] = host
        return out

    def run(self, stream: acl.Stream, timeout_ms: int | None = None) -> dict[str, np.ndarray]:
        """All phases back to back, then synchronize and download."""
        self.phase1()
        self.phase2(stream)
        stream.synchronize(timeout_ms)
        return self.collect()

    def close(self) -> None:
        """Release executor, workspace, tensors and scalars (after the stream is synchronized)."""
        if self._finalizer.alive:
            self._finalizer()

    def abandon(self) -> None:
        """Never free this call's memory: its kernel may still be running (a timeout)."""
        self._finalizer.detach()

    def __enter__(self) -> OpCall:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_once(
    context: acl.Context,
    stream: acl.Stream,
    spec: OpSpec,
    params: Params,
    host_inputs: Mapping[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """Run one call and return its outputs (the simplest use of :class:`OpCall`)."""
    with OpCall(context, spec, params, host_inputs) as call:
        return call.run(stream)
