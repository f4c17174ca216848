"""The run's schedule: which phase runs when, for how long, and when the run may stop.

Order. :data:`stress.config.PHASES` lists the phases in the order :func:`diagnose
<stress.grading.diagnosis.diagnose>` weighs them: ``burst`` first (the cheapest, most sensitive
checks: every case's first call against the baseline, then short mixed rounds with the control
interleaved and self-race rounds), then ``control``, ``serial``, ``shuffled``, ``isolated``,
``interleaved``, ``mixed``. Because of that order, once the phases run so far give a diagnosis
other than clean (and the control has run, unless the diagnosis is a crash or hang, which
nothing outranks), no later phase can turn it into a higher-ranked one except by a new crash
or hang: with ``fail_fast`` (the default) the run stops there and says which phases it skipped.

Budget. Without ``--budget`` every concurrent phase runs ``--duration`` seconds (the burst
:data:`BURST_SECONDS`). With ``--budget S`` the scheduler gives the burst a tenth of S (at most
:data:`BURST_SECONDS` per stream policy) and, before each later concurrent phase, divides what
is left of S (less an estimated overhead per remaining phase for the child's start-up and the
single-threaded phases: :data:`STEP_OVERHEAD_S`, or more once the steps run so far measured
more, as a big corpus's children spend longer on their inputs) evenly among the concurrent
phases and the interleaved phase still to run (the interleaved phase samples pairs to fit its
share, with the coverage :mod:`stress.pairs` states).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from stress.config import CONCURRENT_PHASES, DEFAULT_DURATION, STREAM_POLICIES, RunConfig
from stress.engine.replay.pct import GROUP
from stress.engine.replay.phase_budget import phase_budget
from stress.grading.diagnosis import BURST_ONLY
from stress.records import CallRecord
from stress.vocabulary import Diagnosis, split_view

__all__ = [
    "BURST_SECONDS",
    "FOCUS",
    "FOCUS_SECONDS",
    "NEVER_EARLY",
    "STEP_OVERHEAD_S",
    "Scheduler",
    "Step",
    "burst_findings",
    "fail_fast_note",
    "focus_note",
    "focus_steps",
    "no_calls_detail",
    "settled",
]

#: Seconds of mixed rounds in the burst, per stream policy (less when a small --budget says so).
BURST_SECONDS = 1.0
#: Estimated seconds a phase costs beyond its concurrent rounds (child start, serial passes).
STEP_OVERHEAD_S = 0.8
#: Phases that get a share of ``--budget``: the concurrent ones and the interleaved pairs (which
#: run :data:`stress.pairs.MIN_PARTNERS` rounds whatever their share; see that module).
TIMED_PHASES = frozenset(CONCURRENT_PHASES) | {"interleaved"}
#: Single-threaded phases that, under ``--budget``, sample their cases within a cap: the share a
#: timed phase would get (:mod:`stress.engine.replay.sampling`; a corpus that fits runs whole).
SAMPLED_PHASES = frozenset({"serial", "shuffled"})
#: The shortest concurrent phase the scheduler hands out, however tight the budget.
MIN_PHASE_S = 0.2


@dataclass(frozen=True)
class Step:
    """One phase run: a phase under one stream policy (``variant`` names it when there are
    several)."""

    phase: str
    variant: str
    stream: str
    focus: tuple[str, ...] = ()  # only these corpus cases (empty: all of them)
    seconds: float | None = None  # a fixed duration (the focused steps after a failure)
    confirm: bool = False  # a focused step: it ends at its first failing call
    first: tuple[str, ...] = ()  # corpus cases a sampled step takes first (focused shuffled)
    allocator: str = "fresh"  # the allocator policy of its calls (fresh | recycle)


#: The phase that runs under both allocator policies (``--allocator both`` or ``recycle``), in
#: the same seeded order: one thread, each case after others, at fresh addresses and in their
#: recycled blocks; what fails only recycled is address-dependence (stress.grading.address).
RECYCLED_PHASE = "shuffled"


def plan(config: RunConfig) -> list[Step]:
    """Every step of a full run, in the order they run."""
    steps = []
    policy = "fresh" if config.allocator == "both" else config.allocator
    for phase in config.phases:
        if phase in CONCURRENT_PHASES:
            for stream in _stream_order(phase, config.streams):
                variant = f"stream={stream}" if len(config.streams) > 1 else ""
                steps.append(Step(phase, variant, stream, allocator=policy))
        elif phase == RECYCLED_PHASE and config.allocator != "fresh":
            # the run's policy first, then the other one (the recycled run, or its fresh check)
            steps.append(Step(phase, "", "shared", allocator=policy))
            other = "recycle" if policy == "fresh" else "fresh"
            steps.append(Step(phase, f"allocator={other}", "shared", allocator=other))
        else:
            steps.append(Step(phase, "", "shared", allocator=policy))
    return steps


def _stream_order(phase: str, streams: Sequence[str]) -> Sequence[str]:
    """The burst runs its most concurrent policy (per-thread streams) first: every fault the
    shared-stream burst finds, it finds too, and the faults of launches that only overlap on
    separate streams are found a whole burst sooner."""
    if phase != "burst":
        return streams
    return sorted(streams, key=lambda s: s != "per-thread")


#: Diagnoses that never stop a run early: out of memory and "a phase made no call" say
#: nothing about the operator, so the run goes on to the phases that may.
NEVER_EARLY = (Diagnosis.CLEAN, Diagnosis.OUT_OF_MEMORY, Diagnosis.INCOMPLETE)


def no_calls_detail(config: RunConfig, phase: str) -> str:
    """Why a phase that ended normally made no call, and the fix."""
    budget = phase_budget(config)
    given = f"{budget.seconds:g} s" if budget.seconds is not None else f"{budget.rounds} rounds"
    return (
        f"{phase} made no call in its budget ({given} on {config.threads} threads): the "
        "threads did not reach their first round in time; raise --duration or lower --threads"
    )


def fail_fast_note(diagnosis: str, step: Step, skipped: Sequence[Step]) -> str:
    """The journal's note when fail-fast ends a run after ``step``, naming what it skipped."""
    names = ", ".join(f"{s.phase} {s.variant}".strip() for s in skipped)
    return (
        f"fail-fast: the diagnosis {diagnosis} stands after {step.phase}; skipped {names} "
        "(--no-fail-fast runs every phase)"
    )


def settled(
    diagnosis: str,
    ran: Sequence[str],
    planned: Sequence[str],
    explanation: str = "",
    phase_done: bool = True,
) -> bool:
    """Whether a diagnosis reached after the phases ``ran`` can stand without the rest.

    A crash or hang stands at once; any other finding once the control has run and the last
    phase has run under every stream policy. A failure seen only in the burst never stands
    early: it is what the diagnostic phases are for. Nor does ``self-race`` before the
    interleaved pairs ran (when planned): if they fail too, it is cross-call contamination."""
    if diagnosis in NEVER_EARLY or explanation.startswith(BURST_ONLY):
        return False
    if diagnosis in (Diagnosis.CRASH, Diagnosis.HANG):
        return True
    if diagnosis == Diagnosis.SELF_RACE and "interleaved" in planned and "interleaved" not in ran:
        return False  # the pairs may show another call's state behind it (grading.diagnose)
    return phase_done and ("control" in ran or "control" not in planned)


#: The variant suffix of a focused step (a diagnostic phase on the burst's failing cases).
FOCUS = "focus"
#: Seconds of a focused concurrent step (the control, mixed rounds) after the burst failed.
FOCUS_SECONDS = 0.5
#: Seconds per focused case in the focused isolated step (at least :data:`FOCUS_SECONDS`).
FOCUS_ISOLATED_PER_CASE_S = 0.1


@dataclass(frozen=True)
class BurstFindings:
    """What the burst's failing calls say: the corpus cases that failed (and those in flight
    with them in a failing round), the burst variants with a failing call, and those where a
    control case failed."""

    cases: tuple[str, ...]
    variants: frozenset[str]
    control_variants: frozenset[str] = frozenset()
    partners: tuple[str, ...] = ()
    twins: tuple[str, ...] = ()  # the contiguous twins of failing view variants, not failing

    @property
    def serial(self) -> tuple[str, ...]:
        """The cases the focused ``serial`` step runs: the failing ones and their twins (a
        view-dependence needs the twin seen passing beside its failing view)."""
        return self.cases + self.twins


def burst_findings(
    records: Iterable[Any], corpus: Sequence[str], phase: str = "burst"
) -> BurstFindings:
    """What the burst's call records in ``records`` (a typed journal) say (cases in corpus
    order); or another ``phase``'s, the first to fail after a clean burst."""
    failed: set[str] = set()
    variants: set[str] = set()
    control: set[str] = set()
    rounds: dict[tuple[str, Any], set[str]] = {}
    bad_rounds: set[tuple[str, Any]] = set()
    ids = set(corpus)
    for r in records:
        if not isinstance(r, CallRecord) or r.phase != phase or r.warmup:
            continue
        variant, case = r.variant or "", r.case
        key = (variant, r.round)
        concurrent = r.rep is None  # the serial pass's calls carry rep 0
        if concurrent:
            rounds.setdefault(key, set()).add(case)
        if r.failed:
            failed.add(case)
            variants.add(variant)
            if concurrent:
                bad_rounds.add(key)
            if case not in ids:
                control.add(variant)
    met = set().union(*(rounds[k] for k in bad_rounds)) if bad_rounds else set()
    twins = {split_view(c)[0] for c in failed} - failed
    return BurstFindings(
        tuple(c for c in corpus if c in failed),
        frozenset(variants),
        frozenset(control),
        tuple(c for c in corpus if c in met and c not in failed),
        tuple(c for c in corpus if c in twins),
    )


def focus_steps(rest: Sequence[Step], burst: Sequence[Step], found: BurstFindings) -> list[Step]:
    """The steps after a burst that failed: first the diagnostic phases, short and focused on
    what failed, then (a fallback, only reached when they settle nothing) the ``rest`` of the
    plan that they did not already run in full.

    Focused, in the order the diagnosis weighs them: the concurrent phases under one stream
    policy whose burst failed (per-thread streams, the more concurrent, when both did), for
    :data:`FOCUS_SECONDS` (a later policy's burst, when ``rest`` holds one, waits in the
    fallback: the run went on at the first failing burst); the control (all its cases) also
    under those where a control case failed in the burst; ``serial`` on the failing corpus
    cases and the contiguous twins of failing view variants (every case already made a plain
    serial call in the burst's closing pass: those that failed are the ones to repeat in every
    mode and under both prefill bytes), running whole (which cases fail, views or not, and
    under which byte decides its diagnosis); ``shuffled`` on a sample with those cases first,
    each of their calls right after another case's, for :data:`FOCUS_SECONDS` once those ran,
    ending at its first failing call (the rules ask only whether it fails); the shuffled run
    under the other allocator policy is left to the fallback (the burst failed at the run's
    own addresses); ``isolated`` on the failing cases; ``mixed`` and ``interleaved`` on them
    too, with the cases they met in their failing rounds when fewer than
    :data:`~stress.engine.replay.pct.GROUP` failed (a depth-3 ordering needs three),
    ``interleaved`` over every case when that leaves fewer than two, and last
    (:func:`_pairs_last`)."""
    failing = {s.stream for s in burst if s.variant in found.variants}
    # one policy for the focused concurrent steps: per-thread streams when their burst failed
    # (the more concurrent: kernels overlap, and host threads interleave as under shared)
    main = set(sorted(failing, key=STREAM_POLICIES.index)[-1:])
    control = main | {s.stream for s in burst if s.variant in found.control_variants}
    cases = found.cases
    crossed = cases if len(cases) >= GROUP else cases + found.partners
    focused: list[Step] = []
    whole: list[Step] = []  # the plan's steps a focused one runs in full
    for s in rest:
        if s.phase == "burst" or s.variant.startswith("allocator="):
            continue  # to the fallback
        if s.phase == "serial":
            narrowed = replace(s, variant=FOCUS, focus=found.serial) if cases else s
            focused.append(narrowed)
            whole += [] if cases else [s]
            continue
        if s.phase == "shuffled":  # any failure is its finding
            focused.append(replace(s, confirm=True, first=found.serial, seconds=FOCUS_SECONDS))
            whole.append(s)
            continue
        allowed = control if s.phase == "control" else main
        if s.phase in CONCURRENT_PHASES and s.stream not in allowed:
            continue
        variant = f"{s.variant} {FOCUS}".strip()
        short = replace(s, variant=variant, seconds=FOCUS_SECONDS, confirm=True)
        if s.phase == "control":
            focused.append(short)
        elif s.phase == "isolated" and cases:
            seconds = max(FOCUS_SECONDS, FOCUS_ISOLATED_PER_CASE_S * len(cases))
            focused.append(replace(short, focus=cases, seconds=seconds))
        elif s.phase in ("interleaved", "mixed") and len(crossed) >= 2:
            focused.append(replace(short, focus=crossed))
        elif s.phase == "interleaved" and cases:  # one failing case: its pairs with every case
            focused.append(short)
    # the fallback: what the focused steps did not run whole (the recycled shuffled run too)
    return _pairs_last(focused) + [s for s in rest if s not in whole]


def _pairs_last(steps: list[Step]) -> list[Step]:
    """``steps`` with ``interleaved`` moved after ``isolated`` and ``mixed``. The rules read
    the set of phases, not their order (:func:`stress.grading.diagnosis.diagnose`), and the
    pairs matter in two cases only: when ``isolated`` fails (a ``self-race`` stands once the
    pairs ran clean; :func:`settled`), and when neither ``isolated`` nor ``mixed`` fails; when
    ``mixed`` fails beside a clean ``isolated`` it is ``cross-call-contamination`` whatever the
    pairs say. Their seeded rounds and PCT schedules are the focused step that takes longest
    when clean."""
    pairs = [s for s in steps if s.phase == "interleaved"]
    rest = [s for s in steps if s.phase != "interleaved"]
    at = max((k + 1 for k, s in enumerate(rest) if s.phase in ("isolated", "mixed")), default=0)
    return rest[:at] + pairs + rest[at:]


def focus_note(found: BurstFindings, steps: Sequence[Step]) -> str:
    """The console and journal line that says what the run does after the burst failed."""
    shown = ", ".join(found.cases[:6]) + (" ..." if len(found.cases) > 6 else "")
    first = [f"{s.phase} {s.variant}".strip() for s in steps if s.confirm or FOCUS in s.variant]
    return (
        f"diagnosing: the burst failed on {len(found.cases)} corpus case(s)"
        + (f" ({shown})" if shown else "")
        + f"; next, short: {', '.join(first) or 'the remaining phases'}"
        + " (the full phases follow only if these settle nothing)"
    )


@dataclass
class Scheduler:
    """Hands out each step's duration from the run's budget."""

    config: RunConfig
    steps: list[Step]
    #: seconds each timed step took beyond the seconds it was given (:meth:`observe`)
    overheads: list[float] = field(default_factory=list)

    def observe(self, index: int, wall_s: float, given_s: float | None) -> None:
        """Learn what step ``index`` cost beyond the ``given_s`` seconds of calls it was given
        (its child's start, its inputs, its serial passes); only timed steps say."""
        if given_s is not None and self.steps[index].phase in TIMED_PHASES:
            self.overheads.append(max(0.0, wall_s - given_s))

    @property
    def step_overhead(self) -> float:
        """The overhead expected of each step still to run: the measured mean, at least
        :data:`STEP_OVERHEAD_S`."""
        if not self.overheads:
            return STEP_OVERHEAD_S
        return max(STEP_OVERHEAD_S, sum(self.overheads) / len(self.overheads))

    def duration(self, index: int, elapsed: float) -> float | None:
        """Seconds for concurrent step ``index`` given ``elapsed`` seconds since the run began
        (None: the step runs by ``--iterations`` rounds instead)."""
        step = self.steps[index]
        if step.seconds is not None:
            return step.seconds
        capped = step.phase in SAMPLED_PHASES and self.config.budget_s is not None
        if step.phase not in TIMED_PHASES and not capped:
            return None
        cfg = self.config
        if step.phase == "burst":
            share = BURST_SECONDS
            if cfg.budget_s is not None:
                share = min(share, cfg.budget_s / 10 / max(1, len(cfg.streams)))
            return max(MIN_PHASE_S, share)
        if cfg.iterations is not None and cfg.budget_s is None:
            return None
        if step.phase not in CONCURRENT_PHASES and cfg.budget_s is None:
            return None  # the interleaved phase is bounded only by --budget
        if cfg.budget_s is None:
            return cfg.duration if cfg.duration is not None else DEFAULT_DURATION
        rest = self.steps[index:]
        concurrent = sum(1 for s in rest if s.phase in TIMED_PHASES)
        left = cfg.budget_s - elapsed - self.step_overhead * len(rest)
        return max(MIN_PHASE_S, left / max(1, concurrent))

    def config_for(self, index: int, elapsed: float) -> RunConfig:
        """The configuration the child of step ``index`` runs with."""
        return self.step_config(self.steps[index], self.duration(index, elapsed))

    def step_config(self, step: Step, seconds: float | None) -> RunConfig:
        """The configuration of ``step`` given ``seconds`` of calls (None: by rounds)."""
        config = self.config.with_(
            focus=step.focus, confirm=step.confirm, first=step.first, phase_allocator=step.allocator
        )
        if seconds is None:
            return config
        return config.with_(duration=round(seconds, 3), iterations=None)


def settled_at(history: Sequence[tuple[float, str, str]]) -> float | None:
    """When the last diagnosis of ``history`` (seconds, diagnosis, explanation per phase) first
    stood and stayed; None when the run is clean. A diagnosis only the burst saw is provisional
    (the diagnostic phases had not confirmed it): it stands from the phase that confirmed it,
    or from the burst if nothing did."""
    if not history or history[-1][1] == Diagnosis.CLEAN:
        return None

    def key(entry: tuple[float, str, str]) -> tuple[str, bool]:
        return entry[1], entry[2].startswith(BURST_ONLY)

    at = history[-1][0]
    for entry in reversed(history):
        if key(entry) != key(history[-1]):
            break
        at = entry[0]
    return at
