"""Diagnostic steps run ahead, at once: each in its own child, its records held until the
run takes the step in plan order.

After a failing burst the focused steps (:func:`stress.engine.run.schedule.focus_steps`) are
independent of each other: each is a fresh child with a configuration fixed before it starts,
and none reads what another found. Run one after the other, the time to the diagnosis is the sum
of every step up to the one that settles it, child starts included; run at once, it is the
longest of them. The verdict rules are unchanged because the journal is too: the session takes
the steps in plan order (:meth:`StepBatch.take`) and writes each one's records then, exactly
as if it had just run it, and once the diagnosis settles the steps not yet taken are cancelled
(their children killed, their records dropped): the journal holds the steps a sequential run
would have run, no more.

One focused step does not wait for the burst's end: the control (:class:`Spare`). It depends on
which burst failed, not on which cases did, so it starts at the burst's first failing call and
runs beside the burst's last rounds; the plan made at the burst's end takes it where it holds
that very step with that very configuration (else it is cancelled unheard).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from stress.engine.isolation.messages import Line
from stress.engine.run.schedule import BurstFindings, focus_steps

__all__ = [
    "FocusedSteps",
    "Held",
    "Spare",
    "StepBatch",
    "ahead_span",
    "control_spare",
    "start_ahead",
]

#: Runs step ``index``: ``launch(index, on_record, cancel)`` returns the child's result.
Launch = Callable[[int, Callable[[Line], None], threading.Event], Any]


@dataclass(frozen=True)
class Held:
    """A step that ran ahead: its child's result, its records with their arrival
    (``time.monotonic()``), and its wall seconds."""

    result: Any
    records: tuple[tuple[float, Line], ...]
    seconds: float


def ahead_span(steps: Sequence[Any], start: int, skip: Callable[[Any], bool]) -> list[int]:
    """The indices of ``steps`` from ``start`` that may run at once: every step up to the last
    focused one (``confirm``; ``serial`` and ``shuffled`` between them included), less those
    ``skip`` says are already done (``--resume``); the fallback steps after them are not."""
    last = max((k for k in range(start, len(steps)) if steps[k].confirm), default=start - 1)
    return [k for k in range(start, last + 1) if not skip(steps[k])]


class StepBatch:
    """Steps run ahead by at most ``width`` threads, each supervising one child at a time,
    starting the steps in plan order (``indices``): the step the run takes next is never
    queued behind a later one, and no more children compete for the cores than there are."""

    def __init__(
        self,
        indices: Sequence[int],
        launch: Launch,
        configs: dict[int, Any] | None = None,
        width: int | None = None,
    ) -> None:
        self.configs = dict(configs or {})  # what each step was started with, by index
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._pending = list(indices)
        self._done = {k: threading.Event() for k in indices}
        self._held: dict[int, Held | BaseException] = {}
        width = max(1, min(width or _cores(), len(self._pending) or 1))
        self._threads = [
            threading.Thread(target=self._work, args=(launch,), daemon=True, name=f"ahead-{n}")
            for n in range(width)
        ]
        for thread in self._threads:
            thread.start()

    def __contains__(self, index: int) -> bool:
        return index in self._done

    def _next(self) -> int | None:
        with self._lock:
            if self._cancel.is_set() or not self._pending:
                return None
            return self._pending.pop(0)

    def _work(self, launch: Launch) -> None:
        while (index := self._next()) is not None:
            records: list[tuple[float, Line]] = []
            began = time.monotonic()
            try:
                result = launch(
                    index, lambda r, rs=records: rs.append((time.monotonic(), r)), self._cancel
                )
                self._held[index] = Held(result, tuple(records), time.monotonic() - began)
            except BaseException as exc:  # raised again where the step is taken
                self._held[index] = exc
            self._done[index].set()

    def take(self, index: int) -> Held:
        """Wait for step ``index``; its held result (or the error its child's start raised)."""
        self._done[index].wait()
        held = self._held[index]
        if isinstance(held, BaseException):
            raise held
        return held

    def cancel(self) -> None:
        """Start no further step and kill the children still running (not needed)."""
        self._cancel.set()
        for thread in self._threads:
            thread.join(timeout=10)


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def start_ahead(
    steps: Sequence[Any],
    start: int,
    config_for: Callable[[int], Any],
    skip: Callable[[Any], bool],
    run: Callable[[Any, Any, Callable[[Line], None], threading.Event], Any],
) -> StepBatch:
    """Start the steps of :func:`ahead_span` at once: step ``k`` runs
    ``run(steps[k], config_for(k), on_record, cancel)``, its configuration fixed now."""
    span = ahead_span(steps, start, skip)
    configs = {k: config_for(k) for k in span}

    def launch(k: int, on_record: Callable[[Line], None], cancel: threading.Event) -> Any:
        return run(steps[k], configs[k], on_record, cancel)

    return StepBatch(span, launch, configs)


#: Runs one step: ``run(step, config, on_record, cancel)`` returns the child's result.
RunStep = Callable[[Any, Any, Callable[[Line], None], threading.Event], Any]


class Spare:
    """One step started before the plan that holds it is made (:func:`control_spare`): its
    records are held as a :class:`StepBatch`'s are, until :meth:`take` or :meth:`cancel`."""

    def __init__(self, step: Any, config: Any, run: RunStep) -> None:
        self.step, self.config = step, config
        self._batch = StepBatch([0], lambda _, rec, cancel: run(step, config, rec, cancel), width=1)

    def take(self, step: Any, config: Any) -> Held | None:
        """The held step if it is ``step`` under ``config`` (None otherwise: it is not taken)."""
        if (step, config) != (self.step, self.config):
            return None
        return self._batch.take(0)

    def cancel(self) -> None:
        self._batch.cancel()


def control_spare(
    steps: Sequence[Any], index: int, step_config: Callable[[Any, Any], Any], run: RunStep
) -> Spare | None:
    """The focused control step the plan will hold once the burst ``steps[index]`` failed
    (:func:`stress.engine.run.schedule.focus_steps` on any failing cases: its control steps
    depend only on the burst variants that failed), started now with its configuration
    (``step_config(step, seconds)``); None when the plan holds none."""
    found = BurstFindings((), frozenset({steps[index].variant}))
    planned = focus_steps(steps[index + 1 :], steps[: index + 1], found)
    step = next((s for s in planned if s.phase == "control" and s.confirm), None)
    return None if step is None else Spare(step, step_config(step, step.seconds), run)


class FocusedSteps:
    """The steps after a failing burst that run ahead: the :class:`Spare` control, started at
    the burst's first failing call once :meth:`arm` ed, then the :class:`StepBatch` of the rest,
    started at the burst's end (:meth:`start`)."""

    def __init__(self) -> None:
        self.batch: StepBatch | None = None
        self.spare: Spare | None = None
        self._arm: Callable[[], Spare | None] | None = None

    def arm(self, spare: Callable[[], Spare | None]) -> None:
        """Start ``spare()`` at :meth:`first_failure` (once)."""
        self._arm = spare

    def first_failure(self) -> None:
        if self._arm is not None:
            self.spare, self._arm = self._arm(), None

    def start(
        self,
        steps: Sequence[Any],
        start: int,
        config_for: Callable[[int], Any],
        skip: Callable[[Any], bool],
        run: RunStep,
    ) -> None:
        """:func:`start_ahead`, less the spare's step (it runs already)."""
        self._arm = None
        spare = self.spare.step if self.spare else None
        self.batch = start_ahead(steps, start, config_for, lambda s: skip(s) or s == spare, run)

    def config(self, index: int) -> Any | None:
        """The configuration step ``index`` was started with (None: not started ahead)."""
        return self.batch.configs.get(index) if self.batch else None

    def take(self, index: int, step: Any, config: Any) -> Held | None:
        """Step ``index`` (``step`` under ``config``) if it ran ahead, else None."""
        if self.batch is not None and index in self.batch:
            return self.batch.take(index)
        return self.spare.take(step, config) if self.spare else None

    def cancel(self) -> None:
        """Kill what still runs (the steps the diagnosis did not need)."""
        self._arm = None
        for ahead in (self.batch, self.spare):
            if ahead is not None:
                ahead.cancel()
