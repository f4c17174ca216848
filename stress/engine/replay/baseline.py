"""Recording a baseline: every case K times in one thread, plus one run with another canary.

The K runs (canary A) give the reference digests and tell whether the case is
bit-deterministic. One more run with a different canary (B) tells *written* elements from
*unwritten* ones without guessing: an element that reads as pattern A after the A runs and as
pattern B after the B run was never written by the operator; one that reads as pattern A in
both is a computed value that happens to look like the canary (its count is stored, so later
phases do not flag it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stress import acl
from stress.baseline.store import Baseline, CaseBaseline, OutputBaseline
from stress.config import CANARY, RunConfig, check_device
from stress.corpus.parse import Case
from stress.engine.call.blockpool import BlockPool
from stress.engine.call.execute import run_call
from stress.engine.call.inputs import InputCache
from stress.engine.replay.baseline_order import check_order
from stress.engine.replay.case_error import CaseError
from stress.errors import ConfigError
from stress.grading.canaries import SECOND_CANARY
from stress.grading.digest import call_digest, digest
from stress.grading.judge import Outcome, close_enough
from stress.records import RecordedCase
from stress.vocabulary import Status

__all__ = [
    "ALT_CANARY",
    "Recording",
    "backend_fingerprint",
    "corpus_fingerprint",
    "record_baseline",
]

ALT_CANARY = SECOND_CANARY  # the run's second canary too (stress.grading.canaries)


def backend_fingerprint(rt: acl.Runtime) -> dict[str, Any]:
    """What identifies the backend a baseline was recorded on.

    On the simulator the enabled faults (``ACLSIM_FAULTS``) are part of it: a baseline recorded
    with one set of defects says nothing about another.
    """
    fp: dict[str, Any] = {
        "kind": rt.backend.kind,
        "simulator": rt.is_simulator,
        "soc": rt.soc_name,
        "version": rt.version("runtime"),
        "libraries": rt.backend.library_hashes(),
        "root": str(rt.backend.root),
    }
    if rt.is_simulator:
        raw = os.environ.get("ACLSIM_FAULTS", "")
        fp["faults"] = sorted({f.strip() for f in raw.split(",") if f.strip()})
    return fp


def corpus_fingerprint(cases: Sequence[Case]) -> dict[str, Any]:
    """Case keys by id (a changed case invalidates its baseline entry)."""
    return {
        "cases": {c.id: c.key for c in cases},
        "files": sorted({c.source for c in cases}),
    }


def _pattern_mask(arr: np.ndarray, byte: int) -> np.ndarray:
    if arr.size == 0:
        return np.zeros(arr.shape, bool)
    raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8).reshape(arr.size, -1)
    return (raw == byte).all(axis=1).reshape(arr.shape)


def _reference_check(case: Case, inputs: Mapping[str, np.ndarray], outputs) -> dict[str, Any]:
    try:
        expected = case.spec.reference(case.params, inputs)
    except Exception as exc:  # the reference may not support a shape: say so, don't fail
        return {"ok": None, "note": f"reference unavailable: {exc}"}
    worst, ok, failing = 0.0, True, []
    for name, arr in outputs.items():
        if name not in expected:
            continue
        rtol, atol = case.spec.tolerances(case.params, name)
        good, ratio = close_enough(arr, np.asarray(expected[name]), rtol, atol)
        worst = max(worst, ratio)
        if not good:
            ok = False
            failing.append(name)
    return {"ok": ok, "worst_ratio": round(worst, 4), "failing": failing}


def _case_baseline(
    case: Case,
    inputs: Mapping[str, np.ndarray],
    runs: list[Outcome],
    alt: Outcome,
    canary: int,
) -> CaseBaseline:
    first = runs[0]
    call_p99_s = round(max(r.duration for r in (*runs, alt)), 6)
    if first.status != Status.OK:
        codes = {(r.code, r.api) for r in runs}
        note = "" if len(codes) == 1 else f" (varied between runs: {sorted(codes)})"
        return CaseBaseline(
            id=case.id,
            key=case.key,
            op=case.op,
            status=Status.ERROR,
            code=first.code,
            message=first.message + note,
            call_p99_s=call_p99_s,
        )
    digests = [
        call_digest({n: digest(a) for n, a in r.outputs.items()})
        for r in runs
        if r.status == Status.OK
    ]
    outputs: dict[str, OutputBaseline] = {}
    for name, arr in first.outputs.items():
        mask_a = _pattern_mask(arr, canary)
        unwritten = 0
        if alt.status == Status.OK and name in alt.outputs:
            unwritten = int(np.count_nonzero(mask_a & _pattern_mask(alt.outputs[name], ALT_CANARY)))
        outputs[name] = OutputBaseline(
            digest=digest(arr),
            shape=list(arr.shape),
            dtype=arr.dtype.name,
            canary_chance=int(np.count_nonzero(mask_a)) - unwritten,
            unwritten=unwritten,
        )
    deterministic = len(set(digests)) == 1 and len(digests) == len(runs)
    cb = CaseBaseline(
        id=case.id,
        key=case.key,
        op=case.op,
        status=Status.OK,
        call_digest=digests[0],
        outputs=outputs,
        bit_deterministic=deterministic,
        digests_seen=sorted(set(digests)),
        reference=_reference_check(case, inputs, first.outputs),
        call_p99_s=call_p99_s,
    )
    if not deterministic:
        cb.arrays = dict(first.outputs)
    return cb


def _out_of_memory(case: Case, what: str) -> ConfigError:
    """A baseline recorded out of memory would grade every later call against a failure."""
    return ConfigError(
        f"recording the baseline ran out of memory on case {case.id} ({what}); give the device "
        "more memory (ACLSIM_DEVICE_MEMORY for the simulator) or make the case smaller"
    )


def _record_case(
    ctx: Any,
    stream: Any,
    case: Case,
    cache: InputCache,
    fresh: BlockPool,
    repeats: int,
    canary: int,
    call_timeout_ms: int | None,
) -> CaseBaseline:
    """One case's baseline: a warm-up call, ``repeats`` calls and one under the check canary."""
    try:
        inputs = cache.get(case)
    except (MemoryError, acl.AclMemoryError) as exc:
        raise _out_of_memory(case, f"{type(exc).__name__}: {exc}") from None
    kw = {"timeout_ms": call_timeout_ms, "allocator": fresh}
    run_call(ctx, stream, case, inputs, canary=canary, **kw)
    runs = [run_call(ctx, stream, case, inputs, canary=canary, **kw) for _ in range(repeats)]
    alt = run_call(ctx, stream, case, inputs, canary=ALT_CANARY, **kw)
    fresh.seal()
    for r in (*runs, alt):
        if r.status == Status.OUT_OF_MEMORY:
            raise _out_of_memory(case, f"status {r.code} from {r.api}: {r.message}")
    return _case_baseline(case, inputs, runs, alt, canary)


@dataclass(frozen=True)
class Recording:
    """The settings :func:`record_baseline` records with. ``recycle``: check each case again in
    memory another case used (off under ``--allocator fresh``)."""

    repeats: int = 3
    canary: int = CANARY
    deterministic: bool = True
    device: int = 0
    call_timeout_ms: int | None = RunConfig().call_timeout_ms
    recycle: bool = True

    @classmethod
    def of(cls, config: RunConfig) -> Recording:
        """The recording settings of a run's ``config``."""
        return cls(config.repeats, config.canary, config.deterministic, config.device,
                   config.call_timeout_ms, recycle=config.allocator != "fresh")  # fmt: skip


def record_baseline(
    rt: acl.Runtime,
    cases: Sequence[Case],
    recording: Recording = Recording(),
    *,
    progress: Callable[[Case, CaseBaseline], None] | None = None,
    begin: Callable[[Case], None] | None = None,
) -> Baseline:
    """Run every case serially and build the :class:`Baseline` (not yet saved): each case at
    fresh addresses, then checked after another case in its recycled memory
    (:mod:`stress.engine.replay.baseline_order`: its ``OrderDependence`` when they disagree).
    ``begin(case)`` before a case is recorded (a supervisor that kills a silent child names it),
    ``progress(case, baseline)`` after."""
    r = recording
    if r.canary == ALT_CANARY:
        raise ValueError(f"the canary must differ from the check canary {ALT_CANARY:#x}")
    check_device(r.device, rt.device_count)
    dev = rt.device(r.device)
    rt.set_deterministic(r.deterministic)
    ctx = dev.default_context
    ctx.bind()
    stream = ctx.create_stream()
    cache = InputCache(ctx, stream)
    result: dict[str, CaseBaseline] = {}
    # fresh addresses: a case's calls recycle each other's blocks, sealed once it is done
    # (stress.engine.replay.baseline_order), so no other case ever ran where a case is recorded
    fresh = BlockPool(rt.api)
    try:
        for case in cases:
            if begin:
                begin(case)
            try:
                cb = _record_case(
                    ctx, stream, case, cache, fresh, r.repeats, r.canary, r.call_timeout_ms
                )
            except ConfigError:
                raise
            except Exception as exc:  # a generator's or the backend's: said once, naming the case
                raise CaseError(case.id, case.source, exc) from exc
            result[case.id] = cb
            if progress:
                progress(case, cb)
        fresh.release()
        check_order(
            rt, ctx, stream, cases, cache, result, canary=r.canary, timeout_ms=r.call_timeout_ms,
            recycle=r.recycle,
        )  # fmt: skip
    finally:
        fresh.release()
        stream.close()
    return Baseline(
        backend=backend_fingerprint(rt),
        corpus=corpus_fingerprint(cases),
        deterministic=r.deterministic,
        repeats=r.repeats,
        cases=result,
        canary=r.canary,
    )


def recording_summary(path: str | Path, recorded: list[RecordedCase]) -> str:
    """One line on a freshly recorded baseline, naming cases that deserve a look."""
    ok = [r for r in recorded if r.status == Status.OK]
    det = sum(1 for r in ok if r.bit_deterministic)
    differs = [r.case for r in ok if (r.reference or {}).get("ok") is False]
    unwritten = [r.case for r in ok if r.unwritten]
    text = (
        f"baseline recorded: {path} ({len(recorded)} cases: {len(ok)} succeed, {det} of them "
        f"bit-deterministic; {len(recorded) - len(ok)} return an error status)"
    )
    if differs:
        text += f"; differs from the numpy reference: {', '.join(differs)}"
    if unwritten:
        text += f"; unwritten outputs: {', '.join(unwritten)}"
    return text
