"""A failure of one case alone on many threads is a self-race only if the interleaved pairs pass.

A call that reads another call's state (its freed buffers, its tiling) also fails when its own
case runs on T threads: the other copies provide that state. The single-threaded interleaved
pairs tell the two apart (no thread races there), so the diagnosis consults them, and fail-fast
does not settle on ``self-race`` before they ran.
"""

from __future__ import annotations

from stress.config import PHASES
from stress.engine.run.schedule import settled
from stress.grading.diagnosis import diagnose
from stress.records import CaseVerdict, PhaseVerdict
from stress.vocabulary import Diagnosis, PhaseStatus, Verdict


def _phase(name: str, verdict: Verdict, case: str = "a") -> PhaseVerdict:
    cases = (CaseVerdict(case, verdict, 8, {}, 8 if verdict.failed else 0, {}, {}, ""),)
    return PhaseVerdict(name, verdict, cases, PhaseStatus.DONE, "", "", 8, 1.0)


CLEAN = [_phase(p, Verdict.PASS) for p in ("burst", "control", "serial", "shuffled")]


def test_isolated_failing_with_clean_pairs_is_a_self_race():
    found = [
        *CLEAN,
        _phase("isolated", Verdict.MISMATCH_RANDOM),
        _phase("interleaved", Verdict.PASS),
    ]
    diagnosis, explanation = diagnose(found)
    assert diagnosis == Diagnosis.SELF_RACE
    assert "not run" not in explanation


def test_isolated_failing_with_failing_pairs_is_cross_call_contamination():
    found = [
        *CLEAN,
        _phase("isolated", Verdict.MISMATCH_RANDOM),
        _phase("interleaved", Verdict.MISMATCH_STABLE),
    ]
    diagnosis, explanation = diagnose(found)
    assert diagnosis == Diagnosis.CROSS_CALL_CONTAMINATION, explanation
    assert "interleaved pairs fail on one thread" in explanation


def test_a_self_race_says_when_the_pairs_were_not_run():
    diagnosis, explanation = diagnose([*CLEAN, _phase("isolated", Verdict.MISMATCH_RANDOM)])
    assert diagnosis == Diagnosis.SELF_RACE and "interleaved pairs not run" in explanation


def test_fail_fast_waits_for_the_pairs_before_a_self_race_stands():
    ran = ["burst", "control", "serial", "shuffled", "isolated"]
    assert not settled(Diagnosis.SELF_RACE, ran, PHASES)
    assert settled(Diagnosis.SELF_RACE, [*ran, "interleaved"], PHASES)
    # a run that does not plan the pairs settles as before
    assert settled(Diagnosis.SELF_RACE, ran, tuple(p for p in PHASES if p != "interleaved"))
    # other findings are unaffected
    assert settled(Diagnosis.UNWRITTEN_OUTPUT, ran, PHASES)
