"""uninitialized-read from synthetic call records: a serial result that splits by prefill byte.

Every call's outputs and workspace are prefilled with the call's canary, which alternates
between the run's (0xAB) and a second byte (0x5A); a kernel that reads its workspace before
writing it gives one result per byte (stress/grading/prefill.py). Pure functions, no device.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stress.corpus.parse import load_corpus
from stress.grading.diagnosis import diagnose
from stress.grading.judge import Outcome, judge
from stress.grading.prefill import PrefillTally, dependence
from stress.grading.verdicts import case_verdict, grade_phase
from stress.records import CallRecord
from stress.vocabulary import Diagnosis, Verdict

A, B = 0xAB, 0x5A


def call(byte, digest="good", match=True, *, case="ln", workspace=32, outputs=None, **kw):
    """An ok serial call under prefill ``byte`` (its outputs' digests derive from ``digest``)."""
    fields = {"type": "call", "phase": "serial", "case": case, "status": "ok", "canary": byte}
    fields |= {"digest": digest, "match": match, **kw}
    fields["outputs"] = outputs or {"out": f"{digest}-out", "mean": "same"}
    if workspace:
        fields["workspace"] = workspace
    return CallRecord.from_json(fields)


def alternating(n, wrong_under=B, **kw):
    """``n`` calls in the run's turn order; the calls under ``wrong_under`` give another result."""
    return [
        call(byte, "bad", False, **kw) if byte == wrong_under else call(byte, **kw)
        for byte in (A if i % 2 == 0 else B for i in range(n))
    ]


def tally(records):
    t = PrefillTally()
    for r in records:
        t.add(r)
    return t


@pytest.mark.parametrize("wrong_under", [A, B])
def test_one_byte_right_the_other_wrong_is_a_dependence(wrong_under):
    text = dependence(tally(alternating(4, wrong_under)))
    assert "out change with the prefill byte" in text, text
    assert "mean" not in text.split(":")[0]  # only the output whose digest splits is named
    assert "workspace (32 bytes)" in text


def test_both_bytes_wrong_but_each_consistent_is_a_dependence():
    records = [call(A, "bad-a", False), call(B, "bad-b", False), call(A, "bad-a", False)]
    assert dependence(tally(records))


def test_a_case_without_workspace_read_its_output():
    text = dependence(tally(alternating(4, workspace=0)))
    assert "no workspace" in text and "prior contents of out" in text, text


@pytest.mark.parametrize(
    "records",
    [
        # every call right
        [call(A), call(B), call(A)],
        # one byte only: nothing to compare
        [call(A, "bad", False), call(A, "bad", False), call(A, "bad", False)],
        # one call per byte: one result each is no evidence of a split
        [call(A), call(B, "bad", False)],
        # wrong results under both bytes and varying within a byte: not a function of the byte
        [call(A, "x1", False), call(B, "x2", False), call(A, "x3", False), call(B, "x4", False)],
        # a byte whose calls both match and differ: the result varies whatever the byte
        [call(A), call(A, "bad", False), call(B, "bad", False), call(B, "bad", False)],
        # the same wrong result under both bytes: wrong, but not by the prior contents
        [call(A, "bad", False), call(B, "bad", False), call(A, "bad", False)],
        # records without a byte (older journals): nothing to group by
        [call(None, "bad", False), call(None), call(None, "bad", False)],
    ],
)
def test_no_dependence_without_a_split_by_byte(records):
    assert dependence(tally(records)) == ""


def test_the_case_verdict_carries_it_and_a_passing_case_does_not():
    failing = case_verdict("ln", alternating(4))
    assert failing.verdict == Verdict.MISMATCH_RANDOM and failing.prefill
    assert "prefill" in failing.to_json()
    assert case_verdict("ln", [call(A), call(B), call(A)]).prefill == ""


def test_unwritten_bytes_are_not_an_uninitialized_read():
    """A never-written output also splits by byte (it holds the canary): unwritten-output."""
    records = [
        call(A, unwritten={"out": 4}),
        call(B, "bad", False, unwritten={"out": 4}),
        call(A, unwritten={"out": 4}),
    ]
    v = case_verdict("ln", records)
    assert v.verdict == Verdict.UNWRITTEN and v.prefill == ""
    assert diagnose([grade_phase("serial", records)])[0] == Diagnosis.UNWRITTEN_OUTPUT


def test_diagnose_names_the_case_and_the_buffer():
    serial = grade_phase("serial", [*alternating(4), call(A, case="ok"), call(B, case="ok")])
    diagnosis, explanation = diagnose([serial, grade_phase("shuffled", alternating(4))])
    assert diagnosis == Diagnosis.UNINITIALIZED_READ
    assert "ln: out change with the prefill byte" in explanation, explanation
    assert "workspace (32 bytes)" in explanation and "ok:" not in explanation


def test_a_serial_mismatch_that_ignores_the_byte_stays_a_baseline_mismatch():
    serial = grade_phase("serial", [call(A, "bad", False), call(B, "bad", False)] * 2)
    assert diagnose([serial])[0] == Diagnosis.BASELINE_MISMATCH


def test_only_serial_decides():
    """A split seen only in a concurrent phase is not serial evidence: the phase's own rule."""
    mixed = grade_phase("mixed", [r.replace(phase="mixed") for r in alternating(4)])
    serial = grade_phase("serial", [call(A), call(B)])
    assert diagnose([serial, mixed])[0] == Diagnosis.CROSS_CALL_CONTAMINATION


def test_every_call_record_names_its_prefill_byte_and_workspace():
    """The journal says which byte filled a call's outputs and workspace, and how big that was."""
    case = load_corpus([str(Path(__file__).resolve().parents[1] / "corpus/ops/layer_norm.toml")])[0]
    good = Outcome(outputs={"out": np.zeros(3, np.float32)}, workspace=32)
    rec = judge(case, good, None, phase="serial", canary=B, run_canary=A)
    assert (rec.canary, rec.workspace) == (B, 32)
    rec = judge(case, Outcome(outputs={}), None, phase="serial", canary=A, run_canary=A)
    assert rec.canary == A and rec.workspace is None  # the run's byte too; no workspace
    failed = Outcome(status="error", code=161002, api="aclnnLayerNormGetWorkspaceSize")
    assert judge(case, failed, None, phase="serial", canary=B, run_canary=A).canary == B
