"""The stress protocol's phases, run on one backend in one process.

``burst``       the fail-fast first stage: each case (and each control case) once serially
                against the baseline, then short barrier-aligned rounds on T threads that mix
                the corpus with the control, every third round one case on all threads.
``serial``      each case K times in one thread (after one unrecorded warm-up call):
                baseline check and determinism calibration.
``shuffled``    one thread, every case K times in a seeded random order: order dependence.
``interleaved`` one thread, ordered pairs (A, B): A.phase1, B.phase1, A.phase2, B.phase2 —
                host-side state shared between two-stage calls; gives a victim x aggressor
                matrix. Every pair, or under ``--budget`` seeded rounds with each case paired
                with >= k others (:mod:`stress.engine.pairs`); then seeded PCT schedules of
                three calls at the phase-1 / launch boundaries (:mod:`stress.engine.pct`).
``isolated``    each case alone on T threads (self-race).
``mixed``       all cases on T threads, barrier-aligned rounds (cross-call contamination).
``control``     the control corpus (aclnnAdd) under the same pool, context and stream policy.

Every call becomes a record passed to ``sink`` as soon as it finishes. This module knows
nothing of child processes; :mod:`stress.engine.isolate` runs each phase in one and supervises it.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stress import acl
from stress.baseline.store import Baseline
from stress.config import CONCURRENT_PHASES, RunConfig
from stress.corpus.parse import Case
from stress.engine.execute import CallTimeout, Outcome, judge, run_call, run_interleaved
from stress.engine.inputs import InputCache
from stress.engine.pairs import MIN_PARTNERS, mixed_pick, pair_rounds
from stress.engine.pct import GROUP, groups, pct_order
from stress.engine.replay import Budget, PoolAborted, Worker, WorkerPool
from stress.errors import ConfigError
from stress.model import PhaseStatus, Status
from stress.records import CallRecord

__all__ = ["PhaseRunner"]


#: Receives each call record, and with ``announce`` a ``begin`` notice (a dict) as a call starts.
Sink = Callable[[CallRecord | dict[str, Any]], None]

#: PCT schedules in the interleaved phase without --budget; with it, at least this many:
PCT_SCHEDULES = 60
PCT_MIN_SCHEDULES = 30


@dataclass
class PhaseRunner:
    """Runs phases on one device of the loaded runtime, streaming call records to ``sink``."""

    runtime: acl.Runtime
    config: RunConfig
    cases: Sequence[Case]
    control: Sequence[Case]
    baseline: Baseline | None
    sink: Sink
    announce: bool = False  # also send a "begin" record when a call starts (for supervisors)
    _seq: itertools.count = field(default_factory=itertools.count, init=False)
    # set at the first failing call of a confirming step (config.confirm): the phase ends
    _confirmed: threading.Event = field(default_factory=threading.Event, init=False)

    def __post_init__(self) -> None:
        if self.config.focus:  # a focused diagnostic step: only the cases that failed
            focus = set(self.config.focus)
            self.cases = [c for c in self.cases if c.id in focus]
        self.device = self.runtime.device(self.config.device)
        self.runtime.set_deterministic(self.config.deterministic)
        ctx = self.device.default_context
        ctx.bind()
        self._input_stream = ctx.create_stream()
        self.inputs = InputCache(ctx, self._input_stream)

    # -- plumbing ------------------------------------------------------------------------
    def prepare_inputs(self, cases: Sequence[Case]) -> None:
        """Generate the host inputs of every case this runner runs now (serially, before any
        concurrency); ``cases`` not in a focused step's set are left out."""
        runs = {c.id for c in (*self.cases, *self.control)}
        for case in cases:
            if case.id in runs:
                self.inputs.prepare(case)

    def _emit(
        self, phase: str, worker: int, rnd: int, case: Case, outcome: Outcome, **extra: Any
    ) -> CallRecord:
        cb = self.baseline.cases.get(case.id) if self.baseline else None
        canary = extra.pop("canary", self.config.canary)
        seq = next(self._seq)
        rec = judge(
            case,
            outcome,
            cb,
            phase=phase,
            canary=canary,
            seq=seq,
            worker=worker,
            round=rnd,
            **extra,
        )
        self.sink(rec)
        if self.config.confirm and rec.failed:
            self._confirmed.set()
        return rec

    def _budget(self, budget: Budget) -> Budget:
        """``budget``, ending at the first failing call too when the step confirms."""
        if not self.config.confirm:
            return budget
        return _UntilConfirmed(budget.seconds, budget.rounds, self._confirmed)

    def _pool(self, threads: int, stream: str) -> WorkerPool:
        return WorkerPool(
            self.device,
            threads,
            context_policy=self.config.context,
            stream_policy=stream,
            call_timeout_s=self.config.call_timeout,
        )

    def _hang(self, phase: str, detail: dict[str, Any]) -> None:
        for stuck in detail.get("stuck", []):
            self.sink(
                CallRecord(
                    phase=phase,
                    seq=next(self._seq),
                    worker=stuck.get("worker"),
                    round=stuck.get("round"),
                    case=stuck.get("case"),
                    status=Status.HANG,
                    match=False,
                    message=f"call did not finish within {detail.get('timeout_s')} s "
                    f"(in flight: {_in_flight(detail)})",
                )
            )

    def _begin(self, worker: Worker, **what: Any) -> None:
        worker.begin(**what)
        if self.announce:
            self.sink({"type": "begin", "worker": worker.index, **what})

    def _inputs(self, case: Case) -> dict[str, np.ndarray] | Outcome:
        """The case's inputs, or the out-of-memory outcome of generating them."""
        start = time.perf_counter()
        try:
            return self.inputs.get(case)
        except MemoryError as exc:
            return Outcome.host_out_of_memory(exc, start)
        except acl.AclMemoryError as exc:
            return Outcome.failed(exc, start)

    def _report_unprepared(
        self, phase: str, rnd: int, cases: Sequence[Case], inputs: Sequence[Any]
    ) -> bool:
        """Emit the out-of-memory outcome of each case whose inputs could not be made; whether
        there was one (the calls are then skipped)."""
        failed = [(c, o) for c, o in zip(cases, inputs, strict=True) if isinstance(o, Outcome)]
        for case, outcome in failed:
            self._emit(phase, 0, rnd, case, outcome)
        return bool(failed)

    def _call(self, phase: str, worker: Worker, rnd: int, case: Case, **extra: Any) -> None:
        self._begin(worker, case=case.id, round=rnd)
        inputs = self._inputs(case)
        try:
            outcome = (
                inputs
                if isinstance(inputs, Outcome)
                else run_call(
                    worker.context,
                    worker.stream,
                    case,
                    inputs,
                    canary=extra.get("canary", self.config.canary),
                    timeout_ms=self.config.call_timeout_ms,
                )
            )
        except CallTimeout:
            detail = {
                "timeout_s": self.config.call_timeout,
                "stuck": [{"worker": worker.index, "case": case.id, "round": rnd}],
            }
            self._hang(phase, detail)
            raise PoolAborted(Status.HANG, {**detail, "reported": True}) from None
        worker.end()
        self._emit(phase, worker.index, rnd, case, outcome, **extra)

    def run(self, phase: str, stream: str = "shared") -> tuple[str, str]:
        """Run one phase; returns (status, detail) with status ``done`` or ``hung``."""
        fn = getattr(self, f"_phase_{phase}")
        threads = self.config.threads if phase in CONCURRENT_PHASES else 1
        pool = self._pool(
            threads,
            stream
            if phase in CONCURRENT_PHASES
            else ("per-thread" if self.config.context == "per-thread" else "shared"),
        )
        try:
            fn(pool)
        except PoolAborted as exc:
            if exc.reason == Status.HANG:
                if not exc.detail.get("reported"):
                    self._hang(phase, exc.detail)
                return PhaseStatus.HUNG, f"a call did not finish: {_in_flight(exc.detail)}"
            raise
        pool.close()
        return PhaseStatus.DONE, ""

    # -- phases --------------------------------------------------------------------------
    def _serial_pass(
        self, pool: WorkerPool, phase: str, order: Sequence[tuple[Case, int]], warmup: bool
    ) -> None:
        calls = list(order)

        def task(worker: Worker, rnd: int) -> None:
            last = None
            for i, (case, rep) in enumerate(calls):
                if warmup and case is not last:
                    self._call(phase, worker, i, case, warmup=True, rep=-1)
                self._call(phase, worker, i, case, rep=rep)
                last = case

        pool.run(task, Budget(rounds=1))

    def _phase_serial(self, pool: WorkerPool) -> None:
        order = [(c, k) for c in self.cases for k in range(self.config.repeats)]
        self._serial_pass(pool, "serial", order, warmup=True)

    def _phase_shuffled(self, pool: WorkerPool) -> None:
        order = [(c, k) for c in self.cases for k in range(self.config.repeats)]
        rng = np.random.default_rng([self.config.seed, 2])
        order = [order[i] for i in rng.permutation(len(order))]
        self._serial_pass(pool, "shuffled", order, warmup=False)

    def _phase_interleaved(self, pool: WorkerPool) -> None:
        """The pair rounds (:mod:`stress.engine.pairs`), then PCT schedules of three calls
        (:mod:`stress.engine.pct`). Under ``--budget`` the pairs take up to half the phase's
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
            i = self._pair_rounds(worker, cases, half)
            self._pct_schedules(worker, cases, i, None if share is None else started + share)

        pool.run(task, Budget(rounds=1))

    def _pair_rounds(self, worker: Worker, cases: Sequence[Case], until: float | None) -> int:
        """Ordered pairs round by round; after k rounds stop at ``until``. Returns the count."""
        i = 0
        for j, pairs in enumerate(pair_rounds(len(cases), self.config.seed)):
            for a, b in pairs:
                if j >= MIN_PARTNERS and until is not None and time.monotonic() > until:
                    return i
                if self._confirmed.is_set():
                    return i
                self._interleave(worker, i, [cases[a], cases[b]])
                i += 1
        return i

    def _pct_schedules(
        self, worker: Worker, cases: Sequence[Case], first: int, until: float | None
    ) -> None:
        """PCT schedules of :data:`~stress.engine.pct.GROUP` calls, numbered from ``first``."""
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
        try:
            outcomes = run_interleaved(
                worker.context,
                worker.stream,
                group,
                ins,
                canary=self.config.canary,
                timeout_ms=self.config.call_timeout_ms,
                **extra,
            )
        except CallTimeout:
            detail = {
                "timeout_s": self.config.call_timeout,
                "stuck": [{"worker": 0, "case": a.id, "round": i}],
            }
            self._hang("interleaved", detail)
            raise PoolAborted(Status.HANG, {**detail, "reported": True}) from None
        worker.end()
        if len(group) == 2:
            b = group[1]
            for case, other, outcome, order in (
                (a, b, outcomes[0], "first"),
                (b, a, outcomes[1], "second"),
            ):
                self._emit("interleaved", 0, i, case, outcome, aggressor=other.id, order=order)
            return
        for k, (case, outcome) in enumerate(zip(group, outcomes, strict=True)):
            others = [c.id for j, c in enumerate(group) if j != k]
            order = extra.get("order") or ()
            steps = [f"{group[c].id}.{step}" for c, step in order]
            self._emit("interleaved", 0, i, case, outcome, group=others, position=k, schedule=steps)

    def _phase_isolated(self, pool: WorkerPool) -> None:
        for case in self.cases:
            if self._confirmed.is_set():
                return

            def task(worker: Worker, rnd: int, case: Case = case) -> None:
                self._call("isolated", worker, rnd, case)

            def fill(worker: Worker, rnd: int, k: int, case: Case = case) -> None:
                self._call("isolated", worker, rnd, case, fill=k)

            pool.run(task, self._budget(self.config.budget(share=len(self.cases))), fill=fill)

    def _mix(self, pool: WorkerPool, phase: str, cases: Sequence[Case], salt: int) -> None:
        n = len(cases)
        seed = self.config.seed

        threads = self.config.threads

        def task(worker: Worker, rnd: int) -> None:
            self._call(
                phase, worker, rnd, cases[mixed_pick(n, threads, seed, salt, rnd, worker.index)]
            )

        def fill(worker: Worker, rnd: int, k: int) -> None:
            pick = np.random.default_rng([seed, salt, rnd, worker.index, k + 1]).integers(n)
            self._call(phase, worker, rnd, cases[int(pick)], fill=k)

        pool.run(task, self._budget(self.config.budget()), fill=fill)

    def _phase_mixed(self, pool: WorkerPool) -> None:
        self._mix(pool, "mixed", self.cases, 5)

    def _phase_burst(self, pool: WorkerPool) -> None:
        """Cheap and sensitive first: a serial baseline check of every case's first call, then
        mixed rounds with the control interleaved and self-race rounds (one case everywhere)."""
        everything = [*self.cases, *self.control]
        if not everything:
            return

        def serial(worker: Worker, rnd: int) -> None:
            for i, case in enumerate(everything):  # the first call of each case, no warm-up
                self._call("burst", worker, i, case, rep=0)

        pool.run(serial, Budget(rounds=1), threads=1)
        n, seed = len(everything), self.config.seed

        def pick(worker: Worker, rnd: int) -> Case:
            if rnd % 3 == 2:  # a self-race round: one case on every thread
                return self.cases[(rnd // 3) % len(self.cases)] if self.cases else everything[0]
            perm = np.random.default_rng([seed, 7, rnd]).permutation(n)
            return everything[perm[worker.index % n]]

        def task(worker: Worker, rnd: int) -> None:
            self._call("burst", worker, rnd, pick(worker, rnd))

        def fill(worker: Worker, rnd: int, k: int) -> None:
            i = np.random.default_rng([seed, 7, rnd, worker.index, k + 1]).integers(n)
            self._call("burst", worker, rnd, everything[int(i)], fill=k)

        pool.run(task, self.config.budget(), fill=fill)

    def _phase_control(self, pool: WorkerPool) -> None:
        if not self.control:
            raise ConfigError("the control phase needs a control corpus (--control PATH)")
        self._mix(pool, "control", self.control, 6)


@dataclass
class _UntilConfirmed(Budget):
    """A budget that also ends once ``found`` is set (a confirming step's first failure)."""

    found: threading.Event = field(default_factory=threading.Event)

    def exhausted(self, started: float, rounds_done: int) -> bool:
        return self.found.is_set() or super().exhausted(started, rounds_done)


def _in_flight(detail: dict[str, Any]) -> str:
    stuck = detail.get("stuck") or detail.get("in_flight") or []
    return ", ".join(f"{s.get('case')} (worker {s.get('worker')})" for s in stuck) or "unknown"
