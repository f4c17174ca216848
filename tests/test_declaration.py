"""Declarations (stress/ops/declaration.py, declared.py) and their building blocks: shape
expressions and value distributions. Every bad input is a one-line ConfigError naming the file,
the field and the fix."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from stress.errors import ConfigError
from stress.ops.declaration import load_declaration
from stress.ops.declared import resolve, to_opspec
from stress.ops.shape_expr import ShapeExprError, parse_dim
from stress.ops.spec import (
    AttrArg,
    DtypeArg,
    FloatArrayArg,
    IntArrayArg,
    ScalarListArg,
    StringArg,
    TensorArg,
    TensorListArg,
)
from stress.ops.values import parse_distribution

HERE = Path(__file__).resolve().parent
HEADERS = HERE / "headers"
DECLS = HERE / "declarations"

RMS = f"""
[op]
header = "{HEADERS / "aclnn_rms_norm.h"}"
function = "aclnnRmsNorm"
[dims]
B = [0, 8]
H = [1, 4096]
[dtypes]
T = ["float32", "float16", "bf16"]
[params]
x = {{ shape = ["B", "H"], dtype = "T" }}
gamma = {{ shape = ["H"], dtype = "T", values = "positive" }}
epsilon = 1e-6
yOut = {{ shape = ["B", "H"], dtype = "T" }}
rstdOut = {{ shape = ["B", 1], dtype = "float32" }}
"""
CASE = '\n[[case]]\nid = "rms-f16"\nB = 4\nH = 1024\nT = "float16"\nseed = 7\n'


def _load(tmp_path, text: str):
    path = tmp_path / "decl.toml"
    path.write_text(text)
    return load_declaration(path)


def _error(tmp_path, text: str) -> str:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, text)
    message = str(err.value)
    assert "\n" not in message and "decl.toml" in message
    return message


def test_the_issue_example_resolves(tmp_path):
    decl = _load(tmp_path, RMS + CASE)
    assert decl.name == "rms_norm" and decl.function == "aclnnRmsNorm"
    spec = to_opspec(decl)
    params = spec.parse_params(decl.cases[0].params(), "case")
    assert [type(a) for a in spec.args] == [TensorArg, TensorArg, AttrArg, TensorArg, TensorArg]
    assert [a.output for a in spec.args if isinstance(a, TensorArg)] == [False, False, True, True]
    assert spec.args[0].shape(params) == (4, 1024)
    assert spec.args[3].dtype(params) == np.float16
    assert spec.args[2].value(params) == 1e-6 and spec.args[2].ctype == "double"
    inputs = spec.generate(params, decl.cases[0].seed)
    assert list(inputs) == ["x", "gamma"]
    assert (inputs["gamma"] > 0).all()
    again = spec.generate(params, decl.cases[0].seed)
    assert inputs["x"].tobytes() == again["x"].tobytes()
    assert spec.generate(params, 8)["x"].tobytes() != inputs["x"].tobytes()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (CASE.replace("seed = 7", "gama = 1"), r"case 'rms-f16', field 'gama': not a parameter "
         r"of aclnnRmsNorm .*\(parameters: x, gamma"),
        (CASE.replace('"float16"', '"int32"'), r"field 'T': dtype 'int32' not allowed; float32"),
        (CASE.replace("B = 4\n", ""), r"field 'B': required \(dimension in \[0, 8\]\)"),
        (CASE + 'x = { shape = ["B", "W"] }\n', r"field 'x'.shape: 'W': unknown dimension 'W'"),
        (CASE + 'x = { shape = ["B", "H/3"] }\n', r"field 'x'.shape: 'H/3': 1024 / 3 is not "
         r"exact"),
        (CASE + 'gamma = { values = "gauss" }\n', r"field 'gamma'.values: 'gauss' is not a "
         r"distribution; one of normal"),
        (CASE + 'x = { shape = ["B", "H"], dtype = "float8" }\n', r"unknown dtype or dtype "
         r"variable 'float8'"),
        (CASE + "epsilon = true\n", r"field 'epsilon': expected a number"),
        (CASE + CASE, r"case 'rms-f16', field 'id': duplicate"),
        (CASE + 'expect = { status = 0 }\n', r"field 'expect': expected \{ status = 161002 \}"),
    ],
)  # fmt: skip
def test_bad_cases(tmp_path, edit, message):
    assert re.search(message, _error(tmp_path, RMS + edit))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("epsilon = 1e-6\n", "", r"field 'epsilon': required by aclnnRmsNorm \(missing required "
         r"double parameter"),
        ('function = "aclnnRmsNorm"', 'function = "aclnnRmsNormX"', r"\[op\], field 'function': "
         r"'aclnnRmsNormX' is not declared in .*aclnn_rms_norm.h \(it declares aclnnRmsNorm\)"),
        ("epsilon = 1e-6\n", "epsilon = 1e-6\nbeta = 1\n", r"\[params\], field 'beta': "
         r"aclnnRmsNorm has no such parameter"),
        ("B = [0, 8]", "B = [8, 0]", r"\[dims\], field 'B': expected 0 <= low <= high"),
        ("B = [0, 8]", "x = [0, 8]", r"field 'x': also a parameter of aclnnRmsNorm"),
        ('T = ["float32"', 'T = ["float33"', r"\[dtypes\], field 'T': unknown dtype 'float33'"),
        ("[params]", "[params]\n[extra]", r"unknown top-level key 'extra'"),
        ('function = "aclnnRmsNorm"', 'function = "aclnnRmsNorm"\nroles = { x = "attr" }',
         r"field 'roles.x': 'attr'; use input/output/inout"),
    ],
)  # fmt: skip
def test_bad_declarations(tmp_path, old, new, message):
    assert old in RMS
    assert re.search(message, _error(tmp_path, RMS.replace(old, new) + CASE))


def test_bad_headers_surface_with_file_and_line(tmp_path):
    for fixture, message in [
        ("unknown_type.h", r"unknown_type\.h:4: parameter 'counts'"),
        ("syntax.h", r"syntax\.h:4:\d+: unexpected 'uint64_t'"),
    ]:
        text = RMS.replace(str(HEADERS / "aclnn_rms_norm.h"), str(HEADERS / "bad" / fixture))
        with pytest.raises(ConfigError, match=message):
            _load(tmp_path, text)


def test_role_override_and_tolerances(tmp_path):
    text = RMS.replace(
        'function = "aclnnRmsNorm"',
        'function = "aclnnRmsNorm"\nroles = { rstdOut = "inout" }\nulp = 2\n'
        "tolerance = { yOut = { rtol = 0.01, atol = 0.001 } }",
    )
    decl = _load(tmp_path, text + CASE)
    assert decl.signature.param("rstdOut").role == "inout"
    spec = to_opspec(decl)
    rstd = next(a for a in spec.args if a.name == "rstdOut")
    assert (rstd.output, rstd.inout) == (False, True)  # uploaded like an input, then graded
    p = spec.parse_params(decl.cases[0].params(), "case")
    assert "rstdOut" in spec.generate(p, 1)
    assert spec.tolerances(p, "yOut") == (0.01, 0.001)
    assert spec.tolerances(p, "rstdOut") == (
        2 * np.finfo(np.float32).eps,
        2 * np.finfo(np.float32).smallest_normal,
    )


def test_optional_params_and_negative_cases():
    decl = load_declaration(DECLS / "layer_norm.toml")
    spec = to_opspec(decl)
    full, bare = (spec.parse_params(c.params(), c.id) for c in decl.cases)
    present = {a.name: a.present(full) for a in spec.args if isinstance(a, TensorArg)}
    assert present == {
        "input": True,
        "weightOptional": True,
        "biasOptional": False,
        "out": True,
        "meanOutOptional": True,
        "rstdOutOptional": True,
    }
    assert not next(a for a in spec.args if a.name == "weightOptional").present(bare)
    assert decl.cases[1].expect == 161002 and decl.cases[0].expect is None
    norm = next(a for a in spec.args if isinstance(a, IntArrayArg))
    assert norm.value(full) == (256,)


def test_lists_arrays_strings_and_dtypes():
    fe = to_opspec(load_declaration(DECLS / "foreach.toml"))
    p = fe.parse_params(load_declaration(DECLS / "foreach.toml").cases[0].params(), "c")
    x, scalars, out = fe.args
    assert isinstance(x, TensorListArg) and isinstance(scalars, ScalarListArg)
    assert x.shapes(p) == ((8,), (8, 2)) and out.output and not x.output
    assert scalars.values(p) == (2.0, 3) and scalars.dtypes(p) == (np.float32, np.int32)
    inputs = fe.generate(p, 11)
    assert list(inputs) == ["x[0]", "x[1]"] and inputs["x[1]"].dtype == np.float16
    assert np.abs(inputs["x[1]"]).max() <= 1
    rs_decl = load_declaration(DECLS / "attrs.toml")
    rs = to_opspec(rs_decl)
    p = rs.parse_params(rs_decl.cases[0].params(), "c")
    kinds = {a.name: (type(a), a.value(p)) for a in rs.args if hasattr(a, "value")}
    assert kinds["scales"] == (FloatArrayArg, (2.0, 2.0))
    assert kinds["mode"] == (StringArg, "bilinear")
    assert kinds["outputSizeOptional"] == (IntArrayArg, (32, 32))
    assert kinds["seedOffset"] == (AttrArg, 7)


def test_dtype_attribute(tmp_path):
    decl = _load(
        tmp_path,
        f"""
[op]
header = "{HEADERS / "aclnn_attrs.h"}"
function = "aclnnCast"
[dtypes]
S = ["float32", "int32"]
D = {{ of = "S", map = {{ float32 = "float16" }}, else = "int64" }}
[params]
self = {{ shape = [4], dtype = "S" }}
dtype = "D"
out = {{ shape = [4], dtype = "D" }}
[[case]]
id = "to-half"
[[case]]
id = "to-int64"
S = "int32"
""",
    )
    spec = to_opspec(decl)
    dt = next(a for a in spec.args if isinstance(a, DtypeArg))
    got = [dt.value(spec.parse_params(c.params(), c.id)) for c in decl.cases]
    assert got == [np.float16, np.int64]


def test_resolve_names_the_case(tmp_path):
    decl = _load(tmp_path, RMS + CASE)
    with pytest.raises(ConfigError, match=r"here, field 'B': required"):
        resolve(decl, {"H": 4}, "here")


@pytest.mark.parametrize(
    ("text", "dims", "want"),
    [("H", {"H": 8}, 8), ("H/2", {"H": 8}, 4), ("A+B*2", {"A": 1, "B": 3}, 7),
     ("(A+B)%4", {"A": 3, "B": 2}, 1), ("H//3", {"H": 8}, 2), ("-A+10", {"A": 3}, 7), (5, {}, 5)],
)  # fmt: skip
def test_shape_expressions(text, dims, want):
    assert parse_dim(text)(dims) == want


@pytest.mark.parametrize(
    "text", ["__import__('os')", "H**2", "H.real", "f(H)", "H if H else 1", "1.5", "", "[H]"]
)
def test_shape_expressions_never_evaluate_code(text):
    with pytest.raises(ShapeExprError):
        parse_dim(text)


def test_distributions():
    rng = np.random.default_rng(0)
    assert (parse_distribution("zeros").draw(rng, (3,), np.float32) == 0).all()
    u = parse_distribution("uniform(-2, -1)").draw(rng, (1000,), np.float32)
    assert u.min() >= -2 and u.max() < -1
    i = parse_distribution("integers(3, 5)").draw(rng, (1000,), np.int32)
    assert set(np.unique(i)) == {3, 4} and i.dtype == np.int32
    assert (parse_distribution("positive").draw(rng, (1000,), np.float16) > 0).all()
    n = parse_distribution("normal(10, 0.5)").draw(rng, (4000,), np.float32)
    assert abs(float(n.mean()) - 10) < 0.1 and abs(float(n.std()) - 0.5) < 0.05
    b = parse_distribution("normal").draw(rng, (100,), np.bool_)
    assert b.dtype == np.bool_ and 0 < b.sum() < 100
    for bad in ["uniform", "uniform(2, 1)", "integers(1)", "normal(x)", "os.system('x')"]:
        with pytest.raises(ValueError):
            parse_distribution(bad)


def test_roles_the_header_cannot_tell_are_declared(tmp_path):
    decl = _load(
        tmp_path,
        f"""
[op]
header = "{HEADERS / "aclnn_generated_inplace.h"}"
function = "aclnnCheckFinite"
roles = {{ foundFlag = "output" }}
[params]
values = [{{ shape = [4] }}, {{ shape = [2, 2], dtype = "float16" }}]
foundFlag = {{ shape = [1] }}
[[case]]
id = "check"
""",
    )
    spec = to_opspec(decl)
    values, flag = spec.args
    assert isinstance(values, TensorListArg) and not values.output and flag.output
    p = spec.parse_params(decl.cases[0].params(), "check")
    assert list(spec.generate(p, 0)) == ["values[0]", "values[1]"]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("[params]", "[vars]\neps = 'x'\n[params]", r"\[vars\], field 'eps': expected a default"),
        ("[params]", '[vars]\nm = { type = "int", default = "Q" }\n[params]',
         r"\[vars\], field 'm': expected a default"),
        ("[params]", "[shapes]\ns = { rank = [3, 1] }\n[params]",
         r"\[shapes\], field 's', 'rank': expected 0 <= low <= high"),
        ("[params]", '[shapes]\ns = { default = "t" }\n[params]',
         r"\[shapes\], field 's', 'default': must name a shape variable declared before it"),
        ('T = ["float32", "float16", "bf16"]', 'T = ["float32"]\nU = { default = "V", '
         'choices = ["float32"] }', r"\[dtypes\], field 'U': 'default' must name dtype variables"),
        ('T = ["float32", "float16", "bf16"]', 'T = { choices = ["float32"], generate = ["bf16"] }',
         r"\[dtypes\], field 'T', 'generate': must be some of its choices"),
        ('yOut = { shape = ["B", "H"], dtype = "T" }',
         'yOut = { shape = ["B", "H"], dtype = "T", when = "nope" }',
         r"field 'yOut'.when: expected the name of a \[vars\] variable"),
        ('function = "aclnnRmsNorm"', 'function = "aclnnRmsNorm"\ngenerate = "nomodule"',
         r"\[op\], field 'generate': expected \"module:function\""),
    ],
)  # fmt: skip
def test_bad_variables(tmp_path, old, new, message):
    assert old in RMS
    assert re.search(message, _error(tmp_path, RMS.replace(old, new) + CASE))


def test_a_pointer_that_does_not_import_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("ACLNN_STRESS_ALLOW_REFERENCE_IMPORTS", "1")
    text = RMS.replace('function = "aclnnRmsNorm"',
                       'function = "aclnnRmsNorm"\nreference = "no_such_module:ref"')  # fmt: skip
    decl = _load(tmp_path, text + CASE)
    with pytest.raises(ConfigError, match=r"\[op\], field 'reference': cannot import"):
        to_opspec(decl)  # a user's module is imported when the declaration is read


def test_vars_feed_attributes_and_gate_optional_tensors(tmp_path):
    text = RMS.replace("[params]", "[vars]\neps = 1e-5\nwith_rstd = true\n[params]")
    text = text.replace("epsilon = 1e-6", 'epsilon = "eps"')
    decl = _load(tmp_path, text + CASE)
    spec = to_opspec(decl)
    p = spec.parse_params({"B": 2, "H": 8}, "case")
    eps = next(a for a in spec.args if a.name == "epsilon")
    assert eps.value(p) == 1e-5
    assert eps.value(spec.parse_params({"B": 2, "H": 8, "eps": 0.5}, "case")) == 0.5
    gated = text.replace(
        'rstdOut = { shape = ["B", 1], dtype = "float32" }',
        'rstdOut = { shape = ["B", 1], dtype = "float32", when = "with_rstd" }',
    )
    gated = gated.replace('function = "aclnnRmsNorm"',
                          'function = "aclnnRmsNorm"\noptional = ["rstdOut"]')  # fmt: skip
    spec = to_opspec(_load(tmp_path, gated + CASE))
    rstd = next(a for a in spec.args if a.name == "rstdOut")
    assert rstd.present(spec.parse_params({"B": 2, "H": 8}, "case"))
    assert not rstd.present(spec.parse_params({"B": 2, "H": 8, "with_rstd": False}, "case"))
    required = to_opspec(_load(tmp_path, gated.replace('\noptional = ["rstdOut"]', "") + CASE))
    with pytest.raises(ConfigError, match="field 'rstdOut': required by aclnnRmsNorm"):
        required.parse_params({"B": 2, "H": 8, "with_rstd": False}, "case")
