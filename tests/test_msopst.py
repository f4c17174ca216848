"""``aclnn-stress corpus import-msopst`` (stress/corpus/msopst.py, msopst_bind.py): msOpST
case-definition files, written for this project from msOpST's documented format under
tests/data/msopst/, become declared corpora bound to the header's parameters that run on the
simulator; what cannot be mapped is one warning line naming the case and the field."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from _cli import stress_cli

from stress.corpus.msopst import read_msopst

DATA = Path(__file__).resolve().parent / "data" / "msopst"


def _import(tmp: Path, name: str, header: str, *extra: str):
    out = tmp / f"{name}.toml"
    proc = stress_cli(
        "corpus",
        "import-msopst",
        str(DATA / f"{name}.json"),
        "--op",
        header,
        "-o",
        str(out),
        *extra,
    )
    return proc, out


def _run(tmp: Path, corpus: Path):
    out = tmp / "out"
    proc = stress_cli(
        "run",
        "--corpus",
        str(corpus),
        "--control",
        "none",
        "--record-baseline",
        "--phases",
        "serial,mixed",
        "--threads",
        "2",
        "--iterations",
        "2",
        "--out",
        str(out),
        "--baseline",
        str(tmp / "b.json"),
        "--no-isolate",
        "--quiet",
    )
    return proc, json.loads((out / "report.json").read_text())


def test_two_type_alternatives_import_into_two_cases_that_run(tmp_path):
    proc, out = _import(tmp_path, "add_two_types", "aclnnop/aclnn_add.h")
    assert proc.returncode == 0, proc.stderr
    assert "wrote 2 cases" in proc.stderr and "warning" not in proc.stderr
    cases = tomllib.loads(out.read_text())["case"]
    assert [c["id"] for c in cases] == ["Test_Add_001-float16", "Test_Add_001-float"]
    assert [c["self"]["dtype"] for c in cases] == ["float16", "float32"]
    assert all(
        c["other"]
        == {"shape": [4, 16], "dtype": c["self"]["dtype"], "values": "uniform(-2.0, 2.0)"}
        for c in cases
    )
    assert "input_desc[0] x1 -> self, input_desc[1] x2 -> other" in out.read_text()  # by order
    run, report = _run(tmp_path, out)
    assert run.returncode == 0 and report["diagnosis"] == "clean", run.stdout + run.stderr
    ran = {c["id"] for p in report["phases"] for c in p["cases"]}
    # the two imported cases, and the view variants the run derives from them
    assert {c.partition("@")[0] for c in ran} == {"Test_Add_001-float16", "Test_Add_001-float"}
    assert {"Test_Add_001-float16", "Test_Add_001-float"} < ran


def test_unmappable_fields_are_one_line_each_and_the_rest_runs(tmp_path):
    proc, out = _import(tmp_path, "add_mixed", "aclnnop/aclnn_add.h")
    assert proc.returncode == 0, proc.stderr
    warnings = [ln for ln in proc.stderr.splitlines() if "warning:" in ln]
    assert len(warnings) == 4, warnings
    assert (
        sum("'Test_Add_formats-NCHW-" in w and "'input_desc[0].format'" in w for w in warnings) == 2
    )
    assert any("'Test_Add_fuzz'" in w and "'fuzz_impl'" in w for w in warnings)
    assert any(
        "'Test_Add_bin'" in w and "'input_desc[0].value'" in w and ".bin" in w for w in warnings
    )
    cases = {c["id"]: c for c in tomllib.loads(out.read_text())["case"]}
    assert set(cases) == {
        "Test_Add_formats-ND-float16",
        "Test_Add_formats-ND-float",
        "Test_Add_named",
        "Test_Add_mismatch",
    }
    named = cases["Test_Add_named"]  # bound by name although listed other, self
    assert named["self"]["shape"] == [4, 16] and named["other"]["shape"] == [16]
    assert named["alpha"] == {"value": 2, "dtype": "int32"}
    assert named["self"]["values"] == "integers(-50, 50)"
    assert cases["Test_Add_mismatch"]["expect"] == {"status": 161002}  # msOpST "failed"
    run, report = _run(tmp_path, out)
    assert run.returncode == 0 and report["diagnosis"] == "clean", run.stdout + run.stderr


def test_attributes_bind_by_name_and_shapes_multiply(tmp_path):
    proc, out = _import(tmp_path, "softmax_attr", "aclnnop/aclnn_softmax.h")
    assert proc.returncode == 0, proc.stderr
    (warning,) = [ln for ln in proc.stderr.splitlines() if "warning:" in ln]
    assert "'attr[1]' (half_to_float)" in warning and "aclnnSoftmax" in warning
    cases = tomllib.loads(out.read_text())["case"]
    assert len(cases) == 4  # two types x two shapes
    assert {tuple(c["self"]["shape"]) for c in cases} == {(3, 40), (2, 5, 8)}
    assert all(c["dim"] == -1 and c["out"]["shape"] == c["self"]["shape"] for c in cases)
    run, report = _run(tmp_path, out)
    assert run.returncode == 0 and report["diagnosis"] == "clean", run.stdout + run.stderr


def test_a_file_that_is_not_msopst_is_one_line_exit_2(tmp_path):
    proc, out = _import(tmp_path, "not_msopst", "aclnnop/aclnn_add.h")
    assert proc.returncode == 2 and not out.exists()
    assert proc.stderr.count("\n") == 1 and "not an msOpST case file" in proc.stderr
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    proc = stress_cli("corpus", "import-msopst", str(broken), "--op", "aclnnop/aclnn_add.h")
    assert proc.returncode == 2 and "not JSON" in proc.stderr and proc.stderr.count("\n") == 1


def test_alternatives_must_agree_in_number(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            [
                {
                    "case_name": "c1",
                    "op": "Add",
                    "input_desc": [
                        {"format": "ND", "type": ["float16", "float"], "shape": [2]},
                        {"format": "ND", "type": ["float16", "float", "int32"], "shape": [2]},
                    ],
                },
                {
                    "case_name": "c2",
                    "op": "Add",
                    "input_desc": [
                        {"format": "ND", "type": "float", "shape": [2]},
                        {"format": "ND", "type": "float", "shape": [2], "value": [1, 2]},
                    ],
                },
            ]
        )
    )
    got = read_msopst(bad)
    assert [c.id for c in got.cases] == ["c2"]
    assert any("case 'c1', field 'type'" in w and "skipped" in w for w in got.warnings)
    assert any("case 'c2', field 'input_desc[1].value': inline data" in w for w in got.warnings)
