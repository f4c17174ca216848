"""Where a header named in a declaration or on the command line is, and what a file holds (no
C reader needed: :mod:`stress.ops.header_cache` uses them before it knows it needs one)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from stress.errors import ConfigError

__all__ = ["file_digest", "find_header"]


def find_header(name: str | Path, include_dirs: Sequence[str | Path] = ()) -> Path:
    """The header ``name``: a path, or found in ``include_dirs``, ``$ASCEND_HOME_PATH/include``,
    the custom packages' ``$ASCEND_HOME_PATH/opp/vendors/*/op_api/include``, or the simulator's
    public headers (``stress/sim/src/include``, installed as ``<sim root>/include``)."""
    path = Path(name)
    if path.is_file():
        return path
    dirs = [Path(d) for d in include_dirs]
    if os.environ.get("ASCEND_HOME_PATH"):
        home = Path(os.environ["ASCEND_HOME_PATH"])
        dirs.append(home / "include")
        dirs += sorted(home.glob("opp/vendors/*/op_api/include"))  # custom operator packages
    dirs.append(Path(__file__).resolve().parent.parent / "sim" / "src" / "include")
    for d in dirs:
        for candidate in (d / path, d / "aclnnop" / path.name):
            if candidate.is_file():
                return candidate
    searched = ", ".join(str(d) for d in dirs)
    raise ConfigError(
        f"{name}: header not found (searched {searched}); give a path or add its folder with -I"
    )


def file_digest(path: str) -> str | None:
    """sha256 of the file at ``path``; None where it cannot be read (absent, a folder)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None
