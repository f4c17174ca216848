"""Build the simulator's three shared libraries into a cache laid out like a CANN install.

Sources live in ``stress/sim/src``; the file-name prefix picks the library:

* ``rt_*.c``  -> ``libascendcl.so``  (runtime)
* ``nb_*.c``  -> ``libnnopbase.so``  (tensors, executors; links libascendcl)
* ``op_*.c``  -> ``libopapi.so``     (operators; links libnnopbase and libascendcl)

so adding an operator is adding one ``op_<name>.c`` file.  Headers (``*.h``) are shared; those
named ``aclnn_*.h`` are also installed into ``<root>/include/aclnnop/`` (the operator's public
header, as in CANN).

The build goes to ``<cache>/<key>`` where ``key`` hashes the sources, the compiler command, the
flags and ``cc --version``; it is written to a temporary directory next to it and renamed into
place atomically, so concurrent builders (pytest-xdist workers) never see a half-built root.
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
from pathlib import Path

SRC_DIR = Path(__file__).resolve().parent / "src"

#: Bumped when the layout of a built root changes (part of the cache key).
LAYOUT_VERSION = "2"

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


def cflags() -> tuple[str, ...]:
    """The compile flags: CFLAGS, plus -Werror when ACLSIM_WERROR=1 (the test suite and CI set
    it; users' builds do not, so a newer compiler's new warnings cannot break them)."""
    return (*CFLAGS, "-Werror") if os.environ.get("ACLSIM_WERROR") == "1" else CFLAGS


#: library stem -> (source prefix, libraries it links against)
LIBRARIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ascendcl": ("rt_", ()),
    "nnopbase": ("nb_", ("ascendcl",)),
    "opapi": ("op_", ("nnopbase", "ascendcl")),
}

PUBLIC_HEADER = "aclsim.h"
#: Operator headers ``aclnn_<op>.h`` in ``src/``, installed into ``<root>/include/aclnnop/``.
OP_HEADER_PREFIX = "aclnn_"
_STDERR_TAIL = 4000


class SimBuildError(RuntimeError):
    """The simulator could not be built.  ``str()`` is one line naming what failed and the fix;
    ``stderr`` holds the tail of the compiler's output (may be empty)."""

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.stderr = stderr[-_STDERR_TAIL:]


_lock = threading.Lock()
_version_cache: dict[tuple[str, ...], str] = {}


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
    """All ``*.c`` and ``*.h`` files of the simulator, sorted by name."""
    src = SRC_DIR if src_dir is None else src_dir
    return sorted([*src.glob("*.c"), *src.glob("*.h")], key=lambda p: p.name)


def build_key(src_dir: Path | None = None, cc: list[str] | None = None) -> str:
    """First 16 hex digits of the sha256 over sources, compiler, flags and ``cc --version``."""
    cc = _compiler() if cc is None else cc
    h = hashlib.sha256()
    h.update(f"layout={LAYOUT_VERSION}\0".encode())
    for path in source_files(src_dir):
        h.update(path.name.encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    h.update(("\0".join(cc) + "\0").encode())
    h.update(("\0".join(cflags()) + "\0").encode())
    h.update(repr(sorted(LIBRARIES.items())).encode())
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


def _compile_into(out: Path, key: str, cc: list[str], src_dir: Path) -> None:
    """Compile and link the three libraries into ``out/lib64`` and lay out the root."""
    lib64 = out / "lib64"
    objdir = out / "obj"
    lib64.mkdir(parents=True)
    objdir.mkdir()
    sources = [p for p in source_files(src_dir) if p.suffix == ".c"]
    by_lib: dict[str, list[Path]] = {name: [] for name in LIBRARIES}
    for path in sources:
        for name, (prefix, _deps) in LIBRARIES.items():
            if path.name.startswith(prefix):
                by_lib[name].append(path)
                break
        else:
            prefixes = ", ".join(f"{p}*.c" for p, _ in LIBRARIES.values())
            raise SimBuildError(
                f"simulator source {path.name} matches no library: rename it to one of {prefixes}"
            )
    defines = [f'-DACLSIM_BUILD_KEY="{key}"', f"-I{src_dir}"]

    def compile_one(path: Path) -> Path:
        obj = objdir / (path.stem + ".o")
        _run([*cc, *cflags(), *defines, "-c", str(path), "-o", str(obj)], f"compiling {path.name}")
        return obj

    workers = max(1, min(len(sources), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        objects = dict(zip(sources, pool.map(compile_one, sources), strict=True))

    for name, (_prefix, deps) in LIBRARIES.items():  # dict order: dependencies first
        soname = f"lib{name}.so"
        argv = [
            *cc,
            "-shared",
            "-pthread",
            f"-Wl,-soname,{soname}",
            "-Wl,-z,defs",  # every symbol resolved: catches a missing internal export
            "-Wl,-rpath,$ORIGIN",
            "-o",
            str(lib64 / soname),
            *(str(objects[p]) for p in by_lib[name]),
            f"-L{lib64}",
            *(f"-l{d}" for d in deps),
            "-lm",
        ]
        _run(argv, f"linking {soname}")
    shutil.rmtree(objdir)

    arch_dir = out / f"{platform.machine()}-linux"
    arch_dir.mkdir()
    (arch_dir / "lib64").symlink_to("../lib64", target_is_directory=True)
    include = out / "include"
    include.mkdir()
    shutil.copy2(src_dir / PUBLIC_HEADER, include / PUBLIC_HEADER)
    # Operator headers (``aclnn_<op>.h``) go where CANN has them: include/aclnnop/.
    aclnnop = include / "aclnnop"
    aclnnop.mkdir()
    for header in sorted(src_dir.glob(f"{OP_HEADER_PREFIX}*.h")):
        shutil.copy2(header, aclnnop / header.name)
    info = {
        "name": "aclnn-stress CANN simulator",
        "simulator": True,
        "key": key,
        "compiler": shlex.join(cc),
        "cflags": list(cflags()),
        "libraries": {f"lib{n}.so": sorted(p.name for p in by_lib[n]) for n in LIBRARIES},
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
    target = cache / key
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
    if the cache has no build for the current sources."""
    return build(force=False)


def lib_dir() -> Path:
    """``root() / "lib64"``: where libascendcl.so, libnnopbase.so and libopapi.so are."""
    return root() / "lib64"
