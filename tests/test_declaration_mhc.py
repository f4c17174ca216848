"""The mHC operators are declarations (stress/ops/declarations/mhc_pre_sinkhorn*.toml, read
from the simulator's or the installed headers) pointing at their inputs, reference and
tolerances in stress/ops/mhc.py; no OpSpec is written in Python and the prototype table has no
mHC rows. The T-style declarations of tests/declarations/mhc_*.toml (dims I, header attribute
names) give the same phase-1 arguments and outputs for every case of corpus/mhc.toml; the
shipped corpora's digests are pinned in tests/test_declaration_add.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stress.corpus import load_corpus_file
from stress.engine.call.prepared import run_once
from stress.grading.judge import close_enough
from stress.ops.declaration import load_declaration
from stress.ops.declared import to_opspec
from stress.ops.mhc import MHC_PRE_SINKHORN, MHC_PRE_SINKHORN_BACKWARD
from stress.ops.spec import AttrArg, TensorArg

ROOT = Path(__file__).resolve().parent.parent
DECLS = ROOT / "tests" / "declarations"
HAND = {s.name: s for s in (MHC_PRE_SINKHORN, MHC_PRE_SINKHORN_BACKWARD)}
DECLARED = {
    name: load_declaration(DECLS / f"{name}.toml")
    for name in ("mhc_pre_sinkhorn", "mhc_pre_sinkhorn_backward")
}
SPECS = {name: to_opspec(decl) for name, decl in DECLARED.items()}
CASES = load_corpus_file(ROOT / "corpus" / "mhc.toml")
_SAVED = ("hPre", "hcBeforeNorm", "invRms", "sumOut", "normOut")


def declared_params(op: str, p) -> dict:
    """A hand-written case's parameters as the declaration's (dims, dtype, header names)."""
    out = {k: p[k] for k in ("B", "S", "N", "C", "dtype")}
    out.update(I=p["num_iters"], hcEps=p["hc_eps"])
    if op == "mhc_pre_sinkhorn":
        out.update(normEps=p["norm_eps"], needBackward=p["need_backward"])
        out["hcMult"] = p["N"] if p["hc_mult"] is None else p["hc_mult"]
        if not p["need_backward"]:
            out.update(dict.fromkeys(_SAVED, "null"))
    return SPECS[op].parse_params(out, f"translated {op} case")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_same_phase1_arguments(case):
    hand, spec = HAND[case.op], SPECS[case.op]
    p = declared_params(case.op, case.params)
    assert [(type(a), a.name) for a in spec.args] == [(type(a), a.name) for a in hand.args]
    for mine, theirs in zip(spec.args, hand.args, strict=True):
        if isinstance(theirs, TensorArg):
            assert (mine.output, mine.optional) == (theirs.output, theirs.optional), mine.name
            assert mine.present(p) == theirs.present(case.params), mine.name
            if theirs.present(case.params):
                assert tuple(mine.shape(p)) == tuple(theirs.shape(case.params)), mine.name
                assert np.dtype(mine.dtype(p)) == np.dtype(theirs.dtype(case.params)), mine.name
        else:
            assert isinstance(theirs, AttrArg)
            assert mine.value(p) == theirs.value(case.params), mine.name
            assert type(mine.value(p)) is type(theirs.value(case.params)), mine.name


def test_corpus_covers_both_ops():
    assert {c.op for c in CASES} == set(HAND)


def test_the_mhc_ops_are_declarations_without_prototype_rows():
    from stress import ops
    from stress.acl._prototypes import PROTOTYPES

    for name, spec in HAND.items():
        assert spec.signature is not None and spec is ops.get(name)
        assert PROTOTYPES and not any(p.startswith(spec.function) for p in PROTOTYPES)
    assert HAND["mhc_pre_sinkhorn_backward"].depends_on == "mhc_pre_sinkhorn"


def test_hc_eps_type_follows_the_installed_header(tmp_path, monkeypatch):
    """Older ops-transformer trees declare `float hcEps`: the declared op binds what the
    installed header ($ASCEND_HOME_PATH/include) says, the simulator's header otherwise."""
    from stress import ops

    name = "aclnn_mhc_pre_sinkhorn_backward.h"
    text = (ROOT / "stress" / "sim" / "src" / "include" / "aclnnop" / name).read_text()
    assert "double hcEps" in text
    (tmp_path / "include" / "aclnnop").mkdir(parents=True)
    (tmp_path / "include" / "aclnnop" / name).write_text(
        text.replace("double hcEps", "float hcEps")
    )
    decl = ops.BUILT_IN_DECLARATIONS / "mhc_pre_sinkhorn_backward.toml"
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    assert load_declaration(decl).signature.param("hcEps").type == "float"
    monkeypatch.delenv("ASCEND_HOME_PATH")
    assert load_declaration(decl).signature.param("hcEps").type == "double"


def hand_params(p) -> dict:
    """The inverse of declared_params: what stress/ops/mhc.py's Python functions read."""
    out = {k: p[k] for k in ("B", "S", "N", "C", "dtype")}
    out.update(num_iters=p["I"], hc_eps=p["hcEps"] if p["hcEps"] is not None else 1e-6)
    out.update(norm_eps=p["normEps"] if p.get("normEps") is not None else 1e-6)
    out.update(need_backward=p.get("needBackward") is not False, hc_mult=p.get("hcMult"))
    return out


def _attached(op: str):
    """The declared op with the hand-written generator, reference and tolerances attached."""
    hand = HAND[op]
    return to_opspec(DECLARED[op], generate=hand.generate, reference=hand.reference,
                     tolerances=hand.tolerances, depends_on=hand.depends_on,
                     adapt=hand_params)  # fmt: skip


def _agrees_with_numpy(op: str, params, inputs, got) -> list[str]:
    """The outputs compared with the numpy reference of stress/ops/_mhc_reference.py (an
    implementation independent of the simulator's C kernels), within the op's tolerances."""
    expected = HAND[op].reference(params, inputs)
    compared = sorted(set(got) & set(expected))
    for name in compared:
        rtol, atol = HAND[op].tolerances(params, name)
        ok, ratio = close_enough(got[name], np.asarray(expected[name]), rtol, atol)
        assert ok, (name, ratio)
    return compared


def test_forward_outputs_match_the_catalogue_op_and_the_numpy_reference(ctx, stream):
    """The T-style declaration binds the same call as the catalogue's (byte-equal outputs), and
    what that call computes agrees with the independent numpy reference."""
    case = next(c for c in CASES if c.op == "mhc_pre_sinkhorn" and not c.negative)
    inputs = MHC_PRE_SINKHORN.generate(case.params, case.seed)
    want = run_once(ctx, stream, MHC_PRE_SINKHORN, case.params, inputs)
    got = run_once(ctx, stream, _attached("mhc_pre_sinkhorn"),
                   declared_params("mhc_pre_sinkhorn", case.params), inputs)  # fmt: skip
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name].tobytes() == want[name].tobytes(), name
    assert {"hin", "hPost", "hRes"} <= set(
        _agrees_with_numpy("mhc_pre_sinkhorn", case.params, inputs, got)
    )


def test_backward_outputs_match_the_catalogue_op_and_the_numpy_reference(ctx, stream):
    case = next(c for c in CASES if c.op == "mhc_pre_sinkhorn_backward" and not c.negative)
    inputs = MHC_PRE_SINKHORN_BACKWARD.generate(case.params, case.seed)
    want = run_once(ctx, stream, MHC_PRE_SINKHORN_BACKWARD, case.params, inputs)
    p = declared_params("mhc_pre_sinkhorn_backward", case.params)
    got = run_once(ctx, stream, _attached("mhc_pre_sinkhorn_backward"), p, inputs)
    assert sorted(got) == sorted(want) == ["gradAlpha", "gradBias", "gradPhi", "gradX"]
    for name in want:
        rtol, atol = MHC_PRE_SINKHORN_BACKWARD.tolerances(case.params, name)
        a, b = got[name].astype(np.float64), want[name].astype(np.float64)
        assert np.allclose(a, b, rtol=rtol, atol=atol), name
    compared = _agrees_with_numpy("mhc_pre_sinkhorn_backward", case.params, inputs, got)
    assert compared == ["gradAlpha", "gradBias", "gradPhi", "gradX"]


def test_engine_baseline_of_the_attached_backward(rt):
    """The declared backward with mhc.py's generator attached: the engine records the same
    baseline as for the hand-written op (its inputs come from running the forward)."""
    from stress.corpus import Case
    from stress.engine.replay.baseline import Recording, record_baseline

    spec = _attached("mhc_pre_sinkhorn_backward")
    hand = [c for c in CASES if c.op == "mhc_pre_sinkhorn_backward"][:3]
    declared = [
        Case(c.id, spec.name, declared_params(c.op, c.params), c.seed, "declared", c.expect,
             spec=spec)
        for c in hand
    ]  # fmt: skip
    assert len(hand) == 3 and all(hand_params(d.params)["num_iters"] == c.params["num_iters"]
                                  for d, c in zip(declared, hand, strict=True))  # fmt: skip
    want = record_baseline(rt, hand, Recording(repeats=1)).cases
    got = record_baseline(rt, declared, Recording(repeats=1)).cases
    for c in hand:
        assert got[c.id].status == want[c.id].status, c.id
        assert got[c.id].call_digest == want[c.id].call_digest, c.id
        # and not merely equal to itself: what both recorded agrees with the numpy reference
        assert got[c.id].reference.get("ok") is True, (c.id, got[c.id].reference)
