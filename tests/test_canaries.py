"""UNWRITTEN needs both canaries: a value equal to one canary is a coincidence, not a gap.

The calls are real aclnnAdd calls on the simulator whose inputs are chosen so that one output
element equals the canary's bytes (fp16 0xABAB): correct, it passes; wrong elsewhere, it is the
mismatch it is. A real gap (elements left as prefilled) stays UNWRITTEN, whether the baseline's
second canary confirmed it or both canaries showed it in the phase.
"""

from __future__ import annotations

import numpy as np
import pytest

from stress.config import CANARY
from stress.corpus.parse import load_corpus
from stress.engine.call.execute import run_call
from stress.engine.call.inputs import InputCache
from stress.engine.replay.baseline import _case_baseline
from stress.grading.canaries import call_canary, second_canary
from stress.grading.judge import Outcome, judge
from stress.grading.verdicts import case_verdict
from stress.vocabulary import Verdict

ADD = "tests/data/add_under_test.toml"
CANARY_FP16 = np.array([CANARY * 0x101], np.uint16).view(np.float16)[0]  # -0.0599


@pytest.fixture(scope="module")
def case():
    return {c.id: c for c in load_corpus([ADD])}["t-fp16"]  # out = self + 2 * other, fp16


def _inputs(case, ctx, stream, *, coincide: bool, shift: float = 0.0):
    """The case's inputs; with ``coincide`` out[3, 5] is exactly the canary's value, with
    ``shift`` every other element of out is off by 2 * shift (a wrong result)."""
    ins = {k: v.copy() for k, v in InputCache(ctx, stream).get(case).items()}
    ins["other"] += np.float16(shift)
    if coincide:
        ins["self"][3, 5], ins["other"][3, 5] = CANARY_FP16, 0
    return ins


def _calls(case, ctx, stream, ins, n=4):
    """``n`` calls with the canary a run gives them in turn (the run's, then the second)."""
    return [
        (run_call(ctx, stream, case, ins, canary=call_canary(CANARY, t)), call_canary(CANARY, t))
        for t in range(n)
    ]


def _baseline(case, ctx, stream, ins):
    runs = [run_call(ctx, stream, case, ins, canary=CANARY) for _ in range(3)]
    alt = run_call(ctx, stream, case, ins, canary=second_canary(CANARY))
    return _case_baseline(case, ins, runs, alt, CANARY)


def _grade(case, calls, baseline):
    records = [
        judge(case, o, baseline, phase="serial", canary=c, run_canary=CANARY) for o, c in calls
    ]
    return records, case_verdict(case.id, records)


def test_the_two_canaries_alternate_and_differ():
    assert [call_canary(0xAB, t) for t in range(4)] == [0xAB, 0x5A, 0xAB, 0x5A]
    assert second_canary(0x5A) not in (0x5A, 0xAB)


def test_a_correct_canary_valued_element_passes_without_a_baseline(case, ctx, stream):
    ins = _inputs(case, ctx, stream, coincide=True)
    calls = _calls(case, ctx, stream, ins)
    assert calls[0][0].outputs["out"].view(np.uint16)[3, 5] == CANARY * 0x101
    records, verdict = _grade(case, calls, None)
    assert records[0].kept == {"out": 1} and not records[0].failed  # one canary: not confirmed
    assert verdict.verdict == Verdict.PASS, verdict


def test_a_correct_canary_valued_element_passes_against_its_baseline(case, ctx, stream):
    ins = _inputs(case, ctx, stream, coincide=True)
    baseline = _baseline(case, ctx, stream, ins)
    assert baseline.outputs["out"].canary_chance == 1 and baseline.outputs["out"].unwritten == 0
    records, verdict = _grade(case, _calls(case, ctx, stream, ins), baseline)
    assert records and verdict.verdict == Verdict.PASS, verdict
    assert not any(r.failed for r in records), records


def test_a_wrong_result_with_a_canary_valued_element_is_a_mismatch(case, ctx, stream):
    """The baseline has no canary-valued element; the wrong result has one (a wrong-value bug
    whose output happens to hold 0xABAB): it is MISMATCH_STABLE, not UNWRITTEN."""
    baseline = _baseline(case, ctx, stream, _inputs(case, ctx, stream, coincide=False))
    assert baseline.outputs["out"].canary_chance == 0
    wrong = _inputs(case, ctx, stream, coincide=True, shift=0.25)
    records, verdict = _grade(case, _calls(case, ctx, stream, wrong), baseline)
    assert records[0].kept == {"out": 1} and records[0].match is False
    assert verdict.verdict == Verdict.MISMATCH_STABLE, verdict
    assert not verdict.unwritten


def _left_unwritten(calls, rows: slice):
    """The calls as an operator that never writes ``out[rows]`` leaves them: the prefill."""
    out = []
    for outcome, canary in calls:
        arr = outcome.outputs["out"].copy()
        arr.view(np.uint8).reshape(arr.shape[0], -1)[rows] = canary
        out.append((Outcome(outputs={"out": arr}), canary))
    return out


def test_a_real_gap_is_unwritten_under_both_canaries_without_a_baseline(case, ctx, stream):
    ins = _inputs(case, ctx, stream, coincide=False)
    calls = _left_unwritten(_calls(case, ctx, stream, ins), slice(12, 16))
    records, verdict = _grade(case, calls, None)
    assert {r.canary for r in records} == {CANARY, second_canary(CANARY)}
    assert verdict.verdict == Verdict.UNWRITTEN and verdict.unwritten == {"out": 64}, verdict
    # one canary only (a phase that called it once): not confirmed, so not UNWRITTEN
    assert case_verdict(case.id, records[:1]).verdict == Verdict.PASS


def test_a_gap_the_baseline_confirmed_is_unwritten_at_once(case, ctx, stream):
    ins = _inputs(case, ctx, stream, coincide=False)
    calls = _calls(case, ctx, stream, ins, n=1)
    recorded = _left_unwritten(
        [(run_call(ctx, stream, case, ins, canary=c), c) for c in (CANARY,) * 3], slice(12, 16)
    )
    alt = _left_unwritten(
        [(run_call(ctx, stream, case, ins, canary=second_canary(CANARY)), second_canary(CANARY))],
        slice(12, 16),
    )
    baseline = _case_baseline(case, ins, [o for o, _ in recorded], alt[0][0], CANARY)
    assert baseline.outputs["out"].unwritten == 64
    records, verdict = _grade(case, _left_unwritten(calls, slice(12, 16)), baseline)
    assert records[0].unwritten == {"out": 64} and records[0].failed
    assert verdict.verdict == Verdict.UNWRITTEN, verdict
