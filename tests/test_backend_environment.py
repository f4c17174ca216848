"""A broken CANN environment is one line naming the file and the loader's reason; libraries load
only from under the configured root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _cli import stress_cli

from stress import sim
from stress.acl.backend import custom_op_dirs, discover
from stress.acl.errors import BackendError


def _info(root: Path) -> tuple[int, list[str]]:
    env = {**os.environ, "ASCEND_HOME_PATH": str(root), "STRESS_BACKEND": "cann"}
    proc = stress_cli("info", env=env, timeout=60)
    assert "Traceback" not in proc.stderr
    return proc.returncode, proc.stderr.strip().splitlines()


def test_a_junk_libascendcl_without_nnopbase_names_the_missing_file(tmp_path: Path):
    (tmp_path / "lib64").mkdir()
    (tmp_path / "lib64/libascendcl.so").write_text("junk")
    code, lines = _info(tmp_path)
    assert code == 2 and len(lines) == 1
    assert "libnnopbase.so is missing" in lines[0] and "no CANN installation" not in lines[0]


def test_junk_libraries_name_the_file_and_the_loaders_reason(tmp_path: Path):
    (tmp_path / "lib64").mkdir()
    for name in ("libascendcl.so", "libnnopbase.so"):
        (tmp_path / "lib64" / name).write_text("junk")
    code, lines = _info(tmp_path)
    assert code == 2 and len(lines) == 1
    assert f"cannot load {tmp_path}/lib64/libascendcl.so" in lines[0]
    assert "file too short" in lines[0]  # the dynamic loader's own words


def test_a_root_that_is_not_a_directory_says_so(tmp_path: Path):
    code, lines = _info(tmp_path / "nothing")
    assert code == 2 and len(lines) == 1 and "is not a directory" in lines[0]


def test_a_library_linking_outside_the_root_is_refused(tmp_path: Path, monkeypatch):
    real = sim.root() / "lib64"
    (tmp_path / "lib64").mkdir()
    (tmp_path / "lib64/libascendcl.so").symlink_to(real / "libascendcl.so")
    (tmp_path / "lib64/libnnopbase.so").symlink_to(real / "libnnopbase.so")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    with pytest.raises(BackendError, match="outside the CANN root"):
        discover("cann")


def test_vendor_config_ini_cannot_name_a_folder_outside_vendors(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    vendors = tmp_path / "root/opp/vendors"
    (vendors / "good/op_api").mkdir(parents=True)
    (tmp_path / "evil/op_api").mkdir(parents=True)
    (vendors / "config.ini").write_text("load_priority=../../../evil,good\n")
    dirs = custom_op_dirs(tmp_path / "root")
    assert dirs == [vendors / "good/op_api"]
    assert all(d.resolve().is_relative_to(vendors.resolve()) for d in dirs)
