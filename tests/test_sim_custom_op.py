"""Custom operator packages: the example package builds and runs through the binding with one
command, and the binding orders packages as CANN does (docs/simulator.md, "Custom operator
packages", which cites the CANN environment-variable reference for ASCEND_CUSTOM_OPP_PATH and
the Ascend C guide's "operator package deployment" for opp/vendors/config.ini)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stress.acl import backend as backend_mod

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "examples" / "custom_op" / "build.py"


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_example_custom_op_builds_installs_and_runs(tmp_path):
    """``python examples/custom_op/build.py --install-path DIR`` compiles aclnnMyScale against
    the simulator's public headers, installs it as <DIR>/vendors/my_vendor/op_api/{include,lib},
    and its check calls it through stress.acl and compares with numpy."""
    proc = subprocess.run(
        [sys.executable, str(BUILD), "--install-path", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    package = tmp_path / "vendors" / "my_vendor"
    assert (package / "op_api" / "lib" / "libcust_opapi.so").is_file()
    assert (package / "op_api" / "include" / "aclnn_my_scale.h").is_file()
    assert (tmp_path / "vendors" / "config.ini").read_text().strip() == "load_priority=my_vendor"
    assert f"aclnnMyScale from {package}/op_api/lib/libcust_opapi.so: OK" in proc.stdout


def _package(base: Path, vendor: str) -> Path:
    lib = base / "vendors" / vendor / "op_api" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcust_opapi.so").write_bytes(b"\x7fELF fake")
    return base / "vendors" / vendor


def test_custom_opp_path_order_libraries_before_packages(tmp_path, monkeypatch):
    """ASCEND_CUSTOM_OPP_PATH=<p1>/vendors/v1:<p2>/op_api/lib/:<p3>/vendors/v3:<p4>/op_api/lib/
    gives the priority 2 > 4 > 1 > 3: dynamic-library folders first, then packages, each in
    the order listed (CANN environment-variable reference, ASCEND_CUSTOM_OPP_PATH)."""
    p1, p3 = _package(tmp_path / "p1", "v1"), _package(tmp_path / "p3", "v3")
    p2 = _package(tmp_path / "p2", "x") / "op_api" / "lib"
    p4 = _package(tmp_path / "p4", "y") / "op_api" / "lib"
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", f"{p1}:{p2}/:{p3}:{p4}/")
    dirs = backend_mod.custom_op_dirs(tmp_path / "no-root")
    assert dirs == [p2.parent, p4.parent, p1 / "op_api", p3 / "op_api"]


def test_default_vendors_follow_config_ini(tmp_path, monkeypatch):
    """Packages installed in the default place, <root>/opp/vendors/<vendor>, are ordered by
    opp/vendors/config.ini ``load_priority=a,b`` (first = highest; the installer adds each
    vendor there), the variable's entries before them; vendors the file does not name last."""
    monkeypatch.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    root = tmp_path / "root"
    for v in ("alpha", "beta", "gamma"):
        _package(root / "opp", v)
    (root / "opp" / "vendors" / "config.ini").write_text("load_priority=gamma, alpha\n")
    names = [d.parent.name for d in backend_mod.custom_op_dirs(root)]
    assert names == ["gamma", "alpha", "beta"]
    env_pkg = _package(tmp_path / "env", "mine")
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(env_pkg))
    names = [d.parent.name for d in backend_mod.custom_op_dirs(root)]
    assert names == ["mine", "gamma", "alpha", "beta"]
