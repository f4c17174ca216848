"""One step of a run in the journal: the job its child runs (:func:`phase_job`), its
``phase-start`` line, its call records stamped and written as they arrive, its ``phase-end``
line (:func:`run_step`); and the console line of the run's first failing call
(:func:`first_failure_line`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from stress.config import RunConfig
from stress.engine.isolation.messages import Line
from stress.engine.isolation.supervise import ChildResult
from stress.engine.run.phase_end import phase_end
from stress.engine.run.schedule import Step
from stress.engine.run.step_batch import Held
from stress.journal.results import ResultWriter
from stress.records import CallRecord, PhaseResult
from stress.session_ui import SessionUI
from stress.vocabulary import PhaseStatus

__all__ = ["first_failure_line", "phase_job", "run_step"]


def phase_job(
    phase: str,
    stream: str,
    config: RunConfig,
    corpus: Sequence[str],
    control: Sequence[str],
    baseline: str,
) -> dict[str, Any]:
    """The job of one phase child (:mod:`stress.engine.isolation.jobs`); ``control`` empty
    when the run has no control corpus."""
    return {
        "kind": "phase",
        "phase": phase,
        "stream": stream,
        "config": config.to_json(),
        "corpus": list(corpus),
        "control": [str(c) for c in control],
        "baseline": baseline,
    }


def first_failure_line(rec: CallRecord) -> str:
    """``first failure: <s> s after the start, case <id> in <phase> (<variant>): <status>``."""
    where = rec.phase + (f" ({rec.variant})" if rec.variant else "")
    return (
        f"first failure: {rec.elapsed:.2f} s after the start, case {rec.case} "
        f"in {where}: {rec.status}"
    )


def run_step(
    writer: ResultWriter,
    ui: SessionUI,
    step: Step,
    n_cases: int,
    config: RunConfig,
    run: Callable[[Callable[..., None]], ChildResult],
    t0: float,
    on_call: Callable[[CallRecord], None],
    held: Held | None = None,
) -> str:
    """Run ``step`` (``run(on_record)`` runs its child), or take the ``held`` one that ran ahead
    (:mod:`stress.engine.run.step_batch`): its records are written now, each stamped with the
    time it arrived; every call record goes to ``writer``, ``ui`` and ``on_call``. Returns
    the step's status (the ``phase-end`` line's)."""
    phase, variant = step.phase, step.variant
    start = {"phase": phase, "variant": variant, "stream": step.stream, "cases": n_cases}
    writer.write({"type": "phase-start", **start})
    ui.phase_start(phase, variant, n_cases)
    calls = 0
    started = time.monotonic()

    def on_record(rec: Line, at: float | None = None) -> None:
        nonlocal calls
        if not isinstance(rec, CallRecord):
            return
        calls += 1
        at = time.monotonic() if at is None else at
        call = rec.replace(
            variant=variant, elapsed=round(at - t0, 4), allocator=config.phase_allocator
        )
        writer.write(call)
        ui.record(call)
        on_call(call)

    status, detail, extra = PhaseStatus.INTERRUPTED, "interrupted by the user", {}
    try:
        if held is None:
            result = run(on_record)
        else:
            for at, rec in held.records:
                on_record(rec, at)
            result = held.result
        status, detail, extra = phase_end(result, phase, lambda: calls, n_cases, config, on_record)
    finally:
        seconds = held.seconds if held else time.monotonic() - started
        writer.write(PhaseResult(phase, variant, status, detail, calls, round(seconds, 3), **extra))
        writer.sync()
        ui.phase_end(phase, variant, status, calls, seconds)
    return status
