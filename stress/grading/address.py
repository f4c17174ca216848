"""``address-dependence``: a case that fails only in recycled device memory.

Under ``--allocator both`` (or ``recycle``) the scheduler runs the shuffled phase twice in the
same seeded order: once at fresh ``aclrtMalloc`` addresses, once with every block from the
harness's caching allocator (:mod:`stress.engine.call.caching_allocator`), where each call gets
the freed blocks of the calls before it. The run under the run's own policy has no variant; the
other is ``allocator=recycle`` (under ``both``) or ``allocator=fresh`` (the check under
``recycle``). The calls and their order are the same; only the addresses differ. So a case that
fails under recycle while the fresh run passed has a result that depends on which addresses
come back: a cache keyed on a device address instead of the content (a pre-processed weight,
a tiling or graph cache) replays what another tensor left at that address.
"""

from __future__ import annotations

from collections.abc import Iterable

from stress.records import PhaseVerdict
from stress.vocabulary import Verdict

__all__ = ["FRESH", "RECYCLE", "address_dependent"]

#: The variants of the phase runs under each allocator policy (stress.engine.run.schedule).
FRESH = "allocator=fresh"
RECYCLE = "allocator=recycle"


def _failed(v: str) -> bool:
    return v not in (Verdict.PASS, Verdict.INCOMPLETE)


def address_dependent(runs: Iterable[PhaseVerdict]) -> str:
    """The explanation when only the recycled runs of a phase fail and its fresh run passed
    (every case of it); "" otherwise."""
    runs = list(runs)
    # the run's own policy is not named; the other one's is (stress.engine.run.schedule; a
    # focused step adds " focus")
    named = [next((w for w in p.variant.split() if w in (FRESH, RECYCLE)), "") for p in runs]
    own = FRESH if RECYCLE in named else RECYCLE if FRESH in named else ""
    policy = [n or own for n in named]
    fresh = [p for p, n in zip(runs, policy, strict=True) if n == FRESH]
    failing = [(p, n) for p, n in zip(runs, policy, strict=True) if _failed(p.verdict)]
    if not fresh or not failing or any(n != RECYCLE for _, n in failing):
        return ""
    if any(p.verdict != Verdict.PASS for p in fresh):
        return ""
    passed = {c.id for p in fresh for c in p.cases if c.verdict == Verdict.PASS}
    cases = [c for p, _ in failing for c in p.cases if _failed(c.verdict)]
    shown = [
        f"{c.id} {c.verdict}" + ("" if c.id in passed else " (not run fresh)") for c in cases[:4]
    ]
    return (
        "the same calls in the same order fail only in device memory recycled by the caching "
        "allocator and pass at fresh addresses: a result depends on which freed block came back "
        "(a cache keyed on a device address, not on its content): "
        + ", ".join(shown)
        + (" ..." if len(cases) > 4 else "")
    )
