"""The run's schedule: which phase runs when, for how long, and when the run may stop.

Order. :data:`stress.config.PHASES` lists the phases in the order :func:`diagnose
<stress.engine.grading.diagnose>` weighs them: ``burst`` first (the cheapest, most sensitive
checks: every case's first call against the baseline, then short mixed rounds with the control
interleaved and self-race rounds), then ``control``, ``serial``, ``shuffled``, ``isolated``,
``interleaved``, ``mixed``. Because of that order, once the phases run so far give a diagnosis
other than clean (and the control has run, unless the diagnosis is a crash or hang, which
nothing outranks), no later phase can turn it into a higher-ranked one except by a new crash
or hang: with ``fail_fast`` (the default) the run stops there and says which phases it skipped.

Budget. Without ``--budget`` every concurrent phase runs ``--duration`` seconds (the burst
:data:`BURST_SECONDS`). With ``--budget S`` the scheduler gives the burst a tenth of S (at most
:data:`BURST_SECONDS` per stream policy) and, before each later concurrent phase, divides what
is left of S (less an estimated :data:`STEP_OVERHEAD_S` per remaining phase for the child's
start-up and the single-threaded phases) evenly among the concurrent phases and the interleaved
phase still to run (the interleaved phase samples pairs to fit its share, with the coverage
:mod:`stress.engine.pairs` states).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stress.config import CONCURRENT_PHASES, DEFAULT_DURATION, RunConfig
from stress.engine.grading import BURST_ONLY
from stress.model import Diagnosis

__all__ = ["BURST_SECONDS", "STEP_OVERHEAD_S", "Scheduler", "Step", "no_calls_detail", "settled"]

#: Seconds of mixed rounds in the burst, per stream policy (less when a small --budget says so).
BURST_SECONDS = 1.0
#: Estimated seconds a phase costs beyond its concurrent rounds (child start, serial passes).
STEP_OVERHEAD_S = 0.8
#: Phases that get a share of ``--budget``: the concurrent ones and the interleaved pairs (which
#: run :data:`stress.engine.pairs.MIN_PARTNERS` rounds whatever their share; see that module).
TIMED_PHASES = frozenset(CONCURRENT_PHASES) | {"interleaved"}
#: The shortest concurrent phase the scheduler hands out, however tight the budget.
MIN_PHASE_S = 0.2


@dataclass(frozen=True)
class Step:
    """One phase run: a phase under one stream policy (``variant`` names it when there are
    several)."""

    phase: str
    variant: str
    stream: str


def plan(config: RunConfig) -> list[Step]:
    """Every step of a full run, in the order they run."""
    steps = []
    for phase in config.phases:
        if phase in CONCURRENT_PHASES:
            for stream in config.streams:
                variant = f"stream={stream}" if len(config.streams) > 1 else ""
                steps.append(Step(phase, variant, stream))
        else:
            steps.append(Step(phase, "", "shared"))
    return steps


#: Diagnoses that never stop a run early: out of memory and "a phase made no call" say
#: nothing about the operator, so the run goes on to the phases that may.
_NEVER_EARLY = (Diagnosis.CLEAN, Diagnosis.OUT_OF_MEMORY, Diagnosis.INCOMPLETE)


def no_calls_detail(config: RunConfig, phase: str) -> str:
    """Why a phase that ended normally made no call, and the fix."""
    budget = config.budget()
    given = f"{budget.seconds:g} s" if budget.seconds is not None else f"{budget.rounds} rounds"
    return (
        f"{phase} made no call in its budget ({given} on {config.threads} threads): the "
        "threads did not reach their first round in time; raise --duration or lower --threads"
    )


def settled(
    diagnosis: str,
    ran: Sequence[str],
    planned: Sequence[str],
    explanation: str = "",
    phase_done: bool = True,
) -> bool:
    """Whether a diagnosis reached after the phases ``ran`` can stand without the rest.

    A crash or hang stands at once; any other finding once the control has run and the last
    phase has run under every stream policy. A failure seen only in the burst never stands
    early: it is what the diagnostic phases are for."""
    if diagnosis in _NEVER_EARLY or explanation.startswith(BURST_ONLY):
        return False
    if diagnosis in (Diagnosis.CRASH, Diagnosis.HANG):
        return True
    return phase_done and ("control" in ran or "control" not in planned)


@dataclass
class Scheduler:
    """Hands out each step's duration from the run's budget."""

    config: RunConfig
    steps: Sequence[Step]

    def duration(self, index: int, elapsed: float) -> float | None:
        """Seconds for concurrent step ``index`` given ``elapsed`` seconds since the run began
        (None: the step runs by ``--iterations`` rounds instead)."""
        step = self.steps[index]
        if step.phase not in TIMED_PHASES:
            return None
        cfg = self.config
        if step.phase == "burst":
            share = BURST_SECONDS
            if cfg.budget_s is not None:
                share = min(share, cfg.budget_s / 10 / max(1, len(cfg.streams)))
            return max(MIN_PHASE_S, share)
        if cfg.iterations is not None and cfg.budget_s is None:
            return None
        if step.phase not in CONCURRENT_PHASES and cfg.budget_s is None:
            return None  # the interleaved phase is bounded only by --budget
        if cfg.budget_s is None:
            return cfg.duration if cfg.duration is not None else DEFAULT_DURATION
        rest = self.steps[index:]
        concurrent = sum(1 for s in rest if s.phase in TIMED_PHASES)
        left = cfg.budget_s - elapsed - STEP_OVERHEAD_S * len(rest)
        return max(MIN_PHASE_S, left / max(1, concurrent))

    def config_for(self, index: int, elapsed: float) -> RunConfig:
        """The configuration the child of step ``index`` runs with."""
        seconds = self.duration(index, elapsed)
        if seconds is None:
            return self.config
        return self.config.with_(duration=round(seconds, 3), iterations=None)


def settled_at(history: list[tuple[float, str]]) -> float | None:
    """When the last diagnosis of ``history`` (seconds, diagnosis per phase) first stood and
    stayed; None when the run is clean."""
    if not history or history[-1][1] == Diagnosis.CLEAN:
        return None
    at = history[-1][0]
    for seconds, diagnosis in reversed(history):
        if diagnosis != history[-1][1]:
            break
        at = seconds
    return at
