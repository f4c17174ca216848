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
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from stress.engine.isolation.messages import Line

__all__ = ["Held", "StepBatch", "ahead_span", "start_ahead"]

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
