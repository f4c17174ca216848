"""Fidelity: programs written for CANN build against the simulator root unchanged.

Each test compiles a C or C++ source from tests/fidelity/ with the include and link lines the
CANN documentation gives for its aclnn samples (ops-math docs/zh/context/compile_and_run_sample.md
and scripts/build_example.sh):

    g++ x.cpp -I $R/include -I $R/include/aclnn -L $R/lib64 -lopapi_math -lascendcl -lnnopbase

and checks what the program prints against numpy.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from stress import sim

FIDELITY = Path(__file__).resolve().parent / "fidelity"
CXX = os.environ.get("CXX", "g++")
CC = os.environ.get("CC", "cc")

needs_cxx = pytest.mark.skipif(shutil.which(CXX.split()[0]) is None, reason="no C++ compiler")
needs_cc = pytest.mark.skipif(shutil.which(CC.split()[0]) is None, reason="no C compiler")


def _build(source: Path, exe: Path, compiler: str, *extra: str, libs=("opapi_math",)) -> None:
    root = sim.root()
    argv = [
        *compiler.split(), str(source), *extra,
        "-I", str(root / "include"), "-I", str(root / "include" / "aclnn"),
        "-L", str(root / "lib64"), *(f"-l{lib}" for lib in libs), "-lascendcl", "-lnnopbase",
        f"-Wl,-rpath,{root / 'lib64'}", "-o", str(exe),
    ]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _run(exe: Path) -> str:
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _results(stdout: str) -> np.ndarray:
    found = re.findall(r"result\[(\d+)\] is: (\S+)", stdout)
    assert found, stdout
    assert [int(i) for i, _ in found] == list(range(len(found)))
    return np.array([float(v) for _, v in found], dtype=np.float32)


@needs_cxx
def test_documented_aclnn_add_sample_builds_and_prints_the_sum(tmp_path):
    """The CANN docs' aclnnAdd sample shape (acl/acl.h + aclnnop/aclnn_add.h, linked with
    -lopapi_math -lascendcl -lnnopbase) compiles unchanged and prints self + alpha * other."""
    exe = tmp_path / "add_sample"
    _build(FIDELITY / "add_sample.cpp", exe, CXX, "-std=c++11", "-Wall", "-Werror")
    got = _results(_run(exe))
    self_ = np.arange(8, dtype=np.float32).reshape(4, 2)
    other = np.array([[10, 100]], dtype=np.float32)
    np.testing.assert_allclose(got, (self_ + np.float32(1.5) * other).ravel(), rtol=1e-6)


@needs_cxx
def test_async_copies_and_events_sample(tmp_path):
    """A program that uploads with aclrtMemcpyAsync on one stream, orders a second stream after
    it with aclrtRecordEvent / aclrtStreamWaitEvent, runs aclnnAdd and downloads asynchronously
    prints the sum after one aclrtSynchronizeStream, and the event reports COMPLETE."""
    exe = tmp_path / "async_sample"
    _build(FIDELITY / "async_events_sample.cpp", exe, CXX, "-std=c++14", "-Wall", "-Werror")
    out = _run(exe)
    assert "event complete: 1" in out
    a = np.arange(1, 7, dtype=np.float32)
    np.testing.assert_array_equal(_results(out), a + 10 * a)


@needs_cxx
def test_cat_sample_with_a_tensor_list(tmp_path):
    """aclnnCat over an aclTensorList (aclCreateTensorList; aclDestroyTensorList destroys the
    members, as real nnopbase does, so the program does not destroy them again) compiles with the
    documented line and prints the concatenation."""
    exe = tmp_path / "cat_sample"
    _build(FIDELITY / "cat_sample.cpp", exe, CXX, "-std=c++11", "-Wall", "-Werror")
    parts = [np.arange(6).reshape(2, 3), np.arange(10, 13).reshape(1, 3)]
    parts.append(np.arange(20, 29).reshape(3, 3))
    np.testing.assert_array_equal(_results(_run(exe)), np.concatenate(parts).ravel())


@needs_cxx
@pytest.mark.parametrize("std", ["c++11", "c++17"])
def test_all_headers_together_in_cxx(tmp_path, std):
    """Every installed header in one C++ translation unit: no redefinition, enums usable as
    CANN declares them (tagged where CANN tags them), real numeric values."""
    src = tmp_path / "headers_all.cpp"
    src.write_text((FIDELITY / "headers_all.c").read_text())
    exe = tmp_path / "h"
    _build(src, exe, CXX, f"-std={std}", "-Wall", "-Wextra", "-Werror", libs=())
    _run(exe)


@needs_cc
@pytest.mark.parametrize("std", ["c99", "c11"])
def test_all_headers_together_in_c(tmp_path, std):
    """The same headers from C: stdbool/stdint only, no C++-only construct leaks out."""
    exe = tmp_path / "h"
    _build(FIDELITY / "headers_all.c", exe, CC, f"-std={std}", "-Wall", "-Wextra", "-Werror",
           "-pedantic", libs=())  # fmt: skip
    _run(exe)


def test_operator_headers_include_what_cann_headers_include():
    """aclnnop/aclnn_<op>.h include "aclnn/aclnn_base.h" and "aclnn_util.h" (ACLNN_API), and no
    simulator header: a program built against the simulator also builds against CANN."""
    include = sim.root() / "include" / "aclnnop"
    headers = sorted(p for p in include.glob("aclnn_*.h") if p.name != "aclnn_util.h")
    assert headers
    for h in headers:
        text = h.read_text()
        assert '#include "aclnn/aclnn_base.h"' in text, h.name
        assert '#include "aclnn_util.h"' in text, h.name
        assert "aclsim" not in text.split("*/", 1)[1], h.name
        assert "ACLNN_API aclnnStatus" in text, h.name
