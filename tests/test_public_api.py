"""The public API in stress/__init__.py: what examples and users import."""

import ast
from pathlib import Path

import pytest

import stress
from stress.corpus.generate import case_from_fields

ROOT = Path(__file__).resolve().parents[1]


def test_examples_import_only_the_public_api():
    for path in (ROOT / "examples").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("stress"):
                assert node.module == "stress", f"{path.name}: imports {node.module}"
                for alias in node.names:
                    assert alias.name in stress.__all__, f"{path.name}: {alias.name}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith("stress.") or alias.name == "stress"


def test_every_public_name_resolves():
    for name in stress.__all__:
        assert getattr(stress, name) is not None


def test_call_once_and_check_reference_on_the_simulator():
    case = case_from_fields({"op": "add", "shape": [4, 8], "seed": 3})
    call = stress.call_once(case, backend="sim")
    assert set(call.outputs) == {"out"}
    checked = stress.check_reference(call)
    assert checked["out"][0] is True
    wrong = {"out": call.outputs["out"] + 1.0}
    ok, ratio = stress.compare(wrong["out"], call.outputs["out"], 1e-6, 1e-6)
    assert not ok and ratio > 1


def test_an_error_status_raises_acl_error():
    case = case_from_fields(
        {"op": "add", "shape": [2, 3], "other_shape": [4], "expect": {"status": 161002}}
    )
    with pytest.raises(stress.AclError) as err:
        stress.call_once(case, backend="sim")
    assert err.value.code == 161002
