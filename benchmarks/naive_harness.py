"""The naive harness, as a competent user would write it: the peer of benchmarks/detection.py.

T threads share one context and loop over randomly chosen cases of the whole corpus (the
control cases included), each call checked on its own against the serial baseline: status,
sha256 (tolerance for the cases the baseline grades so), and the canary the outputs are
prefilled with (an output element still holding it was never written). A watchdog ends a call
still running after ``--call-timeout`` (the framework's 10 s) as a hang. ``--stream shared``
puts every worker on one stream, ``per-thread`` gives each its own. What it does not do, by
design (the framework's protocol): barriers, stage interleaving, isolated or serial phases,
order-dependence or self-race checks, and any diagnosis beyond "failed".

It stops at the first failure and prints one line

    naive: first failure <x> s after exec (<y> s after the harness start), case C: WHY

where "exec" is the monotonic time the benchmark passed in ``BENCH_EXEC_T0`` just before it
started this process (CLOCK_MONOTONIC is system-wide, so the two processes' readings compare),
and "the harness start" is this module's first line after its imports. Exit 1 on a failure,
0 when the budget ran out clean, 2 on bad arguments.

    python benchmarks/naive_harness.py --corpus A.toml [--corpus B.toml ...] --baseline B.json
        [--threads 8] [--duration 10] [--seed 1] [--stream shared|per-thread]
"""

from __future__ import annotations

import time

_STARTED = time.monotonic()

import argparse  # noqa: E402  (after the start stamp: the imports count as start-up)
import os  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

import numpy as np  # noqa: E402

from stress import acl  # noqa: E402
from stress.baseline import Baseline  # noqa: E402
from stress.corpus import load_corpus  # noqa: E402
from stress.engine.call.execute import CallTimeout, run_call  # noqa: E402
from stress.engine.call.inputs import InputCache  # noqa: E402
from stress.grading.judge import judge  # noqa: E402
from stress.vocabulary import Status  # noqa: E402

_HARNESS_START = time.monotonic()


def _exec_t0() -> float:
    """The benchmark's monotonic stamp taken just before exec; this process's own start
    (module import) when it was started by hand."""
    try:
        return float(os.environ["BENCH_EXEC_T0"])
    except (KeyError, ValueError):
        return _STARTED


class Stop:
    """The first failure, reported once; every worker stops after it."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._lock = threading.Lock()

        self.calls = 0  # calls finished, all workers

    def fail(self, case: str, why: str) -> None:
        with self._lock:
            if self.event.is_set():
                return
            now = time.monotonic()
            print(
                f"naive: first failure {now - _exec_t0():.3f} s after exec "
                f"({now - _HARNESS_START:.3f} s after the harness start), case {case}: {why} "
                f"[after {self.calls} calls]",
                flush=True,
            )
            self.event.set()


def _verdict(case, outcome, expected) -> str:
    """Why one call failed, or "" (the framework's per-call judgement: baseline and canary)."""
    rec = judge(case, outcome, expected, phase="naive")
    if rec.unwritten:
        return f"canary left in {sorted(rec.unwritten)}"
    if outcome.status != Status.OK and not rec.match:
        return f"status {outcome.code} {outcome.message}".strip()
    if rec.match is False:
        return "differs from the serial baseline"
    return ""


def _watchdog(busy: list[tuple[str, float] | None], timeout: float, stop: Stop) -> None:
    """A call running past ``timeout`` is a hang: report it and end the process (the stuck
    thread cannot be joined)."""
    while not stop.event.wait(0.05):
        now = time.monotonic()
        for item in list(busy):
            if item is not None and now - item[1] > timeout:
                stop.fail(item[0], f"hang: a call still running after {timeout:g} s")
                os._exit(1)


def run(args: argparse.Namespace) -> int:
    rt = acl.runtime(args.backend)
    cases = load_corpus(args.corpus)
    baseline = Baseline.load(args.baseline)
    rt.set_deterministic(True)
    ctx = rt.device(0).create_context()
    shared = ctx.create_stream()
    inputs = InputCache(ctx, shared)
    for case in cases:
        inputs.get(case)
    streams = [shared]
    if args.stream == "per-thread":
        streams = [ctx.create_stream() for _ in range(args.threads)]
    stop = Stop()
    busy: list[tuple[str, float] | None] = [None] * args.threads
    counts = [0] * args.threads
    deadline = time.monotonic() + args.duration
    timeout_ms = int(args.call_timeout * 1000)

    def worker(w: int) -> None:
        ctx.bind()
        stream = streams[w % len(streams)]
        rng = np.random.default_rng([args.seed, w])
        while not stop.event.is_set() and time.monotonic() < deadline:
            with stop._lock:
                if args.max_calls and stop.calls >= args.max_calls:
                    return
                stop.calls += 1
            case = cases[int(rng.integers(len(cases)))]
            busy[w] = (case.id, time.monotonic())
            try:
                outcome = run_call(ctx, stream, case, inputs.get(case), timeout_ms=timeout_ms)
            except CallTimeout:
                stop.fail(
                    case.id, f"hang: stream synchronisation timed out ({args.call_timeout:g} s)"
                )
                os._exit(1)
            busy[w] = None
            counts[w] += 1
            why = _verdict(case, outcome, baseline.cases.get(case.id))
            if why:
                stop.fail(case.id, why)

    dog = threading.Thread(target=_watchdog, args=(busy, args.call_timeout, stop), daemon=True)
    dog.start()
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if stop.event.is_set():
        return 1
    print(f"naive: clean, {sum(counts)} calls", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append", required=True)
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--stream", choices=("shared", "per-thread"), default="shared")
    ap.add_argument("--call-timeout", type=float, default=10.0)
    ap.add_argument("--max-calls", type=int, default=0, help="stop after N calls (0: no limit)")
    ap.add_argument("--backend", default="sim")
    args = ap.parse_args(argv)
    if args.threads < 1 or not args.duration > 0 or not args.call_timeout > 0:
        ap.error("--threads must be >= 1, --duration and --call-timeout > 0")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
