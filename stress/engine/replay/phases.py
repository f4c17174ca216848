"""The stress protocol's phases, run on one backend in one process.

``burst``       the fail-fast first stage: each case (and each control case) once serially
                against the baseline, then short barrier-aligned rounds on T threads that mix
                the corpus with the control, every third round one case on all threads.
``serial``      each case K times (at least once per API mode) in one thread (after one
                unrecorded warm-up call):
                baseline check and determinism calibration.
``shuffled``    one thread, every case K times in a seeded random order: order dependence.
``interleaved`` one thread, ordered pairs (A, B): A.phase1, B.phase1, A.phase2, B.phase2 —
                host-side state shared between two-stage calls; gives a victim x aggressor
                matrix. Every pair, or under ``--budget`` seeded rounds with each case paired
                with >= k others (:mod:`stress.pairs`); then seeded PCT schedules of
                three calls at the phase-1 / launch boundaries (:mod:`stress.engine.replay.pct`);
                in :mod:`stress.engine.replay.interleave`.
``isolated``    each case alone on T threads (self-race).
``mixed``       all cases on T threads, barrier-aligned rounds (cross-call contamination),
                at least one epoch (every case dealt once, :mod:`stress.pairs`).
``control``     the control corpus (aclnnAdd) under the same pool, context and stream policy.

Under ``--budget`` serial, shuffled and isolated run a seeded sample of the cases that fits
their share (:mod:`.sampling`). A focused step (:func:`stress.engine.run.schedule.focus_steps`)
runs the named cases to a first failing call, its workers' fill calls within its seconds
(:meth:`PhaseRunner._timely`). Memory: fresh or recycled (:mod:`.memory`).

Every call becomes a record passed to ``sink`` as soon as it finishes. This module knows nothing
of child processes (:mod:`stress.engine.isolation.supervise` runs each phase in one).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stress import acl
from stress.baseline.store import Baseline
from stress.config import CONCURRENT_PHASES, RunConfig
from stress.corpus.parse import Case
from stress.engine.call.execute import run_call
from stress.engine.call.inputs import InputCache
from stress.engine.replay.burst import BurstPhase
from stress.engine.replay.hang_rule import HangReport, hang_rule_for
from stress.engine.replay.interleave import InterleavedPhase
from stress.engine.replay.lazy_inputs import LazyInputs
from stress.engine.replay.memory import RecyclingMemory
from stress.engine.replay.modes import ModeCalls
from stress.engine.replay.phase_budget import Budget, phase_budget
from stress.engine.replay.pool import PoolAborted, Worker, WorkerPool
from stress.engine.replay.sampling import (
    MIN_CASES,
    AtLeastRounds,
    UntilConfirmed,
    after_others,
    case_chunks,
    thresholds,
)
from stress.errors import ConfigError
from stress.grading.canaries import call_canary
from stress.grading.judge import Outcome, judge
from stress.pairs import epoch_rounds, mixed_pick
from stress.records import CallBegin, CallRecord
from stress.vocabulary import PhaseStatus, Status

__all__ = ["PhaseRunner"]


#: Receives each call record, and with ``announce`` a ``begin`` notice (a dict) as a call starts.
Sink = Callable[[CallRecord | CallBegin], None]


@dataclass
class PhaseRunner(BurstPhase, InterleavedPhase, RecyclingMemory, ModeCalls, LazyInputs):
    """Runs phases on one device of the loaded runtime, streaming call records to ``sink``."""

    runtime: acl.Runtime
    config: RunConfig
    cases: Sequence[Case]
    control: Sequence[Case]
    baseline: Baseline | None
    sink: Sink
    announce: bool = False  # also send a "begin" record when a call starts (for supervisors)
    _seq: itertools.count = field(default_factory=itertools.count, init=False)
    # whose turn it is for the second canary (stress.grading.canaries.call_canary)
    _turn: itertools.count = field(default_factory=itertools.count, init=False)
    # set at the first failing call of a confirming step (config.confirm): the phase ends
    _confirmed: threading.Event = field(default_factory=threading.Event, init=False)
    # set at the phase's first failing call (the burst then fills its rounds only in time)
    _failing: threading.Event = field(default_factory=threading.Event, init=False)

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
    def _emit(
        self, phase: str, worker: int, rnd: int, case: Case, outcome: Outcome, **extra: Any
    ) -> CallRecord:
        # a view variant is graded against its contiguous twin's baseline (view invariance)
        cb = self.baseline.cases.get(case.reference) if self.baseline else None
        canary = extra.pop("canary", self.config.canary)
        seq = next(self._seq)
        rec = judge(
            case,
            outcome,
            cb,
            phase=phase,
            canary=canary,
            run_canary=self.config.canary,
            seq=seq,
            worker=worker,
            round=rnd,
            **extra,
        )
        self.sink(rec)
        if rec.failed and not rec.warmup:
            self._failing.set()
            if self.config.confirm:
                self._confirmed.set()
        return rec

    def _timely(self) -> bool:
        """Whether the workers fill a round only within its seconds (:meth:`WorkerPool.run`):
        in a focused step (it is short; the burst once a call failed: :mod:`.burst`)."""
        return self.config.confirm

    def _budget(self, budget: Budget) -> Budget:
        """``budget``, ending at the first failing call too when the step confirms."""
        if self.config.confirm:
            budget = UntilConfirmed(budget.seconds, budget.rounds, self._confirmed)
        return self._net(budget)  # a lazy phase's pauses to make inputs not counted

    def _pool(self, threads: int, stream: str) -> WorkerPool:
        return WorkerPool(
            self.device,
            threads,
            context_policy=self.config.context,
            stream_policy=stream,
            call_timeout_s=self.config.call_timeout,
            hang_rule=hang_rule_for(self.config, [*self.cases, *self.control], self.baseline),
        )

    def _hang(self, phase: str, hang: HangReport) -> None:
        for stuck in hang.stuck:
            self.sink(
                CallRecord(
                    phase=phase,
                    seq=next(self._seq),
                    worker=stuck.call.worker,
                    round=stuck.call.round,
                    case=stuck.call.case,  # type: ignore[arg-type]
                    status=Status.HANG,
                    match=False,
                    message=f"call did not finish within {hang.timeout_s} s"
                    f"{hang.note(stuck)} (in flight: {hang.names()})",
                )
            )

    def _begin(self, worker: Worker, **what: Any) -> None:
        worker.begin(**what)
        if self.announce and worker.in_flight is not None:
            self.sink(worker.in_flight)

    def _report_unprepared(
        self, phase: str, rnd: int, cases: Sequence[Case], inputs: Sequence[Any]
    ) -> bool:
        """Emit the out-of-memory outcome of each case whose inputs could not be made; whether
        there was one (the calls are then skipped)."""
        failed = [(c, o) for c, o in zip(cases, inputs, strict=True) if isinstance(o, Outcome)]
        for case, outcome in failed:
            self._emit(phase, 0, rnd, case, outcome)
        return bool(failed)

    def _plain_call(self, phase: str, worker: Worker, rnd: int, case: Case, **extra: Any) -> None:
        self._begin(worker, case=case.id, round=rnd)
        inputs = self._inputs(case, worker)
        canary = extra.pop("canary", None)
        if canary is None:
            canary = self._canary()
        stuck = {"phase": phase, "worker": worker.index, "case": case.id, "round": rnd}
        if isinstance(inputs, Outcome):
            outcome = inputs
        else:
            outcome = self._timed_call(
                run_call, worker, case, inputs, canary=canary, stuck=stuck,
                allocator=self.recycler(),
            )  # fmt: skip
            self._left()
        worker.end()
        self._emit(phase, worker.index, rnd, case, outcome, canary=canary, **extra)

    def _canary(self) -> int:
        """The next call's canary: the run's and the second one in turn."""
        return call_canary(self.config.canary, next(self._turn))

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
        gate = self._lazily(phase)
        try:
            fn(pool)
        except PoolAborted as exc:
            if exc.reason == Status.HANG and exc.hang is not None:
                if not exc.hang.reported:
                    self._hang(phase, exc.hang)
                return PhaseStatus.HUNG, f"a call did not finish: {exc.hang.names()}"
            raise
        finally:
            if gate is not None:  # threads still waiting at it give up
                gate.close()
        pool.close()
        self.close_launcher()
        self.release_memory()
        return PhaseStatus.DONE, ""

    # -- phases --------------------------------------------------------------------------
    def _samples(self) -> bool:
        """Whether the phase takes a seeded sample of its cases: under --budget, or a focused
        step with cases to take first; never a step focused on named cases (it runs them)."""
        sampled = self.config.budget_s is not None or bool(self.config.first)
        return sampled and not self.config.focus

    def _sampled(self) -> float | None:
        """The deadline of a phase that samples its cases (under --budget, or a focused step
        with cases to take ``first``), else None."""
        if not self._samples() or self.config.duration is None:
            return None
        return time.monotonic() + self.config.duration

    def _serial_pass(
        self, pool: WorkerPool, phase: str, chunks: Iterable[list[tuple[Case, int]]], warmup: bool
    ) -> None:
        """Each chunk's calls in order, one thread; past the deadline of a sampled phase, no
        further chunk once :data:`MIN_CASES` cases ran, or with cases to take ``first`` (a
        focused step) no further call once theirs ran."""
        deadline, first = self._sampled(), set(self.config.first)
        owed = sum(c.id in first for c in self.cases) * self.config.repeats  # their calls

        def task(worker: Worker, rnd: int) -> None:
            i, seen, left = 0, set(), owed
            for calls in chunks:
                if deadline and len(seen) >= MIN_CASES > left and time.monotonic() > deadline:
                    return
                last = None
                for case, rep in calls:
                    if self._confirmed.is_set():  # a confirming step ends at its first failure
                        return
                    if deadline and first and left <= 0 and time.monotonic() > deadline:
                        return
                    left -= case.id in first
                    if warmup and case is not last:
                        self._call(phase, worker, i, case, warmup=True, rep=-1)
                    self._call(phase, worker, i, case, rep=rep)
                    last = case
                    seen.add(case.id)
                    i += 1

        pool.run(task, Budget(rounds=1))

    def _chunks(self, salt: int) -> Iterator[list[Case]]:
        ahead = set(self.config.first) | {c.id for c in thresholds(self.cases)}
        first = [i for i, c in enumerate(self.cases) if c.id in ahead]
        for idx in case_chunks(len(self.cases), self.config.seed, salt, self._samples(), first):
            yield [self.cases[i] for i in idx]

    def _phase_serial(self, pool: WorkerPool) -> None:
        # each case K times, and at least once in every API mode (the mode follows the rep)
        k = max(self.config.repeats, len(self.config.modes))
        chunks = ([(c, r) for c in cases for r in range(k)] for cases in self._chunks(11))
        self._serial_pass(pool, "serial", chunks, warmup=True)

    def _phase_shuffled(self, pool: WorkerPool) -> None:
        first = set(self.config.first)

        def shuffled(n: int, cases: list[Case]) -> list[tuple[Case, int]]:
            order = [(c, k) for c in cases for k in range(self.config.repeats)]
            salt = [self.config.seed, 2] if n == 0 else [self.config.seed, 2, n]
            rng = np.random.default_rng(salt)
            return after_others([order[i] for i in rng.permutation(len(order))], first)

        chunks = (shuffled(n, cases) for n, cases in enumerate(self._chunks(12)))
        self._serial_pass(pool, "shuffled", chunks, warmup=False)

    def _phase_isolated(self, pool: WorkerPool) -> None:
        """Each case alone on every thread, ``duration / N`` seconds each; under --budget in a
        seeded order until the share is spent (at least :data:`MIN_CASES` cases)."""
        deadline, ran = self._sampled(), 0
        budget = phase_budget(self.config, share=len(self.cases))
        if deadline and budget.rounds is None and not self.config.confirm:  # sampled: a round
            budget = AtLeastRounds(budget.seconds, None, 1)
        budget = self._budget(budget)
        for cases in self._chunks(14):
            if deadline and ran >= MIN_CASES and time.monotonic() > deadline:
                return
            for case in cases:
                if self._confirmed.is_set():
                    return
                self.inputs.prepare(case)  # before its threads start (a sampled phase: lazily)

                def task(worker: Worker, rnd: int, case: Case = case) -> None:
                    self._call("isolated", worker, rnd, case)

                def fill(worker: Worker, rnd: int, k: int, case: Case = case) -> None:
                    self._call("isolated", worker, rnd, case, fill=k)

                pool.run(task, budget, fill=fill, fill_within=self._timely)
            ran += len(cases)

    def _mix(self, pool: WorkerPool, phase: str, cases: Sequence[Case], salt: int) -> None:
        n, seed, threads = len(cases), self.config.seed, self.config.threads

        def task(worker: Worker, rnd: int) -> None:
            self._call(
                phase, worker, rnd, cases[mixed_pick(n, threads, seed, salt, rnd, worker.index)]
            )

        def fill(worker: Worker, rnd: int, k: int) -> None:
            pick = np.random.default_rng([seed, salt, rnd, worker.index, k + 1]).integers(n)
            self._call(phase, worker, rnd, cases[int(pick)], fill=k)

        budget, timely = phase_budget(self.config), self._timely
        if budget.seconds is not None and budget.rounds is None and not self.config.confirm:
            cap = 2 * budget.seconds if self.config.budget_s is not None else None
            budget = AtLeastRounds(budget.seconds, None, epoch_rounds(n, threads), cap)
            # past its seconds the epoch's aligned rounds go first: no fill calls, each of which
            # a round waits for (a round of a big case drew out so that the cap ended the phase
            # before one epoch, and a case met no other: coverage "mixed: >= 0 others")
            timely = _always
        pool.run(task, self._budget(budget), fill=fill, fill_within=timely)

    def _phase_mixed(self, pool: WorkerPool) -> None:
        self._mix(pool, "mixed", self.cases, 5)

    def _phase_control(self, pool: WorkerPool) -> None:
        if not self.control:
            raise ConfigError("the control phase needs a control corpus (--control PATH)")
        self._mix(pool, "control", self.control, 6)


def _always() -> bool:
    return True
