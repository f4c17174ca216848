"""The ``pipeline`` API mode: phase 1 on the calling thread, the launch on a launcher thread.

Serving stacks split a call between threads: a producer prepares it (uploads, the operator's
``aclnnXxxGetWorkspaceSize``, the workspace) and hands the executor to a launch thread that
calls ``aclnnXxx(workspace, size, executor, stream)``; the producer goes on to prepare the
next. :class:`Launcher` is that launch thread, fed by a queue from every worker of a phase (on
T threads several prepared calls wait in it at once); :func:`run_pipeline` is one call of the
mode: phase 1 on the worker, the launch on the launcher, then the worker synchronizes its
stream and downloads. An operator whose phase 2 reads state that phase 1 left in its own thread
(thread-local tiling, a per-thread cache) launches with another thread's state here, which a
call whose two phases share a thread cannot show.

Contexts on real CANN (``/work/shared/spec/acl-api.md`` §1: the current context is per thread;
a context made on one thread may be used on another, the user ordering the tasks; a stream must
belong to the current context, else 107003): the launcher makes the context phase 1 ran under
(the call's) current before each launch (``aclrtSetCurrentContext``, cheap, the last one wins),
so the launch runs under the context of its stream and of its executor whichever of the two the
runtime binds an executor to. UNVERIFIED on CANN: that an executor made by phase 1 on one
thread may be launched on another at all (no statement in the opbase or ops docs; the spec
calls both phases back to back on one thread the safest); whether nnopbase ties an executor to
the context current at phase 1 or at launch (the launcher's binding makes both the same). The
error text of a failed launch (``aclGetRecentErrMsg``, thread-level by default) is read on the
launcher, the thread that got the status.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field

from stress import acl
from stress.engine.call.execute import CallTimeout, run_opened
from stress.engine.call.opening import CallSite
from stress.engine.call.prepared import OpCall
from stress.grading.judge import Outcome

__all__ = ["Launcher", "run_pipeline"]


@dataclass
class _Job:
    """One hand-off: the prepared call and its stream; ``done`` set once it was launched."""

    call: OpCall
    stream: acl.Stream
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


class Launcher:
    """A launch thread: takes prepared calls from a queue and launches each in turn (phase 2),
    under the call's context. Started on first use; :meth:`close` ends it."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.launched = 0  # calls this thread launched
        self.ident: int | None = None  # the launch thread's id, once started

    def launch(self, call: OpCall, stream: acl.Stream, timeout_s: float | None) -> None:
        """Hand ``call`` (phase 1 done) to the launch thread and wait until it was launched;
        re-raises the launch's error, raises :class:`CallTimeout` when the launch thread does
        not get to it within ``timeout_s`` (a launch stuck in the runtime)."""
        job = _Job(call, stream)
        self._start()
        self._queue.put(job)
        if not job.done.wait(timeout_s):
            raise CallTimeout(f"{call.spec.function}: not launched within {timeout_s} s")
        if job.error is not None:
            raise job.error

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="aclnn-stress-launcher", daemon=True
                )
                self._thread.start()

    def _loop(self) -> None:
        self.ident = threading.get_ident()
        while True:
            job = self._queue.get()
            if job is None:
                return
            try:
                job.call.context.bind()  # the context phase 1 ran under, current on this thread
                job.call.phase2(job.stream)
                self.launched += 1
            except BaseException as exc:  # handed to the producer, which reports it
                job.error = exc
            finally:
                job.done.set()

    def close(self) -> None:
        """End the launch thread (after the calls queued before); a thread stuck in a launch
        is left (a daemon: the process ends without it)."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout=5.0)


def run_pipeline(site: CallSite, launcher: Launcher) -> Outcome:
    """One call in the pipeline mode (see the module's docstring): build and phase 1 here, the
    launch on ``launcher``, then synchronize the site's stream and download here. Raises
    :class:`CallTimeout` as :func:`stress.engine.call.execute.run_call` does."""
    start = time.perf_counter()
    call = site.open(OpCall, start)
    if isinstance(call, Outcome):
        return call
    stream, timeout_ms = site.stream, site.timeout_ms
    limit = None if timeout_ms is None else timeout_ms / 1000
    return run_opened(call, stream, start, timeout_ms, lambda: launcher.launch(call, stream, limit))
