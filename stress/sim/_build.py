"""Build the simulator's shared libraries into a cache laid out like a CANN install.

Sources live in ``stress/sim/src``; the folder picks the library, as in CANN:

* ``runtime/*.c``            -> ``lib64/libascendcl.so``  (runtime)
* ``nnopbase/*.c``           -> ``lib64/libnnopbase.so``  (tensors, executors; links libascendcl)
* ``opapi/<domain>/*.c``     -> ``lib64/libopapi_<domain>.so`` (math, nn, transformer, ...)
* every ``opapi/**/*.c``     -> ``lib64/libopapi.so`` as well (the 8.x single operator library)

The operator libraries link libnnopbase and libascendcl.  ``libopapi.so`` and the domain libraries
are compiled from the same objects, so one process may load both; that is safe because operator
objects keep no mutable state of their own: whatever must be one per process (fault-model locks,
scratch heaps) lives in libnnopbase behind ``aclsim_shared_state`` (tests/test_sim_build.py checks
the objects for writable data).  Adding an operator is dropping ``opapi/<domain>/op_<name>.c`` and
its header ``include/aclnnop/aclnn_<name>.h``; nothing else changes.

``include/`` is the public header tree, installed as ``<root>/include`` (``aclsim.h``,
``aclnnop/...``); ``internal/`` holds the headers shared between the libraries, never installed.

The build goes to ``<cache>/<key>`` (``<key>-asan`` / ``<key>-tsan`` for the sanitizer variants
selected by ``ACLSIM_VARIANT``, stress/sim/variant.py) where ``key`` hashes the sources, the
compiler command, the flags and ``cc --version``; it is written to a temporary directory next to
it and renamed into place atomically, so concurrent builders (pytest-xdist workers) never see a
half-built root.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from stress.errors import ConfigError
from stress.sim import variant

SRC_DIR = Path(__file__).resolve().parent / "src"

#: Bumped when the layout of a built root changes (part of the cache key).
LAYOUT_VERSION = "3"

CFLAGS = (
    "-O3",
    "-fPIC",
    "-pthread",
    "-std=gnu11",
    "-fvisibility=hidden",
    "-Wall",
    "-Wextra",
    # Keep a + b * c as two roundings on every architecture (aarch64 would fuse it into an FMA),
    # so kernels give the same bits everywhere.
    "-ffp-contract=off",
)


def _variant() -> variant.Variant:
    try:
        return variant.get()
    except ConfigError as exc:
        raise SimBuildError(str(exc)) from exc


def cflags() -> tuple[str, ...]:
    """The compile flags: CFLAGS, then the ACLSIM_VARIANT's (stress/sim/variant.py: sanitizer
    instrumentation), plus -Werror when ACLSIM_WERROR=1 (the test suite and CI set it; users'
    builds do not, so a newer compiler's new warnings cannot break them)."""
    flags = (*CFLAGS, *_variant().cflags)
    return (*flags, "-Werror") if os.environ.get("ACLSIM_WERROR") == "1" else flags


#: Folders of ``src/`` that are compiled, and the library each one becomes.
RUNTIME_DIR, NNOPBASE_DIR, OPAPI_DIR = "runtime", "nnopbase", "opapi"
#: Operator domains that always get a library (an empty one until it has operators), as the
#: current CANN releases ship them; any other folder under ``opapi/`` adds a domain.
OP_DOMAINS = ("math", "nn", "transformer")
#: The public header tree (installed as ``<root>/include``) and the internal headers.
INCLUDE_DIR, INTERNAL_DIR = "include", "internal"
PUBLIC_HEADER = "aclsim.h"
#: Operator headers ``aclnn_<op>.h`` live in ``include/aclnnop/`` (as in CANN).
OP_HEADER_DIR = "aclnnop"
OP_HEADER_PREFIX = "aclnn_"
#: ``libopapi.so``: every operator (the 8.x layout), next to the per-domain libraries.
OP_LIBRARY = "opapi"
_STDERR_TAIL = 4000


class SimBuildError(RuntimeError):
    """The simulator could not be built.  ``str()`` is one line naming what failed and the fix;
    ``stderr`` holds the tail of the compiler's output (may be empty)."""

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.stderr = stderr[-_STDERR_TAIL:]


_lock = threading.Lock()
_version_cache: dict[tuple[str, ...], str] = {}
_frozen_keys: dict[tuple[Path, tuple[str, ...]], str] = {}  # see freeze_build_key


def _compiler() -> list[str]:
    cc = os.environ.get("CC", "").strip() or "cc"
    argv = shlex.split(cc)
    if not argv or shutil.which(argv[0]) is None:
        raise SimBuildError(f"no C compiler ({cc!r} not found): set CC or install gcc")
    return argv


def _compiler_version(cc: list[str]) -> str:
    key = tuple(cc)
    if key not in _version_cache:
        try:
            proc = subprocess.run(
                [*cc, "--version"], capture_output=True, text=True, timeout=60, check=False
            )
        except OSError as exc:
            raise SimBuildError(
                f"no C compiler ({shlex.join(cc)}: {exc}): set CC or install gcc"
            ) from exc
        if proc.returncode != 0:
            raise SimBuildError(
                f"C compiler {shlex.join(cc)!r} failed on --version: set CC to a working compiler",
                proc.stderr,
            )
        _version_cache[key] = proc.stdout
    return _version_cache[key]


def source_files(src_dir: Path | None = None) -> list[Path]:
    """All ``*.c`` and ``*.h`` files of the simulator (any folder), sorted by relative path."""
    src = SRC_DIR if src_dir is None else src_dir
    files = [p for p in src.rglob("*") if p.suffix in (".c", ".h") and p.is_file()]
    return sorted(files, key=lambda p: p.relative_to(src).as_posix())


@dataclass(frozen=True)
class Library:
    """One shared library of the build: its stem (``lib<stem>.so``), sources, and the stems of
    the libraries it links against."""

    stem: str
    sources: tuple[Path, ...]
    deps: tuple[str, ...]

    @property
    def soname(self) -> str:
        return f"lib{self.stem}.so"


def _op_domains(src: Path) -> list[str]:
    found = sorted(d.name for d in (src / OPAPI_DIR).glob("*") if d.is_dir())
    return list(dict.fromkeys([*OP_DOMAINS, *found]))


def library_plan(src_dir: Path | None = None) -> list[Library]:
    """The libraries to build from ``src_dir``, dependencies first.  Raises SimBuildError for a
    C file outside ``runtime/``, ``nnopbase/`` and ``opapi/<domain>/``."""
    src = SRC_DIR if src_dir is None else src_dir
    sources = [p for p in source_files(src) if p.suffix == ".c"]

    def under(folder: str) -> tuple[Path, ...]:
        return tuple(p for p in sources if p.parent == src / folder)

    domains = {d: under(f"{OPAPI_DIR}/{d}") for d in _op_domains(src)}
    placed = {*under(RUNTIME_DIR), *under(NNOPBASE_DIR), *(p for v in domains.values() for p in v)}
    for path in sources:
        if path not in placed:
            raise SimBuildError(
                f"simulator source {path.relative_to(src).as_posix()} matches no library: move it "
                f"to {RUNTIME_DIR}/, {NNOPBASE_DIR}/ or {OPAPI_DIR}/<domain>/"
            )
    op_deps = ("nnopbase", "ascendcl")
    all_ops = tuple(p for v in domains.values() for p in v)
    return [
        Library("ascendcl", under(RUNTIME_DIR), ()),
        Library("nnopbase", under(NNOPBASE_DIR), ("ascendcl",)),
        *(Library(f"opapi_{d}", files, op_deps) for d, files in domains.items()),
        Library(OP_LIBRARY, all_ops, op_deps),
    ]


def freeze_build_key() -> None:
    """Compute the default build key now and keep it for this process and every process it
    forks (the fork server: its job children skip hashing the sources, ~0.07 s each; the
    sources do not change during one run). Never called in an ordinary process."""
    cc = _compiler()
    _frozen_keys[(SRC_DIR, tuple(cc))] = build_key(SRC_DIR, cc)


def build_key(src_dir: Path | None = None, cc: list[str] | None = None) -> str:
    """First 16 hex digits of the sha256 over sources, compiler, flags and ``cc --version``."""
    src = SRC_DIR if src_dir is None else src_dir
    cc = _compiler() if cc is None else cc
    frozen = _frozen_keys.get((src, tuple(cc)))
    if frozen is not None:
        return frozen
    h = hashlib.sha256()
    h.update(f"layout={LAYOUT_VERSION}\0".encode())
    for path in source_files(src):
        h.update(path.relative_to(src).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    h.update(("\0".join(cc) + "\0").encode())
    h.update(("\0".join(cflags()) + "\0").encode())
    h.update(_compiler_version(cc).encode())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    """``$ACLSIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/aclnn-stress/sim``, else
    ``~/.cache/aclnn-stress/sim``."""
    explicit = os.environ.get("ACLSIM_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "aclnn-stress" / "sim"


def _run(argv: list[str], what: str) -> None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    except OSError as exc:
        raise SimBuildError(
            f"{what}: cannot run the C compiler ({exc}): set CC or install gcc"
        ) from exc
    if proc.returncode != 0:
        first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), "").strip()
        detail = f": {first}" if first else ""
        if "No such file or directory" in first and ".h" in first:
            fix = "install the C library headers (libc6-dev / glibc-devel) or set CC"
        else:
            fix = "see .stderr, fix the source or set CC"
        raise SimBuildError(f"{what} failed (exit {proc.returncode}){detail}; {fix}", proc.stderr)


def _compile_all(src: Path, objdir: Path, key: str, cc: list[str]) -> dict[Path, Path]:
    """Compile every C file once (in parallel); source -> object."""
    sources = [p for p in source_files(src) if p.suffix == ".c"]
    defines = [
        f'-DACLSIM_BUILD_KEY="{key}"',
        f"-I{src / INCLUDE_DIR}",
        f"-I{src / INCLUDE_DIR / OP_HEADER_DIR}",
        f"-I{src / INTERNAL_DIR}",
    ]

    def compile_one(path: Path) -> Path:
        rel = path.relative_to(src).as_posix()
        obj = objdir / (rel.replace("/", "__")[:-2] + ".o")
        _run([*cc, *cflags(), *defines, "-c", str(path), "-o", str(obj)], f"compiling {rel}")
        return obj

    workers = max(1, min(len(sources), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(sources, pool.map(compile_one, sources), strict=True))


def _link(lib: Library, objects: dict[Path, Path], lib64: Path, cc: list[str]) -> None:
    argv = [
        *cc,
        "-shared",
        "-pthread",
        *_variant().ldflags,
        f"-Wl,-soname,{lib.soname}",
        "-Wl,-z,defs",  # every symbol resolved: catches a missing internal export
        "-Wl,-rpath,$ORIGIN",
        "-o",
        str(lib64 / lib.soname),
        *(str(objects[p]) for p in lib.sources),
        f"-L{lib64}",
        *(f"-l{d}" for d in lib.deps),
        "-lm",
    ]
    _run(argv, f"linking {lib.soname}")


def _install_tree(out: Path, src: Path) -> None:
    """``<arch>-linux/lib64`` link and the public headers (``src/include`` as ``include/``)."""
    arch_dir = out / f"{platform.machine()}-linux"
    arch_dir.mkdir()
    (arch_dir / "lib64").symlink_to("../lib64", target_is_directory=True)
    shutil.copytree(src / INCLUDE_DIR, out / "include")
    (out / "include" / OP_HEADER_DIR).mkdir(exist_ok=True)


def _compile_into(out: Path, key: str, cc: list[str], src_dir: Path) -> None:
    """Compile and link the libraries into ``out/lib64`` and lay out the root."""
    plan = library_plan(src_dir)
    lib64 = out / "lib64"
    objdir = out / "obj"
    lib64.mkdir(parents=True)
    objdir.mkdir()
    objects = _compile_all(src_dir, objdir, key, cc)
    for lib in plan:  # dependencies first
        _link(lib, objects, lib64, cc)
    shutil.rmtree(objdir)
    _install_tree(out, src_dir)
    info = {
        "name": "aclnn-stress CANN simulator",
        "simulator": True,
        "key": key,
        "compiler": shlex.join(cc),
        "cflags": list(cflags()),
        "variant": _variant().name,
        "libraries": {
            lib.soname: [p.relative_to(src_dir).as_posix() for p in lib.sources] for lib in plan
        },
    }
    (out / "aclsim.json").write_text(json.dumps(info, indent=2) + "\n")
    (out / "version.info").write_text(f"Version=9.2.0-aclsim\nsimulator=aclnn-stress\nkey={key}\n")


def _sweep_stale(cache: Path, max_age_s: float = 3600.0) -> None:
    """Remove temporary build directories left by killed builds (older than an hour, so a build
    running in another process right now is never touched)."""
    now = time.time()
    for entry in cache.glob(".*.tmp-*"):
        try:
            if now - entry.stat().st_mtime > max_age_s:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            pass


def _build(force: bool, src_dir: Path | None = None) -> Path:
    src = SRC_DIR if src_dir is None else src_dir
    cc = _compiler()
    key = build_key(src, cc)
    cache = cache_dir()
    target = cache / (key + _variant().suffix)  # the flags are in the key; the name says which
    if target.is_dir() and not force:
        return target
    try:
        cache.mkdir(parents=True, exist_ok=True)
        _sweep_stale(cache)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}.tmp-", dir=cache))
        tmp.chmod(0o755)
    except OSError as exc:
        raise SimBuildError(
            f"cannot write the simulator cache {cache} ({exc.strerror}): set ACLSIM_CACHE_DIR "
            "to a writable directory"
        ) from exc
    try:
        _compile_into(tmp, key, cc, src)
        if force and target.is_dir():
            # Move the old build aside first: processes that loaded it keep their mappings.
            trash = Path(tempfile.mkdtemp(prefix=f".{key}.old-", dir=cache))
            os.rename(target, trash / key)
            shutil.rmtree(trash, ignore_errors=True)
        try:
            os.rename(tmp, target)
        except OSError:
            if not target.is_dir():
                raise
            # Another process finished the same build first: use theirs.
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def build(force: bool = False) -> Path:
    """(Re)build the simulator for the current sources and compiler; return its root.

    Returns the cached root without compiling when one exists for the current key, unless
    ``force``.  Raises :class:`SimBuildError` on failure.
    """
    with _lock:
        return _build(force)


def root() -> Path:
    """The CANN-like root (``lib64/``, ``<arch>-linux/lib64``, ``include/``), building it first
    if the cache has no build for the current sources.  For a sanitizer variant, raises
    SimBuildError (one line, the fix) unless its runtime is preloaded: the libraries could not
    be loaded into this process otherwise."""
    var = _variant()
    if var.runtime and var.runtime.removesuffix(".so") not in os.environ.get("LD_PRELOAD", ""):
        raise SimBuildError(
            f"ACLSIM_VARIANT={var.name}: LD_PRELOAD lacks the {var.runtime} runtime this build "
            f'needs; run under: eval "$(python -m stress.sanitize.simenv {var.name})"'
        )
    return build(force=False)


def lib_dir() -> Path:
    """``root() / "lib64"``: libascendcl.so, libnnopbase.so, libopapi.so, libopapi_<domain>.so."""
    return root() / "lib64"
