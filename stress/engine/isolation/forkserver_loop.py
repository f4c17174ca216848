"""The fork server's own side (:mod:`stress.engine.isolation.forkserver` is the session's side:
it starts the server and sends it jobs): import what a job needs, then for each job datagram fork a
child that sets itself up as an exec'd ``python -m stress.engine.isolation.child`` child would and
runs :func:`stress.engine.isolation.child.child_main`; reap each child and answer its exit status.

Nothing here loads the backend: :func:`backend_loaded` is checked before every fork (real CANN
must never be forked after ``aclInit``).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import sys
from pathlib import Path
from typing import Any

__all__ = ["MAX_MESSAGE", "backend_loaded", "serve"]

#: The largest job datagram (its environment, as JSON).
MAX_MESSAGE = 1 << 20
_BACKEND_LIBRARIES = ("libaclsim", "libascendcl", "libnnopbase", "libopapi")
#: What a job imports: :mod:`stress.engine.isolation.jobs` and (measured) a burst child's lazy
#: imports; none of them loads the backend library.
_JOB_IMPORTS = (
    "stress.engine.isolation.jobs",
    "stress.sim",
    "stress.engine.replay.pool",
    "numpy.random",
    "concurrent.futures",
)


def backend_loaded() -> bool:
    """Whether this process has mapped a backend library (it must then never fork a job)."""
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
    """Parse the run's corpus files (the operator catalogue, the declarations and the cases
    stay parsed in every forked child: :mod:`stress.corpus.preload`); done after the first job
    is forked (the backend-info job needs none)."""
    if spec.get("corpus"):
        from stress.corpus import preload

        preload.warm(spec["corpus"], tuple(spec.get("include_dirs", ())))


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
        from stress.engine.isolation.child import child_main

        child_main(f"/dev/fd/{job_fd}", record_fd)
    except BaseException:
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
    os._exit(3)


def serve(fd: int, warm: dict[str, Any]) -> None:
    """The server loop: fork a child per job datagram until the parent closes the socket."""
    from stress.engine.isolation.child import die_with_parent

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
    from stress.engine.isolation.child import PARENT_ENV

    if len(fds) != 4 or backend_loaded():
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
