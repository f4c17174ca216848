"""A run's fork server, its backend-info job and its first step, started before the session's
checks.

Between ``aclnn-stress run``'s exec and its first call the parent parses the corpus and
derives its variants, the backend-info child loads the backend, the session checks the
baseline and writes the journal's header, and the first step's child loads the backend, the
corpus, the baseline and makes every case's inputs — one after the other. Only the header
needs the others. :func:`start_early` forks the fork server as soon as the corpus is loaded (it
inherits the engine's imports and the parsed corpus with its variants,
:mod:`stress.corpus.preload`: no child parses or derives them again), and the session
(``start_early``) sends it at once the info job and, when the run's baseline file is named and
exists, the first step as the arguments describe it (:func:`first_job`): both children set
themselves up beside the parent's checks and console set-up.

The first step's child holds before its first call (:class:`Ahead`): the session lets it go
only when the step it reaches is that very job (the backend's memory, the baseline's
unrecorded variants or a budget can change it), with its header written; otherwise it is
killed unheard. Its records then reach the journal in order, as they arrive: the journal, the
console and the verdicts are those of a run that started the step then.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from stress.engine.isolation.forkserver import ForkServer, ForkServerGone, fork_server
from stress.engine.isolation.messages import Holding, Line

__all__ = ["Ahead", "EarlyStart", "early_server", "first_job", "is_file", "start_early"]

#: ``run(job, on_record, cancel)``: supervise the child of ``job`` (the session's ``_job``).
RunJob = Callable[[dict[str, Any], Callable[[Line], None], threading.Event], Any]


class Ahead:
    """The run's first step started before the session is ready for it: its child sets itself
    up (backend, corpus, baseline, inputs) and then waits, making no call
    (:func:`stress.engine.isolation.jobs` ``hold``), until the session takes the step — if the
    step it reaches is this very job: :meth:`drain` lets the child go and passes its records on
    as they arrive; any other job, :meth:`cancel` kills it unheard. So nothing runs that the
    session would not have run, and nothing reaches the journal before its header."""

    def __init__(self, run: RunJob, job: dict[str, Any], grace: float = 5.0) -> None:
        self.job = dict(job)
        self.grace = grace  # interrupted: seconds the calls in flight may take to end
        self._records: queue.SimpleQueue[tuple[float | None, Any]] = queue.SimpleQueue()
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._go = False

        def work() -> None:
            try:
                result = run({**self.job, "hold": True}, self._record, self._cancel)
            except BaseException as exc:  # raised again where the step is taken
                result = exc
            self._records.put((None, result))

        self._thread = threading.Thread(target=work, daemon=True, name="early-step")
        self._thread.start()

    def _record(self, rec: Line) -> None:
        if isinstance(rec, Holding):  # set up and waiting for the go
            with self._lock:
                self._pid = rec.pid
                if self._go:
                    self._signal()
            return
        self._records.put((time.monotonic(), rec))

    def _signal(self, sig: int = signal.SIGUSR2) -> None:
        if self._pid is None:
            return
        try:
            os.kill(self._pid, sig)
        except ProcessLookupError:
            pass  # it ended already: its end is on the way

    def drain(self, on_record: Callable[..., None]) -> Any:
        """Let the child go, pass each record on with its arrival (``on_record(rec, at)``) as
        it comes, and return the child's result once it ended."""
        with self._lock:
            self._go = True
            self._signal()
        try:
            return self._pass_on(on_record, None)
        except KeyboardInterrupt:  # as run_child does: the round ends, its calls are recorded
            self._signal(signal.SIGTERM)
            try:
                self._pass_on(on_record, time.monotonic() + self.grace)
            finally:
                self.cancel()
            raise

    def _pass_on(self, on_record: Callable[..., None], deadline: float | None) -> Any:
        """Records to ``on_record`` until the child's result (returned), or ``deadline``."""
        while deadline is None or time.monotonic() < deadline:
            try:
                at, item = self._records.get(timeout=0.2)
            except queue.Empty:
                continue
            if at is None:
                if isinstance(item, BaseException):
                    raise item
                return item
            on_record(item, at)
        return None

    def cancel(self) -> None:
        """Kill the child (not needed), dropping its records."""
        self._cancel.set()
        self._thread.join(timeout=10)


class EarlyStart:
    """The fork server started ahead of the session's checks, the backend-info job it runs and
    the first step (:class:`Ahead`) it set up."""

    def __init__(self, server: ForkServer, env: dict[str, str]) -> None:
        self.server = server
        self.env = env  # the environment the server was started with
        self._info: Any = None
        self._info_done = threading.Event()
        self._thread: threading.Thread | None = None
        self.ahead: Ahead | None = None  # the first step, held before its first call

    def ask_info(self, run: Callable[[dict[str, Any]], Any], job: dict[str, Any]) -> None:
        """Run the backend-info ``job`` now, in a thread (``run(job)`` supervises its child)."""
        self.info_job = dict(job)

        def work() -> None:
            try:
                self._info = run(self.info_job)
            except BaseException as exc:  # raised again where the result is taken
                self._info = exc
            self._info_done.set()

        self._thread = threading.Thread(target=work, daemon=True, name="early-info")
        self._thread.start()

    def take_info(self, job: dict[str, Any]) -> Any:
        """The result of the info job, if it was ``job``; None when it was another (or none
        was asked): the caller then runs ``job`` itself."""
        if self._thread is None or job != self.info_job:
            return None
        self._info_done.wait()
        self._thread = None
        if isinstance(self._info, BaseException):
            raise self._info
        return self._info

    def take_ahead(self, job: dict[str, Any]) -> Ahead | None:
        """The step started ahead, if it is ``job``; else it is cancelled (and None)."""
        ahead, self.ahead = self.ahead, None
        if ahead is not None and ahead.job != job:
            ahead.cancel()
            return None
        return ahead

    def close(self) -> None:
        """Cancel a step started ahead and not taken; stop the server (a child still running
        dies with it)."""
        if self.ahead is not None:
            self.ahead.cancel()
            self.ahead = None
        self.server.close()


def start_early(
    enabled: bool, corpus: Sequence[str], include_dirs: Sequence[str]
) -> EarlyStart | None:
    """Fork the run's fork server now (None when ``enabled`` is false or it cannot start: the
    session then starts its own); it parses ``corpus`` once it has imported the job modules."""
    if not enabled:
        return None
    env = dict(os.environ)
    try:
        warm = {"corpus": list(corpus), "include_dirs": list(include_dirs)}
        return EarlyStart(ForkServer(env, warm), env)
    except ForkServerGone:
        return None


@contextmanager
def early_server(
    early: EarlyStart | None,
    enabled: bool,
    env: dict[str, str],
    corpus: Sequence[str],
    include_dirs: Sequence[str],
) -> Iterator[ForkServer | None]:
    """The run's fork server: ``early``'s when there is one, else one started now
    (:func:`stress.engine.isolation.forkserver.fork_server`); stopped at the end either way."""
    if early is None:
        with fork_server(enabled, env, corpus, include_dirs) as server:
            yield server
        return
    try:
        yield early.server
    finally:
        early.close()


def first_job(
    config: Any, corpus: Sequence[str], control: Sequence[str], baseline: str
) -> dict[str, Any] | None:
    """The job of the run's first step as the session will make it, as far as the arguments
    tell (the backend, the corpus and the baseline may still change it: the step started
    ahead is then cancelled, :meth:`EarlyStart.take_ahead`); None when that step is not the
    burst (another phase's duration under ``--budget`` depends on when it starts)."""
    from stress.engine.run.phase_step import phase_job
    from stress.engine.run.schedule import Scheduler, plan

    scheduler = Scheduler(config, plan(config))
    step, phases = scheduler.steps[0], config.phases
    if step.phase != "burst":
        return None
    with_control = "control" in phases or ("burst" in phases and bool(control))
    job_config = scheduler.config_for(0, 0.0)
    return phase_job(
        step.phase, step.stream, job_config, corpus, control if with_control else [], baseline
    )


def is_file(path: Any) -> bool:
    """Whether ``path`` is a file this process can see (False where it may not look: the run
    then says what is wrong with it where it always did)."""
    try:
        return bool(path.is_file())
    except OSError:
        return False
