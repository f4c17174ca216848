"""The ``[gradcheck]`` section (stress/ops/gradspec.py, bound by stress/gradcheck/pair.py): a
second forward/backward pair from declarations alone (aclnnSoftmax / aclnnSoftmaxBackward in
corpus/ops/), the wrong gradient of the ``softmax-grad-tail`` fault found, and bad sections as
one line naming file, field and fix (exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from stress.errors import ConfigError
from stress.gradcheck import check as gc
from stress.ops.declaration import load_declaration, parse_declaration
from tests._cli import REPO, stress_cli
from tests._sim_available import sim_api

OPS = REPO / "corpus" / "ops"
BACKWARD = OPS / "softmax_backward.toml"


@pytest.fixture(scope="module")
def sim() -> str:
    sim_api("aclnnSoftmaxBackward")  # skips without the simulator; fails under CI=true
    return "sim"


def _gradcheck(tmp: Path, *args: str, faults: str = "") -> tuple[int, dict, str]:
    out = tmp / "gc.json"
    proc = stress_cli("gradcheck", "--op", str(BACKWARD), "--sample", "4", "--json", str(out),
                      *args, faults=faults)  # fmt: skip
    doc = json.loads(out.read_text()) if out.exists() else {}
    return proc.returncode, doc, proc.stdout + proc.stderr


def test_softmax_backward_agrees_on_the_clean_simulator(tmp_path: Path, sim: str) -> None:
    rc, doc, text = _gradcheck(tmp_path)
    assert rc == 0, text
    assert doc["op"] == "softmax_backward" and doc["params"]["H"] == 37  # the section's case
    assert doc["fd"] == "sim forward (aclnnSoftmax)"  # no reference declared: FD on the device
    assert {e["verdict"] for e in doc["elements"]} == {"agrees"}
    assert len(doc["elements"]) == 4 and {e["tensor"] for e in doc["elements"]} == {"self"}
    assert all(e["resolution"] < 5e-3 for e in doc["elements"])  # fp32: a 1 % error shows


def test_softmax_grad_tail_is_biased(tmp_path: Path, sim: str) -> None:
    rc, doc, text = _gradcheck(tmp_path, faults="softmax-grad-tail")
    assert rc == 1, text
    assert [e["verdict"] for e in doc["elements"]] == ["biased"] * 4
    # H = 64 is a multiple of 8: nothing is dropped, the same fault is invisible there
    rc, doc, text = _gradcheck(tmp_path, "--set", "H=64", faults="softmax-grad-tail")
    assert rc == 0 and {e["verdict"] for e in doc["elements"]} == {"agrees"}, text


def test_the_declared_generator_takes_the_saved_output_from_the_forward(sim: str) -> None:
    from stress import acl, ops
    from stress.engine.call.prepared import run_once

    pair = gc.load_pair(str(BACKWARD))
    p = pair.backward.parse_params({"B": 3, "H": 11}, "test")
    ctx = acl.runtime(sim).device(0).default_context
    stream = ctx.create_stream()
    try:
        host = pair.host(p, 5, lambda spec, params, ins: run_once(ctx, stream, spec, params, ins))
    finally:
        stream.close()
    x = np.asarray(pair.forward.generate(pair.forward_params(p), 5)["self"], np.float64)
    want = np.exp(x - x.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    np.testing.assert_allclose(host["output"], want, rtol=1e-5)
    # the upstream gradient is drawn from its own seed stream, not the forward's
    assert not np.allclose(host["gradOutput"], x.astype(np.float32))
    assert ops.declaration_of("softmax_backward").depends_on == "softmax"


# ---- bad sections ---------------------------------------------------------------------------


def _bad(tmp: Path, old: str, new: str, forward: str | None = None) -> Path:
    """A copy of the softmax pair in ``tmp`` with ``old`` replaced by ``new`` in the backward
    (and the forward's text replaced by ``forward``)."""
    shutil.copy(OPS / "softmax.toml", tmp / "softmax.toml")
    if forward is not None:
        (tmp / "softmax.toml").write_text(forward)
    text = BACKWARD.read_text()
    assert old in text
    if "rows = { x" in new:  # one rows table only
        text = text.replace("rows = { self = 1 }\n", "")
    path = tmp / "softmax_backward.toml"
    path.write_text(text.replace(old, new))
    return path


_FORWARD_INT = (
    (OPS / "softmax.toml")
    .read_text()
    .replace(
        'self = { shape = ["B", "H"], dtype = "T" }',
        'self = { shape = ["B", "H"], dtype = "int32" }',
    )
)


@pytest.mark.parametrize(
    ("old", "new", "forward", "words"),
    [
        ("seed = 7\n", "seed = 7\nbogus = 1\n", None,
         "[gradcheck], field 'bogus': unknown; allowed:"),
        ('forward = "softmax"\n', "", None, "[gradcheck], field 'forward': required"),
        ('forward = "softmax"', 'forward = "nosuch"', None,
         "[gradcheck], field 'forward': no operator 'nosuch'"),
        ('inputs = { self = "out" }', 'inputs = { self = "gradOut" }', None,
         "[gradcheck], field 'inputs'.self: 'gradOut' is not a tensor output of "
         "aclnnSoftmaxBackward; use one of out"),
        ('inputs = { self = "out" }', 'inputs = { x = "out" }\nrows = { x = 1 }', None,
         "[gradcheck], field 'inputs': 'x' is not a tensor input of aclnnSoftmax"),
        ('outputs = { out = "gradOutput" }', 'outputs = { out = "out" }', None,
         "[gradcheck], field 'outputs'.out: 'out' is not a tensor input of "
         "aclnnSoftmaxBackward; use one of gradOutput, output"),
        ('saved = { output = "out" }', 'saved = { output = "y" }', None,
         "[gradcheck], field 'saved': 'y' is not a tensor output of aclnnSoftmax"),
        ("forward_params = { dim = -1 }", "forward_params = { axis = -1 }", None,
         "[gradcheck], field 'forward_params.axis': not a parameter of softmax; use one of"),
        ("rows = { self = 1 }", 'rows = { self = 1 }\nblocks.self = { edges = [8], outputs = '
         '["out", "y"] }', None, "[gradcheck], field 'blocks.self': output 'y' is not in the "
         "loss; use one of out"),
        ("rows = { self = 1 }", "rows = { gradOutput = 1 }", None,
         "[gradcheck], field 'rows'.gradOutput: not a differentiable input; use one of self"),
        ("seed = 7\n", "seed = 7\n", _FORWARD_INT,
         "[gradcheck], field 'inputs'.self: aclnnSoftmax's self is int32, which has no "
         "gradient; list only floating-point inputs"),
    ],
)  # fmt: skip
def test_a_bad_section_is_one_line_naming_file_and_field(
    tmp_path: Path, old: str, new: str, forward: str | None, words: str
) -> None:
    path = _bad(tmp_path, old, new, forward)
    proc = stress_cli("gradcheck", "--op", str(path), "--backward", "backend", timeout=60)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert str(path) in lines[0] and words in lines[0], lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--op", str(OPS / "softmax.toml")], "has no [gradcheck] section (it is not a declared "
         "backward)"),
        (["--op", "nosuch_backward"], "--op 'nosuch_backward': unknown op"),
        (["--op", str(BACKWARD), "--N", "3"], "--N: softmax_backward has no case variable 'N'"),
        (["--op", str(BACKWARD), "--set", "H"], "--set 'H': expected NAME=VALUE"),
        (["--op", str(BACKWARD), "--set", "H=0"], "--set H 0: the gradient check needs at least "
         "one element"),
        (["--op", str(BACKWARD), "--fd", "reference"], "--fd reference: softmax "),
        (["--op", str(BACKWARD), "--backward", "reference"], "--backward reference: "
         "softmax_backward"),
        (["--op", str(BACKWARD), "--element", "x[0,0]"], "unknown tensor 'x' (one of self)"),
    ],
)  # fmt: skip
def test_bad_options_for_a_declared_pair_are_one_line(args: list[str], words: str) -> None:
    proc = stress_cli("gradcheck", *args, timeout=60)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert words in lines[0], lines[0]


def test_section_parse_errors_name_the_file_and_field() -> None:
    decl = load_declaration(BACKWARD)
    assert decl.gradcheck is not None and decl.gradcheck.grad_of == {"self": "out"}
    import tomllib

    data = tomllib.loads(BACKWARD.read_text())
    for change, words in [
        ({"inputs": {}}, "field 'inputs': name at least one differentiable input"),
        ({"rtol": -1}, "field 'rtol': expected a number > 0"),
        ({"blocks": {"self": {"edges": ["H"], "outputs": ["out"]}}}, "n edges and n+1 outputs"),
        ({"blocks": {"self": {"edges": ["H+"], "outputs": ["out", "out"]}}}, "blocks.self'.edges"),
        ({"fd_reference": "nocolon"}, "field 'fd_reference': expected \"module:function\""),
    ]:
        bad = {**data, "gradcheck": {**data["gradcheck"], **change}}
        with pytest.raises(ConfigError, match=r"softmax_backward\.toml \[gradcheck\]") as exc:
            parse_declaration(bad, str(BACKWARD))
        assert words in str(exc.value), str(exc.value)
