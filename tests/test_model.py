"""The data model: verdict severity and combine(), the one failure predicate, schema versions."""

import json

import pytest

from stress.vocabulary import (
    Diagnosis,
    PhaseStatus,
    RunVerdict,
    Status,
    Verdict,
    is_failure,
    schema,
    schema_version,
)


def test_verdicts_are_ordered_worst_first_and_combine_takes_the_worst():
    order = list(Verdict)
    assert order[0] is Verdict.CRASH and order[-1] is Verdict.PASS
    assert [v.severity for v in order] == sorted((v.severity for v in order), reverse=True)
    assert Verdict.combine([]) is Verdict.PASS
    assert Verdict.combine(["PASS", "MISMATCH_STABLE", "UNWRITTEN"]) is Verdict.UNWRITTEN
    assert Verdict.combine([Verdict.HANG, Verdict.CRASH, Verdict.ERROR]) is Verdict.CRASH
    with pytest.raises(ValueError):
        Verdict.combine(["NOT_A_VERDICT"])


def test_members_are_their_journal_words():
    # records read back from results.jsonl compare equal to the members, and members
    # serialise as the same words the journal has always used
    assert json.dumps({"s": Status.OK, "v": Verdict.PASS}) == '{"s": "ok", "v": "PASS"}'
    assert Status("hang") is Status.HANG and PhaseStatus("crashed") is PhaseStatus.CRASHED
    assert Diagnosis.CLEAN.run_verdict is RunVerdict.CLEAN
    assert Diagnosis.SELF_RACE.run_verdict is RunVerdict.FINDINGS


def test_phase_status_floors_the_phase_verdict():
    assert PhaseStatus.CRASHED.verdict is Verdict.CRASH
    assert PhaseStatus.HUNG.verdict is Verdict.HANG
    assert PhaseStatus.FAILED.verdict is Verdict.ERROR
    assert PhaseStatus.DONE.verdict is Verdict.PASS


@pytest.mark.parametrize(
    ("record", "failed"),
    [
        ({"status": "ok", "match": True}, False),
        ({"status": "ok", "match": None}, False),  # no baseline entry: nothing to compare
        ({"status": "ok", "match": False}, True),
        ({"status": "ok", "match": True, "unwritten": {"y": 3}}, True),
        ({"status": "error", "code": 161002, "match": True}, False),  # the expected status
        ({"status": "error", "code": 161002, "match": False}, True),
        ({"status": "crash", "match": False}, True),
        ({"status": "hang"}, True),
    ],
)
def test_is_failure(record, failed):
    assert is_failure(record) is failed


def test_schema_versions_default_to_one_and_reject_foreign_schemas():
    assert schema("results") == "aclnn-stress/results/1"
    assert schema_version({"schema": schema("report")}, "report") == 1
    assert schema_version({}, "baseline") == 1  # written before the field existed
    assert schema_version({"schema": "aclnn-stress/report/7"}, "report") == 7
    with pytest.raises(ValueError, match="not an aclnn-stress report schema"):
        schema_version({"schema": "aclnn-stress/baseline/1"}, "report")
