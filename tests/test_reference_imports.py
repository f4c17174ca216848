"""A declaration's ``reference = "module:function"`` is data naming code: imported only when
built in (stress.ops.*) or when the user allows it, never on the declaration's own say."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from _cli import REPO, stress_cli

from stress import ops
from stress.errors import ConfigError
from stress.ops.declaration import load_declaration
from stress.ops.references import ALLOW_ENV

ADD = (REPO / "corpus/ops/add.toml").read_text()


def _declaration(tmp_path: Path, reference: str, name: str = "ref_add") -> Path:
    text = ADD.replace('name = "declared_add"', f'name = "{name}"\nreference = "{reference}"')
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


@pytest.fixture()
def evil_module(tmp_path: Path, monkeypatch) -> Path:
    """A module ``evilref`` (a fresh one per test) whose import leaves a marker file: what a
    hostile reference would run."""
    marker = tmp_path / "imported"
    monkeypatch.delitem(__import__("sys").modules, "evilref", raising=False)
    (tmp_path / "evilref.py").write_text(
        f"open({str(marker)!r}, 'w').close()\ndef reference(params, inputs):\n    return {{}}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    monkeypatch.chdir(tmp_path)  # no pyproject.toml here
    return marker


def test_without_permission_the_module_is_never_imported(tmp_path: Path, evil_module: Path):
    path = _declaration(tmp_path, "evilref:reference")
    with pytest.raises(ConfigError) as err:
        ops.register_declaration(load_declaration(path))
    msg = str(err.value)
    assert "\n" not in msg and "field 'reference'" in msg and "--allow-reference-imports" in msg
    assert not evil_module.exists()


def test_the_environment_flag_allows_it(tmp_path: Path, evil_module: Path, monkeypatch):
    monkeypatch.setenv(ALLOW_ENV, "1")
    ops.register_declaration(load_declaration(_declaration(tmp_path, "evilref:reference")))
    assert evil_module.exists()  # imported at registration, before any run


@pytest.mark.parametrize("value, allowed", [("true", True), ("false", False)])
def test_the_projects_pyproject_allows_it(
    tmp_path: Path, evil_module: Path, value: str, allowed: bool
):
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.aclnn-stress]\nallow-reference-imports = {value}\n"
    )
    decl = load_declaration(_declaration(tmp_path, "evilref:reference"))
    if allowed:
        ops.register_declaration(decl)
    else:
        with pytest.raises(ConfigError, match="--allow-reference-imports"):
            ops.register_declaration(decl)
    assert evil_module.exists() == allowed


def test_a_bad_pyproject_value_is_one_line(tmp_path: Path, evil_module: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.aclnn-stress]\nallow-reference-imports = "yes"\n'
    )
    with pytest.raises(ConfigError, match="expected true or false"):
        ops.register_declaration(load_declaration(_declaration(tmp_path, "evilref:reference")))


def test_built_in_references_are_trusted_without_the_flag(tmp_path: Path, evil_module: Path):
    decl = load_declaration(_declaration(tmp_path, "stress.ops.add_reference:add", name="b_add"))
    spec = ops.register_declaration(decl)  # no flag, no ConfigError
    p = spec.parse_params(decl.cases[0].params(), "case")
    a, b = np.full((4, 64), 2, np.float32), np.ones(64, np.float32)
    out = spec.reference(p, {"self": a, "other": b})
    assert np.array_equal(out["out"], a + b)  # alpha = 1.0 in the first case


@pytest.mark.parametrize("text", ["os:system;x", "a..b:f", "json:", ":f", "json:nope"])
def test_malformed_or_missing_references_are_one_line(
    tmp_path: Path, evil_module, monkeypatch, text
):
    monkeypatch.setenv(ALLOW_ENV, "1")
    with pytest.raises(ConfigError, match="field 'reference'"):
        ops.register_declaration(load_declaration(_declaration(tmp_path, text)))


def test_the_cli_refuses_in_one_line_naming_the_flag(tmp_path: Path, evil_module: Path):
    path = _declaration(tmp_path, "evilref:reference")
    env = {k: v for k, v in os.environ.items() if k != ALLOW_ENV}
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env.get('PYTHONPATH', '')}"
    proc = stress_cli(
        "run",
        "--corpus",
        str(path),
        "--control",
        "none",
        "--out",
        str(tmp_path / "o"),
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 2 and "--allow-reference-imports" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not evil_module.exists()
