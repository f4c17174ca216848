"""The interleaved phase: two-stage calls of several cases on one host thread, stage by stage.

Ordered pairs first (A.phase1, B.phase1, A.phase2, B.phase2: host-side state shared between
two-stage calls; a victim x aggressor matrix), in the seeded rounds of
:mod:`stress.pairs`, then seeded PCT schedules of three calls at the phase-1 / launch
boundaries (:mod:`stress.engine.replay.pct`). A mixin of
:class:`stress.engine.replay.phases.PhaseRunner`, whose plumbing (``_begin``, ``_inputs``,
``_emit``, ``_hang``) it uses.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from stress.config import RunConfig
from stress.corpus.parse import Case
from stress.engine.call.execute import run_interleaved
from stress.engine.replay.pct import GROUP, groups, pct_order
from stress.engine.replay.phase_budget import Budget
from stress.engine.replay.pool import Worker, WorkerPool
from stress.engine.replay.timed_call import TimedCall
from stress.engine.replay.twins import run_twin_pairs
from stress.pairs import MIN_PARTNERS, pair_rounds

__all__ = ["PARTNERS_UP_TO", "PCT_MIN_SCHEDULES", "PCT_SCHEDULES", "InterleavedPhase"]

#: PCT schedules in the interleaved phase without --budget; with it, at least this many:
PCT_SCHEDULES = 60
PCT_MIN_SCHEDULES = 30
#: The largest corpus whose every case the pair rounds interleave with >= k others under
#: --budget, whatever the share (k rounds of N / 2 pairs: ~0.5 s for 300 cases on 2 cores).
PARTNERS_UP_TO = 300


class InterleavedPhase(TimedCall):
    """``_phase_interleaved`` and its pair rounds and PCT schedules."""

    config: RunConfig
    cases: Sequence[Case]
    _confirmed: threading.Event

    def _phase_interleaved(self, pool: WorkerPool) -> None:
        """The pair rounds (:mod:`stress.pairs`), then PCT schedules of three calls
        (:mod:`stress.engine.replay.pct`). Under ``--budget`` the pairs take up to half the phase's
        share (never fewer than k rounds) and the schedules the rest; without it every pair,
        then :data:`PCT_SCHEDULES` schedules."""
        cases = [c for c in self.cases if not c.negative]
        # the time share: only under --budget or in a focused step (the scheduler sets the
        # duration); else every pair
        timed = self.config.budget_s is not None or self.config.confirm
        share = self.config.duration if timed else None

        def task(worker: Worker, rnd: int) -> None:
            started = time.monotonic()
            half = None if share is None else started + share / 2
            first = run_twin_pairs(  # each case with its twins first (stress.corpus.twins)
                cases, lambda k, g: self._interleave(worker, k, g), self._confirmed.is_set
            )
            i = self._pair_rounds(worker, cases, half, first)
            self._pct_schedules(worker, cases, i, None if share is None else started + share)

        pool.run(task, Budget(rounds=1))

    def _pair_rounds(
        self, worker: Worker, cases: Sequence[Case], until: float | None, first: int = 0
    ) -> int:
        """Ordered pairs round by round, numbered from ``first``; stop at ``until``, but not
        before k rounds in a corpus of up to :data:`PARTNERS_UP_TO` cases (a bigger one's k
        rounds outrun any share: the budget wins, and coverage says how many partners each case
        met). Returns the count so far."""
        i = first
        least = MIN_PARTNERS if len(cases) <= PARTNERS_UP_TO else 0
        for j, pairs in enumerate(pair_rounds(len(cases), self.config.seed)):
            for a, b in pairs:
                if j >= least and until is not None and time.monotonic() > until:
                    return i
                if self._confirmed.is_set():
                    return i
                self._interleave(worker, i, [cases[a], cases[b]])
                i += 1
        return i

    def _pct_schedules(
        self, worker: Worker, cases: Sequence[Case], first: int, until: float | None
    ) -> None:
        """PCT schedules of :data:`~stress.engine.replay.pct.GROUP` calls, numbered from
        ``first``."""
        if len(cases) < GROUP:
            return
        keys = [(c.op, json.dumps(c.params, sort_keys=True, default=str)) for c in cases]
        for s in itertools.count():
            if (until is None and s >= PCT_SCHEDULES) or self._confirmed.is_set():
                return
            if until is not None and s >= PCT_MIN_SCHEDULES and time.monotonic() > until:
                return
            rng = np.random.default_rng([self.config.seed, 13, s])
            group = [cases[g] for g in groups(keys, rng)]
            self._interleave(worker, first + s, group, order=pct_order(len(group), rng))

    def _interleave(self, worker: Worker, i: int, group: Sequence[Case], **extra: Any) -> None:
        """Phase 1 of every call of ``group`` before any launch (A.phase1, B.phase1, A.phase2,
        B.phase2 for a pair), or in the order ``extra['order']`` gives (a PCT schedule)."""
        a = group[0]
        self._begin(worker, case=a.id, aggressor=group[-1].id, round=i)
        ins = [self._inputs(c) for c in group]
        if self._report_unprepared("interleaved", i, group, ins):
            worker.end()
            return
        canary = self._canary()
        stuck = {"phase": "interleaved", "worker": 0, "case": a.id, "round": i}
        outcomes = self._timed_call(
            run_interleaved, worker, group, ins, canary=canary, stuck=stuck, **extra
        )
        worker.end()
        if len(group) == 2:
            b = group[1]
            for case, other, outcome, order in (
                (a, b, outcomes[0], "first"),
                (b, a, outcomes[1], "second"),
            ):
                self._emit(
                    "interleaved",
                    0,
                    i,
                    case,
                    outcome,
                    canary=canary,
                    aggressor=other.id,
                    order=order,
                )
            return
        for k, (case, outcome) in enumerate(zip(group, outcomes, strict=True)):
            others = [c.id for j, c in enumerate(group) if j != k]
            order = extra.get("order") or ()
            steps = [f"{group[c].id}.{step}" for c, step in order]
            self._emit(
                "interleaved",
                0,
                i,
                case,
                outcome,
                canary=canary,
                group=others,
                position=k,
                schedule=steps,
            )
