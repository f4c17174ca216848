"""What a child process does: one job described by a JSON dict (see
:mod:`stress.engine.isolation.supervise`).

Kinds: ``info`` (load the backend, report its fingerprint), ``record`` (record a baseline and
save it), ``phase`` (run one protocol phase, streaming call records). The same functions run
in-process when isolation is off.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from collections.abc import Callable
from typing import Any

from stress import acl
from stress.baseline.store import Baseline
from stress.config import CONCURRENT_PHASES, RunConfig
from stress.corpus import preload
from stress.corpus.variants import recorded_cases, run_variants
from stress.engine.isolation.messages import INFO, PHASE, RECORD, ChildEnd, Holding, Job, Ready
from stress.engine.replay.baseline import Recording, backend_fingerprint, record_baseline
from stress.engine.replay.baseline_order import OrderDependence
from stress.engine.replay.lazy_inputs import LAZY_PHASES
from stress.engine.replay.phases import PhaseRunner
from stress.records import CallBegin, CallRecord, RecordedCase
from stress.vocabulary import ChildStatus

__all__ = ["run_job"]

Send = Callable[[dict[str, Any]], None]


_HBM = 1  # ACL_HBM_MEM of aclrtMemAttr


def _device_memory(rt: acl.Runtime, device: int) -> tuple[int | None, int | None]:
    """The device's (total, free) memory as ``aclrtGetMemInfo`` reports it (None where it
    cannot say)."""
    if not 0 <= device < rt.device_count:
        return None, None
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    try:
        rt.device(device)
        rt.api.aclrtGetMemInfo(_HBM, ctypes.byref(free), ctypes.byref(total))
    except acl.AclError:
        return None, None
    return int(total.value) or None, int(free.value) if total.value else None


def _info(job: Job, send: Send) -> ChildEnd:
    rt = acl.runtime(job.backend)
    send(Ready().to_json())
    total, free = _device_memory(rt, job.device)
    info = {**rt.info(), "device_memory": total, "device_memory_free": free}
    return ChildEnd(ChildStatus.DONE, fingerprint=backend_fingerprint(rt), info=info)


def _record(job: Job, send: Send) -> ChildEnd:
    rt = acl.runtime(job.backend)
    config = RunConfig.from_json(job.config)
    # the corpus and every size variant of it: each is a case with a baseline of its own
    cases = recorded_cases(preload.load(job.corpus, config.include_dirs), config)
    send(Ready().to_json())

    def progress(case, cb) -> None:
        unwritten = {k: o.unwritten for k, o in cb.outputs.items() if o.unwritten}
        send(
            RecordedCase(
                case.id, cb.status, cb.code, cb.grading, cb.bit_deterministic, cb.reference,
                unwritten,
            ).to_json()
        )  # fmt: skip

    try:
        baseline = record_baseline(
            rt,
            cases,
            Recording.of(config),
            progress=progress,
            begin=lambda case: send(CallBegin(0, case.id).to_json()),
        )
    except OrderDependence as exc:  # a finding: the parent raises it again (exit 1), unsaved
        return ChildEnd(ChildStatus.DONE, order_dependence=str(exc))
    path = baseline.save(job.out)
    return ChildEnd(ChildStatus.DONE, path=str(path))


def _phase(job: Job, send: Send) -> ChildEnd:
    rt = acl.runtime(job.backend)
    config = RunConfig.from_json(job.config)
    # the cases the fork server parsed before forking this child (preload), else parsed now
    cases = run_variants(preload.load(job.corpus, config.include_dirs), config)
    control = preload.load(job.control, config.include_dirs) if job.control else []
    baseline = Baseline.load(job.baseline) if job.baseline else None

    def sink(rec: CallRecord | CallBegin) -> None:  # records cross to the parent as JSON
        send(rec.to_json())

    runner = PhaseRunner(rt, config, cases, control, baseline, sink=sink, announce=job.announce)
    phase = job.phase
    # a sampled one-thread or case-by-case phase makes a case's inputs when it reaches it (it
    # may reach a few of a big corpus), the burst at a case's first call (LAZY_PHASES); the
    # others make all before any concurrency
    lazy = phase in LAZY_PHASES or (
        config.budget_s is not None and phase in ("serial", "shuffled", "isolated")
    )
    if not lazy:
        runner.prepare_inputs(control if phase == "control" else cases)
    send(Ready().to_json())
    if job.hold:  # meanwhile the inputs its first calls need, in that order
        order = runner.first_use() if phase == "burst" else []
        _hold(send, lambda: runner.prefetch(order))
    stream = job.stream if phase in CONCURRENT_PHASES else "shared"
    status, detail = runner.run(phase, stream)
    return ChildEnd(ChildStatus(status), detail)


def _hold(send: Send, meanwhile: Callable[[], bool] | None = None) -> None:
    """A step started ahead of its turn (:mod:`stress.engine.run.early`), set up and waiting:
    say so with this process's id, and make no call before the parent's go (SIGUSR2; a parent
    that does not need the step kills it instead); ``meanwhile()``, if given, does one piece
    of work while it waits (False: none left). A stop request ends the wait too (the phase
    then ends at once)."""
    from stress.engine.replay import stop

    go: list[int] = []  # a handler takes no lock: it may run inside any wait of this thread
    signal.signal(signal.SIGUSR2, lambda *_: go.append(1))
    send(Holding(os.getpid()).to_json())
    busy = meanwhile
    while not go and not stop.requested.is_set():
        if busy is None or not busy():
            busy = None
            time.sleep(0.005)


_KINDS = {INFO: _info, RECORD: _record, PHASE: _phase}


def run_job(job: Job, send: Send) -> ChildEnd:
    """Run ``job``; returns its ``child-end`` record."""
    return _KINDS[job.kind](job, send)
