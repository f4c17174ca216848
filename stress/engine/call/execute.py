"""Running calls: one prepared call, or several interleaved phase by phase, each to an
:class:`~stress.grading.judge.Outcome` (its outputs, or the status it failed with) that
:func:`stress.grading.judge.judge` turns into a call record."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from stress import acl
from stress.corpus.parse import Case
from stress.engine.call.blockpool import BlockPool
from stress.engine.call.caching_allocator import CachingAllocator
from stress.engine.call.opening import open_call
from stress.engine.call.prepared import OpCall
from stress.grading.digest import DEFAULT_CANARY
from stress.grading.judge import Outcome

__all__ = ["CallTimeout", "run_call", "run_interleaved", "run_opened"]


class CallTimeout(Exception):
    """A stream synchronisation timed out: the call's resources stay allocated (the kernel may
    still be writing them) and the phase must stop."""


def _sync(stream: acl.Stream, timeout_ms: int | None) -> None:
    try:
        stream.synchronize(timeout_ms)
    except acl.AclTimeoutError as exc:
        raise CallTimeout(str(exc)) from exc


def run_call(
    context: acl.Context,
    stream: acl.Stream,
    case: Case,
    inputs: Mapping[str, np.ndarray],
    *,
    canary: int = DEFAULT_CANARY,
    timeout_ms: int | None = None,
    allocator: BlockPool | CachingAllocator | None = None,
) -> Outcome:
    """One call back to back (upload, phase 1, workspace, phase 2, sync, download); its device
    memory from ``allocator`` when given (:mod:`stress.engine.call.blockpool`; a
    :class:`CachingAllocator` stream-ordered on ``stream``)."""
    start = time.perf_counter()
    caching = allocator if isinstance(allocator, CachingAllocator) else None
    if caching is not None:
        allocator = caching.on(stream.handle)  # type: ignore[assignment]
    call = open_call(OpCall, context, case, inputs, start, canary=canary, allocator=allocator)
    if isinstance(call, Outcome):
        return call

    def synchronized() -> None:
        if caching is not None:  # what this stream gave back before now serves every stream
            caching.synchronized(stream.handle)

    return run_opened(call, stream, start, timeout_ms, lambda: call.phase2(stream), synchronized)


def run_opened(
    call: OpCall,
    stream: acl.Stream,
    start: float,
    timeout_ms: int | None,
    launch: Callable[[], None],
    synchronized: Callable[[], None] = lambda: None,
) -> Outcome:
    """An opened call to its outcome: phase 1, ``launch`` (phase 2, wherever it runs), the
    synchronisation of ``stream`` (then ``synchronized``), the download; a failed status or
    host memory as the outcome, a :class:`CallTimeout` raised with the call's memory left
    alone (the kernel may still be writing it)."""
    try:
        call.phase1()
        launch()
        _sync(stream, timeout_ms)
        synchronized()
        outputs = call.collect()
    except (acl.AclError, MemoryError) as exc:
        _settle(stream, timeout_ms)
        call.close()
        return Outcome.of_error(exc, start)
    except CallTimeout:
        call.abandon()
        raise
    call.close()
    return Outcome.collected(outputs, start, call.workspace_size)


def _settle(stream: acl.Stream, timeout_ms: int | None) -> None:
    """After a failed step, drain the stream so freed memory is not still in use."""
    try:
        _sync(stream, timeout_ms)
    except acl.AclError:
        pass


def run_interleaved(
    context: acl.Context,
    stream: acl.Stream,
    cases: Sequence[Case],
    inputs: Sequence[Mapping[str, np.ndarray]],
    *,
    canary: int = DEFAULT_CANARY,
    timeout_ms: int | None = None,
    order: Sequence[tuple[int, str]] | None = None,
) -> list[Outcome]:
    """Calls with their phases interleaved: every phase 1, then every phase 2, then one sync.

    For two cases this is A.phase1, B.phase1, A.phase2, B.phase2: host-side state that phase 1
    leaves for phase 2 (tiling, caches) is overwritten by the other call in between. ``order``
    gives another order as (call index, "phase1" | "phase2") steps (a PCT schedule,
    :mod:`stress.engine.replay.pct`); each call's phase 1 must come before its phase 2.
    """
    start = time.perf_counter()
    outcomes: list[Outcome | None] = [None] * len(cases)
    calls: list[OpCall | None] = []
    for i, (case, ins) in enumerate(zip(cases, inputs, strict=True)):
        opened = open_call(OpCall, context, case, ins, start, canary=canary)
        if isinstance(opened, Outcome):
            calls.append(None)
            outcomes[i] = opened
        else:
            calls.append(opened)
    if order is None:
        order = [(i, step) for step in ("phase1", "phase2") for i in range(len(calls))]
    for i, step in order:
        call = calls[i]
        if call is None or outcomes[i] is not None:
            continue
        try:
            call.phase1() if step == "phase1" else call.phase2(stream)
        except acl.AclError as exc:
            outcomes[i] = Outcome.failed(exc, start)
    try:
        _sync(stream, timeout_ms)
        sync_error = None
    except CallTimeout:
        for call in calls:
            if call is not None:
                call.abandon()
        raise
    except acl.AclError as exc:
        sync_error = exc
    end = time.perf_counter()
    for i, call in enumerate(calls):
        if call is None:
            continue
        if outcomes[i] is None:
            if sync_error is not None:
                outcomes[i] = Outcome.failed(sync_error, start)
            else:
                try:
                    outputs = call.collect()
                except MemoryError as exc:
                    outputs, outcomes[i] = {}, Outcome.host_out_of_memory(exc, start)
                if outcomes[i] is None:
                    outcomes[i] = Outcome(
                        outputs=outputs,
                        start=start,
                        duration=end - start,
                        workspace=call.workspace_size,
                    )
        call.close()
    return [o for o in outcomes if o is not None]
