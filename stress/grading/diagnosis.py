"""The run's diagnosis from its graded phases (:mod:`stress.grading.verdicts`), alone.

It names the pattern across phases (DESIGN.md "Protocol"), checked in this
order: ``crash``, ``hang``, ``out-of-memory`` (the resource ran out: never read as a race),
``runtime-fault`` (the control operator fails, so the runtime or
harness is to blame), ``executor-reuse`` (serially, a case fails only on later launches of its
repeatable executor: :mod:`stress.grading.reuse`), ``mode-dependence`` (serially, a case
fails only in one API mode, e.g. ``pipeline``, while its plain calls pass:
:mod:`stress.grading.mode_split`), ``unwritten-output``,
``view-dependence`` (only view variants fail serially, their contiguous twins pass: the
operator mishandles non-contiguous inputs),
``uninitialized-read`` (a serial result splits by the byte its outputs and workspace were
prefilled with: :mod:`stress.grading.prefill`),
``operator-error`` (a valid case fails with an error
status even serially), ``baseline-mismatch`` (serial replay disagrees with the baseline: a changed
or non-deterministic operator), ``order-dependence`` (single-threaded random order fails, serial
is clean), ``self-race`` (a case alone on many threads fails and the single-threaded
interleaved pairs do not: when they fail too, the case needs another call's state, which its own
copies on other threads also provide, and the run says ``cross-call-contamination``),
``cross-call-contamination`` (mixed or interleaved fail while isolated and control are
clean), ``incomplete`` (nothing failed but a phase made no call), ``clean``. Single-threaded
patterns come before concurrent ones because they need no concurrency and therefore also explain
concurrent failures. ``address-dependence`` is checked just before ``order-dependence``: the
shuffled phase fails only in recycled device memory, and passes in the same order at fresh
addresses (:mod:`stress.grading.address`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from stress.grading.address import address_dependent
from stress.grading.prefill import prefill_dependent
from stress.records import CaseVerdict, PhaseVerdict
from stress.vocabulary import Diagnosis, Verdict, split_view

__all__ = ["BURST_ONLY", "diagnose"]


class _Phases:
    """The graded phases of a run by name, with the questions :func:`diagnose` asks."""

    def __init__(self, phases: Iterable[PhaseVerdict]) -> None:
        self.by_name: dict[str, list[PhaseVerdict]] = defaultdict(list)
        for p in phases:
            self.by_name[p.name].append(p)
        self.every = [p.verdict for ps in self.by_name.values() for p in ps]
        self.all_cases = [(p.name, c) for ps in self.by_name.values() for p in ps for c in p.cases]

    def verdicts(self, name: str) -> list[str]:
        return [p.verdict for p in self.by_name.get(name, [])]

    def fails(self, name: str) -> bool:
        return any(_failed(v) for v in self.verdicts(name))

    def ran(self, name: str) -> bool:
        return name in self.by_name

    def with_verdict(self, verdict: Verdict) -> str:
        return ", ".join(n for n in self.by_name if verdict in self.verdicts(n))

    def where(self, pred: Callable[[str], bool]) -> str:
        hits = [f"{c.id} in {name}" for name, c in self.all_cases if pred(c.verdict)]
        return ", ".join(hits[:4]) + (" ..." if len(hits) > 4 else "")

    def ruled_out(self, names: tuple[str, ...]) -> str:
        """What the clean phases rule out, and which of them this run skipped."""
        ran = [n for n in names if self.ran(n)]
        skipped = [n for n in names if not self.ran(n)]
        text = f"{' and '.join(ran)} clean" if ran else ""
        if skipped:
            text += ("; " if text else "") + f"{' and '.join(skipped)} not run"
        return text


#: The explanation's start when only the burst failed (no diagnostic phase reproduced it yet).
BURST_ONLY = (
    "the burst (serial first calls, then the corpus mixed with the control on many threads) "
    "failed and no diagnostic phase isolated it: "
)

#: The concurrent phases whose calls decide a mode-dependence on many threads.
_MANY = ("isolated", "mixed")

_CONTAMINATION = (Verdict.MISMATCH_RANDOM, Verdict.MISMATCH_STABLE, Verdict.ERROR)


def _failed(v: str) -> bool:
    """A finding: not PASS, and not INCOMPLETE (a phase that made no call found nothing)."""
    return v not in (Verdict.PASS, Verdict.INCOMPLETE)


def _view_dependence(ph: _Phases) -> str:
    """The explanation when only view variants fail serially and each one's contiguous twin
    ran serially and passed (view invariance broken); "" otherwise (a twin that did not run
    is no evidence: the view may fail for what its twin would fail for too)."""
    serial = [c for p in ph.by_name["serial"] for c in p.cases]
    failing = [c for c in serial if _failed(c.verdict)]
    passed = {c.id for c in serial if c.verdict == Verdict.PASS} - {c.id for c in failing}
    twins = {c.id: split_view(c.id) for c in failing}
    if not failing or any(not view or twin not in passed for twin, view in twins.values()):
        return ""
    shown = [f"{c.id} {c.verdict} (its twin {twins[c.id][0]} passes)" for c in failing[:4]]
    return (
        "a non-contiguous view of the inputs gives another result than the same call on "
        "contiguous tensors, even serially: "
        + ", ".join(shown)
        + (" ..." if len(failing) > 4 else "")
    )


def _one_thread_failing(ph: _Phases) -> list[CaseVerdict]:
    """The cases failing serially, else those failing in shuffled: both run each case in every
    API mode on one thread, and under --budget serial samples its cases, so it may not have met
    the one that fails (shuffled in recycled blocks runs plain calls only)."""
    for name in ("serial", "shuffled"):
        phases = ph.by_name.get(name, [])  # (.get: a defaultdict, reading must not add it)
        failing = [c for p in phases for c in p.cases if _failed(c.verdict)]
        if failing:
            return failing
    return []


def _executor_reuse(ph: _Phases) -> str:
    """The explanation when every case failing on one thread (serial, else shuffled) fails only
    on later launches of its repeatable executor (stress.grading.reuse); "" otherwise."""
    failing = _one_thread_failing(ph)
    if not failing or any(not c.reuse for c in failing):
        return ""
    shown = [f"{c.id}: {c.reuse}" for c in failing[:3]]
    return (
        "a repeatable executor launched again gives another result than its first launch, "
        "serially: " + "; ".join(shown) + (" ..." if len(failing) > 3 else "")
    )


def _mode_dependence(ph: _Phases, concurrent: bool = False) -> str:
    """The explanation when every failing case fails only in one API mode, the same for all,
    while its plain calls pass (stress.grading.mode_split): on one thread (serial, else
    shuffled), or with ``concurrent``
    in ``isolated`` and ``mixed``, each case's evidence strong enough for many threads; ""
    otherwise."""
    if concurrent:  # the diagnostic phases, as for a self-race (the burst's are too few)
        failing = [c for n, c in ph.all_cases if n in _MANY and _failed(c.verdict)]
        if any(c.mode_split is None or not c.mode_split.strong for c in failing):
            return ""
    else:
        failing = _one_thread_failing(ph)
    splits = [c.mode_split for c in failing]
    if not splits or any(s is None for s in splits):
        return ""
    modes = {s.mode for s in splits if s is not None}
    if len(modes) != 1:
        return ""
    shown = [f"{c.id}: {c.mode_dependence}" for c in failing[:3]]
    where = "on many threads" if concurrent else "serially"
    return (
        f"the {modes.pop()} mode gives another result than a plain call of the same case, "
        f"{where}: " + "; ".join(shown) + (" ..." if len(failing) > 3 else "")
    )


def _api_mode(ph: _Phases) -> tuple[Diagnosis, str] | None:
    """Failures of one API mode on one thread, checked before unwritten outputs: a relaunch that
    writes the old outputs, an output consumed before it was done."""
    reuse = _executor_reuse(ph)
    if reuse:
        return Diagnosis.EXECUTOR_REUSE, reuse
    by_mode = _mode_dependence(ph)
    return (Diagnosis.MODE_DEPENDENCE, by_mode) if by_mode else None


def _single_threaded(ph: _Phases) -> tuple[Diagnosis, str] | None:
    """Failures that need no concurrency (serial, shuffled): they also explain failures of the
    concurrent phases (a stale read shows up in mixed too), so they are checked first."""
    if ph.fails("serial"):
        views = _view_dependence(ph)
        if views:
            return Diagnosis.VIEW_DEPENDENCE, views
        dirty = prefill_dependent([c for p in ph.by_name["serial"] for c in p.cases])
        if dirty:
            return Diagnosis.UNINITIALIZED_READ, dirty
        if Verdict.ERROR in ph.verdicts("serial"):
            return Diagnosis.OPERATOR_ERROR, "valid cases fail even serially: " + ph.where(
                lambda v: v == Verdict.ERROR
            )
        return Diagnosis.BASELINE_MISMATCH, (
            "serial replay disagrees with the baseline: the operator changed or is not "
            "deterministic (re-record the baseline)"
        )
    if ph.fails("shuffled"):
        recycled = address_dependent(ph.by_name["shuffled"])
        if recycled:  # only in recycled device memory (stress.grading.address)
            return Diagnosis.ADDRESS_DEPENDENCE, recycled
        return Diagnosis.ORDER_DEPENDENCE, (
            "single-threaded calls in random order fail while serial repeats pass: state left "
            "by a previous call leaks into the next"
            if ph.ran("serial")
            else "single-threaded calls in random order fail (serial not run, so a baseline "
            "mismatch is not ruled out): " + ph.where(_failed)
        )
    return None


def diagnose(phases: Iterable[PhaseVerdict]) -> tuple[Diagnosis, str]:
    """The run's diagnosis and a one-line explanation."""
    ph = _Phases(phases)
    if Verdict.CRASH in ph.every:
        return Diagnosis.CRASH, "the process died during " + ph.with_verdict(Verdict.CRASH)
    if Verdict.HANG in ph.every:
        return Diagnosis.HANG, "a call did not finish during " + ph.with_verdict(Verdict.HANG)
    if Verdict.OUT_OF_MEMORY in ph.every:
        return Diagnosis.OUT_OF_MEMORY, (
            "device or host memory ran out (the resource, not a race): "
            + ph.where(lambda v: v == Verdict.OUT_OF_MEMORY)
            + "; lower --threads, --max-case-bytes or the cases' sizes, or give the device more "
            "memory"
        )
    if ph.fails("control"):
        return Diagnosis.RUNTIME_FAULT, (
            "the control operator fails under the same pool, context and stream policy: the "
            "runtime or the harness is at fault, not the operator under test"
        )
    moded = _api_mode(ph)
    if moded is not None:
        return moded
    if Verdict.UNWRITTEN in ph.every:
        return Diagnosis.UNWRITTEN_OUTPUT, "outputs kept the canary: " + ph.where(
            lambda v: v == Verdict.UNWRITTEN
        )
    single = _single_threaded(ph)
    if single is not None:
        return single
    by_mode = _mode_dependence(ph, concurrent=True)  # a sampled serial may not have met it
    if by_mode:
        return Diagnosis.MODE_DEPENDENCE, by_mode
    if ph.fails("isolated") and ph.fails("interleaved"):
        # one thread, two calls' stages interleaved, fails too: the case needs another call's
        # state (its freed buffers, its tiling), which T copies of itself also provide
        return Diagnosis.CROSS_CALL_CONTAMINATION, (
            "interleaved pairs fail on one thread, so the failure of one case alone on many "
            "threads is another call's state too, not a race of the case with itself: "
            + ph.where(lambda v: v in _CONTAMINATION)
        )
    if ph.fails("isolated"):
        return Diagnosis.SELF_RACE, (
            "one case alone on many threads fails"
            + ("" if ph.ran("interleaved") else " (interleaved pairs not run)")
            + ": "
            + ph.where(_failed)
        )
    if ph.fails("mixed") or ph.fails("interleaved"):
        return Diagnosis.CROSS_CALL_CONTAMINATION, (
            f"different cases in flight corrupt each other "
            f"({ph.ruled_out(('isolated', 'control'))}): " + ph.where(lambda v: v in _CONTAMINATION)
        )
    if ph.fails("burst"):
        return Diagnosis.CROSS_CALL_CONTAMINATION, BURST_ONLY + ph.where(_failed)
    if Verdict.INCOMPLETE in ph.every:
        return Diagnosis.INCOMPLETE, (
            f"no finding, but {ph.with_verdict(Verdict.INCOMPLETE)} made no call: nothing was "
            "tested there (raise --duration or lower --threads)"
        )
    return Diagnosis.CLEAN, "every phase passed"
