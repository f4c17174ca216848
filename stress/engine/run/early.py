"""A run's fork server and its backend-info child, started before the session is set up.

Between ``aclnn-stress run``'s exec and its first phase the parent imports the engine, parses
the corpus and derives its variants; the fork server then imported what a job needs and the
backend-info child loaded the backend, one after the other. None of the three needs another:
the server forked from a process that has imported only the CLI imports the job modules itself
(:mod:`stress.engine.isolation.forkserver_loop`), and the info job needs only the backend and
the device. :func:`start_early` forks the server as soon as the arguments are parsed and sends
it the info job from a thread, so the server's imports, the backend load and the info child
run beside the parent's own imports and corpus load (the second core, or a larger share of a
loaded machine's time); the session takes the server and the info result when it gets there
(:class:`stress.engine.run.session.Session`'s ``early``).

Nothing here imports the engine's heavy modules (numpy, the operator catalogue, the corpus
parser): this module is imported right after the argument parsing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from stress.engine.isolation.forkserver import ForkServer, ForkServerGone, fork_server

__all__ = ["EarlyStart", "early_server", "start_early"]


class EarlyStart:
    """The fork server started ahead of the session, and the backend-info job it runs."""

    def __init__(self, server: ForkServer, env: dict[str, str]) -> None:
        self.server = server
        self.env = env  # the environment the server was started with
        self._info: Any = None
        self._info_done = threading.Event()
        self._thread: threading.Thread | None = None

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

    def close(self) -> None:
        """Stop the server (an info child still running dies with it)."""
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
