"""``aclnn-stress op new`` (stress/ops/skeleton.py, skeleton_rules.py, doc_constraints.py,
doc_comment.py, new_declaration.py): the skeleton of every simulator operator records a baseline
and runs clean as written (its shapes and sizes follow what the header says: a matrix-product
formula, a keep-dims reduction, "leading dims followed by ones", the file comment's
constraints); where the header does not say, it fails with the operator's status and its FIX
line names the dims and shapes. The sweep over every function of every simulator header is
``slow`` (15 functions, ~6 s each on the 2-core machine); three run in the default suite."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _cli import stress_cli

from stress.ops.declaration import load_declaration
from stress.ops.doc_comment import doc_dtypes, doc_shape, op_doc
from stress.ops.doc_constraints import (
    DimBound,
    doc_bounds,
    doc_restated_shapes,
    small_range,
    solve_shapes,
)
from stress.ops.header import read_header
from stress.ops.skeleton import guess_skeleton, render_skeleton

ROOT = Path(__file__).resolve().parent.parent
SIM = ROOT / "stress" / "sim" / "src" / "include" / "aclnnop"
HEADERS = Path(__file__).resolve().parent / "headers"


def _every_function() -> list[tuple[str, str]]:
    return [(h.name, op.name) for h in sorted(SIM.glob("aclnn_*.h")) if h.name != "aclnn_util.h"
            for op in read_header(h).ops]  # fmt: skip


def _new_and_run(tmp: Path, header: str, function: str):
    path = tmp / f"{function}.toml"
    new = stress_cli("op", "new", header, "--function", function, "-o", str(path))
    assert new.returncode == 0, new.stderr
    assert f"wrote {path}" in new.stderr
    return path, _run(tmp, path)


def _run(tmp: Path, path: Path):
    out = tmp / f"out-{path.stem}"
    proc = stress_cli("run", "--corpus", str(path), "--control", "none", "--record-baseline",
                      "--phases", "serial,mixed", "--budget", "1", "--out", str(out),
                      "--baseline", str(tmp / f"{path.stem}.json"), "--no-isolate",
                      "--quiet")  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    return proc, report


def _check(tmp: Path, header: str, function: str, needs_fix: str | None = None) -> None:
    """``op new`` then ``run``: clean, or (``needs_fix``: the tensor or dim the header does not
    make legal) the operator's status, with the FIX line naming it."""
    path, (proc, report) = _new_and_run(tmp, header, function)
    decl = load_declaration(path)
    text = path.read_text()
    assert set(decl.params) == set(decl.signature.names)  # every parameter, by its header name
    for p in decl.signature.params:  # ... with its role
        role = "attr" if p.role == "attr" else p.role
        assert re.search(rf"^{p.name} = .*# {role}", text, re.M), (p.name, text)
    assert len(decl.cases) == 1 and (tmp / f"{path.stem}.json").exists()  # baseline recorded
    fix = next(ln for ln in text.splitlines() if ln.startswith("# FIX:"))
    assert decl.dims and all(d.name in fix for d in decl.dims)  # the line naming the dims to fix
    if needs_fix is None:
        assert proc.returncode == 0 and report["diagnosis"] == "clean", proc.stdout + proc.stderr
        return
    assert proc.returncode == 1 and report["diagnosis"] == "operator-error", proc.stdout
    details = [c.get("detail", "") for p in report["phases"] for c in p["cases"]]
    assert any("[161002]" in d for d in details), details  # the operator's status
    assert needs_fix in fix and needs_fix in " ".join(details), (fix, details)


@pytest.mark.parametrize(("header", "function"), [
    ("aclnn_matmul.h", "aclnnMatmul"),  # `out = self @ mat2`: K shared
    ("aclnn_reduce_sum.h", "aclnnReduceSum"),  # keepDims: out drops the reduced dim
    # the file comment's C % 128 == 0, N == 4 and sumOut (40, ...): numIters = 20; a
    # built-in name: written as my_mhc_pre_sinkhorn_backward
    ("aclnn_mhc_pre_sinkhorn_backward.h", "aclnnMhcPreSinkhornBackward"),
])  # fmt: skip
def test_op_new_runs_as_written(tmp_path, header, function):
    _check(tmp_path, f"aclnnop/{header}", function)


@pytest.mark.slow
@pytest.mark.parametrize(("header", "function"), _every_function())
def test_op_new_sweep_over_every_simulator_function(tmp_path, header, function):
    _check(tmp_path, f"aclnnop/{header}", function)


def test_where_the_header_does_not_say_the_fix_line_names_it(tmp_path):
    """RmsNorm's header without the words "x's leading dims followed by ones": the skeleton
    guesses rstdOut as x's shape, the operator refuses it, and the FIX line names rstdOut;
    with the words (the simulator's header, the sweep) it runs clean."""
    text = (SIM / "aclnn_rms_norm.h").read_text()
    header = tmp_path / "aclnn_rms_norm.h"
    header.write_text(text.replace("x's leading dims followed by ones", "one per row"))
    assert header.read_text() != text
    _check(tmp_path, str(header), "aclnnRmsNorm", needs_fix="rstdOut")


def test_guesses_follow_the_doc_comment():
    header = SIM / "aclnn_mhc_pre_sinkhorn.h"
    sig = read_header(header).ops[0]
    doc = op_doc(header.read_text(), sig.line, sig.names)
    text = render_skeleton(guess_skeleton(sig, doc, "aclnnop/aclnn_mhc_pre_sinkhorn.h"))
    assert 'x = { shape = ["B", "S", "N", "C"], dtype = "T" }' in text  # shape from "(B, S, N, C)"
    assert 'phi = { shape = ["N*N+2*N", "N*C"], dtype = "float32" }' in text  # "2N", FLOAT
    assert 'hin = { shape = ["B", "S", "C"], dtype = "T" }' in text  # "in x's dtype"
    assert 'T = ["bf16", "float16"]' in text  # "BF16 or FLOAT16"
    assert re.search(r'^hcMult = "N" ', text, re.M)  # "N, the hyper-connection count (4)"
    assert re.search(r'^numIters = "NUM_ITERS" ', text, re.M)  # a dim renamed off the param
    assert "NUM_ITERS = [20, 20]" in text and "N = [4, 4]" in text  # their "(20)" and "(4)"
    # the file comment's "0 < C < 100000, C % 128 == 0"
    assert "C = { range = [128, 256], multiple = 128 }" in text
    assert re.search(r"^C = 128$", text, re.M)  # the case
    assert re.search(r"^needBackward = true ", text, re.M)  # hPre "may be NULL without" it


def test_shapes_follow_the_header_rules():
    """The matrix product, the reduction and "leading dims followed by ones", from the words
    of the simulator's headers; a restated shape in the file comment fixes numIters."""

    def skeleton(name: str) -> str:
        header = SIM / name
        sig = read_header(header).ops[0]
        return render_skeleton(guess_skeleton(sig, op_doc(header.read_text(), sig.line,
                                                          sig.names), name))  # fmt: skip

    matmul = skeleton("aclnn_matmul.h")
    for line in ('self = { shape = ["M", "K"]', 'mat2 = { shape = ["K", "N"]',
                 'out = { shape = ["M", "N"]'):  # fmt: skip
        assert line in matmul
    assert re.search(r"^K = 8$", matmul, re.M) and re.search(r"^N = 2$", matmul, re.M)
    reduce = skeleton("aclnn_reduce_sum.h")
    assert 'out = { shape = ["B"]' in reduce and re.search(r"^keepDims = false ", reduce, re.M)
    assert 'rstdOut = { shape = ["B", 1], dtype = "float32" }' in skeleton("aclnn_rms_norm.h")
    backward = skeleton("aclnn_mhc_pre_sinkhorn_backward.h")
    assert "numIters = [20, 20]" in backward and "N = [4, 4]" in backward
    assert "numIters = 20 from a tensor's two documented shapes" in backward
    fix = next(ln for ln in backward.splitlines() if ln.startswith("# FIX"))
    assert "dims B, S in" in fix and "(C, N, numIters: from the header)" in fix


def test_header_constraints():
    text = ("x: (B, S, N, C) with N == hcMult == 4, 0 < C < 100000, C % 128 == 0; K <= 64, "
            "M > 2, numIters must be 20; sumOut (40, B, S, N)")  # fmt: skip
    bounds = doc_bounds([text])
    assert bounds["N"].fixed == bounds["hcMult"].fixed == 4 and bounds["numIters"].fixed == 20
    assert (bounds["C"].low, bounds["C"].high, bounds["C"].multiple) == (1, 99999, 128)
    assert bounds["K"].high == 64 and bounds["K"].low is None and bounds["M"].low == 3
    assert "C" not in {n for n, b in bounds.items() if b.high == 100000}  # strict made inclusive
    assert small_range(bounds["C"], (1, 16, 4)) == (128, 256, 128)
    assert small_range(bounds["M"], (1, 16, 4)) == (3, 16, 4)
    assert small_range(DimBound("X", low=100, high=120), (1, 16, 4)) == (100, 115, 100)
    assert small_range(None, (1, 16, 4)) == (1, 16, 4)
    restated = doc_restated_shapes(text, ["x", "sumOut", "hin"])
    assert restated == {"x": ["B", "S", "N", "C"], "sumOut": [40, "B", "S", "N"]}
    pairs = [(["2*numIters", "B", "S", "N"], restated["sumOut"])]
    assert solve_shapes(pairs, {"N": 4}) == {"numIters": 20}
    assert solve_shapes([(["2*A+B", 3], [9, 3])], {}) == {}  # two unknowns: not solved


def test_without_doc_comment_the_usual_dtypes_and_shapes():
    sig = read_header(HEADERS / "aclnn_untagged_backward.h").op("aclnnGeluBackward")
    text = render_skeleton(guess_skeleton(sig, op_doc("", sig.line, sig.names), "h.h"))
    assert 'T = ["float32", "float16"]' in text
    assert re.search(r'^gradOutput = \{ shape = \["B", "H"\], dtype = "T" \} +# input$', text,
                     re.M)  # rule 4: an input  # fmt: skip
    assert re.search(r'^gradInput = \{ shape = "gradOutput", dtype = "T" \} +# output$', text,
                     re.M)  # fmt: skip


def test_doc_parsing_hints():
    assert doc_shape("device tensor (B, S, N*N+2N), FLOAT.") == ["B", "S", "N*N+2*N"]
    assert doc_shape("the per-row 1 / sqrt(Var + eps), or NULL.") is None  # a call
    assert doc_shape("added to the variance (a C double).") is None
    assert doc_dtypes("FLOAT, FLOAT16, BF16, DOUBLE.") == ["float32", "float16", "bf16", "float64"]


def test_op_new_errors_are_one_line(tmp_path):
    bad = stress_cli("op", "new", "aclnnop/aclnn_add.h", "--function", "aclnnSub")
    assert bad.returncode == 2 and "aclnnSub" in bad.stderr and "aclnnAdds" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    taken = tmp_path / "x.toml"
    taken.write_text("")
    again = stress_cli("op", "new", "aclnnop/aclnn_add.h", "-o", str(taken))
    assert again.returncode == 2 and "exists" in again.stderr and taken.read_text() == ""
    printed = stress_cli("op", "new", str(SIM / "aclnn_softmax.h"))
    assert printed.returncode == 0 and 'function = "aclnnSoftmax"' in printed.stdout
    assert f'header = "{(SIM / "aclnn_softmax.h").resolve()}"' in printed.stdout  # a path


def _fixture_functions() -> list[tuple[str, str]]:
    return [(h.name, op.name) for h in sorted(HEADERS.glob("aclnn_*.h"))
            for op in read_header(h).ops]  # fmt: skip


@pytest.mark.parametrize(("header", "function"), _fixture_functions())
def test_every_fixture_operator_gets_a_valid_declaration(tmp_path, header, function):
    """Every trap of the fixture headers (tensor lists, scalar lists, strings, float and bool
    arrays, dtypes, const attributes, untagged backwards) writes a file that loads."""
    from stress.ops.new_declaration import new_declaration

    out = tmp_path / "d.toml"
    text, name = new_declaration(str(HEADERS / header), function, out)
    out.write_text(text)
    decl = load_declaration(out)
    assert name == function == decl.function and len(decl.cases) == 1
    assert set(decl.params) == set(decl.signature.names)
