"""The child's side of a supervised child process:
``python -m stress.engine.isolation.child JOB FD``.

The child runs one job (:func:`stress.engine.isolation.jobs.run_job` by default), writes its
records as JSON lines to the pipe ``FD`` and ends with a ``child-end`` record; it dies with its
parent (``PR_SET_PDEATHSIG``). The supervising side is :mod:`stress.engine.isolation.supervise`.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stress.engine.isolation.messages import PHASE, ChildEnd, ChildError, Job
from stress.vocabulary import ChildStatus

__all__ = ["PARENT_ENV", "child_main", "die_with_parent"]

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PARENT_ENV = "ACLNN_STRESS_PARENT_PID"  # the child checks it still has this parent


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (``PR_SET_PDEATHSIG``), and
    exit at once if the parent is already gone (it died before the request was made)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the parent's killpg still ends us when it can
    parent = os.environ.get(PARENT_ENV)
    if parent and parent.isdigit() and os.getppid() != int(parent):
        os._exit(4)


def child_main(job_path: str, fd: int, run: Callable[..., ChildEnd] | None = None) -> None:
    """The child's side: run the job (``run(job, send)``, default
    :func:`stress.engine.isolation.jobs.run_job`), send its records and its
    :class:`~stress.engine.isolation.messages.ChildEnd` down ``fd``, exit without teardown."""
    die_with_parent()
    out = os.fdopen(fd, "w", buffering=1, encoding="utf-8")

    def send(rec: dict[str, Any]) -> None:
        out.write(json.dumps(rec, separators=(",", ":")) + "\n")

    job = Job.from_json(json.loads(Path(job_path).read_text()))
    if job.kind == PHASE:  # a phase ends its round on SIGTERM; a recording just dies
        from stress.engine.replay import stop

        stop.listen()
    try:
        if run is None:
            from stress.engine.isolation.jobs import run_job as run
        end = run(job, send)
    except Exception as exc:
        error = ChildError.of(exc)
        end = ChildEnd(ChildStatus.ERROR, f"{type(exc).__name__}: {exc}", error)
        if not error.user:
            import traceback

            traceback.print_exc()
    send(end.to_json())
    out.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: stuck worker threads (after a hang) must not block the exit,
    # and CANN must not be finalised from exit handlers.
    os._exit(0 if end.status in (ChildStatus.DONE, ChildStatus.HUNG) else 3)


if __name__ == "__main__":
    child_main(sys.argv[1], int(sys.argv[2]))
