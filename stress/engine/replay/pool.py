"""The replay engine: a pool of worker threads making calls under a context and stream policy.

Context policy ``shared`` creates one explicit context (``aclrtCreateContext``) that every worker
binds (``aclrtSetCurrentContext``); ``per-thread`` gives each worker
its own. Stream policy ``shared`` gives all workers one stream; ``per-thread`` one each (a stream
belongs to one context, so per-thread contexts imply per-thread streams).

Workers run in barrier-aligned rounds: every worker starts its call of round r at the same moment,
which maximises the overlap of different cases in flight; a worker done early fills the rest of
the round with further calls instead of idling. The budget (a duration or a number of rounds) is
checked between rounds by the barrier's action, so all workers stop together. A
watchdog notices a call that outlives its limit (its case's own, confirmed under load:
:mod:`stress.engine.replay.hang_rule`): it reports the hang and abandons the stuck
workers (an in-process hang cannot be interrupted; the supervisor in
:mod:`stress.engine.isolation.supervise` then ends the whole child process).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stress import acl
from stress.engine.replay.hang_rule import CallState, HangReport, HangRule, Slowdown, StuckCall
from stress.engine.replay.phase_budget import Budget
from stress.engine.replay.starvation import Starvation
from stress.errors import ConfigError
from stress.records import CallBegin
from stress.vocabulary import Status

__all__ = ["PoolAborted", "Worker", "WorkerPool"]

CONTEXT_POLICIES = ("shared", "per-thread")
STREAM_POLICIES = ("shared", "per-thread")


class PoolAborted(Exception):
    """The pool stopped early: a hang (watchdog) or an error in a worker."""

    def __init__(self, reason: str, hang: HangReport | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hang = hang  # a hang's report (None: an error)


@dataclass
class Worker:
    """What a task gets: its index, its bound context and its stream."""

    index: int
    context: acl.Context
    stream: acl.Stream
    in_flight: CallBegin | None = None
    started_at: float | None = None
    # the recorded time of the call in flight, and where its finished ratio goes (the pool's)
    expected_s: float | None = None
    rule: HangRule | None = field(default=None, repr=False)
    slowdown: Slowdown | None = field(default=None, repr=False)
    # the pool's finished-call count when the watchdog found this call suspect (None: not yet)
    suspect_at: int | None = None
    # the process's starved seconds (the watchdog's clock) when the call began
    starvation: Starvation | None = field(default=None, repr=False)
    starved_at: float = 0.0
    # the launches (and synchronisations) of the call in flight: a repeat-mode call has several
    # (stress.engine.replay.modes); the watchdog judges its time per launch
    launches: int = 1

    def begin(self, **what: Any) -> None:
        """Mark a call as in flight (for the watchdog and crash attribution)."""
        self.restart(CallBegin(self.index, **what))

    def restart(self, call: CallBegin) -> None:
        """Mark ``call`` as in flight from now (a call that waited, off the clock, begins again)."""
        self.in_flight = call
        self.launches = max(1, call.launches or 1)
        self.suspect_at = None
        self.expected_s = self.rule.expected_s(call) if self.rule else None
        self.starved_at = self.starvation.total if self.starvation else 0.0
        self.started_at = time.monotonic()

    def end(self) -> None:
        if self.started_at is not None and self.slowdown is not None:
            self.slowdown.finished(time.monotonic() - self.started_at, self.expected_s)
        self.in_flight = None
        self.started_at = None


def _stuck(worker: Worker, **timing: float) -> StuckCall:
    """``worker``'s call in flight as a :class:`StuckCall` (with the watchdog's ``timing``)."""
    return StuckCall(worker.in_flight or CallBegin(worker.index), **timing)


def _each(worker: Worker) -> float | None:
    """The recorded time of one launch of ``worker``'s call in flight."""
    e = worker.expected_s
    return None if e is None else e / worker.launches


Task = Callable[[Worker, int], None]  # (worker, round) -> None
FillTask = Callable[[Worker, int, int], None]  # (worker, round, k) -> None


class WorkerPool:
    """T worker threads, each with a bound context and a stream, running rounds of tasks."""

    def __init__(
        self,
        device: acl.Device,
        threads: int,
        *,
        context_policy: str = "shared",
        stream_policy: str = "shared",
        call_timeout_s: float = 60.0,
        on_hang: Callable[[HangReport], None] | None = None,
        hang_rule: HangRule | None = None,
    ) -> None:
        if context_policy not in CONTEXT_POLICIES or stream_policy not in STREAM_POLICIES:
            raise ValueError(f"bad policy {context_policy}/{stream_policy}")
        if context_policy == "per-thread" and stream_policy == "shared":
            raise ValueError(
                "a stream belongs to one context: per-thread contexts need per-thread streams"
            )
        self.device = device
        self.threads = threads
        self.context_policy = context_policy
        self.stream_policy = stream_policy
        self.call_timeout_s = call_timeout_s
        # without a rule every call waits call_timeout_s (the fixed timeout)
        self.hang_rule = hang_rule or HangRule(ceiling_s=call_timeout_s)
        self.slowdown = Slowdown()
        self.starvation = Starvation()
        self.on_hang = on_hang
        self._owned: list[Any] = []
        self.shared_context: acl.Context | None = None
        self.shared_stream: acl.Stream | None = None
        if context_policy == "shared":
            self.shared_context = device.create_context()
            self._owned.append(self.shared_context)
            if stream_policy == "shared":
                self.shared_stream = self.shared_context.create_stream()
                self._owned.append(self.shared_stream)
        self.workers: list[Worker] = []
        self._setup_workers()

    def _setup_workers(self) -> None:
        # contexts and streams are created up front (on this thread: a context may be bound
        # on any thread), so a failure here is a clean error rather than a dead worker
        for i in range(self.threads):
            if self.context_policy == "shared":
                ctx = self.shared_context
            else:
                ctx = self.device.create_context()
                self._owned.append(ctx)
            if self.stream_policy == "shared":
                stream = self.shared_stream
            else:
                stream = ctx.create_stream()
                self._owned.append(stream)
            self.workers.append(
                Worker(
                    i, ctx, stream, rule=self.hang_rule, slowdown=self.slowdown,
                    starvation=self.starvation,
                )
            )  # fmt: skip

    def run(
        self,
        task: Task,
        budget: Budget,
        *,
        fill: FillTask | None = None,
        threads: int | None = None,
        fill_within: Callable[[], bool] | None = None,
    ) -> int:
        """Run ``task(worker, round)`` on ``threads`` workers in aligned rounds until ``budget``
        is spent; returns the number of rounds completed. Raises :class:`PoolAborted`.

        All workers start their round-r call at the same moment (one barrier). A worker whose
        call finishes early runs ``fill(worker, round, k)`` calls (if given) until the round's
        slowest call is done, so aligned starts cost no idle time when cases differ in size;
        once ``fill_within()`` says so, only while the budget's seconds last
        (:meth:`Budget.spent`: on a busy machine a round of a big case is not drawn out past
        them by fill calls, each of which the round then waits for).
        """
        active = self.workers[: threads or self.threads]
        started = time.monotonic()
        state = {"round": -1, "stop": False, "pending": 0}
        errors: list[BaseException] = []
        lock = threading.Lock()

        def start_round() -> None:  # run by the last worker to reach the barrier
            state["round"] += 1
            if errors or budget.exhausted(started, state["round"]):
                state["stop"] = True
            state["pending"] = len(active)

        barrier = threading.Barrier(len(active), action=start_round)

        def loop(worker: Worker) -> None:
            worker.context.bind()
            try:
                while True:
                    barrier.wait()  # ends the previous round and starts this one, aligned
                    if state["stop"]:
                        return
                    r = state["round"]
                    task(worker, r)
                    worker.end()
                    with lock:
                        state["pending"] -= 1
                    k = 0
                    while fill is not None and state["pending"] > 0:
                        if fill_within and fill_within() and budget.spent(started):
                            break
                        fill(worker, r, k)
                        worker.end()
                        k += 1
            except threading.BrokenBarrierError:
                return
            except BaseException as exc:  # a hang report or a bug in a task: stop everyone
                errors.append(exc)
                barrier.abort()

        def abort() -> None:
            state["stop"] = True
            barrier.abort()

        self._start_and_watch(loop, active, abort, errors)
        return max(state["round"], 0)

    def run_free(self, task: Task, budget: Budget, *, threads: int | None = None) -> int:
        """Run ``task(worker, n)`` on ``threads`` workers with no barrier: each worker calls again
        as soon as its call returns, until ``budget`` is spent (``n`` numbers the calls as they
        start, across workers; the rounds a budget counts are ``n // threads``). Returns one
        more than the highest such round a call began in. Raises :class:`PoolAborted`.

        Unaligned calls drift against each other, so their stages (phase 1, launch) meet in
        every relative order: the orderings a depth-3 bug needs come sooner than in aligned
        rounds, where every call starts its phase 1 at the same moment."""
        active = self.workers[: threads or self.threads]
        started = time.monotonic()
        starts = itertools.count()
        errors: list[BaseException] = []
        halt = threading.Event()
        width = len(active)

        def loop(worker: Worker) -> None:
            worker.context.bind()
            try:
                while not halt.is_set():
                    n = next(starts)
                    if budget.exhausted(started, n // width):  # an error has set halt
                        halt.set()
                        return
                    task(worker, n)
                    worker.end()
            except BaseException as exc:  # a hang report or a bug in a task: stop everyone
                errors.append(exc)
                halt.set()

        self._start_and_watch(loop, active, halt.set, errors)
        return next(starts) // width + 1

    def _start_and_watch(
        self,
        loop: Callable[[Worker], None],
        active: list[Worker],
        abort: Callable[[], None],
        errors: list[BaseException],
    ) -> None:
        """Start a thread per worker running ``loop``, wait for them (the watchdog reports a
        hang), and raise the first error a worker hit."""
        threads_ = [
            threading.Thread(target=loop, args=(w,), name=f"stress-worker-{w.index}", daemon=True)
            for w in active
        ]
        for k, t in enumerate(threads_):
            try:
                t.start()
            except RuntimeError as exc:  # "can't start new thread": the host's limit, not ours
                abort()
                raise ConfigError(
                    f"--threads {len(active)}: the host could not start worker thread {k + 1} "
                    f"({exc}); lower --threads or raise the process's thread and memory limits "
                    "(ulimit -u, ulimit -v)"
                ) from None
        hung = self._watch(threads_, active)
        if hung is not None:
            abort()
            if self.on_hang:
                self.on_hang(hung)
            raise PoolAborted(Status.HANG, hung)
        if errors:
            raise errors[0]

    def _watch(self, threads: list[threading.Thread], workers: list[Worker]) -> HangReport | None:
        """Wait for the workers; return the hang report if a call outlives its timeout."""
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.05)
                if not t.is_alive():
                    continue
                self.starvation.tick()
                now = time.monotonic()
                slowdown = self.slowdown.factor()
                stuck = [w for w in workers if self._judge(w, now, slowdown) is CallState.HUNG]
                if stuck:
                    return self._report(stuck, workers, now, slowdown)
                break
        return None

    def _report(
        self, stuck: list[Worker], workers: list[Worker], now: float, slowdown: float
    ) -> HangReport:
        """The hang the watchdog confirmed for ``stuck``, with every call in flight."""
        rule = self.hang_rule
        deadline = max(
            rule.deadline(_each(w), slowdown, self._moved(w)) * w.launches for w in stuck
        )
        return HangReport(
            timeout_s=round(deadline, 3),
            slowdown=round(slowdown, 2),
            progressed=any(self._moved(w) for w in stuck),
            stuck=tuple(
                _stuck(
                    w,
                    elapsed_s=round(now - (w.started_at or now), 3),
                    starved_s=round(self.starvation.total - w.starved_at, 3),
                    limit_s=round(rule.limit(_each(w)) * w.launches, 3),
                )
                for w in stuck
            ),
            in_flight=tuple(_stuck(w) for w in workers if w.in_flight is not None),
        )

    def _judge(self, worker: Worker, now: float, slowdown: float) -> CallState:
        """The hang rule's verdict on ``worker``'s call in flight (``ok`` when none); marks the
        moment it became suspect, to tell later whether the pool progressed since."""
        started = worker.started_at
        if started is None:
            return CallState.RUNNING
        starved = (self.starvation.total - worker.starved_at) / worker.launches
        verdict = self.hang_rule.verdict(
            (now - started) / worker.launches, _each(worker), slowdown, self._moved(worker),
            starved,
        )  # fmt: skip
        if verdict is not CallState.RUNNING and worker.suspect_at is None:
            worker.suspect_at = self.slowdown.count
            verdict = CallState.SUSPECT  # the confirmation starts now, whatever came before
        return verdict

    def _moved(self, worker: Worker) -> bool:
        """Whether a call of the pool finished since ``worker``'s call became suspect."""
        return worker.suspect_at is not None and self.slowdown.count > worker.suspect_at

    def close(self) -> None:
        """Destroy the pool's streams and contexts (after all work finished)."""
        for obj in reversed(self._owned):
            obj.close()
        self._owned.clear()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None or not isinstance(exc[1], PoolAborted):
            self.close()
