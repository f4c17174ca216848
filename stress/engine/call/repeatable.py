"""The ``repeat`` API mode: one executor, marked repeatable, launched several times.

Real callers (graph-capture frameworks, serving loops) build an executor once with
``aclnnXxxGetWorkspaceSize``, mark it with ``aclSetAclOpExecutorRepeatable`` right after, and
launch it again and again, pointing it at other buffers of the same shapes with
``aclSetInputTensorAddr`` / ``aclSetOutputTensorAddr``; ``aclDestroyAclOpExecutor`` frees it
(CANN's docs; ``/work/shared/spec/acl-api.md`` §2). CANN warns that addresses of unknown
lifetime set this way may be accessed concurrently. :func:`run_repeat` does what such a
caller does, on one case:

1. launch 0 on the buffers phase 1 saw; launch 1 on the same addresses again (outputs and the
   workspace prefilled again with the call's canary, in-out tensors uploaded again);
2. launches 2 .. K-1 each on a fresh set of buffers holding the same inputs, every tensor
   rebound by its handle (``index``: its position among the executor's inputs, resp. outputs;
   op_api executors do not read it, generated single-op executors do). The set it leaves is
   overwritten first (inputs with :data:`POISON`, outputs with the canary), as a caller that
   reuses its old buffers would: a launch that still reads or writes the old addresses then
   gives wrong values or leaves its new outputs unwritten;
3. every launch synchronized, downloaded and returned as its own outcome (graded against the
   case's baseline like any call); the executor destroyed when the call closes.

An operator declared ``not_repeatable`` (``[op] not_repeatable``) gets the negative check
instead: marking must fail (real nnopbase's ``SetRepeatable`` answers ``ACLNN_ERR_INNER``,
561000, for an executor it built unrepeatable); the executor is then launched once, single-use.
Marking that succeeds contradicts the declaration and is reported as the call's error.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from stress import acl
from stress.acl.twostage import launch
from stress.engine.call.execute import CallTimeout, _settle, _sync
from stress.engine.call.layout import TensorSlot
from stress.engine.call.opening import CallSite
from stress.engine.call.prepared import OpCall
from stress.grading.judge import Outcome

__all__ = ["LAUNCHES", "POISON", "Launch", "RepeatableCall", "run_repeat"]

#: Launches per repeatable executor: twice at phase 1's addresses, then once rebound.
LAUNCHES = 3
#: The byte a left set of input buffers is overwritten with before the next launch.
POISON = 0xC3
_REFUSED = 561000  # ACLNN_ERR_INNER: nnopbase's SetRepeatable on an unrepeatable executor


@dataclass(frozen=True)
class Launch:
    """One launch of a repeatable executor: its outcome, index, and whether it ran rebound."""

    outcome: Outcome
    index: int
    rebound: bool
    note: str = ""  # the negative check's result for a declared not-repeatable operator


class RepeatableCall(OpCall):
    """An :class:`OpCall` that remembers each tensor it bound (slot, handle, address), so that
    its executor can be launched again and rebound to other buffers."""

    def _build(self, layout: tuple, host_inputs: Mapping[str, np.ndarray]) -> None:
        self._bound: list[tuple[TensorSlot, int, int | None]] = []
        self._host = host_inputs  # uploaded again into a fresh set
        super()._build(layout, host_inputs)

    def _tensor(self, slot: TensorSlot, host_inputs: Mapping[str, np.ndarray]) -> int:
        handle = super()._tensor(slot, host_inputs)
        self._bound.append((slot, handle, self._frees[-1] if slot.nbytes else None))
        return handle

    @property
    def executor(self) -> int:
        return self._executor[0]

    def mark(self) -> int:
        """``aclSetAclOpExecutorRepeatable`` on phase 1's executor; its status (not raised)."""
        status = self._raw.aclSetAclOpExecutorRepeatable(self._executor[0])
        if status:
            self._api.recent_error_message()  # clear the thread's message
        return status

    def refill(self, ptrs: list[int | None]) -> None:
        """Prefill outputs (and the workspace) with the canary, upload in-out tensors again."""
        for (slot, _, _), ptr in zip(self._bound, ptrs, strict=True):
            if ptr is None or not (slot.output or slot.inout):
                continue
            if slot.output:
                self._check(
                    self._raw.aclrtMemset(ptr, slot.nbytes, self.canary, slot.nbytes), "aclrtMemset"
                )
            else:
                self._upload(slot, ptr, np.ascontiguousarray(self._host[slot.name]))
        if self._workspace is not None:
            size = self.workspace_size
            self._check(
                self._raw.aclrtMemset(self._workspace, size, self.canary, size), "aclrtMemset"
            )

    def poison(self, ptrs: list[int | None]) -> None:
        """Overwrite a set this executor leaves: inputs with POISON, outputs with the canary."""
        for (slot, _, _), ptr in zip(self._bound, ptrs, strict=True):
            if ptr is not None:
                byte = self.canary if slot.output else POISON
                size = slot.alloc_nbytes  # a view's whole storage (an expanded one's is smaller)
                self._check(self._raw.aclrtMemset(ptr, size, byte, size), "aclrtMemset")

    def fresh_set(self) -> list[int | None]:
        """New buffers of the same sizes (inputs uploaded), freed when the call closes."""
        ptrs: list[int | None] = []
        for slot, _, ptr in self._bound:
            if ptr is None:
                ptrs.append(None)
                continue
            new = self._malloc(slot.alloc_nbytes)
            self._frees.append(new)
            if not slot.output:
                self._upload(slot, new, np.ascontiguousarray(self._host[slot.name]))
            ptrs.append(new)
        return ptrs

    def rebind(self, ptrs: list[int | None]) -> None:
        """Point every tensor of the executor at ``ptrs`` (by handle; index by role)."""
        n_in = n_out = 0
        for (slot, handle, _), ptr in zip(self._bound, ptrs, strict=True):
            out = slot.output or slot.inout
            name = "aclSetOutputTensorAddr" if out else "aclSetInputTensorAddr"
            index = n_out if out else n_in
            n_out, n_in = n_out + out, n_in + (not out)
            if ptr is not None:
                fn = getattr(self._raw, name)
                self._check(fn(self._executor[0], index, handle, ctypes.c_void_p(ptr)), name)

    def relaunch(self, stream: acl.Stream) -> None:
        """Phase 2 again; the executor stays (destroyed by close)."""
        spec = self.spec
        launch(
            self._api,
            spec.function,
            self._workspace,
            self.workspace_size,
            self._executor[0],
            stream,
            spec.signature,
        )

    def collect_from(self, ptrs: list[int | None]) -> dict[str, np.ndarray]:
        """Download every output from ``ptrs`` (the set the last launch wrote)."""
        bound = zip(self._bound, ptrs, strict=True)
        return self._download(
            (slot, ptr) for (slot, _, _), ptr in bound if slot.output or slot.inout
        )

    def addresses(self) -> list[int | None]:
        return [ptr for _, _, ptr in self._bound]


def _refusal(
    call: RepeatableCall, status: int, stream: acl.Stream, timeout_ms: int | None, start: float
) -> list[Launch]:
    """The negative check of an operator declared not repeatable."""
    reason = call.spec.not_repeatable
    if status == 0:
        exc = acl.AclError(
            0,
            "aclSetAclOpExecutorRepeatable",
            f"{call.spec.function} is declared not repeatable ({reason}), but "
            "marking its executor repeatable succeeded: drop [op] not_repeatable "
            "or fix the operator",
        )
        return [Launch(Outcome.failed(exc, start), 0, False)]
    call.phase2(stream)  # refused: single-use, launched once
    _sync(stream, timeout_ms)
    outcome = Outcome.collected(call.collect(), start, call.workspace_size)
    note = f"aclSetAclOpExecutorRepeatable refused it ({status}, as declared: {reason})"
    return [Launch(outcome, 0, False, note if status == _REFUSED else note + "; CANN: 561000")]


def _launches(
    call: RepeatableCall,
    stream: acl.Stream,
    timeout_ms: int | None,
    launches: int,
    out: list[Launch],
) -> None:
    """Launch ``launches`` times (see the module's docstring), appending to ``out``."""
    current = call.addresses()
    for i in range(launches):
        start = time.perf_counter()
        rebound = i >= 2
        if rebound:
            fresh = call.fresh_set()
            call.rebind(fresh)
            call.poison(current)
            current = fresh
        call.refill(current)
        call.relaunch(stream)
        _sync(stream, timeout_ms)
        outcome = Outcome.collected(call.collect_from(current), start, call.workspace_size)
        out.append(Launch(outcome, i, rebound))


def run_repeat(site: CallSite, launches: int = LAUNCHES) -> list[Launch]:
    """One call in the repeat mode: the outcome of every launch (one failed outcome when
    building, phase 1 or marking fails; the launches so far and the failure when a launch
    fails). Raises :class:`CallTimeout` as :func:`stress.engine.call.execute.run_call` does."""
    start = time.perf_counter()
    call = site.open(RepeatableCall, start)
    if isinstance(call, Outcome):
        return [Launch(call, 0, False)]
    stream, timeout_ms = site.stream, site.timeout_ms
    done: list[Launch] = []
    try:
        call.phase1()
        status = call.mark()
        if call.spec.not_repeatable:
            return _refusal(call, status, stream, timeout_ms, start)
        if status:
            call._api.check(status, "aclSetAclOpExecutorRepeatable")
        _launches(call, stream, timeout_ms, launches, done)
        return done
    except (acl.AclError, MemoryError) as exc:
        _settle(stream, timeout_ms)
        failed = Outcome.of_error(exc, start)
        return [*done, Launch(failed, len(done), len(done) >= 2)]
    except CallTimeout:
        call.abandon()
        raise
    finally:
        if call._finalizer.alive:
            call.close()
