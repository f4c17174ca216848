"""The focused diagnostic steps' single-threaded passes: a focused serial runs every case it
names whatever its deadline; a focused shuffled takes the failing cases' calls first, each
after another case's, and ends at its deadline once they ran."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

from stress.config import RunConfig
from stress.engine.replay.phases import PhaseRunner
from stress.engine.replay.sampling import CHUNK


class _Pool:
    """One worker running the pass at once (no threads, no backend)."""

    def run(self, task: Any, budget: Any, **kw: Any) -> None:
        task(SimpleNamespace(index=0), 0)


def _runner(config: RunConfig, ids: list[str]) -> tuple[PhaseRunner, list[tuple[str, Any]]]:
    runner = object.__new__(PhaseRunner)  # the passes only: no runtime, no device
    calls: list[tuple[str, Any]] = []
    runner.config = config
    runner.cases = [SimpleNamespace(id=i) for i in ids]
    runner._confirmed = threading.Event()
    runner._failing = threading.Event()
    runner._call = lambda phase, worker, rnd, case, **extra: calls.append(  # type: ignore[method-assign]
        (case.id, extra.get("rep"))
    )
    return runner, calls


def test_a_focused_serial_runs_every_case_it_names_past_its_deadline() -> None:
    ids = [f"c{k}" for k in range(20)]  # more than a sample's MIN_CASES
    config = RunConfig(budget_s=20.0, duration=1e-6, focus=tuple(ids))
    runner, calls = _runner(config, ids)
    runner._phase_serial(_Pool())
    reps = [c for c in calls if c[1] != -1]  # the warm-ups aside
    assert sorted({c for c, _ in reps}) == sorted(ids)
    # every case its serial repeats: K, or one per API mode when there are more modes
    assert len(reps) == len(ids) * max(config.repeats, len(config.modes))


def test_a_focused_shuffle_runs_the_failing_cases_after_others_then_stops() -> None:
    ids = [f"c{k}" for k in range(30)]
    failing = ("c7", "c23")
    config = RunConfig(budget_s=20.0, duration=1e-6, first=failing, seed=4)
    runner, calls = _runner(config, ids)
    runner._phase_shuffled(_Pool())
    mine = [k for k, (c, _) in enumerate(calls) if c in failing]
    assert len(mine) == len(failing) * config.repeats  # every call of theirs ran
    assert all(k > 0 and calls[k - 1][0] not in failing for k in mine)  # each after another
    assert len(calls) == 2 * len(mine)  # and then the deadline (long past) ended the step
    unfocused = RunConfig(budget_s=20.0, duration=1e-6, seed=4)
    runner, calls = _runner(unfocused, ids)
    runner._phase_shuffled(_Pool())
    assert len({c for c, _ in calls}) == CHUNK  # a plain sample: its first chunk, whole
