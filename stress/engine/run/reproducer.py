"""Shrinking a failing run to a minimal reproducer: the fewest cases whose phase still fails.

Interleaved failures are tried pair by pair from the interference matrix (worst cells first);
a failing mixed or isolated phase is shrunk with delta debugging (:func:`ddmin`) around its
first failing case, each trial a short run of that phase alone in a supervised child. The
result (the corpus written under ``<out>/repro/`` and the command that replays it) goes into the
run-end record and the report.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from stress.config import RunConfig
from stress.corpus import Case
from stress.corpus.shrink import ddmin, write_corpus
from stress.engine.isolation.messages import Line
from stress.grading.verdicts import grade_phase
from stress.records import CallRecord, PhaseVerdict, RunReport
from stress.report_sections import PairCell
from stress.vocabulary import Diagnosis, PhaseStatus, Verdict

__all__ = ["TRIAL_SECONDS", "Reproducer"]

TRIAL_SECONDS = 2.0  # budget of one trial run (and of the replay command)


class Reproducer:
    """Finds a minimal failing set of a run's ``cases`` under ``config``: each trial is a job
    run by ``run_job(job, on_record)`` (a supervised child), within ``budget`` seconds in all;
    ``say`` tells the user, ``env`` is the children's extra environment."""

    def __init__(
        self,
        config: RunConfig,
        cases: Sequence[Case],
        out: Path,
        baseline: str,
        *,
        budget: float,
        say: Callable[[str], None],
        run_job: Callable[[dict[str, Any], Callable[[Line], None]], Any],
        env: Mapping[str, str],
    ) -> None:
        self.config = config
        self.cases = list(cases)
        self.say = say
        self.run_job = run_job
        self.env = env
        self.baseline = baseline
        self.by_id = {c.id: c for c in self.cases}
        self.deadline = time.monotonic() + budget
        self.repro_dir = out / "repro"
        self.trial_corpus = self.repro_dir / "trial.toml"
        self.trials = 0
        self.allocator = "fresh"  # the allocator policy the failing phase ran under

    def find(self, report: RunReport) -> dict[str, Any] | None:
        """The reproducer of ``report``'s failing phase, or None when there is none to shrink."""
        phase = _failing_phase(report)
        if phase is None:
            return None
        victims = [c.id for c in phase.cases if c.verdict != Verdict.PASS and c.id in self.by_id]
        if not victims:
            return None
        self.repro_dir.mkdir(exist_ok=True)
        self.say(f"shrinking the failing {phase.name} phase to a minimal reproducer")
        stream = self._stream(phase)
        self.allocator = _allocator(phase, self.config)
        if phase.name == "interleaved":
            # a failing pair when one fails; else (a PCT schedule of three calls failed) the
            # smallest set of cases whose interleaved phase still fails
            chosen = self._pairs(report.interference.cells) or self._shrink(
                "interleaved", stream, self.by_id[victims[0]]
            )
        else:
            chosen = self._shrink(phase.name, stream, self.by_id[victims[0]])
        self.trial_corpus.unlink(missing_ok=True)
        if not chosen:
            return {
                "phase": phase.name,
                "verified": False,
                "trials": self.trials,
                "note": "no smaller failing set found within the shrink budget",
            }
        return self._result(phase.name, stream, chosen)

    # -- the search ------------------------------------------------------------------------
    def _stream(self, phase: PhaseVerdict) -> str:
        if "per-thread" in phase.variant:
            return "per-thread"
        return self.config.streams[0] if phase.name != "interleaved" else "shared"

    def _pairs(self, cells: tuple[PairCell, ...]) -> list[Case] | None:
        """The first (victim, aggressor) pair of the worst interference cells that still fails."""
        worst = sorted((c for c in cells if c.failures), key=lambda c: -c.failures)
        for cell in worst[:4]:
            pair = [self.by_id[cell.victim]]
            if cell.aggressor != cell.victim:
                pair.append(self.by_id[cell.aggressor])
            self.trials += 1
            if self.trial("interleaved", "shared", pair, cell.victim):
                return pair
        return None

    def _shrink(self, phase: str, stream: str, victim: Case) -> list[Case] | None:
        others = [] if phase == "isolated" else [c for c in self.cases if c.id != victim.id]

        def fails(subset: list[Case]) -> bool:
            if time.monotonic() > self.deadline:
                return False
            self.trials += 1
            return self.trial(phase, stream, subset, victim.id)

        if fails([victim]):
            return [victim]
        if others and time.monotonic() < self.deadline:
            chosen = ddmin(others, fails, keep=[victim])
            if len(chosen) == len(self.cases) and not fails(chosen):
                return None
            return chosen
        return None

    def trial(self, phase: str, stream: str, cases: list[Case], victim: str) -> bool:
        """Run ``phase`` on ``cases`` alone (in a child); True when ``victim`` still fails."""
        write_corpus(cases, self.trial_corpus)  # the child's corpus: it crosses a process
        # the trial corpus states its view variants itself (view = ...): none derived again
        config = replace(
            self.config, phases=(phase,), duration=TRIAL_SECONDS, iterations=None, variants=(),
            phase_allocator=self.allocator,
        )  # fmt: skip
        records: list[Line] = []
        job = {
            "kind": "phase",
            "phase": phase,
            "stream": stream,
            "config": config.to_json(),
            "corpus": [str(self.trial_corpus)],
            "control": [],
            "baseline": self.baseline,
        }
        result = self.run_job(job, records.append)
        if result.status in (PhaseStatus.CRASHED, PhaseStatus.HUNG):
            return True
        graded = grade_phase(phase, [r for r in records if isinstance(r, CallRecord)])
        return any(c.id == victim and c.verdict != Verdict.PASS for c in graded.cases)

    # -- the result ------------------------------------------------------------------------
    def _result(self, phase: str, stream: str, chosen: list[Case]) -> dict[str, Any]:
        corpus = write_corpus(
            chosen,
            self.repro_dir / "corpus.toml",
            f"minimal reproducer: {phase} fails with these {len(chosen)} case(s)",
        )
        replay = replace(
            self.config,
            phases=(phase,),
            streams=(stream,),
            duration=TRIAL_SECONDS,
            iterations=None,
            variants=(),  # the corpus keeps the variants it needs (view = ...)
            # found in recycled blocks: the replay runs there (and its fresh check)
            allocator="recycle" if self.allocator == "recycle" else "fresh",
        )
        command = " ".join(
            [
                "aclnn-stress run",
                f"--corpus {corpus}",
                "--control none",
                f"--baseline {self.baseline}",
                *replay.to_cli_args(),
            ]
        )
        faults = os.environ.get("ACLSIM_FAULTS") or self.env.get("ACLSIM_FAULTS")
        if faults:
            command = f"ACLSIM_FAULTS={faults} {command}"
        return {
            "phase": phase,
            "cases": [c.id for c in chosen],
            "corpus": str(corpus),
            "command": command,
            "verified": True,
            "trials": self.trials,
        }


#: The phases shrunk per diagnosis, in order of preference: a view-dependence's reproducer is
#: the failing view variant alone, serially (written with its ``view``).
_SHRUNK = {
    Diagnosis.SELF_RACE: ("isolated",),
    Diagnosis.CROSS_CALL_CONTAMINATION: ("interleaved", "mixed"),
    Diagnosis.VIEW_DEPENDENCE: ("serial",),
    Diagnosis.UNINITIALIZED_READ: ("serial",),  # serial calls alternate the prefill byte
    Diagnosis.ADDRESS_DEPENDENCE: ("shuffled",),  # its run in recycled blocks (_allocator)
    Diagnosis.EXECUTOR_REUSE: ("serial",),  # serial reps alternate the API mode (--modes)
    Diagnosis.MODE_DEPENDENCE: ("serial",),  # serial runs each case in every API mode
}


def _allocator(phase: PhaseVerdict, config: RunConfig) -> str:
    """The allocator policy ``phase`` ran under: named in its variant when it is not the
    run's own (stress.engine.run.schedule.plan), else the run's (fresh under ``both``)."""
    for word in phase.variant.split():
        if word.startswith("allocator="):
            return word.split("=", 1)[1]
    return "recycle" if config.allocator == "recycle" else "fresh"


def _failing_phase(report: RunReport) -> PhaseVerdict | None:
    """The phase to shrink: isolated for a self-race, interleaved (else mixed) for
    contamination, serial for a view-dependence or an uninitialized read; None for other
    diagnoses."""
    diagnosis = report.diagnosis
    names = _SHRUNK.get(diagnosis)
    if names is None:
        return None
    failing = [p for p in report.phases if p.verdict != Verdict.PASS]
    for name in names:
        phase = next((p for p in failing if p.name == name), None)
        if phase is not None:
            return phase
    return None
