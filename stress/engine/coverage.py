"""The coverage a run reached, read back from its call records.

``interleaved``: the ordered pairs (victim, aggressor) that ran, out of N² over the cases that
are not negative, and the fewest distinct others any such case was interleaved with (either
order); ``target`` is the k that :mod:`stress.engine.pairs` promises (every pair instead when
N² fits the phase's share). ``schedules`` counts the PCT schedules of more than two calls.
``mixed``: the unordered pairs of distinct cases that were in flight in one round (same stream
variant and round number), out of N(N-1)/2, and the fewest distinct others any case met;
``target`` is min(T, N) - 1, what one complete epoch guarantees (:func:`~stress.engine.pairs.
mixed_target`). ``serial``, ``shuffled``, ``isolated``: the cases that ran out of N (under
``--budget`` a seeded sample, :mod:`stress.engine.sampling`).

Derived from the journal alone, so ``aclnn-stress report DIR`` re-renders it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from stress.engine.pairs import MIN_PARTNERS, mixed_target

__all__ = ["CaseCoverage", "PairCoverage", "coverage", "describe"]

#: The phases whose coverage is the cases they ran (not pairs).
CASE_PHASES = ("serial", "shuffled", "isolated")


@dataclass(frozen=True)
class PairCoverage:
    """Pairs run out of all pairs, and the fewest distinct partners of any case."""

    pairs_total: int
    pairs_run: int
    min_partners: int
    target: int
    schedules: int = 0

    def to_json(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class CaseCoverage:
    """The cases a phase ran out of all the corpus's cases."""

    cases_total: int
    cases_run: int

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def coverage(header: Mapping[str, Any], calls: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"interleaved": ..., "mixed": ...}`` for the phases that ran (absent ones left out)."""
    cases = [c for c in header.get("cases", []) if isinstance(c, Mapping)]
    positive = [c["id"] for c in cases if not c.get("expect")]
    everyone = [c["id"] for c in cases]
    ordered: set[tuple[str, str]] = set()
    inter_partners: dict[str, set[str]] = defaultdict(set)
    rounds: dict[tuple[str, Any], set[str]] = defaultdict(set)
    schedules: set[Any] = set()
    seen = {"interleaved": False, "mixed": False}
    ran: dict[str, set[str]] = {p: set() for p in CASE_PHASES}
    for r in calls:
        phase, case = r.get("phase"), r.get("case")
        if r.get("warmup") or case is None:
            continue
        if phase in ran:
            ran[phase].add(case)
            continue
        if phase not in seen:
            continue
        seen[phase] = True
        if phase == "mixed":
            rounds[(r.get("variant", ""), r.get("round"))].add(case)
        elif r.get("aggressor") is not None:
            if r.get("order") == "first":
                ordered.add((case, r["aggressor"]))
            if r["aggressor"] != case:
                inter_partners[case].add(r["aggressor"])
        elif r.get("group"):
            schedules.add(r.get("round"))
            inter_partners[case].update(o for o in r["group"] if o != case)
    out: dict[str, Any] = {}
    for phase, done in ran.items():
        if done:
            out[phase] = CaseCoverage(len(everyone), len(done & set(everyone))).to_json()
    if seen["interleaved"]:
        n = len(positive)
        out["interleaved"] = PairCoverage(
            pairs_total=n * n,
            pairs_run=len(ordered),
            min_partners=min((len(inter_partners[c]) for c in positive), default=0),
            target=min(MIN_PARTNERS, max(0, n - 1)),
            schedules=len(schedules),
        ).to_json()
    if seen["mixed"]:
        threads = int((header.get("config") or {}).get("threads") or 0)
        out["mixed"] = _mixed(everyone, rounds.values(), threads)
    return out


def _mixed(ids: list[str], rounds: Iterable[set[str]], threads: int) -> dict[str, int]:
    partners: dict[str, set[str]] = defaultdict(set)
    unordered: set[tuple[str, str]] = set()
    for group in rounds:
        for a in group:
            partners[a].update(group - {a})
            unordered.update((a, b) for b in group if a < b)
    n = len(ids)
    return PairCoverage(
        pairs_total=n * (n - 1) // 2,
        pairs_run=len(unordered),
        min_partners=min((len(partners[c]) for c in ids), default=0),
        target=mixed_target(n, threads),
    ).to_json()


def describe(cov: Mapping[str, Any]) -> list[str]:
    """One line per phase for report.md and the console."""
    lines = []
    for phase, c in cov.items():
        if "cases_total" in c:
            lines.append(f"{phase}: {c['cases_run']}/{c['cases_total']} cases")
            continue
        line = (
            f"{phase}: {c['pairs_run']}/{c['pairs_total']} pairs, every case with "
            f">= {c['min_partners']} distinct others"
        )
        if c.get("target"):
            line += f" (target {c['target']})"
        if c.get("schedules"):
            line += f", {c['schedules']} PCT schedules"
        lines.append(line)
    return lines
