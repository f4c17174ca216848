"""A fork server: one pre-imported process that forks a fresh child per job.

Starting ``python -m stress.engine.isolate`` costs a cold interpreter start and every import
(numpy, ml_dtypes, the engine, the operator catalogue): about a second idle, several under load,
paid again by every phase. The fork server pays it once per run. It is started with the
session's environment, imports what a job needs and parses the run's corpus, and then, for each
job the parent sends, forks a child that sets itself up exactly as an exec'd child would and
runs :func:`stress.engine.isolate.child_main`:

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
"""

from __future__ import annotations

import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["SAFE_ENV_PREFIXES", "ForkServer", "ForkServerGone", "ForkedChild", "fork_server"]

MAX_MESSAGE = 1 << 20
#: Environment variables a job may set differently from the server's start environment: the
#: simulator reads them in ``aclInit`` (after the fork), nothing reads them at interpreter start
#: or import time (ACLSIM_FAULTS, ACLSIM_DEVICES, ACLSIM_DEVICE_MEMORY, ACLSIM_SANITIZE[_LOG]).
SAFE_ENV_PREFIXES = ("ACLSIM_FAULTS", "ACLSIM_DEVICE", "ACLSIM_SANITIZE")
_BACKEND_LIBRARIES = ("libaclsim", "libascendcl", "libnnopbase", "libopapi")
#: What a job imports: :mod:`stress.engine.jobs` and (measured) a burst child's lazy imports;
#: none of them loads the backend library.
_JOB_IMPORTS = (
    "stress.engine.jobs",
    "stress.sim",
    "stress.engine.replay",
    "numpy.random",
    "concurrent.futures",
)


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
        from stress.engine.isolate import PARENT_ENV

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
        keys = {k for k in env.keys() | self.env.keys() if env.get(k) != self.env.get(k)}
        return self._proc.poll() is None and all(k.startswith(SAFE_ENV_PREFIXES) for k in keys)

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
    if threading.active_count() != 1 or _backend_loaded():
        return False
    keys = {k for k in env.keys() | os.environ.keys() if env.get(k) != os.environ.get(k)}
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


# -- the server side --------------------------------------------------------------------------
def _backend_loaded() -> bool:
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return False
    return any(name in maps for name in _BACKEND_LIBRARIES)


def _prepare() -> None:
    """Import what every job imports and hash the simulator's sources once (the key of its
    build); nothing here loads the backend."""
    import importlib

    for name in _JOB_IMPORTS:
        importlib.import_module(name)
    from stress.sim import SimBuildError, _build

    try:
        _build.freeze_build_key()
    except (SimBuildError, OSError):
        pass  # no compiler (a CANN host): the simulator is not used, or its job says why


def _warm(spec: dict[str, Any]) -> None:
    """Parse the run's corpus (the operator catalogue and declarations stay parsed in every
    forked child); done after the first job is forked (the backend-info job needs none)."""
    if spec.get("corpus"):
        from stress.corpus.parse import load_corpus

        try:
            load_corpus(spec["corpus"], tuple(spec.get("include_dirs", ())))
        except Exception:
            pass


def _in_child(sock: socket.socket, fds: list[int], env: dict[str, str], others: list[int]) -> None:
    """The forked child: set up as an exec'd child would be, run the job, never return."""
    job_fd, record_fd, err_fd, status_fd = fds
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setpgid(0, 0)
        sock.close()
        for fd in (status_fd, *others):
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(err_fd, 1)
        os.dup2(err_fd, 2)
        os.close(null)
        os.close(err_fd)
        os.environ.clear()
        os.environ.update(env)
        from stress.engine.isolate import child_main

        child_main(f"/dev/fd/{job_fd}", record_fd)
    except BaseException:
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
    os._exit(3)


def serve(fd: int, warm: dict[str, Any]) -> None:
    """The server loop: fork a child per job datagram until the parent closes the socket."""
    from stress.engine.isolate import die_with_parent

    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the session alone handles Ctrl-C
    _prepare()
    sock = socket.socket(fileno=fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    sel.register(wake_r, selectors.EVENT_READ)
    status: dict[int, int] = {}  # child pid -> its status socket
    warmed = False
    while True:
        for key, _ in sel.select(timeout=None if warmed else 0):
            if key.fileobj is sock:
                message, fds, _flags, _addr = socket.recv_fds(sock, MAX_MESSAGE, 4)
                if not message:
                    os._exit(0)  # the session closed its end: children still running die
                _fork_job(sock, fds, json.loads(message)["env"], status, [wake_r, wake_w])
            else:
                os.read(wake_r, 4096)
        _reap(status)
        if not warmed:
            warmed = True
            _warm(warm)


def _fork_job(
    sock: socket.socket, fds: list[int], env: dict[str, str], status: dict[int, int], own: list[int]
) -> None:
    """Fork the child of one job (or refuse it, answering no pid, if this process has loaded
    the backend: the parent then starts that child cold)."""
    from stress.engine.isolate import PARENT_ENV

    if len(fds) != 4 or _backend_loaded():
        for fd in fds:
            os.close(fd)
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the child's, as in a fresh python
    pid = os.fork()
    if pid == 0:
        _in_child(sock, fds, {**env, PARENT_ENV: str(os.getppid())}, [*own, *status.values()])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child already did, or already ended
    for fd in fds[:3]:
        os.close(fd)
    status[pid] = fds[3]
    _answer(fds[3], {"pid": pid})


def _answer(fd: int, message: dict[str, Any]) -> None:
    try:
        os.write(fd, json.dumps(message).encode())
    except OSError:
        pass  # the parent stopped waiting


def _reap(status: dict[int, int]) -> None:
    while status:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = status.pop(pid, None)
        if fd is not None:
            _answer(fd, {"returncode": os.waitstatus_to_exitcode(code)})
            os.close(fd)


if __name__ == "__main__":
    serve(int(sys.argv[1]), json.loads(sys.argv[2]))
