"""The declared aclnnAdd (tests/declarations/add.toml) against the hand-written stress/ops/add.py.

For every case of corpus/control.toml: the same phase-1 argument list (kind, name, role, shape,
dtype, scalar value), the same generated input bytes, the same tolerances, and on the simulator
the same output bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stress.corpus import load_corpus_file
from stress.engine.call import run_once
from stress.ops.add import ADD
from stress.ops.declaration import load_declaration
from stress.ops.declared import to_opspec
from stress.ops.spec import ScalarArg, TensorArg

ROOT = Path(__file__).resolve().parent.parent
DECL = load_declaration(ROOT / "tests" / "declarations" / "add.toml")
SPEC = to_opspec(DECL)
CONTROL = {c.id: c for c in load_corpus_file(ROOT / "corpus" / "control.toml")}
IDS = [c.id for c in DECL.cases]


def _pair(case_id: str):
    hand = CONTROL[case_id]
    declared = next(c for c in DECL.cases if c.id == case_id)
    params = SPEC.parse_params(declared.params(), f"add.toml: case '{case_id}'")
    return hand, declared, params


def test_declaration_covers_every_control_case():
    assert sorted(IDS) == sorted(CONTROL)


@pytest.mark.parametrize("case_id", IDS)
def test_same_phase1_arguments(case_id):
    hand, _, params = _pair(case_id)
    assert [(type(a), a.name) for a in SPEC.args] == [(type(a), a.name) for a in ADD.args]
    for mine, theirs in zip(SPEC.args, ADD.args, strict=True):
        if isinstance(theirs, TensorArg):
            assert (mine.output, mine.optional, mine.inout) == (theirs.output, False, False)
            assert tuple(mine.shape(params)) == tuple(theirs.shape(hand.params))
            assert np.dtype(mine.dtype(params)) == np.dtype(theirs.dtype(hand.params))
        else:
            assert isinstance(theirs, ScalarArg)
            assert np.dtype(mine.dtype(params)) == np.dtype(theirs.dtype(hand.params))
            assert mine.value(params) == theirs.value(hand.params)
            assert type(mine.value(params)) is type(theirs.value(hand.params))


@pytest.mark.parametrize("case_id", IDS)
def test_same_input_bytes_and_tolerances(case_id):
    hand, declared, params = _pair(case_id)
    assert declared.seed == hand.seed
    want = ADD.generate(hand.params, hand.seed)
    got = SPEC.generate(params, declared.seed)
    assert list(got) == list(want)
    for name in want:
        assert got[name].dtype == want[name].dtype
        assert got[name].shape == want[name].shape
        assert got[name].tobytes() == want[name].tobytes()
    assert SPEC.tolerances(params, "out") == ADD.tolerances(hand.params, "out")


@pytest.mark.parametrize("case_id", ["add-f32", "add-bf16-broadcast", "add-int32"])
def test_same_outputs_on_the_simulator(ctx, stream, case_id):
    hand, declared, params = _pair(case_id)
    inputs = ADD.generate(hand.params, hand.seed)
    want = run_once(ctx, stream, ADD, hand.params, inputs)
    got = run_once(ctx, stream, SPEC, params, SPEC.generate(params, declared.seed))
    assert got["out"].tobytes() == want["out"].tobytes()
    ref = ADD.reference(hand.params, inputs)["out"].astype(np.float64)
    assert np.allclose(got["out"].astype(np.float64), ref, rtol=1e-2, atol=1e-2)


def test_declared_op_has_no_reference_unless_declared():
    _, _, params = _pair("add-f32")
    with pytest.raises(NotImplementedError, match="baseline-vs-replay"):
        SPEC.reference(params, {})


def test_engine_baseline_is_the_same_for_the_declared_op(rt):
    from stress.baseline.record import record_baseline
    from stress.ops.declared import corpus_cases

    declared = corpus_cases(DECL, SPEC)
    assert [c.id for c in declared] == IDS and all(c.spec is SPEC for c in declared)
    hand = [CONTROL[i] for i in IDS]
    want = record_baseline(rt, hand, repeats=1).cases
    got = record_baseline(rt, declared, repeats=1).cases
    for case_id in IDS:
        assert got[case_id].status == want[case_id].status == "ok"
        assert got[case_id].call_digest == want[case_id].call_digest, case_id
        assert got[case_id].outputs["out"].unwritten == 0
