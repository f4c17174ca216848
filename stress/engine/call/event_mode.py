"""The ``event`` API mode: the output consumed on a second stream, ordered by an event.

Serving stacks launch an operator on one stream and consume its outputs on another:
``aclrtRecordEvent(event, launch stream)``, ``aclrtStreamWaitEvent(consumer stream, event)``,
then work queued on the consumer stream runs after the kernel — without the host ever
synchronizing the launch stream. :func:`run_event` does that for one call: after phase 2 it
records an event on the launch stream, makes a fresh consumer stream wait for it, copies every
output device-to-device on the consumer stream (``aclrtMemcpyAsync``; the stream and the
copies' memory set up before the launch), synchronizes the consumer stream only and downloads
the copies. An operator whose launch returns before all its
work is ordered on the launch stream (an output finished on an internal stream) hands the
consumer a partial output; a plain call, which synchronizes the launch stream itself, cannot
see that. The launch stream is synchronized afterwards, before the call's memory is freed.
"""

from __future__ import annotations

import ctypes
import time

import numpy as np

from stress import acl
from stress.acl.enums import MemcpyKind
from stress.engine.call.execute import CallTimeout, _settle, _sync
from stress.engine.call.opening import CallSite
from stress.engine.call.prepared import OpCall
from stress.grading.judge import Outcome

__all__ = ["run_event"]


def _targets(call: OpCall) -> list[tuple[object, int, int]]:
    """(slot, output address, copy address) per output with memory, each copy allocated before
    the launch (freed with the call): the consumer is ready when the kernel is queued, as a
    serving stack's is, so nothing but the event stands between the launch and the copies."""
    targets = []
    for slot, ptr in call._outputs:
        if ptr is not None:
            copy = call._malloc(slot.alloc_nbytes)
            call._frees.append(copy)
            targets.append((slot, ptr, copy))
    return targets


def _consume(
    call: OpCall, launch: acl.Stream, side: acl.Stream, targets: list[tuple[object, int, int]]
) -> list[tuple[object, int]]:
    """Record an event on ``launch``, make ``side`` wait for it and copy every output of
    ``targets`` there; returns (slot, copy address) per output."""
    api, raw = call._api, call._raw
    event = ctypes.c_void_p()
    api.check(raw.aclrtCreateEvent(ctypes.byref(event)), "aclrtCreateEvent")
    try:
        api.check(raw.aclrtRecordEvent(event, launch.handle), "aclrtRecordEvent")
        api.check(raw.aclrtStreamWaitEvent(side.handle, event), "aclrtStreamWaitEvent")
        for slot, ptr, copy in targets:
            status = raw.aclrtMemcpyAsync(
                copy, slot.nbytes, ptr, slot.nbytes, MemcpyKind.DEVICE_TO_DEVICE, side.handle
            )
            api.check(status, "aclrtMemcpyAsync")
    finally:
        raw.aclrtDestroyEvent(event)
    return [(slot, copy) for slot, _, copy in targets]


def _download(call: OpCall, copies: list) -> dict[str, np.ndarray]:
    out = {slot.name: np.empty(slot.shape, slot.dtype) for slot, _ in call._outputs}
    for slot, copy in copies:
        host = out[slot.name]
        status = call._raw.aclrtMemcpy(
            host.ctypes.data, slot.nbytes, copy, slot.nbytes, MemcpyKind.DEVICE_TO_HOST
        )
        call._api.check(status, "aclrtMemcpy")
    return out


def run_event(site: CallSite) -> Outcome:
    """One call in the event mode (see the module's docstring); raises :class:`CallTimeout` as
    :func:`stress.engine.call.execute.run_call` does."""
    start = time.perf_counter()
    call = site.open(OpCall, start)
    if isinstance(call, Outcome):
        return call
    stream, timeout_ms = site.stream, site.timeout_ms
    side, failed, abandoned = None, None, False
    try:
        call.phase1()
        side = site.context.create_stream()  # the consumer set up before the launch
        targets = _targets(call)
        call.phase2(stream)
        copies = _consume(call, stream, side, targets)
        _sync(side, timeout_ms)  # the consumer's stream only: the event orders the kernel first
        outputs = _download(call, copies)
        _sync(stream, timeout_ms)  # before the call's memory is freed
    except (acl.AclError, MemoryError) as exc:
        _settle(stream, timeout_ms)
        if side is not None:
            _settle(side, timeout_ms)
        failed = Outcome.of_error(exc, start)
    except CallTimeout:
        abandoned = True
        call.abandon()  # its kernel or copies may still be running: leave its memory alone
        raise
    finally:
        if side is not None and not abandoned:
            side.close()
    call.close()
    if failed is not None:
        return failed
    return Outcome.collected(outputs, start, call.workspace_size)
