"""A fork server: one pre-imported process that forks a fresh child per job.

Starting ``python -m stress.engine.isolation.child`` costs a cold interpreter start and every import
(numpy, ml_dtypes, the engine, the operator catalogue): about a second idle, several under load,
paid again by every phase. The fork server pays it once per run. It is started with the
session's environment, imports what a job needs and parses the run's corpus, and then, for each
job the parent sends, forks a child that sets itself up exactly as an exec'd child would and
runs :func:`stress.engine.isolation.child.child_main`:

* its own process group (``killpg`` reaches it and its threads, Ctrl-C at the terminal does
  not), stdin from /dev/null, stdout and stderr to the parent's unnamed file;
* the job's environment applied before anything loads the backend (``ACLSIM_FAULTS``...);
* ``PR_SET_PDEATHSIG`` towards the fork server, which has it towards the session: when the
  session dies the server dies, and every child with it;
* the backend is loaded in the child only, so each job gets fresh simulator (or CANN) state
  and a crash or hang takes only the child.

The server itself never loads the backend (it checks its own memory map before serving): real
CANN must never be forked after ``aclInit`` (its device threads and driver handles do not
survive a fork), so only a process that has not loaded it may fork job children.

Protocol: the parent sends one datagram per job on a ``SOCK_SEQPACKET`` socket with four file
descriptors attached (the job file, the record pipe's write end, the stderr file, and one end of
a fresh status socket). On the status socket the server answers ``{"pid": N}`` once forked and
``{"returncode": R}`` (as :attr:`subprocess.Popen.returncode`) once it reaped the child.

This module is the session's side (start the server, send it jobs); the server's loop is
:mod:`stress.engine.isolation.forkserver_loop`. The session forks the server from itself when it may
(:func:`may_fork_here`), else starts ``python -m stress.engine.isolation.forkserver``.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from stress.engine.isolation.forkserver_loop import backend_loaded, serve

__all__ = ["SAFE_ENV_PREFIXES", "ForkServer", "ForkServerGone", "ForkedChild", "fork_server"]

#: Environment variables a job may set differently from the server's start environment: the
#: simulator reads them in ``aclInit`` (after the fork), nothing reads them at interpreter start
#: or import time (ACLSIM_FAULTS, ACLSIM_DEVICES, ACLSIM_DEVICE_MEMORY, ACLSIM_SANITIZE[_LOG]).
SAFE_ENV_PREFIXES = ("ACLSIM_FAULTS", "ACLSIM_DEVICE", "ACLSIM_SANITIZE")


class ForkServerGone(RuntimeError):
    """The fork server could not take the job (not started, died, or refused)."""


class ForkedChild:
    """A job child forked by the server: the part of :class:`subprocess.Popen` the supervisor
    uses (``pid``, ``wait``, ``kill``, ``send_signal``, ``returncode``)."""

    def __init__(self, pid: int, status: socket.socket) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._status = status

    def wait(self) -> int:
        if self.returncode is None:
            try:
                data = self._status.recv(256)
            except OSError:
                data = b""
            # no answer: the server died, and the child with it (PR_SET_PDEATHSIG SIGKILL)
            code = json.loads(data).get("returncode") if data else None
            self.returncode = int(code) if code is not None else -signal.SIGKILL
            self._status.close()
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    """The parent's handle on a fork server process (see the module doc)."""

    def __init__(self, env: dict[str, str], warm: dict[str, Any] | None = None) -> None:
        from stress.engine.isolation.child import PARENT_ENV

        self.env = dict(env)
        self._lock = threading.Lock()
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        server_env = {**self.env, PARENT_ENV: str(os.getpid())}
        try:
            if may_fork_here(self.env):
                self._proc: subprocess.Popen | _ServerProcess = _fork_server(
                    theirs, self._sock, server_env, warm or {}
                )
            else:
                self._proc = subprocess.Popen(
                    [sys.executable, "-m", __name__, str(theirs.fileno()), json.dumps(warm or {})],
                    pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=server_env,
                    process_group=0,
                )
        except OSError:
            self._sock.close()
            raise ForkServerGone("cannot start the fork server") from None
        finally:
            theirs.close()

    def serves(self, env: dict[str, str]) -> bool:
        """Whether a job with the full environment ``env`` may be forked from this server: it
        differs from the server's only in variables read after the fork."""
        return self._proc.poll() is None and _differ_safely(env, self.env)

    def spawn(
        self, job_fd: int, record_fd: int, err_fd: int, env: dict[str, str], timeout: float = 300
    ) -> ForkedChild:
        """Fork a child running ``child_main`` on ``/dev/fd/<job_fd>`` and ``record_fd``. A
        server that has not forked it within ``timeout`` seconds (stuck importing) is killed,
        with any child it forks late: the job must never run twice."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        mine.settimeout(timeout)
        try:
            with self._lock:
                message = json.dumps({"env": env}).encode()
                socket.send_fds(self._sock, [message], [job_fd, record_fd, err_fd, theirs.fileno()])
            theirs.close()
            data = mine.recv(256)
        except TimeoutError:
            self._proc.kill()
            self._proc.wait()
            data = b""
        except OSError:
            data = b""
        finally:
            theirs.close()
        pid = json.loads(data).get("pid") if data else None
        if not pid:
            mine.close()
            raise ForkServerGone("the fork server did not fork the job")
        mine.settimeout(None)
        return ForkedChild(int(pid), mine)

    def close(self) -> None:
        """Stop the server (closing its socket ends its loop; it is killed if it lingers)."""
        self._sock.close()
        try:
            self._proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def may_fork_here(env: dict[str, str]) -> bool:
    """Whether this process may fork the server itself instead of starting a fresh interpreter:
    it has one thread (a fork keeps only the calling thread: a lock another thread holds would
    stay locked forever), it has not loaded the backend, and ``env`` differs from its own
    environment only in what the simulator reads after the fork (:data:`SAFE_ENV_PREFIXES`)."""
    if threading.active_count() != 1 or backend_loaded():
        return False
    return _differ_safely(env, dict(os.environ))


def _differ_safely(a: dict[str, str], b: dict[str, str]) -> bool:
    """Whether environments ``a`` and ``b`` differ only in :data:`SAFE_ENV_PREFIXES`."""
    keys = {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
    return all(k.startswith(SAFE_ENV_PREFIXES) for k in keys)


class _ServerProcess:
    """A fork server forked from the session: the part of :class:`subprocess.Popen` the handle
    uses (``poll``, ``wait``, ``kill``)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                self.returncode = -signal.SIGKILL  # reaped elsewhere: it is gone
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"fork server {self.pid}", timeout or 0)
            time.sleep(0.005)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _fd_limit() -> int:
    """One above the highest descriptor this process may hold."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return soft if 0 < soft < (1 << 20) else 1 << 20


def _fork_server(
    theirs: socket.socket, mine: socket.socket, env: dict[str, str], warm: dict[str, Any]
) -> _ServerProcess:
    """Fork the server from this process (it inherits every module imported so far: no
    interpreter start, no import); the child sets itself up as the exec'd server would be:
    its own process group, /dev/null for stdio, no other inherited descriptor, ``env``."""
    for stream in (sys.stdout, sys.stderr):  # nothing buffered here may be written twice
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    with warnings.catch_warnings():  # Python 3.12+ warns about OpenBLAS's (fork-safe) threads
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the server: never returns into the session's code
        try:
            os.setpgid(0, 0)
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1):
                signal.signal(sig, signal.SIG_DFL)
            fd = theirs.fileno()
            null = os.open(os.devnull, os.O_RDWR)
            for std in (0, 1, 2):
                os.dup2(null, std)
            os.closerange(3, fd)
            os.closerange(fd + 1, _fd_limit())
            # the session's sys.std* may be wrappers (pytest's capture, a console): a job child
            # must write its traceback to its own fd 2, as a fresh interpreter would
            sys.stdin = open(0, closefd=False)  # for the process's lifetime
            sys.stdout = open(1, "w", buffering=1, closefd=False)
            sys.stderr = open(2, "w", buffering=1, closefd=False)
            os.environ.clear()
            os.environ.update(env)
            serve(fd, warm)
        finally:
            os._exit(0)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child already did
    return _ServerProcess(pid)


@contextmanager
def fork_server(
    enabled: bool, env: dict[str, str], corpus: Sequence[str], include_dirs: Sequence[str]
) -> Iterator[ForkServer | None]:
    """A fork server for one run (None when ``enabled`` is false or it cannot start: every
    child then starts cold), stopped at the end; it parses ``corpus`` ahead of the jobs."""
    server = None
    if enabled:
        try:
            server = ForkServer(env, {"corpus": list(corpus), "include_dirs": list(include_dirs)})
        except ForkServerGone:
            server = None
    try:
        yield server
    finally:
        if server is not None:
            server.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]), json.loads(sys.argv[2]))
