"""The naive harness of the problem report, for comparison with the framework
(benchmarks/detection.py runs it as a supervised child: ``python naive_harness.py JOB FD``).

T threads share one context and one stream and loop over randomly chosen valid cases,
comparing each call's sha256 with the serial baseline: no barrier, no stage interleaving,
no canary accounting, no isolated or control runs. Stops at the first mismatch or error.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import numpy as np

from stress import acl
from stress.baseline import Baseline
from stress.corpus import load_corpus
from stress.engine.call.execute import run_call
from stress.engine.call.inputs import InputCache
from stress.engine.isolation.child import child_main
from stress.grading.digest import call_digest, digest
from stress.vocabulary import PhaseStatus, Status


def naive(job: dict[str, Any], send: Any) -> tuple[str, str, dict[str, Any]]:
    """Run the naive harness for ``job["duration"]`` seconds; ``detected`` in the end record."""
    rt = acl.runtime(job.get("backend"))
    cases = [c for c in load_corpus(job["corpus"]) if not c.negative]
    baseline = Baseline.load(job["baseline"])
    rt.set_deterministic(True)
    ctx = rt.device(0).create_context()
    stream = ctx.create_stream()
    inputs = InputCache(ctx, stream)
    for case in cases:
        inputs.get(case)
    send({"type": "ready"})
    stop = threading.Event()
    deadline = time.monotonic() + job["duration"]
    counts = [0] * job["threads"]

    def worker(w: int) -> None:
        ctx.bind()
        rng = np.random.default_rng([job["seed"], w])
        while not stop.is_set() and time.monotonic() < deadline:
            case = cases[int(rng.integers(len(cases)))]
            outcome = run_call(ctx, stream, case, inputs.get(case))
            counts[w] += 1
            expected = baseline.cases[case.id].call_digest
            if outcome.status != Status.OK:
                bad = f"status {outcome.code}"
            else:
                got = call_digest({n: digest(a) for n, a in outcome.outputs.items()})
                bad = "" if got == expected else "sha256 differs from the serial baseline"
            if bad:
                send(
                    {
                        "type": "call",
                        "phase": "naive",
                        "case": case.id,
                        "worker": w,
                        "status": outcome.status,
                        "match": False,
                        "message": bad,
                    }
                )
                stop.set()

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(job["threads"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return PhaseStatus.DONE, "", {"calls": sum(counts), "detected": stop.is_set()}


if __name__ == "__main__":
    child_main(sys.argv[1], int(sys.argv[2]), run=naive)
