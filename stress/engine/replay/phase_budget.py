"""How long a phase runs: a :class:`Budget` of rounds and seconds (whichever ends first), and
:func:`phase_budget`, the one ``--duration`` / ``--iterations`` give a phase."""

from __future__ import annotations

import time
from dataclasses import dataclass

from stress.config import DEFAULT_DURATION, RunConfig
from stress.engine.replay import stop

__all__ = ["Budget", "phase_budget", "split_budget"]


@dataclass
class Budget:
    """When to stop: after ``rounds`` rounds, after ``seconds``, whichever comes first."""

    seconds: float | None = None
    rounds: int | None = None

    def exhausted(self, started: float, rounds_done: int) -> bool:
        if stop.requested.is_set():  # the parent asked the child to stop: end this round
            return True
        if self.rounds is not None and rounds_done >= self.rounds:
            return True
        return self.seconds is not None and time.monotonic() - started >= self.seconds

    def spent(self, started: float) -> bool:
        """Whether its seconds have passed since ``started`` (rounds aside): a worker done
        early in a round then makes no further fill call (:meth:`WorkerPool.run`
        ``fill_within``)."""
        return self.seconds is not None and time.monotonic() - started >= self.seconds


def phase_budget(config: RunConfig, share: int = 1) -> Budget:
    """The budget of a concurrent phase under ``config`` (``--duration``, ``--iterations``), or
    of one of ``share`` cases in ``isolated``."""
    seconds = config.duration
    if seconds is None and config.iterations is None:
        seconds = DEFAULT_DURATION
    return Budget(seconds=None if seconds is None else seconds / share, rounds=config.iterations)


def split_budget(budget: Budget, share: float) -> tuple[Budget, Budget]:
    """``budget`` cut in two: ``share`` of it, and the rest (at least one round each)."""
    if budget.seconds is not None:
        first = budget.seconds * share
        return Budget(seconds=first, rounds=budget.rounds), Budget(
            seconds=budget.seconds - first, rounds=budget.rounds
        )
    rounds = budget.rounds or 1
    first = max(1, int(rounds * share))
    return Budget(rounds=first), Budget(rounds=max(1, rounds - first))
