# ruff: noqa: E501  (the sanitizer logs below keep their real, long lines)
"""ASan/TSan variants of the simulator (ACLSIM_VARIANT): the build flags, the report parser on
logs in the sanitizers' documented text format, and (slow) real instrumented runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stress.errors import ConfigError
from stress.sanitize.hostsan import parse_report, read_logs
from stress.sim import _build, variant

SIM = "/src/stress/sim/src"  # the simulator's source folder as the logs below name it

TSAN_LOG = f"""\
==================
WARNING: ThreadSanitizer: data race (pid=4242)
  Read of size 8 at 0x7f5981615048 by thread T2:
    #0 race_launch_hook {SIM}/opapi/transformer/op_mhc_pre_sinkhorn_backward.c:183 (libopapi.so+0x1199)
    #1 aclsim_executor_run {SIM}/nnopbase/nb_executor.c:380 (libnnopbase.so+0x2200)
    #2 aclnnMhcPreSinkhornBackward {SIM}/opapi/transformer/op_mhc_pre_sinkhorn_backward.c:1010 (libopapi.so+0x3300)
    #3 <null> <null> (libffi.so.8+0x6f79)

  Previous write of size 8 at 0x7f5981615048 by thread T1:
    #0 bwd_faults {SIM}/opapi/transformer/op_mhc_pre_sinkhorn_backward.c:891 (libopapi.so+0x11b3)
    #1 aclnnMhcPreSinkhornBackwardGetWorkspaceSize {SIM}/opapi/transformer/op_mhc_pre_sinkhorn_backward.c:984 (libopapi.so+0x4400)
    #2 <null> <null> (libffi.so.8+0x6f79)

  Location is heap block of size 96 at 0x7f5981615000 allocated by main thread:
    #0 calloc ../../../../src/libsanitizer/tsan/tsan_interceptors_posix.cpp:672 (libtsan.so+0x3f3a4)
    #1 aclsim_shared_state {SIM}/nnopbase/nb_state.c:70 (libnnopbase.so+0x9000)

  Thread T2 (tid=21068, running) created by main thread at:
    #0 pthread_create ../../../../src/libsanitizer/tsan/tsan_interceptors_posix.cpp:1001 (libtsan.so+0x5e686)
    #1 <null> <null> (libpython3.11.so+0x6f79)

SUMMARY: ThreadSanitizer: data race {SIM}/opapi/transformer/op_mhc_pre_sinkhorn_backward.c:183 in race_launch_hook
==================
==================
WARNING: ThreadSanitizer: data race (pid=4242)
  Write of size 4 at 0x7f00 by thread T3:
    #0 take_gil Python/ceval_gil.c:300 (libpython3.11.so+0x100)

  Previous read of size 4 at 0x7f00 by main thread:
    [failed to restore the stack]

SUMMARY: ThreadSanitizer: data race Python/ceval_gil.c:300 in take_gil
==================
"""

ASAN_LOG = f"""\
=================================================================
==77==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000014 at pc 0x7f bp 0x7ffd sp 0x7ffc
WRITE of size 4 at 0x602000000014 thread T0
    #0 0x7f3b in copy_dims {SIM}/nnopbase/nb_tensor.c:88
    #1 0x7f3c in aclCreateTensor {SIM}/nnopbase/nb_tensor.c:140
    #2 0x7f3d in ffi_call_unix64 (/lib/x86_64-linux-gnu/libffi.so.8+0x6f79)

0x602000000014 is located 0 bytes to the right of 4-byte region [0x602000000010,0x602000000014)
allocated by thread T0 here:
    #0 0x7f40 in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x7f41 in aclCreateTensor {SIM}/nnopbase/nb_tensor.c:131

SUMMARY: AddressSanitizer: heap-buffer-overflow {SIM}/nnopbase/nb_tensor.c:88 in copy_dims
=================================================================
==77==ERROR: LeakSanitizer: detected memory leaks

Direct leak of 64 byte(s) in 1 object(s) allocated from:
    #0 0x7f50 in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x7f51 in aclsim_executor_create {SIM}/nnopbase/nb_executor.c:120
    #2 0x7f52 in aclnnAddGetWorkspaceSize {SIM}/opapi/math/op_add.c:77

Direct leak of 283 byte(s) in 5 object(s) allocated from:
    #0 0x7f60 in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x7f61 in _PyObject_Malloc Objects/obmalloc.c:2003

SUMMARY: AddressSanitizer: 347 byte(s) leaked in 6 allocation(s).
"""


def test_variant_is_chosen_by_the_environment(monkeypatch):
    monkeypatch.delenv("ACLSIM_VARIANT", raising=False)
    plain = _build.cflags()
    assert plain and not any(f.startswith("-fsanitize") for f in plain)
    monkeypatch.setenv("ACLSIM_VARIANT", "tsan")
    assert "-fsanitize=thread" in _build.cflags() and "-g" in _build.cflags()
    assert variant.get().suffix == "-tsan"
    monkeypatch.setenv("ACLSIM_VARIANT", "msan")
    with pytest.raises(_build.SimBuildError, match="ACLSIM_VARIANT: unknown simulator variant"):
        _build.cflags()
    with pytest.raises(ConfigError, match="use one of plain, asan, tsan"):
        variant.get("msan")


def test_a_variant_without_its_runtime_preloaded_is_refused_in_one_line(monkeypatch):
    monkeypatch.setenv("ACLSIM_VARIANT", "tsan")
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    with pytest.raises(_build.SimBuildError, match=r"LD_PRELOAD lacks the libtsan.so") as info:
        _build.root()
    assert "\n" not in str(info.value) and "stress.sanitize.simenv tsan" in str(info.value)


def test_runtime_env_preloads_the_sanitizer_runtime():
    cc = _build._compiler()
    try:
        env = variant.runtime_env(variant.get("asan"), cc, "/tmp/x")
    except ConfigError as exc:  # pragma: no cover - a compiler without libasan
        pytest.skip(str(exc))
    assert Path(env["LD_PRELOAD"].split(":")[0]).name.startswith("libasan.so")
    assert "log_path=/tmp/x" in env["ASAN_OPTIONS"] and "detect_leaks=1" in env["ASAN_OPTIONS"]
    assert env["ACLSIM_VARIANT"] == "asan"
    assert variant.runtime_env(variant.get("plain"), cc) == {}


def test_tsan_report_names_both_calls_and_drops_races_outside_the_simulator():
    found = parse_report(TSAN_LOG, (SIM,))
    assert len(found) == 1  # the second report's stacks never pass through the simulator
    f = found[0]
    assert (f.tool, f.kind, f.bytes, f.source) == ("tsan", "data race", 8, "tsan")
    first, second = f.calls  # the earlier access first
    assert (first.op, first.stage, first.access) == (
        "aclnnMhcPreSinkhornBackwardGetWorkspaceSize", "phase1", "Write")  # fmt: skip
    assert (first.file, first.line) == ("op_mhc_pre_sinkhorn_backward.c", 891)
    assert (second.op, second.stage, second.access) == (
        "aclnnMhcPreSinkhornBackward",
        "phase2",
        "Read",
    )
    assert (second.file, second.line) == ("op_mhc_pre_sinkhorn_backward.c", 183)


def test_asan_report_and_leaks_keep_only_the_simulators():
    found = parse_report(ASAN_LOG, (SIM,))
    kinds = [(f.tool, f.kind, f.bytes) for f in found]
    assert kinds == [("asan", "heap-buffer-overflow", 4), ("asan", "leak", 64)]
    (access,) = found[0].calls
    assert (access.op, access.stage, access.access) == ("aclCreateTensor", "runtime", "Write")
    assert (access.file, access.line, found[0].address) == ("nb_tensor.c", 88, "0x602000000014")
    (leak,) = found[1].calls
    assert (leak.op, leak.stage, leak.file, leak.line) == (
        "aclnnAddGetWorkspaceSize", "phase1", "nb_executor.c", 120)  # fmt: skip


SEGV_LOG = f"""\
==9==ERROR: AddressSanitizer: SEGV on unknown address 0x7f0000001000 (pc 0x7f bp 0x7f sp 0x7f T3)
==9==The signal is caused by a READ memory access.
    #0 0x7f in bwd_block {SIM}/opapi/transformer/op_mhc_pre_sinkhorn_backward.c:620
    #1 0x7f in bwd_kernel {SIM}/opapi/transformer/op_mhc_pre_sinkhorn_backward.c:700
    #2 0x7f in launch_task {SIM}/nnopbase/nb_executor.c:248
    #3 0x7f in worker_main {SIM}/runtime/rt_stream.c:85

SUMMARY: AddressSanitizer: SEGV {SIM}/opapi/transformer/op_mhc_pre_sinkhorn_backward.c:620 in bwd_block
==9==ABORTING
"""


def test_asan_segv_on_a_stream_worker_is_a_kernel_access():
    (f,) = parse_report(SEGV_LOG, (SIM,))
    assert (f.tool, f.kind, f.address) == ("asan", "SEGV", "0x7f0000001000")
    (a,) = f.calls
    assert (a.op, a.stage, a.access, a.line) == ("bwd_kernel", "kernel", "Read", 620)


def test_logs_of_every_process_are_read(tmp_path):
    (tmp_path / "tsan.11").write_text(TSAN_LOG)
    (tmp_path / "tsan.12").write_text(ASAN_LOG)
    (tmp_path / "other.13").write_text(ASAN_LOG)
    assert len(read_logs(tmp_path / "tsan", (SIM,))) == 3


# --- real instrumented runs (slow: each variant is its own build, calls run 5-20x slower) ---

BUG_C = """\
#include <stdlib.h>
#include <string.h>
int overflow(int n) {
    char *p = malloc(8);
    memset(p, 0, 8);
    p[n] = 1; /* the deliberate host-side bug */
    int r = p[0];
    free(p);
    return r;
}
"""

SCRIPT = """\
import ctypes, os, sys
lib64 = os.path.join(os.environ["ASCEND_HOME_PATH"], "lib64")
acl = ctypes.CDLL(os.path.join(lib64, "libascendcl.so"), mode=ctypes.RTLD_GLOBAL)
assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0
p = ctypes.c_void_p()
assert acl.aclrtMalloc(ctypes.byref(p), ctypes.c_size_t(64), 0) == 0
acl.aclrtMemset.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32, ctypes.c_size_t]
assert acl.aclrtMemset(p, 64, 1, 64) == 0
acl.aclrtFree.argtypes = [ctypes.c_void_p]
assert acl.aclrtFree(p) == 0
if len(sys.argv) > 1:
    ctypes.CDLL(sys.argv[1]).overflow(8)
assert acl.aclFinalize() == 0
"""


def _variant_env(name: str, log: Path) -> dict[str, str]:
    env = {**os.environ, "ACLSIM_VARIANT": name}
    try:
        env.update(variant.runtime_env(variant.get(name), _build._compiler(), str(log)))
    except ConfigError as exc:
        pytest.skip(f"the compiler has no {name} runtime: {exc}")
    old = os.environ.get("ACLSIM_VARIANT")
    os.environ["ACLSIM_VARIANT"] = name
    try:
        env["ASCEND_HOME_PATH"] = str(_build.build())
    finally:
        os.environ.pop("ACLSIM_VARIANT") if old is None else os.environ.update(ACLSIM_VARIANT=old)
    return env


@pytest.mark.slow
def test_asan_finds_a_host_bug_with_its_line_and_nothing_on_the_clean_simulator(tmp_path):
    src = tmp_path / "bug.c"
    src.write_text(BUG_C)
    lib = tmp_path / "libbug.so"
    flags = variant.get("asan").cflags
    subprocess.run([*_build._compiler(), "-shared", "-fPIC", *flags, str(src), "-o", str(lib)],
                   check=True)  # fmt: skip
    prog = tmp_path / "prog.py"
    prog.write_text(SCRIPT)
    dirs = (str(_build.SRC_DIR), str(tmp_path))
    for argv, prefix in (([], "clean"), ([str(lib)], "bug")):
        log = tmp_path / prefix
        env = _variant_env("asan", log)
        proc = subprocess.run([sys.executable, str(prog), *argv], env=env, capture_output=True,
                              text=True, timeout=300)  # fmt: skip
        found = read_logs(log, dirs)
        if prefix == "clean":
            assert proc.returncode == 0, proc.stderr
            assert found == [], [f.summary() for f in found]
        else:
            assert [(f.kind, f.calls[0].op, f.calls[0].file, f.calls[0].line) for f in found] == [
                ("heap-buffer-overflow", "overflow", "bug.c", 6)
            ]


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stress", *args], env=env, capture_output=True,
                          text=True, timeout=900)  # fmt: skip


@pytest.mark.slow
def test_tsan_rerun_reports_the_shared_scratch_race_and_none_when_clean(tmp_path):
    """`sanitize --tool tsan` on a shared-scratch run: the unlocked device-wide scratch written by
    backward kernels on two streams is a data race at its store; the clean simulator re-running
    the same reproducer reports none."""
    env = {**os.environ, "ACLSIM_FAULTS": "shared-scratch"}
    bad = tmp_path / "bad"
    run = ["run", "--corpus", "corpus/mhc.toml", "--control", "none", "--phases", "mixed",
           "--stream", "per-thread", "--threads", "4", "--iterations", "1",
           "--record-baseline", "--baseline", str(tmp_path / "base.json"), "--out", str(bad),
           "--quiet"]  # fmt: skip
    assert _cli(run, env).returncode == 1
    report = json.loads((bad / "report.json").read_text())
    command = report["reproducer"]["command"]
    assert command.startswith("ACLSIM_FAULTS=shared-scratch ")
    clean = tmp_path / "clean"
    clean.mkdir()
    report["reproducer"]["command"] = command.removeprefix("ACLSIM_FAULTS=shared-scratch ")
    (clean / "report.json").write_text(json.dumps(report))
    found = {}
    for out in (bad, clean):
        env = {k: v for k, v in os.environ.items() if k != "ACLSIM_FAULTS"}
        proc = _cli(["sanitize", str(out), "--tool", "tsan"], env)
        assert proc.returncode in (0, 1), proc.stderr
        found[out.name] = [json.loads(x) for x in (out / "sanitize.jsonl").read_text().splitlines()]
    assert found["clean"] == []
    races = found["bad"]
    assert races and all(r["tool"] == "tsan" and r["kind"] == "data race" for r in races)
    stores = {(c["stage"], c["file"]) for r in races for c in r["calls"]}
    assert ("kernel", "op_mhc_bwd_kernel.c") in stores  # the kernel zeroing the shared scratch
