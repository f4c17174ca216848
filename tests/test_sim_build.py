"""Building and locating the simulator: cache key, caching, forced rebuilds, errors, layout and
which library exports which symbol."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stress import sim
from stress.sim import _build

RUNTIME = {
    "aclInit", "aclFinalize", "aclrtSetDevice", "aclrtResetDevice", "aclrtGetDevice",
    "aclrtGetDeviceCount", "aclrtCreateContext", "aclrtDestroyContext", "aclrtSetCurrentContext",
    "aclrtGetCurrentContext", "aclrtCreateStream", "aclrtDestroyStream", "aclrtSynchronizeStream",
    "aclrtSynchronizeStreamWithTimeout", "aclrtSynchronizeDevice", "aclrtMalloc", "aclrtFree",
    "aclrtMallocHost", "aclrtFreeHost", "aclrtMemcpy", "aclrtMemset", "aclrtGetSocName",
    "aclsysGetVersionStr", "aclrtSetSysParamOpt", "aclrtGetSysParamOpt", "aclrtCtxSetSysParamOpt",
    "aclrtCtxGetSysParamOpt", "aclGetRecentErrMsg", "aclrtMemcpyAsync", "aclrtMemsetAsync",
    "aclrtCreateEvent", "aclrtDestroyEvent", "aclrtRecordEvent", "aclrtStreamWaitEvent",
    "aclrtSynchronizeEvent", "aclrtQueryEventStatus", "aclrtGetMemInfo", "aclDataTypeSize",
    "aclFloatToFloat16", "aclFloat16ToFloat",
    "aclsimLiveObjects", "aclsimVersion", "aclsimStreamDelay", "aclsimKnownFaults",
    "aclsimFaultDescription",
}  # fmt: skip
NNOPBASE = {
    "aclCreateTensor", "aclDestroyTensor", "aclCreateScalar", "aclDestroyScalar",
    "aclCreateIntArray", "aclDestroyIntArray", "aclCreateFloatArray", "aclDestroyFloatArray",
    "aclCreateBoolArray", "aclDestroyBoolArray", "aclSetAclOpExecutorRepeatable",
    "aclDestroyAclOpExecutor", "aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclnnInit",
    "aclnnFinalize", "aclCreateTensorList", "aclCreateScalarList", "aclDestroyTensorList",
    "aclDestroyScalarList", "aclGetViewShape", "aclGetViewStrides", "aclGetStorageShape",
    "aclGetViewOffset", "aclGetFormat", "aclGetDataType", "aclGetIntArraySize",
    "aclGetFloatArraySize", "aclGetBoolArraySize", "aclGetTensorListSize", "aclGetScalarListSize",
}  # fmt: skip
MATH = {"aclnnAddGetWorkspaceSize", "aclnnAdd"}
TRANSFORMER = {
    "aclnnMhcPreSinkhornGetWorkspaceSize", "aclnnMhcPreSinkhorn",
    "aclnnMhcPreSinkhornBackwardGetWorkspaceSize", "aclnnMhcPreSinkhornBackward",
}  # fmt: skip
OPAPI = MATH | TRANSFORMER
PLACEMENT = {
    "libascendcl.so": RUNTIME,
    "libnnopbase.so": NNOPBASE,
    "libopapi_math.so": MATH,
    "libopapi_transformer.so": TRANSFORMER,
}
OP_LIBS = ("libopapi.so", "libopapi_math.so", "libopapi_nn.so", "libopapi_transformer.so")


@pytest.fixture()
def tiny_src(tmp_path: Path) -> Path:
    """A minimal source set (one file per library): exercises the build and cache logic in a
    fraction of the time of the real sources."""
    src = tmp_path / "tiny"
    (src / "include").mkdir(parents=True)
    shutil.copy2(_build.SRC_DIR / "include" / _build.PUBLIC_HEADER, src / "include")
    for folder, prefix in (("runtime", "rt"), ("nnopbase", "nb"), ("opapi/math", "op")):
        (src / folder).mkdir(parents=True)
        (src / folder / f"{prefix}_tiny.c").write_text(f"int {prefix}_tiny(void) {{ return 1; }}\n")
    return src


@pytest.fixture()
def src_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "src"
    shutil.copytree(_build.SRC_DIR, dst)
    return dst


def test_root_layout():
    root = sim.root()
    assert sim.lib_dir() == root / "lib64"
    for name in (*PLACEMENT, *OP_LIBS):
        assert (root / "lib64" / name).is_file()
    arch = root / f"{platform.machine()}-linux" / "lib64"
    assert arch.is_symlink() and arch.resolve() == (root / "lib64").resolve()
    assert (arch / "libopapi.so").is_file()
    assert "aclrtMalloc" in (root / "include" / "acl" / "acl_rt.h").read_text()
    assert "aclsimLiveObjects" in (root / "include" / "aclsim.h").read_text()
    assert "aclrtMalloc" not in (root / "include" / "aclsim.h").read_text()  # extras only
    assert (root / "include" / "aclnnop" / "aclnn_mhc_pre_sinkhorn.h").is_file()
    assert not list(root.rglob("*_private.h")) and not (root / "include" / "internal").exists()
    info = json.loads((root / "aclsim.json").read_text())
    assert info["simulator"] is True and info["key"] == root.name
    assert "aclnn-stress" in info["name"]
    assert f"key={root.name}" in (root / "version.info").read_text()
    assert root.parent == _build.cache_dir()


def test_second_build_uses_the_cache(monkeypatch):
    root = sim.build()

    def no_compile(*args, **kwargs):
        raise AssertionError("recompiled although the cache had a build")

    monkeypatch.setattr(_build, "_compile_into", no_compile)
    assert sim.build() == root
    assert sim.root() == root


def test_force_rebuilds(tiny_src, tmp_path, monkeypatch):
    monkeypatch.setenv("ACLSIM_CACHE_DIR", str(tmp_path / "cache"))
    root = _build._build(False, tiny_src)
    assert root.parent == tmp_path / "cache" and root.name == _build.build_key(tiny_src)
    lib = root / "lib64" / "libascendcl.so"
    old_inode = lib.stat().st_ino
    assert _build._build(False, tiny_src) == root and lib.stat().st_ino == old_inode  # cached
    assert _build._build(True, tiny_src) == root
    assert lib.stat().st_ino != old_inode  # rebuilt
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [root.name]  # no temp leftovers


def test_key_is_stable_and_tracks_sources(src_copy):
    k1 = _build.build_key(src_copy)
    assert len(k1) == 16 and int(k1, 16) >= 0
    assert _build.build_key(src_copy) == k1
    assert _build.build_key() == sim.root().name  # the package sources give the cached key
    add = src_copy / "opapi/math/op_add.c"
    add.write_text(add.read_text() + "\n/* changed */\n")
    k2 = _build.build_key(src_copy)
    assert k2 != k1
    (src_copy / "opapi/nn/op_extra.c").write_text("/* a new operator file */\n")
    assert _build.build_key(src_copy) not in (k1, k2)


def test_key_tracks_compiler_and_flags(monkeypatch):
    k = _build.build_key()
    assert _build.build_key(cc=["cc", "-g0"]) != k
    monkeypatch.setattr(_build, "CFLAGS", (*_build.CFLAGS, "-DX=1"))
    assert _build.build_key() != k


def test_cache_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("ACLSIM_CACHE_DIR", str(tmp_path / "a"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert _build.cache_dir() == tmp_path / "a"
    monkeypatch.delenv("ACLSIM_CACHE_DIR")
    assert _build.cache_dir() == tmp_path / "x" / "aclnn-stress" / "sim"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert _build.cache_dir() == tmp_path / "h" / ".cache" / "aclnn-stress" / "sim"


def test_missing_compiler(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/bin/cc")
    with pytest.raises(sim.SimBuildError) as info:
        sim.build()
    msg = str(info.value)
    assert "no C compiler" in msg and "set CC" in msg and "\n" not in msg


def test_compile_error_carries_stderr(tiny_src, tmp_path, monkeypatch):
    monkeypatch.setenv("ACLSIM_CACHE_DIR", str(tmp_path / "cache"))
    broken = tiny_src / "opapi/math/op_broken.c"
    broken.write_text("int broken(void) { return undeclared_name; }\n")
    with pytest.raises(sim.SimBuildError) as info:
        _build._build(False, tiny_src)
    err = info.value
    assert "op_broken.c" in str(err) and "\n" not in str(err)
    assert "undeclared_name" in err.stderr
    assert list((tmp_path / "cache").iterdir()) == []  # the temp dir was removed


def test_source_without_library_prefix_is_refused(tiny_src, tmp_path, monkeypatch):
    monkeypatch.setenv("ACLSIM_CACHE_DIR", str(tmp_path / "cache"))
    (tiny_src / "misc.c").write_text("int x;\n")
    with pytest.raises(sim.SimBuildError, match=r"misc\.c matches no library: move it to runtime/"):
        _build._build(False, tiny_src)


def test_unwritable_cache(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("ACLSIM_CACHE_DIR", str(blocker / "cache"))
    with pytest.raises(sim.SimBuildError, match="ACLSIM_CACHE_DIR"):
        sim.build()


def test_concurrent_processes_share_one_build(tiny_src, tmp_path):
    env = {**os.environ, "ACLSIM_CACHE_DIR": str(tmp_path / "cache")}
    code = (
        "import sys; from pathlib import Path; from stress.sim import _build\n"
        "print(_build._build(False, Path(sys.argv[1])))\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tiny_src)], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    roots = {p.communicate(timeout=120)[0].strip() for p in procs}
    assert procs and all(p.returncode == 0 for p in procs)
    assert len(roots) == 1
    (root,) = roots
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [Path(root).name]
    assert (Path(root) / "lib64" / "libopapi.so").is_file()


def _nm(path: Path, *flags: str) -> list[list[str]]:
    out = subprocess.run(
        ["nm", *flags, str(path)], capture_output=True, text=True, check=True
    ).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def _exported(name: str) -> set[str]:
    return {f[-1] for f in _nm(sim.lib_dir() / name, "-D", "--defined-only")}


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils nm")
def test_symbol_placement():
    exported = {name: _exported(name) for name in (*PLACEMENT, *OP_LIBS)}
    for name, expected in PLACEMENT.items():
        assert expected <= exported[name], (name, expected - exported[name])
        for other in PLACEMENT.keys() - {name}:
            assert not expected & exported[other], (other, expected & exported[other])
    # libopapi.so (the 8.x single library) exports every operator of every domain library.
    assert OPAPI <= exported["libopapi.so"]
    domains = set().union(*(exported[n] for n in OP_LIBS if n != "libopapi.so"))
    assert {s for s in exported["libopapi.so"] if s.startswith("aclnn")} == {
        s for s in domains if s.startswith("aclnn")
    }
    # Operator libraries export aclnn* names only (new op files only add aclnn* names there).
    for name in OP_LIBS:
        public_op = {s for s in exported[name] if not s.startswith(("aclsim_", "_"))}
        assert public_op and all(s.startswith("aclnn") for s in public_op), (name, public_op)
        assert not {s for s in exported[name] if s.startswith("aclsim_")}, name
    for name in ("libascendcl.so", "libnnopbase.so"):
        ops = {s for s in exported[name] if s.startswith("aclnn")} - {"aclnnInit", "aclnnFinalize"}
        assert not ops, (name, ops)
    assert {
        s for s in exported["libascendcl.so"] if s.startswith("acl") and not s.startswith("aclsim_")
    } == RUNTIME
    assert {
        s for s in exported["libnnopbase.so"] if s.startswith("acl") and not s.startswith("aclsim_")
    } == NNOPBASE
    # The internal API is exported with the aclsim_ prefix only, from the library that owns it.
    assert "aclsim_set_error" in exported["libascendcl.so"]
    assert "aclsim_executor_run" in exported["libnnopbase.so"]
    # Nothing leaks out of the hidden-visibility build (no helpers without a prefix).
    for name, syms in exported.items():
        stray = {s for s in syms if not s.startswith(("acl", "_"))}
        assert not stray, (name, stray)


#: Writable statics allowed in operator objects: pure caches whose value follows from the machine
#: or the number format alone, so the copies in libopapi.so and libopapi_<domain>.so agree.
#: Anything else must live in libnnopbase (aclsim_shared_state / aclsim_thread_state).
_PURE_CACHES = {"g_f16_table", "g_f16_once", "cached"}  # op_mhc_common.c
#: Written by the toolchain (crt files, libgcc's CPU detection for target_clones).
_TOOLCHAIN = {"completed", "__dso_handle", "__TMC_END__", "__cpu_model", "__cpu_features2"}


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs binutils objdump")
def test_operator_objects_keep_no_per_process_state():
    """Operator objects are linked into two libraries (their domain's and libopapi.so); a
    process that loads both must still have one copy of every piece of simulator state, so the
    operator libraries may hold no writable data of their own."""
    for name in OP_LIBS:
        table = subprocess.run(
            ["objdump", "-t", str(sim.lib_dir() / name)], capture_output=True, text=True, check=True
        ).stdout
        writable = set()
        for line in table.splitlines():
            fields = line.split()
            if "O" in fields and any(sec in fields for sec in (".data", ".bss", ".tdata", ".tbss")):
                writable.add(fields[-1].split(".")[0])
        assert not writable - _PURE_CACHES - _TOOLCHAIN, (name, writable)


def test_shared_state_is_one_per_process_across_libraries():
    """aclnnAdd from libopapi_math.so and from libopapi.so in one process: the add-race staging
    buffer (shared state in libnnopbase) is the same, so the fault model sees one device."""
    code = (
        "import ctypes, os, sys\n"
        "lib = sys.argv[1]\n"
        "nb = ctypes.CDLL(os.path.join(lib, 'libnnopbase.so'), mode=ctypes.RTLD_GLOBAL)\n"
        "f = nb.aclsim_shared_state\n"
        "f.restype = ctypes.c_void_p\n"
        "f.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p]\n"
        "a = f(b'test.block', 64, None)\n"
        "for n in ('libopapi_math.so', 'libopapi.so'):\n"
        "    ctypes.CDLL(os.path.join(lib, n), mode=ctypes.RTLD_GLOBAL)\n"
        "nb2 = ctypes.CDLL(os.path.join(lib, 'libnnopbase.so'))\n"
        "g = nb2.aclsim_shared_state\n"
        "g.restype = ctypes.c_void_p\n"
        "g.argtypes = f.argtypes\n"
        "print(a == g(b'test.block', 64, None), bool(a), g(b'test.block', 32, None))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(sim.lib_dir())], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "None"]  # same block; a size mismatch -> NULL


def test_stale_temp_dirs_are_swept(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    old, fresh = cache / ".deadbeef.tmp-old", cache / ".deadbeef.tmp-new"
    old.mkdir(parents=True)
    fresh.mkdir()
    os.utime(old, (0, 0))
    _build._sweep_stale(cache)
    assert not old.exists() and fresh.exists()  # a build in progress elsewhere is left alone


def test_missing_system_header_suggests_libc_headers(tiny_src, tmp_path, monkeypatch):
    monkeypatch.setenv("ACLSIM_CACHE_DIR", str(tmp_path / "cache"))
    (tiny_src / "runtime/rt_tiny.c").write_text("#include <no_such_header_aclsim.h>\n")
    with pytest.raises(sim.SimBuildError, match="install the C library headers"):
        _build._build(False, tiny_src)
