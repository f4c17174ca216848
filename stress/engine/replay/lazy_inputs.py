"""Inputs made when a phase first calls a case, never with another call in flight on the device.

A phase runner made every case's inputs before its first call. Where a phase calls few of
its cases, or its first calls matter most (the burst: the run's first failure), a case's
inputs are made when a call first needs them (:data:`LAZY_PHASES`). Host-only inputs (seeded
numpy) may be made while other calls run. Inputs that run an operator on the device (a
backward case's saved tensors come from its forward, :func:`needs_device`) are made
**alone**: the :class:`DeviceGate` holds new calls back and waits until no call is in flight,
as the serial preparation before the phase did — a forward run beside the phase's calls could
carry their corruption into every later call of that case. The first such case a call needs
makes every other such case's too, in first-call order: one pause of the phase's calls, not
one per case (each waits for the calls in flight to end).

A child whose step is started ahead (:mod:`stress.engine.run.early`) makes inputs while it
waits for the go, in the order the phase will first need them (:meth:`LazyInputs.prefetch`).
A call's clock (the hang rule's) starts again once its inputs are made.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from stress import acl
from stress.corpus.parse import Case
from stress.engine.call.inputs import InputCache
from stress.engine.replay.phase_budget import Budget
from stress.engine.replay.pool import PoolAborted, Worker
from stress.grading.judge import Outcome

__all__ = ["LAZY_PHASES", "DeviceGate", "LazyInputs", "NetOfPauses", "needs_device"]

#: Phases that make a case's inputs at its first call (the others make all before any call,
#: or, sampled one-thread phases, as they reach each case).
LAZY_PHASES = frozenset({"burst"})


def needs_device(case: Case) -> bool:
    """Whether making ``case``'s inputs runs an operator on the device (its dependencies)."""
    return bool(case.spec.depends_on) and not case.negative


class DeviceGate:
    """The calls in flight in a phase, and a way to have none (:meth:`alone`)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0
        self._held = False  # inputs are being made on the device: no call may start
        self._closed = False
        self.paused_s = 0.0  # seconds the phase's calls were held back (inputs made alone)

    def _wait(self, busy: Callable[[], object]) -> None:
        while busy():
            if self._closed:  # the phase ended (a hang): this thread's call is not wanted
                raise PoolAborted("closed")
            self._cond.wait(0.1)

    def enter(self) -> None:
        """A call starts (held back while inputs are made on the device); :meth:`leave` when
        it ended — not when it raised (a hung call is still in flight: nothing may run
        alone after it)."""
        with self._cond:
            self._wait(lambda: self._held)
            self._active += 1

    def leave(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        """No call in flight and none starting while the body runs: new calls are held back
        at once, then the calls in flight end (the seconds this pauses the phase's calls add
        up in :attr:`paused_s`)."""
        with self._cond:
            self._wait(lambda: self._held)  # another thread makes inputs alone
            self._held = True
            since = time.monotonic()
            try:
                self._wait(lambda: self._active)
            except PoolAborted:
                self._held = False
                raise
        try:
            yield
        finally:
            with self._cond:
                self._held = False
                self.paused_s += time.monotonic() - since
                self._cond.notify_all()

    def close(self) -> None:
        """The phase ended: threads still waiting give up."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class NetOfPauses(Budget):
    """``budget`` with the seconds its phase's calls were held back to make inputs
    (:meth:`DeviceGate.alone`) not counted: a budget gives a phase time for calls, and the
    inputs made before the phase never counted either."""

    def __init__(self, budget: Budget, gate: DeviceGate) -> None:
        super().__init__(budget.seconds, budget.rounds)
        self._inner, self._gate = budget, gate

    def exhausted(self, started: float, rounds_done: int) -> bool:
        return self._inner.exhausted(started + self._gate.paused_s, rounds_done)


class LazyInputs:
    """The phase runner's inputs (a mixin of :class:`~stress.engine.replay.phases.PhaseRunner`,
    whose ``inputs``, ``cases``, ``control`` and ``config`` it uses)."""

    inputs: InputCache
    cases: Sequence[Case]
    control: Sequence[Case]
    _gate: DeviceGate | None = None  # set while a lazy phase runs
    _ahead: Iterator[Case] | None = None
    _needs_device: list[Case] | None = None
    first_use: Callable[[], list[Case]]  # the runner's: its cases in first-call order

    def prepare_inputs(self, cases: Sequence[Case]) -> None:
        """Generate the host inputs of every case this runner runs now (serially, before any
        concurrency); ``cases`` not in a focused step's set are left out."""
        runs = {c.id for c in (*self.cases, *self.control)}
        for case in cases:
            if case.id in runs:
                self.inputs.prepare(case)

    def prefetch(self, order: Sequence[Case]) -> bool:
        """Make the inputs of the next case of ``order`` not made yet (no call is in flight:
        before the phase starts); False once every case of it is made."""
        if self._ahead is None:
            self._ahead = iter(order)
        for case in self._ahead:
            if not self.inputs.ready(case):
                self.inputs.prepare(case)
                return True
        return False

    def _device_order(self) -> list[Case]:
        """The cases whose inputs need the device, in the order the phase first calls them."""
        if self._needs_device is None:
            self._needs_device = [c for c in self.first_use() if needs_device(c)]
        return self._needs_device

    def _lazily(self, phase: str) -> DeviceGate | None:
        """The gate of ``phase`` if it makes inputs lazily (its calls then pass it)."""
        self._gate = DeviceGate() if phase in LAZY_PHASES else None
        return self._gate

    def _net(self, budget: Budget) -> Budget:
        """``budget`` net of the pauses of a lazy phase (:class:`NetOfPauses`)."""
        return budget if self._gate is None else NetOfPauses(budget, self._gate)

    def _left(self) -> None:
        """A call of a lazy phase ended (:meth:`DeviceGate.leave`)."""
        if self._gate is not None:
            self._gate.leave()

    def _inputs(self, case: Case, worker: Worker | None = None) -> dict[str, np.ndarray] | Outcome:
        """The case's inputs, or the out-of-memory outcome of generating them. In a lazy phase
        they are made now if not yet (alone on the device if they need it) and the call then
        passes the gate (:meth:`_left` once it ended); ``worker``'s call clock (the hang
        rule's) stops while it waits and starts again after."""
        gate = self._gate
        if gate is None:
            return self._made(case, None)
        in_flight = worker.in_flight if worker is not None else None
        if worker is not None:
            worker.started_at = None  # waiting here is not the call's time
        made_now = False
        try:
            made_now = not self.inputs.ready(case)
            inputs = self._made(case, gate)
            if not isinstance(inputs, Outcome):
                gate.enter()
        finally:
            if worker is not None:
                if made_now:  # making them bound the input context to this thread
                    worker.context.bind()
                if in_flight is not None:  # the call itself starts now
                    worker.restart(in_flight)
        return inputs

    def _made(self, case: Case, gate: DeviceGate | None) -> dict[str, np.ndarray] | Outcome:
        start = time.perf_counter()
        try:
            if gate is None or self.inputs.ready(case):
                return self.inputs.get(case)
            if not needs_device(case):
                return self.inputs.get(case)
            with gate.alone():  # one pause of the phase's calls for every such case left
                inputs = self.inputs.get(case)
                for other in self._device_order():
                    if not self.inputs.ready(other):
                        self.inputs.prepare(other)
                return inputs
        except MemoryError as exc:
            return Outcome.host_out_of_memory(exc, start)
        except acl.AclMemoryError as exc:
            return Outcome.failed(exc, start)
