"""The fail-fast ``burst`` phase: free-running calls of random cases (the control among them),
then barrier-aligned mixed rounds with self-race rounds (one case on every thread), then one
serial call of every case. A mixin of :class:`stress.engine.replay.phases.PhaseRunner`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from stress.config import RunConfig
from stress.corpus.parse import Case
from stress.engine.replay.phase_budget import Budget, phase_budget, split_budget
from stress.engine.replay.pool import Worker, WorkerPool

__all__ = ["BURST_OPENING", "OPENING_CONTROL_SHARE", "BurstPhase"]

#: The share of the burst's budget spent on free-running calls before its aligned rounds.
BURST_OPENING = 0.5
#: The share of the burst's free-running calls that go to the control corpus.
OPENING_CONTROL_SHARE = 0.1


class BurstPhase:
    """``_phase_burst`` and the pick of its free-running calls."""

    config: RunConfig
    cases: Sequence[Case]
    control: Sequence[Case]

    # the runner's (annotations only: nothing here shadows them in the runner's MRO)
    _call: Callable[..., None]
    _budget: Callable[[Budget], Budget]

    def _phase_burst(self, pool: WorkerPool) -> None:
        """Cheap and sensitive first: free-running calls of random cases (the control among
        them), then aligned mixed rounds with self-race rounds (one case everywhere), then one
        serial call of every case (a fault that needs no concurrency)."""
        everything = [*self.cases, *self.control]
        if not everything:
            return
        n, seed, width = len(everything), self.config.seed, pool.threads

        def free(worker: Worker, k: int) -> None:  # k numbers the calls as they start
            self._call("burst", worker, k // width, self._opening_pick(seed, k))

        opening, rest = split_budget(phase_budget(self.config), BURST_OPENING)
        offset = pool.run_free(free, self._budget(opening))

        def pick(worker: Worker, rnd: int) -> Case:
            if rnd % 3 == 2:  # a self-race round: one case on every thread
                return self.cases[(rnd // 3) % len(self.cases)] if self.cases else everything[0]
            perm = np.random.default_rng([seed, 7, rnd]).permutation(n)
            return everything[perm[worker.index % n]]

        def task(worker: Worker, rnd: int) -> None:
            self._call("burst", worker, rnd + offset, pick(worker, rnd))

        def fill(worker: Worker, rnd: int, k: int) -> None:
            i = np.random.default_rng([seed, 7, rnd, worker.index, k + 1]).integers(n)
            self._call("burst", worker, rnd + offset, everything[int(i)], fill=k)

        pool.run(task, self._budget(rest), fill=fill)

        def serial(worker: Worker, rnd: int) -> None:
            for i, case in enumerate(everything):  # one call of each case, no warm-up
                self._call("burst", worker, i, case, rep=0)

        pool.run(serial, Budget(rounds=1), threads=1)

    def first_use(self) -> list[Case]:
        """The burst's cases in the order its calls first need them: the free-running calls'
        picks (as many as it takes to meet every case, at most a few per case), then the
        rest as the corpus lists them."""
        everything = [*self.cases, *self.control]
        order: dict[str, Case] = {}
        for k in range(4 * len(everything) + 64):
            if len(order) == len(everything):
                break
            case = self._opening_pick(self.config.seed, k)
            order.setdefault(case.id, case)
        for case in everything:
            order.setdefault(case.id, case)
        return list(order.values())

    def _opening_pick(self, seed: int, k: int) -> Case:
        """The case of the burst's free-running call ``k``: a corpus case, or with probability
        :data:`OPENING_CONTROL_SHARE` a control case (the control runs alongside; its cheap
        calls would otherwise thin out the corpus's overlaps)."""
        rng = np.random.default_rng([seed, 7, k])
        pool = self.cases
        if not pool or (self.control and rng.random() < OPENING_CONTROL_SHARE):
            pool = self.control
        return pool[int(rng.integers(len(pool)))]
