"""Where a header named in a declaration or on the command line is (no C reader needed)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from stress.errors import ConfigError

__all__ = ["find_header"]


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
