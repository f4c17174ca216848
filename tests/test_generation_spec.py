"""The declaration's ``[generate]`` table (stress/ops/generation.py): what the built-in
declarations say, and bad tables as one line naming the field."""

from __future__ import annotations

import pytest

from stress import ops
from stress.errors import ConfigError
from stress.files import load_toml
from stress.ops.declaration import parse_declaration
from stress.ops.declared_strategies import declared_bounds, draw_cases, violations_of


def _with(op: str, generate: dict) -> dict:
    data = load_toml(ops.BUILT_IN_DECLARATIONS / f"{op}.toml", "declaration")
    return {**data, "generate": generate}


def _parse(op: str, generate: dict):
    source = str(ops.BUILT_IN_DECLARATIONS / f"{op}.toml")
    return parse_declaration(_with(op, generate), source)


def test_built_in_declarations_hold_the_generators_specifics():
    add = ops.declaration_of("add").generation
    assert add.broadcast == ("other_shape",) and add.max_elements == 4096
    assert [v.name for v in add.violations] == ["broadcast", "out-dtype"]
    mhc = ops.declaration_of("mhc_pre_sinkhorn").generation
    assert mhc.legal_range("C") == (1, 99999) and mhc.limits[0].expr.text == "B*S"
    assert "hc-mult" in {v.name for v in mhc.violations}
    bwd = ops.declaration_of("mhc_pre_sinkhorn_backward").generation
    assert "hc-mult" not in {v.name for v in bwd.violations}  # the backward has no hcMult


def test_every_declared_violation_is_drawn_and_breaks_only_its_setting():
    decl = ops.declaration_of("mhc_pre_sinkhorn")
    seen = {}
    for case, name in draw_cases(decl, 60, 3, declared_bounds(decl), violations_of(decl)):
        seen[name] = case
        assert case.expect == 161002 and case.description.startswith("violates: ")
    assert set(seen) == {v.name for v in decl.generation.violations}
    assert seen["c-limit"].dims["C"] == 100096 and seen["c-zero"].dims["C"] == 0
    assert seen["c-align"].dims["C"] % 128 and seen["num-iters"].dims["num_iters"] != 20
    assert seen["n"].dims["N"] != 4 and seen["dtype"].dtypes["dtype"] == "float32"
    assert seen["n"].dims["B"] <= 2 and seen["n"].dims["S"] <= 16  # violation_dims
    assert seen["hc-mult"].overrides["hc_mult"] != 4


def test_a_limit_bounds_the_drawn_dimensions_and_mixing_is_drawn():
    mhc = ops.declaration_of("mhc_pre_sinkhorn")
    for case, _ in draw_cases(mhc, 80, 5, declared_bounds(mhc)):
        assert case.dims["B"] * case.dims["S"] <= 512
    add_decl = ops.declaration_of("add")
    add = [c for c, _ in draw_cases(add_decl, 80, 5, declared_bounds(add_decl))]
    assert any("other_dtype" in c.dtypes for c in add)
    assert any(c.shapes.get("other_shape") == (1,) for c in add)
    assert any(len(c.shapes.get("other_shape", ())) < len(c.shapes["shape"]) for c in add)
    for c in add:  # alpha drawn by the promoted type: ints only for int32 + int32
        ints = {c.dtypes.get("dtype"), c.dtypes.get("other_dtype", c.dtypes["dtype"])} == {"int32"}
        assert isinstance(c.overrides["alpha"], int) == ints


@pytest.mark.parametrize(
    ("op", "generate", "message"),
    [
        ("add", {"nope": 1}, "field 'nope': unknown"),
        ("add", {"max_elements": 0}, "field 'max_elements'"),
        ("mhc_pre_sinkhorn", {"limits": {"B*": 3}}, "field 'limits'"),
        ("mhc_pre_sinkhorn", {"limits": {"B*Q": 3}}, "must name dimensions"),
        ("mhc_pre_sinkhorn", {"legal": {"Q": [1, 2]}}, "not a dimension"),
        ("add", {"broadcast": ["shape"]}, "field 'broadcast'"),
        ("add", {"broadcast": [{}]}, "field 'broadcast'"),
        ("add", {"dtypes": {"dtype": ["fp16"]}}, "field 'dtypes'"),
        ("add", {"dtypes": {"other_dtype": [{}]}}, "field 'dtypes.other_dtype'"),
        ("add", {"values": {"alpha": {"of": ["x"]}}}, "values.alpha"),
        ("add", {"violation": [{"name": "x", "what": "y"}]}, "status"),
        ("add", {"violation": [{"name": "x", "what": "y", "status": 1}]}, "give set"),
        (
            "add",
            {"violation": [{"name": "x", "what": "y", "status": 1, "set": {"other_shape": 3}}]},
            "a list of shapes",
        ),
        (
            "add",
            {"violation": [{"name": "x", "what": "y", "status": 1, "set": {"dtype": "float64"}}]},
            "dtype names",
        ),
        (
            "mhc_pre_sinkhorn",
            {
                "violation": [
                    {
                        "name": "x",
                        "what": "y",
                        "status": 1,
                        "set": {"C": {"range": [128, 128], "not_multiple": 128}},
                    }
                ]
            },
            "no value",
        ),
    ],
)
def test_bad_generate_tables_are_one_line(op, generate, message):
    with pytest.raises(ConfigError, match=message) as err:
        _parse(op, generate)
    assert "[generate]" in str(err.value) and "\n" not in str(err.value)


def test_corpus_generate_declaration_invalid_writes_expecting_cases(tmp_path):
    """`--declaration FILE --invalid` draws the declaration's violations; a declaration
    without any says so in one line."""
    from stress import cli
    from stress.corpus.parse import load_corpus_file

    out = tmp_path / "inv.toml"
    src = str(ops.BUILT_IN_DECLARATIONS / "add.toml")
    argv = ["corpus", "generate", "--declaration", src, "--count", "6", "--seed", "2"]
    assert cli.main([*argv, "--invalid", "--out", str(out)]) == 0
    cases = load_corpus_file(out)
    assert len(cases) == 6 and all(c.expect.status == 161002 for c in cases)
    whats = {f"violates: {v.what}" for v in ops.declaration_of("add").generation.violations}
    assert {c.description for c in cases} <= whats


def test_a_declaration_without_violations_cannot_generate_invalid_cases(tmp_path, capsys):
    from stress import cli
    from tests.test_declaration import RMS, _load

    decl = _load(tmp_path, RMS)
    argv = ["corpus", "generate", "--declaration", decl.source, "--invalid"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "declares no constraints to violate" in err and len(err.strip().splitlines()) == 1


def test_a_limit_holds_at_or_under_its_most_and_where_it_does_not_evaluate():
    from stress.ops.generation import Limit
    from stress.ops.shape_expr import parse_dim

    limit = Limit(parse_dim("B*S"), 64)
    assert limit.holds({"B": 8, "S": 8}) and not limit.holds({"B": 8, "S": 9})
    assert limit.holds({"B": 8})  # S not drawn yet: the limit says nothing
