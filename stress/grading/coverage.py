"""The coverage a run reached, read back from its call records.

``interleaved``: the ordered pairs (victim, aggressor) that ran, out of N² over the cases that
are not negative, and the fewest distinct others any such case was interleaved with (either
order); ``target`` is the k that :mod:`stress.pairs` promises (every pair instead when
N² fits the phase's share). ``schedules`` counts the PCT schedules of more than two calls.
``mixed``: the unordered pairs of distinct cases that were in flight in one round (same stream
variant and round number), out of N(N-1)/2, and the fewest distinct others any case met;
``target`` is min(T, N) - 1, what one complete epoch guarantees (:func:`~stress.pairs.
mixed_target`). ``serial``, ``shuffled``, ``isolated``: the cases that ran out of N (under
``--budget`` a seeded sample, :mod:`stress.engine.replay.sampling`). ``modes`` (when a call
ran in another mode than plain): plain calls, event calls, repeatable executors, their
launches, those after rebinding, and the negative checks of operators declared not
repeatable.

Derived from the journal alone, so ``aclnn-stress report DIR`` re-renders it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from stress.journal.lines import RunHeader
from stress.pairs import MIN_PARTNERS, mixed_target

__all__ = ["CaseCoverage", "CoverageTally", "PairCoverage", "coverage", "describe"]

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


#: mixed rounds kept open for late records; a round's calls all end before the next one starts
#: (barrier-aligned), so older rounds are folded and dropped
OPEN_ROUNDS = 256


class CoverageTally:
    """The coverage folded call by call (constant memory in the run's length: pairs and
    partners are bounded by N², the mixed rounds are folded as they arrive)."""

    def __init__(self) -> None:
        self.ordered: set[tuple[str, str]] = set()
        self.inter_partners: dict[str, set[str]] = defaultdict(set)
        self.rounds: dict[tuple[str, Any], set[str]] = {}  # the open mixed rounds
        self.mixed_partners: dict[str, set[str]] = defaultdict(set)
        self.unordered: set[tuple[str, str]] = set()
        self.schedules: set[Any] = set()
        self.seen = {"interleaved": False, "mixed": False}
        self.ran: dict[str, set[str]] = {p: set() for p in CASE_PHASES}
        # the API modes the calls ran in (stress.engine.replay.modes): plain, event and
        # pipeline calls, repeat executors, their launches, those after rebinding, negative
        # checks (refused marking)
        self.modes = dict.fromkeys(
            ("plain", "event", "pipeline", "executors", "launches", "rebound", "refused"), 0
        )

    def add(self, r: Any) -> None:
        """Fold one call record (a :class:`~stress.records.CallRecord` or its JSON)."""
        get = r.get if isinstance(r, Mapping) else lambda k: getattr(r, k, None)
        phase, case = get("phase"), get("case")
        if get("warmup") or case is None:
            return
        self._mode(get)
        if phase in self.ran:
            self.ran[phase].add(case)
            return
        if phase not in self.seen:
            return
        self.seen[phase] = True
        if phase == "mixed":
            self._mixed_call((get("variant") or "", get("round")), case)
        elif get("aggressor") is not None:
            aggressor = get("aggressor")
            if get("order") == "first":
                self.ordered.add((case, aggressor))
            if aggressor != case:
                self.inter_partners[case].add(aggressor)
        elif get("group"):
            self.schedules.add(get("round"))
            self.inter_partners[case].update(o for o in get("group") if o != case)

    def _mode(self, get: Any) -> None:
        mode = get("mode")
        if mode != "repeat":
            self.modes[mode if mode in ("event", "pipeline") else "plain"] += 1
            return
        self.modes["launches"] += 1
        self.modes["executors"] += not get("launch")
        self.modes["rebound"] += bool(get("rebound"))
        self.modes["refused"] += bool(get("repeatable") or (get("extra") or {}).get("repeatable"))

    def _mixed_call(self, key: tuple[str, Any], case: str) -> None:
        group = self.rounds.get(key)
        if group is None:
            group = self.rounds[key] = set()
            if len(self.rounds) > OPEN_ROUNDS:
                del self.rounds[next(iter(self.rounds))]
        if case in group:
            return
        for other in group:
            self.mixed_partners[case].add(other)
            self.mixed_partners[other].add(case)
            self.unordered.add((min(case, other), max(case, other)))
        group.add(case)

    def result(self, header: RunHeader) -> dict[str, Any]:
        """``{"interleaved": ..., "mixed": ...}`` for the phases that ran."""
        cases = [c for c in header.cases if isinstance(c, Mapping)]
        positive = [c["id"] for c in cases if not c.get("expect")]
        everyone = [c["id"] for c in cases]
        out: dict[str, Any] = {}
        if self.modes["launches"] or self.modes["event"] or self.modes["pipeline"]:
            out["modes"] = dict(self.modes)
        for phase, done in self.ran.items():
            if done:
                out[phase] = CaseCoverage(len(everyone), len(done & set(everyone))).to_json()
        if self.seen["interleaved"]:
            n = len(positive)
            out["interleaved"] = PairCoverage(
                pairs_total=n * n,
                pairs_run=len(self.ordered),
                min_partners=min((len(self.inter_partners[c]) for c in positive), default=0),
                target=min(MIN_PARTNERS, max(0, n - 1)),
                schedules=len(self.schedules),
            ).to_json()
        if self.seen["mixed"]:
            n = len(everyone)
            threads = int(header.config.get("threads") or 0)
            out["mixed"] = PairCoverage(
                pairs_total=n * (n - 1) // 2,
                pairs_run=len(self.unordered),
                min_partners=min((len(self.mixed_partners[c]) for c in everyone), default=0),
                target=mixed_target(n, threads),
            ).to_json()
        return out


def coverage(header: RunHeader | Mapping[str, Any], calls: Iterable[Any]) -> dict[str, Any]:
    """``{"interleaved": ..., "mixed": ...}`` for the phases that ran (absent ones left out)."""
    tally = CoverageTally()
    for r in calls:
        tally.add(r)
    return tally.result(header if isinstance(header, RunHeader) else RunHeader.from_json(header))


def describe(cov: Mapping[str, Any]) -> list[str]:
    """One line per phase for report.md and the console."""
    lines = []
    for phase, c in cov.items():
        if phase == "modes":
            lines.append(
                f"modes: {c['plain']} plain calls, {c.get('event', 0)} event calls, "
                f"{c['executors']} repeatable executors "
                f"({c['launches']} launches, {c['rebound']} after rebinding"
                + (f", {c['refused']} refused as declared" if c.get("refused") else "")
                + ")"
            )
            continue
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
