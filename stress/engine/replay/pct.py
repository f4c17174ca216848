"""A seeded PCT scheduler over the stage boundaries of two-stage calls.

PCT (probabilistic concurrency testing, Burckhardt et al., ASPLOS 2010) explores orderings of
any depth with a known probability. Here the "threads" are ``n`` calls run by one host thread
and each call has two steps: phase 1 (``...GetWorkspaceSize``) and the launch (phase 2); one
stream sync follows. A schedule:

1. gives the n calls distinct random priorities ``d .. d+n-1``;
2. picks ``d-1`` change points among the ``k = 2n`` steps;
3. at every step runs the next step of the enabled call with the highest priority; at the
   ``i``-th change point that call's priority drops to ``d-1-i`` (below every initial one)
   before the choice is made.

A bug of depth ``d`` (``d`` ordering constraints between steps must hold, e.g. "A's phase 1,
B's phase 1 and C's phase 1 all before A's launch" is depth 3) is hit by one schedule with
probability at least ``1 / (n · k^(d-1))``: for n = 3 calls, k = 6 steps, d = 3 that is
1/108 per schedule, so ``s`` schedules miss it with probability at most ``(1 - 1/108)^s``
(s = 250: ≤ 10 %; s = 500: ≤ 1 %). The simulator fault ``tiling-ring`` (depth 3) is what this
is measured against (``benchmarks/bench_pct.py``); the pair matrix cannot hit it.

The same (seed, schedule index) gives the same order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

__all__ = ["DEPTH", "GROUP", "STEPS", "groups", "pct_order"]

#: The bug depth the schedules target (d) and the calls per schedule (n).
DEPTH = 3
GROUP = 3
#: The steps of one call, in the order a call must take them.
STEPS = ("phase1", "phase2")


def pct_order(n: int, rng: np.random.Generator, depth: int = DEPTH) -> list[tuple[int, str]]:
    """One PCT schedule: (call index, step) for every step of ``n`` calls."""
    k = n * len(STEPS)
    prio = [float(p) for p in rng.permutation(n) + depth]
    changes = sorted(int(c) for c in rng.choice(k, size=min(depth - 1, k), replace=False))
    done = [0] * n
    order: list[tuple[int, str]] = []
    for t in range(k):
        enabled = [c for c in range(n) if done[c] < len(STEPS)]
        c = max(enabled, key=prio.__getitem__)
        if t in changes:
            prio[c] = depth - 1 - changes.index(t)
            c = max(enabled, key=prio.__getitem__)
        order.append((c, STEPS[done[c]]))
        done[c] += 1
    return order


def groups(
    keys: Sequence[tuple[str, str]], rng: np.random.Generator, size: int = GROUP
) -> list[int]:
    """Indices of ``size`` cases to run together: cases of one operator with distinct shapes
    when an operator has that many (host-side state such as a tiling cache is per operator and
    keyed by shape), else any distinct cases. ``keys[i]`` is (operator, shape key)."""
    by_op: dict[str, dict[str, int]] = defaultdict(dict)
    for i, (op, key) in enumerate(keys):
        by_op[op].setdefault(key, i)
    rich = sorted(op for op, shapes in by_op.items() if len(shapes) >= size)
    if rich:
        op = rich[int(rng.integers(len(rich)))]
        pool = sorted(by_op[op].values())
    else:
        pool = list(range(len(keys)))
    take = min(size, len(pool))
    return [pool[int(i)] for i in rng.choice(len(pool), size=take, replace=False)]
