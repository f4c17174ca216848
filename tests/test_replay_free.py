"""The pool's free-running mode (WorkerPool.run_free): no barrier, calls numbered as they start,
the budget counted in rounds of ``threads`` calls, a hang or an error still stops everyone."""

from __future__ import annotations

import threading
import time

import pytest

from stress.engine.replay.phase_budget import Budget
from stress.engine.replay.pool import PoolAborted, WorkerPool
from stress.vocabulary import Status


def test_free_calls_are_numbered_as_they_start_and_stop_at_the_budget(device):
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()

    def task(worker, n):
        with lock:
            seen.append((worker.index, n))

    with WorkerPool(device, 4) as pool:
        after = pool.run_free(task, Budget(rounds=5))
    numbers = sorted(n for _, n in seen)
    assert numbers == list(range(20))  # 5 rounds of 4 calls, each number given once
    assert after > max(numbers) // 4  # the next free round number: later rounds go on after it


def test_free_workers_do_not_wait_for_each_other(device):
    """A slow call holds back only its own worker (aligned rounds would hold back all)."""
    calls = {0: 0, 1: 0}

    def task(worker, n):
        calls[worker.index] += 1
        if worker.index == 0:
            time.sleep(0.2)

    with WorkerPool(device, 2) as pool:
        pool.run_free(task, Budget(seconds=0.3))
    assert calls[0] <= 2 and calls[1] > 10 * calls[0], calls


def test_a_free_running_hang_is_reported(device):
    hangs: list = []

    def task(worker, n):
        worker.begin(case="stuck", round=n)
        if worker.index == 0:
            time.sleep(1.0)

    with WorkerPool(device, 2, call_timeout_s=0.2, on_hang=hangs.append) as pool:
        with pytest.raises(PoolAborted) as err:
            pool.run_free(task, Budget(seconds=5))
    assert err.value.reason == Status.HANG
    assert [s.call.worker for s in hangs[0].stuck] == [0]


def test_an_error_in_one_free_worker_stops_them_all(device):
    def task(worker, n):
        if n == 3:
            raise ValueError("bug in a task")

    with WorkerPool(device, 3) as pool, pytest.raises(ValueError, match="bug in a task"):
        pool.run_free(task, Budget(seconds=30))
