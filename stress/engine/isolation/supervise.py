"""Supervised child processes: a phase runs in its own process, watched by the parent.

An operator that crashes takes its process with it, and one that deadlocks cannot be
interrupted from Python. So each phase (and the baseline recording) runs in a child
``python -m stress.engine.isolation.child JOB FD`` (:mod:`stress.engine.isolation.child`; this
module is the supervising side). The child writes JSON records to the pipe FD: ``begin`` markers (a
call started: case, worker) and the call records themselves. The parent forwards call records
to the result file as they arrive and tracks which calls are in flight.

* child exits by a signal  -> ``crash``: every call in flight gets a ``crash`` record naming the
  signal and the tail of the child's stderr;
* child silent for longer than the watchdog -> killed -> ``hang`` records for the calls in
  flight (the child's own watchdog normally reports a hang first, then exits);
* child exits non-zero -> ``failed`` with the stderr tail (a bug or a configuration error).

The records already written stay: nothing recorded is lost.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from stress.engine.isolation.child import PARENT_ENV
from stress.engine.isolation.forkserver import ForkedChild, ForkServer, ForkServerGone
from stress.engine.isolation.messages import ChildEnd, ChildError, Job, Line, Ready, read_line
from stress.records import CallBegin, CallRecord, RecordedCase
from stress.vocabulary import ChildStatus, PhaseStatus

__all__ = ["CHILD_COMMAND", "ChildResult", "run_child", "run_in_process"]

STDERR_TAIL = 2000
CHILD_COMMAND = (sys.executable, "-m", "stress.engine.isolation.child")
Child = subprocess.Popen | ForkedChild


@dataclass
class ChildResult:
    """How a child ended."""

    status: str  # done | hung | crashed | failed | interrupted
    returncode: int | None = None
    signal: str | None = None
    detail: str = ""
    stderr_tail: str = ""
    in_flight: list[dict[str, Any]] = field(default_factory=list)  # CallBegin.flying()s
    end: ChildEnd | None = None  # the child's own last line (None: it died before it)

    @property
    def error(self) -> ChildError | None:
        """The exception the child's job ended with, if it said."""
        return None if self.end is None else self.end.error


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _tail(fh: IO[bytes]) -> str:
    try:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, size - STDERR_TAIL))
        data = fh.read()
    except OSError:
        return ""
    return data.decode("utf-8", "replace").strip()


def run_child(
    job: dict[str, Any],
    on_record: Callable[[Line], None],
    *,
    silence_timeout: float,
    startup_timeout: float = 300.0,
    env: dict[str, str] | None = None,
    command: list[str] | None = None,
    stop_grace: float = 5.0,
    server: ForkServer | None = None,
    cancel: threading.Event | None = None,
) -> ChildResult:
    """Run ``job`` in a child; call ``on_record`` for every line it sends, typed
    (:func:`~stress.engine.isolation.messages.read_line`), but ``ready``, ``begin`` and its end.

    ``command`` replaces ``[python, -m, stress.engine.isolation.child]`` (tests use it to stand
    in a child that misbehaves on purpose); the job file and the pipe fd are appended to it.
    Interrupted (``KeyboardInterrupt``), the child is asked to stop and given ``stop_grace``
    seconds to end its calls in flight before it is killed. With a fork ``server`` the child
    is forked from it (no cold start) unless ``command`` is given or the job's environment
    differs in what only an exec applies (``LD_PRELOAD``...); it then starts as above. Once
    ``cancel`` is set the child is killed at once (its result is then of no use: a step run
    ahead of need, :mod:`stress.engine.run.step_batch`).
    """
    # The job and the child's stderr live in unnamed temp files (nothing to clean up, nothing
    # left behind however the parent dies); the child reads the job as /dev/fd/N.
    with tempfile.TemporaryFile() as job_file, tempfile.TemporaryFile() as err:
        job_file.write(json.dumps(job).encode())
        job_file.flush()
        rfd, wfd = os.pipe()
        child_env = {**os.environ, **(env or {})}
        try:
            proc = _start(command, server, job_file.fileno(), wfd, err, child_env, startup_timeout)
        except OSError as exc:  # EAGAIN / ENOMEM: the host's limit, not the operator's fault
            os.close(rfd)
            os.close(wfd)
            from stress.errors import ConfigError

            raise ConfigError(
                f"cannot start the phase child ({exc.strerror or exc}); free memory or raise "
                "the process limits (ulimit -u, ulimit -v), or run with fewer jobs at once"
            ) from None
        os.close(wfd)
        try:
            result = _supervise(proc, rfd, on_record, silence_timeout, startup_timeout, cancel)
        except KeyboardInterrupt:
            _stop(proc, rfd, on_record, stop_grace)
            os.close(rfd)
            raise
        except BaseException:
            _kill_group(proc)
            os.close(rfd)
            raise
        os.close(rfd)
        result.stderr_tail = _tail(err)
        return result


def _start(
    command: list[str] | None,
    server: ForkServer | None,
    job_fd: int,
    wfd: int,
    err: IO[bytes],
    env: dict[str, str],
    timeout: float,
) -> subprocess.Popen | ForkedChild:
    """The child: forked by ``server`` where it may be, else a fresh ``python -m`` process."""
    if server is not None and command is None and server.serves(env):
        try:
            return server.spawn(job_fd, wfd, err.fileno(), env, timeout)
        except ForkServerGone:
            pass  # fall back to a cold start: slower, never wrong
    return subprocess.Popen(
        [*(command or CHILD_COMMAND), f"/dev/fd/{job_fd}", str(wfd)],
        pass_fds=(wfd, job_fd),
        stdin=subprocess.DEVNULL,
        stdout=err,
        stderr=err,
        env={**env, PARENT_ENV: str(os.getpid())},
        process_group=0,  # the parent alone handles Ctrl-C; killpg reaches grandchildren
    )


def _stop(proc: Child, rfd: int, on_record: Callable[[Line], None], grace: float) -> None:
    """Ask the child to stop (SIGTERM: it ends the round, so calls in flight finish and are
    recorded), keep taking its records for at most ``grace`` seconds, then kill the group."""
    timer = threading.Timer(grace, _kill_group, (proc,))
    timer.start()
    try:
        proc.send_signal(signal.SIGTERM)
        _supervise(proc, rfd, on_record, grace, grace)
    except (OSError, ValueError):
        pass  # a torn record or a closed pipe: what arrived before it is kept
    finally:
        timer.cancel()
        _kill_group(proc)


def _kill_group(proc: Child) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _supervise(
    proc: Child,
    rfd: int,
    on_record: Callable[[Line], None],
    silence_timeout: float,
    startup_timeout: float,
    cancel: threading.Event | None = None,
) -> ChildResult:
    in_flight: dict[int, CallBegin] = {}
    end: ChildEnd | None = None
    buffer = b""
    started = False
    last = time.monotonic()
    sel = selectors.DefaultSelector()
    sel.register(rfd, selectors.EVENT_READ)
    eof = False
    killed_for_silence = False
    try:
        while not eof:
            limit = silence_timeout if started else startup_timeout
            events = sel.select(timeout=min(1.0 if cancel is None else 0.05, limit))
            if cancel is not None and cancel.is_set():
                _kill_group(proc)
                break
            if not events:
                if time.monotonic() - last > limit:
                    killed_for_silence = True
                    _kill_group(proc)
                    break
                continue
            chunk = os.read(rfd, 1 << 16)
            if not chunk:
                eof = True
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            last = time.monotonic()
            for line in lines:
                if not line.strip():
                    continue
                rec = read_line(json.loads(line))
                if isinstance(rec, Ready):
                    started = True
                elif isinstance(rec, CallBegin):
                    in_flight[rec.worker] = rec
                elif isinstance(rec, ChildEnd):
                    end = rec
                else:
                    if isinstance(rec, CallRecord | RecordedCase):  # a call or a case ended
                        worker = rec.worker if isinstance(rec, CallRecord) else None
                        in_flight.pop(worker or 0, None)
                    on_record(rec)
    finally:
        sel.close()
    returncode = proc.wait()
    begun = list(in_flight.values())
    return _ending(returncode, end, begun, silence_timeout if killed_for_silence else None)


def _naming(begun: list[CallBegin]) -> str:
    """`` in case 'a'`` (or ``cases 'a', 'b'``): what the silent child was running."""
    cases = sorted({str(b.case) for b in begun if b.case})
    if not cases:
        return ""
    return f" in case{'s' if len(cases) > 1 else ''} " + ", ".join(f"'{c}'" for c in cases)


def _ending(
    returncode: int, end: ChildEnd | None, begun: list[CallBegin], silenced: float | None
) -> ChildResult:
    """How the child ended, from its exit status and its own ``child-end`` record;
    ``silenced``: the silence (seconds) it was killed for, if it was."""
    flying = [b.flying() for b in begun]
    if silenced is not None:
        return ChildResult(
            PhaseStatus.HUNG,
            returncode,
            detail=f"no progress for {silenced:.0f} s{_naming(begun)}; child killed",
            in_flight=flying,
            end=end,
        )
    if returncode < 0:
        name = _signal_name(returncode)
        return ChildResult(
            PhaseStatus.CRASHED,
            returncode,
            name,
            f"child died with {name}",
            in_flight=flying,
            end=end,
        )
    if end is not None and end.status == ChildStatus.HUNG:
        return ChildResult(PhaseStatus.HUNG, returncode, detail=end.detail, end=end)
    if returncode != 0 or end is None:
        return ChildResult(
            PhaseStatus.FAILED,
            returncode,
            detail=(end and end.detail) or f"child exited with status {returncode}",
            in_flight=flying,
            end=end,
        )
    return ChildResult(PhaseStatus.DONE, returncode, detail=end.detail, end=end)


def run_in_process(job: dict[str, Any], on_record: Callable[[Line], None]) -> ChildResult:
    """``job`` run in this process (``--no-isolate``): the result a child would have sent,
    without its ``begin``/``ready`` notices; a crash or hang here ends the run itself."""
    from stress.engine.isolation import jobs

    def send(data: dict[str, Any]) -> None:
        rec = read_line(data)
        if not isinstance(rec, Ready | CallBegin):
            on_record(rec)

    end = jobs.run_job(Job.from_json(job), send)
    return ChildResult(PhaseStatus(end.status), 0, detail=end.detail, end=end)
