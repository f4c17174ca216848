"""Hypothesis strategies for cases: bounds, eager validation, the simulator against numpy on
generated valid cases, documented errors on generated violations, and shrinking a mix."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from stress import acl
from stress.corpus import strategies as sst
from stress.corpus.generate import violations_of
from stress.engine.call.inputs import generate_inputs
from stress.engine.call.prepared import run_once
from stress.grading.judge import close_enough

# deterministic and fast: the same examples on every run, no example database
FAST = settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
PURE = settings(FAST, max_examples=60)
MHC_OPS = ("mhc_pre_sinkhorn", "mhc_pre_sinkhorn_backward")
OPS = ("add", *MHC_OPS)
BWD = MHC_OPS[1]


# -- eager validation ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: sst.valid_cases("add", max_elements=0), "max_elements=0"),
        (lambda: sst.valid_cases("add", dims={"C": (1, 2)}), "'C' is not a dimension of add"),
        (lambda: sst.valid_cases("add", dtypes={"dtype": ["float64"]}), "choose from"),
        (lambda: sst.valid_cases("add", dtypes={"dtype": "bf16"}), "choose from"),
        (lambda: sst.valid_cases(BWD, dims={"C": (1000, 1010)}), "no multiple of 128"),
        (lambda: sst.valid_cases(BWD, dims={"C": (128, 100_096)}), "<= 99999"),
        (lambda: sst.valid_cases(BWD, limits={"B*S": -1}), "an int >= 0"),
        (lambda: sst.valid_cases(BWD, limits={"B*Q": 4}), "an expression over"),
        (lambda: sst.valid_cases(BWD, dtypes={"dtype": ["float32"]}), "choose from bf16, fp16"),
        (lambda: sst.valid_cases("conv"), "unknown op 'conv'"),
        (lambda: sst.valid_cases("add", max_C=256), "'max_C' is not a bound"),
        (lambda: sst.invalid_cases("add", violations=["n"]), "'n' is not a constraint"),
        (lambda: sst.invalid_cases(BWD, violations=[]), "non-empty"),
        (lambda: sst.case_lists(sst.valid_cases("add"), min_size=-1), "min_size"),
        (lambda: sst.case_lists([1, 2]), "expected a strategy"),
        (lambda: sst.shrink_mix([1], lambda m: True, max_examples=0), "max_examples"),
    ],
)
def test_bad_bounds_raise_invalid_argument_at_call_time(make, message):
    with pytest.raises(InvalidArgument, match=message):
        make()  # no draw needed: validation is eager


# -- bounds are respected (no device) --------------------------------------------------------
@PURE
@given(sst.valid_cases("add", max_elements=512))
def test_add_cases_respect_bounds(case):
    shape = case.params["shape"]
    assert 1 <= len(shape) <= 3 and all(0 <= d <= 64 for d in shape)
    assert int(np.prod(shape)) <= 512
    other = case.params["other_shape"] or shape
    np.broadcast_shapes(tuple(shape), tuple(other))  # broadcastable: does not raise
    assert case.expect is None and case.spec.name == "add"


@PURE
@given(sst.valid_cases(BWD, dims={"B": (0, 3), "S": (1, 40), "C": (128, 256)},
                       limits={"B*S": 64}, dtypes={"dtype": ["fp16"]}))  # fmt: skip
def test_mhc_cases_respect_constraints_and_bounds(case):
    p = case.params
    assert p["N"] == 4 and p["num_iters"] == 20 and p["dtype"] == "fp16"
    assert p["C"] % 128 == 0 and 0 < p["C"] <= 256
    assert 0 <= p["B"] <= 3 and 1 <= p["S"] <= 40 and p["B"] * p["S"] <= 64


@PURE
@given(st.sampled_from(OPS).flatmap(lambda op: sst.invalid_cases(op).map(lambda c: (op, c))))
def test_invalid_cases_name_their_violation_and_status(pair):
    op, case = pair
    assert case.op == op and case.expect is not None and case.expect.status == 161002
    whats = {what for what, _ in violations_of(op).values()}
    assert case.description.removeprefix("violates: ") in whats


@PURE
@given(sst.case_lists(sst.valid_cases("add", max_elements=64), min_size=2, max_size=5))
def test_case_lists_hold_distinct_ids(cases):
    assert 2 <= len(cases) <= 5 and len({c.id for c in cases}) == len(cases)


def test_hypothesis_shrinks_towards_small_cases():
    kw = {"settings": settings(database=None, derandomize=True, max_examples=200)}
    add = find(sst.valid_cases("add"), lambda c: True, **kw)
    assert add.params["shape"] == (0,) and add.params["dtype"] == "float32" and add.seed == 0
    assert add.params["other_shape"] is None and add.params["alpha"] == 1.0
    mhc = find(sst.valid_cases(BWD), lambda c: c.params["C"] >= 512, **kw)
    assert (mhc.params["B"], mhc.params["S"], mhc.params["C"]) == (0, 1, 512)


# -- the simulator against the references ----------------------------------------------------
def _run(stream, case):
    ctx = stream.context
    ctx.bind()
    inputs = generate_inputs(case, ctx, stream)
    return inputs, run_once(ctx, stream, case.spec, case.params, inputs)


def _check_matches_reference(stream, case):
    inputs, outputs = _run(stream, case)
    expected = case.spec.reference(case.params, inputs)
    assert set(outputs) >= set(expected) - {"hPre", "hcBeforeNorm", "invRms", "sumOut", "normOut"}
    for name, actual in outputs.items():
        if name not in expected:
            continue
        rtol, atol = case.spec.tolerances(case.params, name)
        ok, ratio = close_enough(actual, np.asarray(expected[name]), rtol, atol)
        assert ok, f"{case.id} {dict(case.params)}: {name} is {ratio:.2f} x its tolerance"


@FAST
@given(case=sst.valid_cases("add", max_elements=2048))
def test_sim_add_matches_numpy_on_generated_cases(stream, case):
    _check_matches_reference(stream, case)


@FAST
@given(case=sst.valid_cases(MHC_OPS[0], limits={"B*S": 96}, dims={"C": (128, 384)}))
def test_sim_mhc_forward_matches_numpy_on_generated_cases(stream, case):
    _check_matches_reference(stream, case)


@FAST
@given(case=sst.valid_cases(BWD, limits={"B*S": 96}, dims={"C": (128, 384)}))
def test_sim_mhc_backward_matches_numpy_on_generated_cases(stream, case):
    _check_matches_reference(stream, case)


@settings(FAST, max_examples=12)
@given(case=st.sampled_from(OPS).flatmap(sst.invalid_cases))
def test_generated_violations_fail_with_their_documented_code(stream, case):
    with pytest.raises(acl.AclError) as err:
        _run(stream, case)
    assert err.value.code == case.expect.status, f"{case.id}: {case.description}"
    assert err.value.message.strip(), f"{case.id}: no aclGetRecentErrMsg text"
    assert err.value.api.startswith("aclnn")


# -- shrinking a failing mix -----------------------------------------------------------------
CASES = [f"case-{i}" for i in range(12)]


def test_shrink_mix_finds_the_failing_pair():
    calls = []

    def fails(mix):
        calls.append(list(mix))
        return "case-3" in mix and "case-8" in mix

    assert sst.shrink_mix(CASES, fails) == ["case-3", "case-8"]
    assert calls[0] == CASES  # the whole mix is checked first


def test_shrink_mix_keeps_the_victim_and_is_one_minimal():
    def fails(mix):
        return mix[0] == "victim" and {"case-1", "case-5", "case-9"} <= set(mix)

    got = sst.shrink_mix(CASES, fails, keep=["victim"])
    assert got == ["victim", "case-1", "case-5", "case-9"]


def test_shrink_mix_falls_back_to_ddmin_when_random_mixes_pass():
    needed = set(CASES[:10])  # random sublists almost never hold ten given cases

    def fails(mix):
        return needed <= set(mix)

    assert sst.shrink_mix(CASES, fails, max_examples=5) == CASES[:10]


def test_shrink_mix_memoises_and_bounds_trials():
    seen = []

    def flaky(mix):  # a predicate that would make hypothesis report flakiness if re-asked
        seen.append(frozenset(mix))
        return len(seen) % 2 == 1 or len(mix) == len(CASES)

    got = sst.shrink_mix(CASES, flaky, max_trials=10)
    assert len(seen) == len(set(seen)) <= 10  # every distinct mix run at most once
    assert got  # a failing mix, however small it got within the budget


def test_shrink_mix_refuses_a_mix_that_does_not_fail():
    with pytest.raises(ValueError, match="does not fail"):
        sst.shrink_mix(CASES, lambda mix: False)
