"""Backend discovery and ABI resolution (no libraries loaded in this process)."""

from __future__ import annotations

import pytest

from stress.acl import backend as backend_mod
from stress.acl.backend import Backend, discover
from stress.acl.errors import BackendError


def _fake_root(tmp_path, arch_dir: bool = False):
    lib = tmp_path / ("x86_64-linux/lib64" if arch_dir else "lib64")
    lib.mkdir(parents=True)
    for name in ("libascendcl.so", "libnnopbase.so", "libopapi.so", "libopapi_math.so"):
        (lib / name).write_bytes(b"\x7fELF fake")
    return tmp_path


def test_unknown_backend_kind_is_a_config_error(monkeypatch):
    monkeypatch.setenv("STRESS_BACKEND", "tpu")
    with pytest.raises(BackendError, match=r"STRESS_BACKEND='tpu'.*auto, sim, cann"):
        discover()


def test_cann_without_install_names_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "nowhere"))
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    monkeypatch.setattr(backend_mod, "_DEFAULT_ROOTS", ())
    with pytest.raises(BackendError, match="ASCEND_HOME_PATH"):
        discover("cann")


@pytest.mark.parametrize("arch_dir", [False, True])
def test_cann_root_found_in_lib64_or_arch_dir(monkeypatch, tmp_path, arch_dir):
    monkeypatch.setattr(backend_mod.platform, "machine", lambda: "x86_64")
    root = _fake_root(tmp_path, arch_dir)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(root))
    b = discover("cann")
    assert b.kind == "cann" and b.root == root
    assert b.ascendcl.name == "libascendcl.so"
    assert [p.name for p in b.op_libraries] == ["libopapi_math.so", "libopapi.so"]


def test_custom_vendor_op_library_is_searched_first(monkeypatch, tmp_path):
    root = _fake_root(tmp_path)
    vendor = root / "opp/vendors/custom_transformer/op_api/lib"
    vendor.mkdir(parents=True)
    (vendor / "libcust_opapi.so").write_bytes(b"fake")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(root))
    b = discover("cann")
    assert b.op_libraries[0] == vendor / "libcust_opapi.so"


def test_auto_without_npu_device_uses_simulator(monkeypatch, tmp_path):
    monkeypatch.setenv("ASCEND_HOME_PATH", str(_fake_root(tmp_path)))
    monkeypatch.setattr(backend_mod, "_npu_present", lambda: False)
    assert discover("auto").kind == "sim"
    monkeypatch.setattr(backend_mod, "_npu_present", lambda: True)
    assert discover("auto").kind == "cann"


def test_library_hashes_change_with_content(tmp_path):
    root = _fake_root(tmp_path)
    b = Backend("cann", root, root / "lib64/libascendcl.so", root / "lib64/libnnopbase.so", ())
    before = b.library_hashes()
    (root / "lib64/libascendcl.so").write_bytes(b"other")
    after = b.library_hashes()
    assert set(before) == {"lib64/libascendcl.so", "lib64/libnnopbase.so"}
    assert before["lib64/libascendcl.so"] != after["lib64/libascendcl.so"]
    assert before["lib64/libnnopbase.so"] == after["lib64/libnnopbase.so"]
