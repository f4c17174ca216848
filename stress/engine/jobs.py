"""What a child process does: one job described by a JSON dict (see :mod:`stress.engine.isolate`).

Kinds: ``info`` (load the backend, report its fingerprint), ``record`` (record a baseline and
save it), ``phase`` (run one protocol phase, streaming call records). The same functions run
in-process when isolation is off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stress import acl
from stress.baseline.record import backend_fingerprint, record_baseline
from stress.baseline.store import Baseline
from stress.config import CONCURRENT_PHASES, RunConfig
from stress.corpus.parse import load_corpus
from stress.engine.digest import call_digest, digest
from stress.engine.phases import PhaseRunner
from stress.model import PhaseStatus, Status

__all__ = ["run_job"]

Send = Callable[[dict[str, Any]], None]


def _info(job: dict[str, Any], send: Send) -> tuple[str, str, dict[str, Any]]:
    rt = acl.runtime(job.get("backend"))
    send({"type": "ready"})
    return PhaseStatus.DONE, "", {"fingerprint": backend_fingerprint(rt), "info": rt.info()}


def _record(job: dict[str, Any], send: Send) -> tuple[str, str, dict[str, Any]]:
    rt = acl.runtime(job.get("backend"))
    cases = load_corpus(job["corpus"])
    send({"type": "ready"})

    def progress(case, cb) -> None:
        send(
            {
                "type": "recorded",
                "case": case.id,
                "status": cb.status,
                "code": cb.code,
                "grading": cb.grading,
                "bit_deterministic": cb.bit_deterministic,
                "reference": cb.reference,
                "unwritten": {k: o.unwritten for k, o in cb.outputs.items() if o.unwritten},
            }
        )

    config = RunConfig.from_json(job["config"])
    baseline = record_baseline(
        rt,
        cases,
        repeats=config.repeats,
        canary=config.canary,
        deterministic=config.deterministic,
        device=config.device,
        call_timeout_ms=config.call_timeout_ms,
        progress=progress,
    )
    path = baseline.save(job["out"])
    return PhaseStatus.DONE, "", {"path": str(path)}


def _phase(job: dict[str, Any], send: Send) -> tuple[str, str, dict[str, Any]]:
    rt = acl.runtime(job.get("backend"))
    config = RunConfig.from_json(job["config"])
    cases = load_corpus(job["corpus"])
    control = load_corpus(job["control"]) if job.get("control") else []
    baseline = Baseline.load(job["baseline"]) if job.get("baseline") else None
    runner = PhaseRunner(
        rt, config, cases, control, baseline, sink=send, announce=job.get("announce", True)
    )
    phase = job["phase"]
    runner.prepare_inputs(control if phase == "control" else cases)
    send({"type": "ready"})
    stream = job.get("stream", "shared") if phase in CONCURRENT_PHASES else "shared"
    status, detail = runner.run(phase, stream)
    return status, detail, {}


def _naive(job: dict[str, Any], send: Send) -> tuple[str, str, dict[str, Any]]:
    """The naive harness of the problem report, for comparison (benchmarks/detection.py).

    T threads share one context and one stream and loop over randomly chosen valid cases,
    comparing each call's sha256 with the serial baseline: no barrier, no stage interleaving,
    no canary accounting, no isolated or control runs. Stops at the first mismatch or error.
    """
    import threading
    import time

    import numpy as np

    from stress.engine.execute import run_call
    from stress.engine.inputs import InputCache

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


_KINDS = {"info": _info, "record": _record, "phase": _phase, "naive": _naive}


def run_job(job: dict[str, Any], send: Send) -> tuple[str, str, dict[str, Any]]:
    """Run ``job``; returns (status, detail, extra fields for the child-end record)."""
    return _KINDS[job["kind"]](job, send)
