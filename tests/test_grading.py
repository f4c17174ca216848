"""Verdicts and diagnoses from synthetic call records (pure functions, no device)."""

from __future__ import annotations

import pytest

from stress.grading.diagnosis import diagnose
from stress.grading.verdicts import case_verdict, grade_phase, interference_matrix
from stress.records import CallRecord
from stress.vocabulary import Verdict, is_failure


def call(**fields):
    """A call record as the journal holds it (phase "p" unless given)."""
    return CallRecord.from_json({"type": "call", "phase": "p", **fields})


def ok(digest="d0", match=True, **kw):
    return call(**{"case": "c", "status": "ok", "digest": digest, "match": match, **kw})


def test_pass_when_every_call_matches():
    v = case_verdict("c", [ok(), ok()])
    assert v.verdict == "PASS" and v.calls == 2 and v.digests == {"d0": 2}


def test_stable_mismatch_needs_every_call_wrong_with_one_digest():
    v = case_verdict("c", [ok("bad", False)] * 3)
    assert v.verdict == "MISMATCH_STABLE" and v.mismatches == 3


def test_random_mismatch_when_results_vary():
    assert case_verdict("c", [ok("b1", False), ok("b2", False)]).verdict == "MISMATCH_RANDOM"
    # one wrong result among right ones is not stable: the output varies between calls
    assert case_verdict("c", [ok(), ok("b1", False)]).verdict == "MISMATCH_RANDOM"


def test_unwritten_beats_mismatch_and_error_beats_unwritten():
    uw = ok("x", False, unwritten={"gradPhi": 12288})
    v = case_verdict("c", [uw])
    assert v.verdict == "UNWRITTEN" and v.unwritten == {"gradPhi": 12288}
    err = call(case="c", status="error", code=161002, api="aclnnX", match=False)
    assert case_verdict("c", [uw, err]).verdict == "ERROR"


def test_expected_error_of_negative_case_passes():
    rec = call(case="c", status="error", code=161002, match=True)
    assert case_verdict("c", [rec]).verdict == "PASS"


def test_crash_and_hang_are_worst():
    crash = call(case="c", status="crash", match=False, message="SIGSEGV")
    hang = call(case="c", status="hang", match=False, message="30 s")
    assert case_verdict("c", [ok(), hang]).verdict == "HANG"
    assert case_verdict("c", [hang, crash]).verdict == "CRASH"
    assert Verdict.combine(["PASS", "UNWRITTEN", "MISMATCH_STABLE"]) == "UNWRITTEN"
    assert Verdict.combine([]) == "PASS"


def test_phase_status_overrides_and_warmups_are_ignored():
    recs = [ok(), ok("bad", False, warmup=True)]
    assert grade_phase("serial", recs).verdict == "PASS"
    assert grade_phase("mixed", recs, status="crashed").verdict == "CRASH"
    assert grade_phase("mixed", recs, status="hung").verdict == "HANG"


def _phases(**verdicts):
    out = []
    for name, verdict in verdicts.items():
        rec = ok() if verdict == "PASS" else ok("bad", False)
        if verdict == "UNWRITTEN":
            rec = ok("x", True, unwritten={"o": 1})
        status = {"CRASH": "crashed", "HANG": "hung"}.get(verdict, "done")
        out.append(grade_phase(name, [rec], status=status))
    return out


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ({"serial": "PASS", "mixed": "PASS", "control": "PASS"}, "clean"),
        (
            {
                "serial": "PASS",
                "interleaved": "MISMATCH",
                "isolated": "PASS",
                "mixed": "MISMATCH",
                "control": "PASS",
            },
            "cross-call-contamination",
        ),
        ({"serial": "PASS", "isolated": "MISMATCH", "mixed": "MISMATCH"}, "self-race"),
        ({"serial": "PASS", "shuffled": "MISMATCH", "mixed": "PASS"}, "order-dependence"),
        ({"serial": "UNWRITTEN", "mixed": "UNWRITTEN"}, "unwritten-output"),
        ({"serial": "PASS", "mixed": "MISMATCH", "control": "MISMATCH"}, "runtime-fault"),
        ({"serial": "PASS", "mixed": "CRASH", "control": "PASS"}, "crash"),
        ({"serial": "PASS", "mixed": "HANG", "control": "PASS"}, "hang"),
        ({"serial": "MISMATCH", "mixed": "PASS"}, "baseline-mismatch"),
        # a stale read fails shuffled *and* the concurrent phases: single-threaded wins
        (
            {
                "serial": "PASS",
                "shuffled": "MISMATCH",
                "interleaved": "MISMATCH",
                "isolated": "MISMATCH",
                "mixed": "MISMATCH",
                "control": "PASS",
            },
            "order-dependence",
        ),
    ],
)
def test_diagnosis_patterns(verdicts, expected):
    diagnosis, explanation = diagnose(_phases(**verdicts))
    assert diagnosis == expected and explanation


def test_interference_matrix_counts_victims():
    recs = [
        ok(case="a", aggressor="b", match=False),
        ok(case="b", aggressor="a"),
        ok(case="a", aggressor="a"),
    ]
    m = interference_matrix(recs)
    cells = {(c.victim, c.aggressor): c for c in m.cells}
    assert cells[("a", "b")].failures == 1 and cells[("b", "a")].failures == 0
    assert m.victims == ("a", "b")


def test_explanation_does_not_claim_phases_that_did_not_run():
    _, full = diagnose(_phases(serial="PASS", isolated="PASS", mixed="MISMATCH", control="PASS"))
    assert "isolated and control clean" in full and "not run" not in full
    _, alone = diagnose(_phases(interleaved="MISMATCH"))
    assert "isolated and control not run" in alone and "clean" not in alone.split(":")[0]
    _, partial = diagnose(_phases(isolated="PASS", mixed="MISMATCH"))
    assert "isolated clean; control not run" in partial
    _, shuffled_only = diagnose(_phases(shuffled="MISMATCH"))
    assert "serial not run" in shuffled_only


def test_is_failure_is_a_per_record_failure():
    assert not is_failure(ok())
    assert is_failure(ok("x", False))
    assert is_failure(ok(unwritten={"gradPhi": 4}))
    assert is_failure({"case": "c", "status": "crash"}) and is_failure({"status": "hang"})
    assert not is_failure({"status": "error", "code": 161002, "match": True})  # expected
    assert is_failure({"status": "error", "code": 161002, "match": False})
    # a typed record answers the same predicate
    assert ok("x", False).failed and not ok().failed
    assert not call(case="c", status="error", code=1, match=True).failed


def test_a_call_record_round_trips_every_key_it_does_not_know():
    line = {"type": "call", "phase": "mixed", "case": "c", "status": "ok", "match": None}
    rec = CallRecord.from_json({**line, "future": [1]})
    assert rec.to_json() == {**line, "future": [1]} and rec.status == "ok"
    assert "digest" not in rec.to_json()  # fields that are not set are not written
    with pytest.raises(ValueError, match="status"):
        CallRecord.from_json({"type": "call", "phase": "p", "case": "c", "status": "fine"})
    with pytest.raises(ValueError, match="case"):
        CallRecord.from_json({"type": "call", "phase": "p", "status": "ok"})


def _serial(*cases):
    """A serial phase of (case id, passes) calls."""
    return grade_phase(
        "serial", [ok(case=c) if good else ok("bad", False, case=c) for c, good in cases]
    )


@pytest.mark.parametrize(
    ("cases", "expected"),
    [
        # only the view fails, its contiguous twin passes: view-dependence
        ((("a", True), ("a@transpose", False), ("a@pad", True)), "view-dependence"),
        # the twin fails too: the operator disagrees with its baseline whatever the layout
        ((("a", False), ("a@transpose", False)), "baseline-mismatch"),
        # a contiguous case fails beside a view: not the view's doing alone
        ((("a", True), ("b", False), ("a@offset", False)), "baseline-mismatch"),
        # an id that only looks like a variant (unknown kind) is a contiguous case
        ((("a@diagonal", False),), "baseline-mismatch"),
        # the view fails but its twin did not run serially: nothing says the twin passes
        ((("b", True), ("a@pad", False)), "baseline-mismatch"),
    ],
)
def test_view_dependence_needs_only_views_failing_serially(cases, expected):
    mixed = grade_phase("mixed", [ok()])
    diagnosis, explanation = diagnose([_serial(*cases), mixed])
    assert diagnosis == expected
    if expected == "view-dependence":
        assert "a@transpose" in explanation and "its twin a passes" in explanation
