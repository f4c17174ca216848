"""``aclnn-stress op new`` (stress/ops/skeleton.py, doc_comment.py, new_declaration.py): the
skeleton of a simulator operator records a baseline and runs clean as written, or fails with
the operator's status where it cannot guess a legal shape, its FIX line naming the dims; the
guesses follow the header's doc comment. The sweep over every function of every simulator
header is ``slow``; three headers run in the default suite."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _cli import stress_cli

from stress.ops.declaration import load_declaration
from stress.ops.doc_comment import doc_dtypes, doc_shape, op_doc
from stress.ops.header import read_header
from stress.ops.skeleton import guess_skeleton, render_skeleton

ROOT = Path(__file__).resolve().parent.parent
SIM = ROOT / "stress" / "sim" / "src" / "include" / "aclnnop"
HEADERS = Path(__file__).resolve().parent / "headers"
# where the skeleton's guesses are not legal on the simulator (the sweep's "need a fix")
NEEDS_FIX = {
    "aclnnReduceSum": "out",  # a reduction's output is not self's shape
    "aclnnRmsNorm": "rstdOut",  # x's leading dims followed by ones
    "aclnnMhcPreSinkhorn": "C",  # C must be a multiple of 128
    "aclnnMhcPreSinkhornBackward": "C",
}


def _every_function() -> list[tuple[str, str]]:
    return [(h.name, op.name) for h in sorted(SIM.glob("aclnn_*.h")) if h.name != "aclnn_util.h"
            for op in read_header(h).ops]  # fmt: skip


def _new_and_run(tmp: Path, header: str, function: str):
    path = tmp / f"{function}.toml"
    new = stress_cli("op", "new", f"aclnnop/{header}", "--function", function, "-o", str(path))
    assert new.returncode == 0, new.stderr
    assert f"wrote {path}" in new.stderr
    return path, _run(tmp, path)


def _run(tmp: Path, path: Path):
    out = tmp / f"out-{path.stem}"
    proc = stress_cli("run", "--corpus", str(path), "--control", "none", "--record-baseline",
                      "--phases", "serial,mixed", "--threads", "2", "--iterations", "2",
                      "--out", str(out), "--baseline", str(tmp / f"{path.stem}.json"),
                      "--no-isolate", "--quiet")  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    return proc, report


def _check(tmp: Path, header: str, function: str) -> None:
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
    if function not in NEEDS_FIX:
        assert proc.returncode == 0 and report["diagnosis"] == "clean", proc.stdout + proc.stderr
        return
    assert proc.returncode == 1 and report["diagnosis"] == "operator-error", proc.stdout
    details = [c.get("detail", "") for p in report["phases"] for c in p["cases"]]
    assert any("[161002]" in d for d in details), details  # the operator's status
    assert NEEDS_FIX[function] in fix or NEEDS_FIX[function] in " ".join(details)


@pytest.mark.parametrize(("header", "function"), [
    ("aclnn_add.h", "aclnnAdd"),  # a built-in name: written as my_add
    ("aclnn_softmax_backward.h", "aclnnSoftmaxBackward"),
    ("aclnn_rms_norm.h", "aclnnRmsNorm"),  # needs a fix
])  # fmt: skip
def test_op_new_runs_as_written(tmp_path, header, function):
    _check(tmp_path, header, function)


@pytest.mark.slow
@pytest.mark.parametrize(("header", "function"), _every_function())
def test_op_new_sweep_over_every_simulator_function(tmp_path, header, function):
    _check(tmp_path, header, function)


def test_the_fix_line_is_what_makes_it_run(tmp_path):
    """RmsNorm's skeleton fails on rstdOut's guessed shape; given the documented one
    (x's leading dims followed by ones) it records and runs clean."""
    path = tmp_path / "rms.toml"
    assert stress_cli("op", "new", "aclnnop/aclnn_rms_norm.h", "-o", str(path)).returncode == 0
    text = path.read_text()
    fixed = re.sub(r'^rstdOut = \{ shape = "x"', 'rstdOut = { shape = ["B", 1]', text, flags=re.M)
    assert fixed != text
    path.write_text(fixed)
    proc, report = _run(tmp_path, path)
    assert proc.returncode == 0 and report["diagnosis"] == "clean", proc.stdout + proc.stderr


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
