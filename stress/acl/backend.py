"""Where the CANN libraries are: a real installation or the bundled simulator.

``STRESS_BACKEND`` selects: ``sim`` (always the simulator), ``cann`` (a real installation; error if
none), or ``auto`` (default: a real installation when one is found *and* an NPU device node
``/dev/davinci<N>`` exists, else the simulator). Nothing is loaded here, so choosing a backend never
puts two different ``libascendcl.so`` into one process.
"""

from __future__ import annotations

import glob
import hashlib
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path

from stress.acl.errors import BackendError
from stress.backend_option import BACKEND_KINDS

__all__ = ["BACKEND_KINDS", "Backend", "cann_roots", "custom_op_dirs", "discover"]

_ROOT_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")
_DEFAULT_ROOTS = (
    "/usr/local/Ascend/ascend-toolkit/latest",
    "/usr/local/Ascend/cann",
    "~/Ascend/ascend-toolkit/latest",
)
# Built-in operator libraries, in search order for aclnn symbols: current CANN releases split the
# operators by domain, 8.x and older ship them all in libopapi.so (the simulator ships both, built
# from the same objects). Custom vendor packages (opp/vendors/*/op_api/lib/libcust_opapi.so) are
# searched before these because CANN lets them override built-in operators (docs/simulator.md).
_OP_LIBRARY_NAMES = (
    "libopapi_math.so",
    "libopapi_nn.so",
    "libopapi_transformer.so",
    "libopapi.so",
)


def _lib_dirs(root: Path) -> list[Path]:
    arch = f"{platform.machine()}-linux"
    return [d for d in (root / "lib64", root / arch / "lib64") if d.is_dir()]


def cann_roots() -> list[Path]:
    """Candidate CANN roots, most specific first (environment, then default install paths)."""
    seen: list[Path] = []
    for var in _ROOT_VARS:
        value = os.environ.get(var)
        if value:
            seen.append(Path(value).expanduser())
    seen.extend(Path(p).expanduser() for p in _DEFAULT_ROOTS)
    unique: list[Path] = []
    for p in seen:
        if p not in unique:
            unique.append(p)
    return unique


def _find_library(dirs: list[Path], name: str) -> Path | None:
    for d in dirs:
        candidate = d / name
        if candidate.exists():
            return candidate
    return None


def _npu_present() -> bool:
    return bool(glob.glob("/dev/davinci[0-9]*"))


@dataclass(frozen=True)
class Backend:
    """A set of CANN libraries to load: paths only, nothing loaded yet."""

    kind: str  # "sim" or "cann"
    root: Path
    ascendcl: Path
    nnopbase: Path
    op_libraries: tuple[Path, ...]
    include_dirs: tuple[Path, ...] = field(default=())

    @property
    def libraries(self) -> dict[str, Path]:
        """Every library file, keyed by its path relative to the root, in load order."""
        paths = (self.ascendcl, self.nnopbase, *self.op_libraries)
        return {
            str(p.relative_to(self.root)) if p.is_relative_to(self.root) else str(p): p
            for p in paths
        }

    def library_hashes(self) -> dict[str, str]:
        """sha256 (first 16 hex) of each library file, for baseline fingerprints."""
        out = {}
        for name, path in self.libraries.items():
            h = hashlib.sha256()
            with open(path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            out[name] = h.hexdigest()[:16]
        return out


def _vendor_order(vendors: Path) -> list[Path]:
    """Vendor folders under ``opp/vendors`` in CANN's order: those named by ``config.ini``
    (``load_priority=a,b`` or ``priority=``, first = highest), then the others by name."""
    if not vendors.is_dir():
        return []
    named: list[str] = []
    ini = vendors / "config.ini"
    if ini.is_file():
        for line in ini.read_text(errors="replace").splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip() in ("load_priority", "priority"):
                named = [v.strip() for v in value.split(",") if v.strip()]
    found = sorted(d for d in vendors.iterdir() if d.is_dir())
    # config.ini is data: it may only name a folder of vendors/ (no '/', no '..')
    first = [vendors / n for n in named if _plain_name(n) and (vendors / n).is_dir()]
    return first + [d for d in found if d not in first]


def _plain_name(name: str) -> bool:
    return name not in ("", ".", "..") and "/" not in name and "\0" not in name


def _inside(root: Path, path: Path) -> Path:
    """``path`` itself, after checking that it and every link it follows stay under ``root``
    (both resolved): a shared library is only ever loaded from the configured root."""
    real_root, real = root.resolve(), path.resolve()
    if ".." in path.relative_to(root).parts or not real.is_relative_to(real_root):
        raise BackendError(
            f"{path} resolves to {real}, outside the CANN root {real_root}: libraries load only "
            "from the configured root; fix the link or point ASCEND_HOME_PATH at the real root"
        )
    return path


def custom_op_dirs(root: Path) -> list[Path]:
    """The ``op_api`` folders of custom operator packages, highest priority first.

    ``ASCEND_CUSTOM_OPP_PATH`` (colon-separated) comes first: entries that are a dynamic
    library folder (``<path>/op_api/lib``) before package entries (``<path>/vendors/<vendor>``),
    each in the order given, as the CANN environment-variable reference documents; then the
    default packages of ``<root>/opp/vendors`` in ``config.ini`` order (docs/simulator.md).
    """
    libs: list[Path] = []
    packages: list[Path] = []
    for entry in filter(None, os.environ.get("ASCEND_CUSTOM_OPP_PATH", "").split(":")):
        p = Path(entry).expanduser()
        if (p / "libcust_opapi.so").exists() and p.name == "lib":
            libs.append(p.parent)
        elif (p / "op_api").is_dir():
            packages.append(p / "op_api")
    packages.extend(v / "op_api" for v in _vendor_order(root / "opp" / "vendors"))
    return list(dict.fromkeys(libs + packages))


def _missing(root: Path) -> str:
    """Which file of a CANN root is missing, in words (empty when both are there)."""
    dirs = _lib_dirs(root)
    if not root.is_dir():
        return f"{root} is not a directory"
    if not dirs:
        return f"{root} has no lib64 directory (nor {platform.machine()}-linux/lib64)"
    for name in ("libascendcl.so", "libnnopbase.so"):
        if _find_library(dirs, name) is None:
            return f"{name} is missing (looked in {', '.join(map(str, dirs))})"
    return ""


def _from_root(kind: str, root: Path) -> Backend | None:
    dirs = _lib_dirs(root)
    ascendcl = _find_library(dirs, "libascendcl.so")
    nnopbase = _find_library(dirs, "libnnopbase.so")
    if ascendcl is None or nnopbase is None:
        return None
    _inside(root, ascendcl)
    _inside(root, nnopbase)
    custom = custom_op_dirs(root)
    ops = [lib for d in custom if (lib := d / "lib" / "libcust_opapi.so").exists()]
    ops.extend(_inside(root, p) for name in _OP_LIBRARY_NAMES if (p := _find_library(dirs, name)))
    includes = [root / "include" / "aclnnop", root / "include"]
    includes.extend(d / "include" for d in custom)
    includes.extend(sorted(root.glob("opp/built-in/op_impl/ai_core/tbe/op_api/include/aclnnop")))
    return Backend(
        kind=kind,
        root=root,
        ascendcl=ascendcl,
        nnopbase=nnopbase,
        op_libraries=tuple(dict.fromkeys(ops)),
        include_dirs=tuple(d for d in includes if d.is_dir()),
    )


def _simulator() -> Backend:
    from stress import sim

    try:
        root = sim.root()
    except sim.SimBuildError as exc:
        raise BackendError(str(exc)) from exc
    backend = _from_root("sim", root)
    if backend is None:
        raise BackendError(
            f"simulator build at {root} is incomplete: rebuild it with `aclnn-stress sim build`"
        )
    return backend


def _explain_configured_root() -> None:
    """A root the environment names but that is not a CANN install: say which file is missing."""
    for var in _ROOT_VARS:
        value = os.environ.get(var)
        if value:
            why = _missing(Path(value).expanduser())
            if why:
                raise BackendError(
                    f"{var}={value} is not a usable CANN root: {why}; point {var} at the "
                    "toolkit root (the folder holding lib64/), or use STRESS_BACKEND=sim"
                )


def discover(kind: str | None = None) -> Backend:
    """Choose the backend: ``kind`` or ``$STRESS_BACKEND`` or ``auto``."""
    kind = (kind or os.environ.get("STRESS_BACKEND") or "auto").strip().lower()
    if kind not in BACKEND_KINDS:
        raise BackendError(
            f"STRESS_BACKEND={kind!r} is not a backend: use one of {', '.join(BACKEND_KINDS)}"
        )
    if kind == "sim":
        return _simulator()
    found = next((b for r in cann_roots() if (b := _from_root("cann", r))), None)
    if kind == "cann":
        if found is None:
            _explain_configured_root()
            tried = ", ".join(str(r) for r in cann_roots())
            raise BackendError(
                f"no CANN installation found (looked for lib64/libascendcl.so under {tried}): "
                "set ASCEND_HOME_PATH to the toolkit root, or use STRESS_BACKEND=sim"
            )
        return found
    if found is not None and _npu_present():
        return found
    return _simulator()
