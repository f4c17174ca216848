"""The fail-fast ``burst`` phase: free-running calls of random cases (the control among them;
every third window of calls drawn from one variant kind), then barrier-aligned rounds in turn
mixed, drawn from one variant kind (the view variants, the edge sizes, ...:
:func:`~stress.engine.replay.sampling.variant_groups`) and self-race (one case on every thread,
the cases past the size thresholds first), then one serial call of every case. A mixin of
:class:`stress.engine.replay.phases.PhaseRunner`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from stress.config import RunConfig
from stress.corpus.parse import Case
from stress.engine.replay.phase_budget import Budget, phase_budget, split_budget
from stress.engine.replay.pool import Worker, WorkerPool
from stress.engine.replay.sampling import thresholds, variant_groups

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
    _failing: threading.Event

    def _phase_burst(self, pool: WorkerPool) -> None:
        """Cheap and sensitive first: free-running calls of random cases (the control among
        them; every third window from one variant kind), then aligned rounds — mixed, drawn
        from one variant kind (views, edge sizes, ...), self-race (one case everywhere) in
        turn — then one serial call of every case (a fault that needs no concurrency)."""
        everything = [*self.cases, *self.control]
        if not everything:
            return
        n, seed, width = len(everything), self.config.seed, pool.threads
        # every third window of calls (and every third aligned round) draws from one variant
        # kind at a time; the self-race rounds take the cases past the size thresholds first
        groups = variant_groups(self.cases)  # (sampling.py)
        big = {c.id for c in thresholds(self.cases)}
        alone = sorted(self.cases, key=lambda c: c.id not in big)

        def free(worker: Worker, k: int) -> None:  # k numbers the calls as they start
            w = k // width  # a window: as many calls as threads
            group = groups[(w // 3) % len(groups)] if w % 3 == 1 and groups else None
            self._call("burst", worker, w, self._opening_pick(seed, k, group))

        opening, rest = split_budget(phase_budget(self.config), BURST_OPENING)
        offset = pool.run_free(free, self._budget(opening))

        def pick(worker: Worker, rnd: int) -> Case:
            if rnd % 3 == 2:  # a self-race round: one case on every thread
                return alone[(rnd // 3) % len(alone)] if alone else everything[0]
            among = groups[(rnd // 3) % len(groups)] if rnd % 3 == 1 and groups else everything
            perm = np.random.default_rng([seed, 7, rnd]).permutation(len(among))
            return among[perm[worker.index % len(among)]]

        def task(worker: Worker, rnd: int) -> None:
            self._call("burst", worker, rnd + offset, pick(worker, rnd))

        def fill(worker: Worker, rnd: int, k: int) -> None:
            i = np.random.default_rng([seed, 7, rnd, worker.index, k + 1]).integers(n)
            self._call("burst", worker, rnd + offset, everything[int(i)], fill=k)

        # once a call failed, fills only within the rounds' time: it still runs (the focused
        # steps take the failing set it finds), but a fill past it only delays them
        pool.run(task, self._budget(rest), fill=fill, fill_within=self._failing.is_set)

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

    def _opening_pick(self, seed: int, k: int, group: Sequence[Case] | None = None) -> Case:
        """The case of the burst's free-running call ``k``: one of ``group`` when given (a
        window drawn from one variant kind), else a corpus case, or with probability
        :data:`OPENING_CONTROL_SHARE` a control case (the control runs alongside; its cheap
        calls would otherwise thin out the corpus's overlaps)."""
        rng = np.random.default_rng([seed, 7, k])
        pool = group or self.cases
        if not pool or (not group and self.control and rng.random() < OPENING_CONTROL_SHARE):
            pool = self.control
        return pool[int(rng.integers(len(pool)))]
