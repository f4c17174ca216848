"""``add`` is a declaration (stress/ops/declarations/add.toml, read from the simulator's
aclnn_add.h): no Python op module, no prototype row. Its corpus (corpus/control.toml) keeps the
hand-written op's vocabulary (shape, other_shape, dtype, other_dtype, out_dtype, alpha) through
the declaration's [shapes] and dtype variables, and the shipped corpora's baseline recorded now
has the same digests as the one recorded with the hand-written specs before the swap
(tests/data/shipped_baseline_digests.json). The T-style declaration of tests/declarations/add.toml
gives the same arguments and input bytes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from stress import ops
from stress.acl._prototypes import PROTOTYPES
from stress.corpus import load_corpus, load_corpus_file
from stress.engine.call.prepared import run_once
from stress.ops.declaration import load_declaration
from stress.ops.declared import to_opspec
from stress.ops.spec import ScalarArg, TensorArg

ROOT = Path(__file__).resolve().parent.parent
ADD = ops.get("add")
DECL = load_declaration(ROOT / "tests" / "declarations" / "add.toml")
SPEC = to_opspec(DECL)
CONTROL = {c.id: c for c in load_corpus_file(ROOT / "corpus" / "control.toml")}
IDS = [c.id for c in DECL.cases]
PINNED = json.loads((ROOT / "tests" / "data" / "shipped_baseline_digests.json").read_text())


def test_add_is_a_declaration_with_no_python_op_and_no_prototype_row():
    assert ADD.signature is not None and ADD.function == "aclnnAdd"
    assert ops.BUILT_IN_DECLARATIONS / "add.toml" == Path(ops._DECLARED_SOURCE["add"])
    assert not (ROOT / "stress" / "ops" / "add.py").exists()
    assert PROTOTYPES and not any(name.startswith("aclnnAdd") for name in PROTOTYPES)
    assert ops.declaration_source("add") is None  # every process knows a built-in


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
        assert got[name].tobytes() == want[name].tobytes()
    assert SPEC.tolerances(params, "out") == ADD.tolerances(hand.params, "out")


@pytest.mark.parametrize(
    ("raw", "out_dtype", "alpha_dtype", "out_shape"),
    [
        ({"shape": [2, 3], "dtype": "int32", "other_dtype": "fp16"}, "float16", "float32", (2, 3)),
        ({"shape": [2, 3], "dtype": "fp16", "other_dtype": "bf16"}, "float32", "float32", (2, 3)),
        ({"shape": [2, 3], "dtype": "int32"}, "int32", "int32", (2, 3)),
        ({"shape": [4, 1], "other_shape": [3]}, "float32", "float32", (4, 3)),
        ({"shape": [2, 3], "other_shape": [4], "out_dtype": "int32"}, "int32", "float32", (2, 3)),
    ],
)
def test_promotion_broadcast_and_alpha_dtype(raw, out_dtype, alpha_dtype, out_shape):
    p = ADD.parse_params(raw, "test")
    out = next(a for a in ADD.args if a.name == "out")
    alpha = next(a for a in ADD.args if a.name == "alpha")
    assert np.dtype(out.dtype(p)) == np.dtype(ops.DTYPES.get(out_dtype, out_dtype))
    assert np.dtype(alpha.dtype(p)) == np.dtype(alpha_dtype)
    assert tuple(out.shape(p)) == out_shape


def test_the_declared_reference_matches_the_simulator(ctx, stream):
    for case_id in ("add-f32", "add-bf16-broadcast", "add-int32"):
        case = CONTROL[case_id]
        inputs = ADD.generate(case.params, case.seed)
        got = run_once(ctx, stream, ADD, case.params, inputs)["out"].astype(np.float64)
        ref = ADD.reference(case.params, inputs)["out"].astype(np.float64)
        rtol, atol = ADD.tolerances(case.params, "out")
        assert np.allclose(got, ref, rtol=rtol, atol=atol), case_id


def test_shipped_corpora_record_the_digests_recorded_before_the_swap(rt):
    """Case ids, statuses, call and output digests of corpus/control.toml + corpus/mhc.toml
    equal the baseline recorded with the hand-written specs (main before this change)."""
    from stress.engine.replay.baseline import Recording, record_baseline

    cases = load_corpus([ROOT / "corpus" / "control.toml", ROOT / "corpus" / "mhc.toml"])
    got = record_baseline(rt, cases, Recording(repeats=1)).cases
    assert sorted(got) == sorted(PINNED["cases"])
    for case_id, want in PINNED["cases"].items():
        cb = got[case_id]
        assert (cb.status, cb.code, cb.call_digest) == (
            want["status"], want["code"], want["call_digest"]), case_id  # fmt: skip
        assert {k: o.digest for k, o in cb.outputs.items()} == want["outputs"], case_id
    assert CONTROL and all(
        got[i].reference.get("ok") for i in CONTROL
    )  # the declared reference agrees


def test_generated_cases_draw_whole_shapes_from_the_declared_ranges(tmp_path, ctx, stream):
    """`corpus generate --declaration` on the built-in declaration writes a plain corpus of
    `op = "add"` cases whose shapes are drawn from [shapes] (rank 1..4, sides 0..64, under
    max_elements); they run on the simulator and match the declared reference."""
    from _cli import stress_cli
    from hypothesis import given, settings

    from stress.ops.declared_strategies import GenerateOptions, declared_cases, generate_cases

    decl = load_declaration(ops.BUILT_IN_DECLARATIONS / "add.toml")
    cases = generate_cases(decl, GenerateOptions(8, 3, bounds={"max_elements": 4096}))
    for c in cases:
        assert 1 <= len(c.shapes["shape"]) <= 4 and all(0 <= d <= 64 for d in c.shapes["shape"])
        assert int(np.prod(c.shapes["shape"])) <= 4096
    out = tmp_path / "gen.toml"
    proc = stress_cli("corpus", "generate", "--declaration", str(ops.BUILT_IN_DECLARATIONS /
                      "add.toml"), "--count", "3", "--seed", "2", "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    loaded = load_corpus_file(out)
    assert len(loaded) == 3 and all(c.op == "add" and c.spec is ADD for c in loaded)
    for c in loaded:
        inputs = ADD.generate(c.params, c.seed)
        got = run_once(ctx, stream, ADD, c.params, inputs)["out"].astype(np.float64)
        want = ADD.reference(c.params, inputs)["out"].astype(np.float64)
        assert np.allclose(got, want, *ADD.tolerances(c.params, "out")), c.id

    @settings(max_examples=20, deadline=None)
    @given(declared_cases(decl, max_elements=512))
    def drawn(case):
        params = ADD.parse_params(case.params(), "drawn")  # resolves: shapes and dtypes agree
        assert int(np.prod(params["shape"])) <= 512

    drawn()
