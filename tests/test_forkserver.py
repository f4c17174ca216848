"""The fork server (stress/engine/isolation/forkserver.py): phase children forked from one
pre-imported process keep what a cold ``python -m stress.engine.isolation.child`` child
promises."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from _runs import alive

from stress.engine.isolation.forkserver import (
    ForkServer,
    ForkServerGone,
    fork_server,
    may_fork_here,
)
from stress.engine.isolation.supervise import run_child
from stress.vocabulary import PhaseStatus

INFO = {"kind": "info", "backend": "sim", "device": 0}


@pytest.fixture
def start(tmp_path, monkeypatch):
    """Starts a fork server with the environment of the moment (pytest changes
    ``PYTEST_CURRENT_TEST`` between a fixture and the test: a server started in a fixture would
    rightly refuse the test's jobs)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("ACLSIM_FAULTS", raising=False)
    with ExitStack() as stack:
        yield lambda: stack.enter_context(fork_server(True, dict(os.environ), [], []))
    assert list(tmp_path.iterdir()) == [], "temp files left behind"


def _maps(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


def test_a_forked_job_gets_its_environment_and_the_server_never_loads_the_backend(start):
    server = start()
    started: list = []
    spawn = server.spawn

    def watched(*args, **kwargs):
        child = spawn(*args, **kwargs)
        started.append(child)
        stat = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        started.append((int(stat[1]), int(stat[2])))  # ppid, pgrp
        return child

    server.spawn = watched  # type: ignore[method-assign]
    result = run_child(INFO, lambda r: None, silence_timeout=60, server=server,
                       env={"ACLSIM_FAULTS": "crash"})  # fmt: skip
    assert result.status == PhaseStatus.DONE, result
    assert result.end.fingerprint["faults"] == ["crash"]  # applied before the backend loaded
    child, (ppid, pgrp) = started
    assert ppid == server._proc.pid and pgrp == child.pid  # forked, in its own process group
    assert child.returncode == 0
    assert "libaclsim" not in _maps(server._proc.pid)


def test_only_variables_read_after_the_fork_may_differ(start):
    server = start()
    env = dict(server.env)
    assert server.serves(env)
    assert server.serves({**env, "ACLSIM_FAULTS": "tiling-race"})
    assert not server.serves({**env, "LD_PRELOAD": "/usr/lib/libasan.so"})
    assert not server.serves({**env, "ACLSIM_VARIANT": "tsan"})
    assert not server.serves({k: v for k, v in env.items() if k != "PATH"})


def test_a_job_that_must_exec_is_not_forked(start):
    server = start()
    server.spawn = None  # type: ignore[assignment]  # would raise if called
    result = run_child(INFO, lambda r: None, silence_timeout=60, server=server,
                       env={"ACLSIM_VARIANT": ""})  # fmt: skip
    assert result.status == PhaseStatus.DONE, result


def test_a_dead_server_leaves_every_child_to_a_cold_start(start):
    server = start()
    os.kill(server._proc.pid, signal.SIGKILL)
    server._proc.wait()
    result = run_child(INFO, lambda r: None, silence_timeout=60, server=server)
    assert result.status == PhaseStatus.DONE, result


def test_a_failing_forked_job_is_failed_with_its_stderr_and_the_server_serves_on(start):
    server = start()
    result = run_child(
        {"kind": "nonexistent"}, lambda r: None, silence_timeout=60, server=server
    )  # a job the child cannot run: failed, with its traceback on the child's stderr
    assert result.status == PhaseStatus.FAILED and "KeyError" in result.stderr_tail, result
    again = run_child(INFO, lambda r: None, silence_timeout=60, server=server)
    assert again.status == PhaseStatus.DONE, again


def test_a_closed_server_ends_and_takes_its_children_with_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    srv = ForkServer(dict(os.environ))
    fifo = tmp_path / "job"
    os.mkfifo(fifo)
    job = os.open(fifo, os.O_RDWR)  # an empty FIFO as the job file: the child blocks reading it
    rfd, wfd = os.pipe()
    null = os.open(os.devnull, os.O_WRONLY)
    child = srv.spawn(job, wfd, null, dict(os.environ))
    time.sleep(0.2)
    assert alive(child.pid)
    srv.close()
    deadline = time.monotonic() + 5
    while alive(child.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child.pid), "a forked child outlived its fork server"
    assert child.wait() == -signal.SIGKILL
    for fd in (job, rfd, wfd, null):
        os.close(fd)


def test_a_frozen_build_key_skips_hashing_the_default_sources_only(tmp_path, monkeypatch):
    from stress.sim import _build

    monkeypatch.setattr(_build, "_frozen_keys", {})
    _build.freeze_build_key()
    key = _build.build_key()

    def unreadable(src):
        raise AssertionError(f"hashed {src}")

    monkeypatch.setattr(_build, "source_files", unreadable)
    assert _build.build_key() == key  # the fork server's children: no hashing
    with pytest.raises(AssertionError, match="hashed"):
        _build.build_key(tmp_path)  # other sources are hashed as before


def test_a_stuck_server_is_killed_and_its_job_starts_cold(start, tmp_path):
    server = start()
    os.kill(server._proc.pid, signal.SIGSTOP)  # stuck (importing, say): it never answers
    job = tmp_path / "job"
    job.write_text("{}")
    with job.open("rb") as fh, open(os.devnull, "wb") as null:
        with pytest.raises(ForkServerGone):
            server.spawn(fh.fileno(), null.fileno(), null.fileno(), dict(os.environ), 0.5)
    job.unlink()
    assert server._proc.poll() is not None, "the stuck server was killed"
    assert not server.serves(dict(server.env))
    result = run_child(INFO, lambda r: None, silence_timeout=60, server=server)
    assert result.status == PhaseStatus.DONE, result


_PROBE = r"""
import json, os, select, sys, threading
from stress.engine.isolation.forkserver import fork_server, may_fork_here
from stress.engine.isolation.supervise import run_child

if sys.argv[1] == "threaded":
    threading.Thread(target=threading.Event().wait, daemon=True).start()
r, w = os.pipe()
env = dict(os.environ)
with fork_server(True, env, [], []) as server:
    pid = server._proc.pid
    os.close(w)  # the server must hold no copy of it: then the read end sees EOF at once
    eof = bool(select.select([r], [], [], 5)[0]) and os.read(r, 1) == b""
    result = run_child({"kind": "info", "backend": "sim", "device": 0}, lambda rec: None,
                       silence_timeout=60, server=server)
    print(json.dumps({
        "may_fork": may_fork_here(env),
        "lookalike": open(f"/proc/{pid}/cmdline", "rb").read()
                     == open("/proc/self/cmdline", "rb").read(),
        "eof": eof,
        "status": result.status,
        "backend_here": "libaclsim" in open("/proc/self/maps").read(),
    }))
"""


@pytest.mark.parametrize("mode", ["single", "threaded"])
def test_a_single_threaded_session_forks_the_server_itself_and_keeps_none_of_its_files(mode):
    """A session with one thread forks the server (no interpreter start, no import); the server
    keeps none of the session's descriptors (a pipe the session closes reads EOF, so a caller
    waiting for the session's output is never held open by the server). A session with another
    thread starts the server as a fresh interpreter (a fork keeps only the forking thread)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True,
                          timeout=120, env=env, cwd=Path(__file__).parents[1])  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    forked = mode == "single"
    assert seen["may_fork"] is forked and seen["lookalike"] is forked, seen
    assert seen["eof"] and seen["status"] == PhaseStatus.DONE, seen
    assert not seen["backend_here"]  # the session never loads the backend, either way


def test_a_different_start_environment_is_never_forked(monkeypatch):
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    assert not may_fork_here({**os.environ, "LD_PRELOAD": "/usr/lib/libasan.so"})
    assert not may_fork_here({**os.environ, "PYTHONHASHSEED": "7"})
