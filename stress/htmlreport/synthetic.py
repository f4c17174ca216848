"""A synthetic run journal of any size, for the HTML report's benchmark and tests.

It follows the journal format (``results.jsonl``) a real run writes: a ``run`` header with the
corpus and baseline digests, then ``serial``, ``interleaved`` and ``mixed`` phases. In
``interleaved`` the case ``victim`` run against ``aggressor`` gives a wrong digest every time,
so its heatmap cell is the one marked; every other call matches the baseline.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from stress.vocabulary import PhaseStatus, Status

__all__ = ["synthetic_records", "write_synthetic_run"]


def _digest(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _call(phase: str, seq: int, worker: int, rnd: int, case: str, t: float, **kw: Any) -> dict:
    ok = kw.pop("ok", True)
    return {
        "type": "call",
        "phase": phase,
        "seq": seq,
        "worker": worker,
        "round": rnd,
        "case": case,
        "status": Status.OK,
        "digest": _digest(case) if ok else _digest(case, "wrong", seq),
        "match": ok,
        "t": round(t, 6),
        "dur": 0.002,
        "variant": "",
        **kw,
    }


def synthetic_records(
    case_ids: Sequence[str], calls: int, victim: str, aggressor: str, threads: int = 8
) -> Iterator[dict[str, Any]]:
    """Records of a run with about ``calls`` calls (at least serial and interleaved)."""
    cases = [
        {"id": c, "op": "synthetic_op", "key": _digest(c)[:16], "params": {}} for c in case_ids
    ]
    yield {
        "type": "run",
        "schema": "aclnn-stress/results/1",
        "version": "synthetic",
        "started": "2026-01-01T00:00:00+00:00",
        "config": {"seed": 0, "threads": threads, "context": "shared", "streams": ["shared"]},
        "backend": {"kind": "sim", "simulator": True, "soc": "synthetic", "version": "0"},
        "corpus": ["corpus/synthetic.toml"],
        "control": [],
        "cases": cases,
        "control_cases": [],
        "baseline": {
            "path": "baselines/synthetic.json",
            "cases": {
                c: {"digest": _digest(c), "grading": "digest", "status": Status.OK}
                for c in case_ids
            },
        },
        "faults": "",
    }
    seq = itertools.count()
    yield {"type": "phase-start", "phase": "serial", "variant": "", "cases": len(cases)}
    for i, c in enumerate(case_ids):
        yield _call("serial", next(seq), 0, i, c, i * 0.003)
    yield {
        "type": "phase-end",
        "phase": "serial",
        "variant": "",
        "status": PhaseStatus.DONE,
        "seconds": 0.1,
    }
    yield {"type": "phase-start", "phase": "interleaved", "variant": "", "cases": len(cases)}
    for i, (a, b) in enumerate(itertools.product(case_ids, repeat=2)):
        t = i * 0.005
        for case, other, order in ((a, b, "first"), (b, a, "second")):
            ok = not (case == victim and other == aggressor)
            yield _call(
                "interleaved", next(seq), 0, i, case, t, aggressor=other, order=order, ok=ok
            )
    yield {"type": "phase-end", "phase": "interleaved", "variant": "", "status": PhaseStatus.DONE}
    left = calls - len(case_ids) - 2 * len(case_ids) ** 2
    yield {"type": "phase-start", "phase": "mixed", "variant": "", "cases": len(cases)}
    for k in range(max(left, 0)):
        rnd, worker = divmod(k, threads)
        yield _call("mixed", next(seq), worker, rnd, case_ids[k % len(case_ids)], rnd * 0.0025)
    yield {
        "type": "phase-end",
        "phase": "mixed",
        "variant": "",
        "status": PhaseStatus.DONE,
        "seconds": 1,
    }
    yield {"type": "run-end", "status": PhaseStatus.DONE, "ended": "2026-01-01T00:01:00+00:00"}


def write_synthetic_run(
    run_dir: Path,
    calls: int = 10_000,
    *,
    cases: int = 10,
    victim: str | None = None,
    aggressor: str | None = None,
    case_ids: Sequence[str] | None = None,
) -> Path:
    """Write ``run_dir/results.jsonl`` of a synthetic run; returns the journal's path."""
    ids = list(case_ids or [f"case-{i}" for i in range(cases)])
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "results.jsonl"
    records = synthetic_records(ids, calls, victim or ids[0], aggressor or ids[-1])
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path
