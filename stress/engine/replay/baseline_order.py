"""A baseline that an order-dependent operator cannot poison.

Recorded case after case in one process, a baseline takes whatever an operator gives after the
cases before it. An operator whose result depends on that history — a cache keyed on a device
address that comes back holding another tensor, a workspace read before it is written — then
records a *wrong* value, the run reports ``baseline-mismatch`` and advises re-recording, which
records the same wrong value. So the recorder
(:func:`stress.engine.replay.baseline.record_baseline`) runs each case twice, under two
histories:

1. **fresh**: every call's device memory comes from a
   :class:`~stress.engine.call.blockpool.BlockPool` that the case's own calls recycle and that
   is sealed when the case is done, so no call of another case ever ran at the addresses a
   case is recorded at (the baseline's values);
2. **after another case, in its memory** (:func:`check_order`): the cases again in reverse
   order through one pool that recycles across cases, so each case (a warm-up call, then the
   checked one) gets the blocks of the case that ran just before it, as a caching allocator
   hands them out.

A case whose second result differs from its first (digest, tolerance for cases that are not
bit-deterministic, or status) is :class:`OrderDependence`: one line naming the case and the case
before it, and no baseline is written (exit 1: a finding, not a configuration error). The pair
is then checked again at fresh addresses (the case before it, then the case, in blocks no other
call used): when the case agrees there, the line says ``address-dependence`` (its result
depends on the address that came back, not on the order: stress.grading.address), else
``order-dependence``. Under ``--allocator fresh`` the second history keeps fresh addresses too
(each case after another, never in its blocks): an order check only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stress import acl
from stress.baseline.store import CaseBaseline
from stress.corpus.parse import Case
from stress.engine.call.blockpool import BlockPool
from stress.engine.call.execute import run_call
from stress.engine.call.inputs import InputCache
from stress.errors import ConfigError
from stress.grading.digest import call_digest, digest
from stress.grading.judge import Outcome, close_enough
from stress.vocabulary import Status

__all__ = ["OrderDependence", "check_order", "disagreement"]


class OrderDependence(ConfigError):
    """A case gives another result after another case than fresh: the baseline is not written.

    One line, like a :class:`ConfigError`, but a finding: the CLI exits 1."""

    exit_code = 1


def disagreement(case: Case, cb: CaseBaseline, outcome: Outcome) -> str:
    """How ``outcome`` differs from the fresh recording ``cb`` ("" when it does not)."""
    if outcome.status != Status.OK or cb.status != Status.OK:
        if outcome.status == cb.status and outcome.code == cb.code:
            return ""
        was = f"status {cb.code}" if cb.status != Status.OK else "success"
        now = f"status {outcome.code}" if outcome.status != Status.OK else "success"
        return f"{now}, fresh {was}"
    if cb.grading == "digest":
        got = call_digest({n: digest(a) for n, a in outcome.outputs.items()})
        return "" if got == cb.call_digest else f"digest {got[:12]}, fresh {cb.call_digest[:12]}"
    for name, arr in outcome.outputs.items():
        rtol, atol = case.spec.tolerances(case.params, name)
        ok, ratio = close_enough(arr, (cb.arrays or {})[name], rtol, atol)
        if not ok:
            return f"{name} off by {ratio:.3g} times its tolerance"
    return ""


def check_order(
    rt: acl.Runtime,
    ctx: acl.Context,
    stream: acl.Stream,
    cases: Sequence[Case],
    cache: InputCache,
    recorded: Mapping[str, CaseBaseline],
    *,
    canary: int,
    timeout_ms: int | None,
    recycle: bool = True,
) -> None:
    """Run ``cases`` again in reverse order, each in the recycled memory of the one before it
    (at fresh addresses without ``recycle``), and raise :class:`OrderDependence` at the first
    that disagrees with ``recorded``."""
    pool = BlockPool(rt.api)
    kw = {"canary": canary, "timeout_ms": timeout_ms}
    try:
        before: Case | None = None
        for case in reversed(cases):
            if not recycle:
                pool.seal()  # fresh addresses: never the blocks of the case before
            again = _twice(ctx, stream, case, cache, pool, kw)
            if again.status == Status.OUT_OF_MEMORY:
                return  # the resource, not the operator: the fresh recording stands
            diff = disagreement(case, recorded[case.id], again)
            if diff:
                fresh = recycle and _agrees_fresh(rt, ctx, stream, (before, case), cache, recorded,
                                                  kw)  # fmt: skip
                raise OrderDependence(_finding(case, before, diff, recycle, fresh))
            before = case
    finally:
        pool.release()


def _twice(ctx, stream, case: Case, cache: InputCache, pool: BlockPool, kw: dict) -> Outcome:
    """A warm-up call of ``case`` and the checked one, both in ``pool``'s memory."""
    inputs = cache.get(case)
    run_call(ctx, stream, case, inputs, allocator=pool, **kw)
    return run_call(ctx, stream, case, inputs, allocator=pool, **kw)


def _agrees_fresh(rt, ctx, stream, pair, cache, recorded, kw) -> bool:
    """Whether ``case`` after ``before`` (``pair``) agrees with its recording at fresh
    addresses (the focused re-check of a disagreement in recycled memory)."""
    before, case = pair
    pool = BlockPool(rt.api)
    try:
        if before is not None:
            _twice(ctx, stream, before, cache, pool, kw)
            pool.seal()
        again = _twice(ctx, stream, case, cache, pool, kw)
        return again.status != Status.OUT_OF_MEMORY and not disagreement(
            case, recorded[case.id], again
        )
    finally:
        pool.release()


def _finding(case: Case, before: Case | None, diff: str, recycle: bool, fresh: bool) -> str:
    after = f"case {before.id}" if before is not None else "the other cases"
    where = "in its recycled device memory" if recycle else "at fresh addresses"
    if fresh:
        return (
            f"address-dependence: case {case.id} recorded after {after}, {where}, differs from "
            f"its recording at fresh addresses ({diff}), and agrees with it after {after} at "
            "fresh addresses: its result depends on which freed block came back (a cache keyed "
            "on a device address, not its content); the baseline was not written (fix the "
            "operator, or leave the case out of the corpus)"
        )
    return (
        f"order-dependence: case {case.id} recorded after {after}, {where}, differs from its "
        f"recording at fresh addresses ({diff}): its result depends on what ran before (state "
        "left by another call, a buffer read before it is written); the baseline was not "
        "written (fix the operator, or leave the case out of the corpus)"
    )
