"""Build the example custom operator aclnnMyScale into a CANN-style custom operator package and
check it through the framework's binding -- one command, from a fresh clone:

    python examples/custom_op/build.py                  # -> examples/custom_op/build/opp
    python examples/custom_op/build.py --install-path /tmp/opp

The package is laid out as CANN's installer lays one out (``<install>/vendors/<vendor>/op_api/
{include/aclnn_my_scale.h, lib/libcust_opapi.so}`` plus ``<install>/vendors/config.ini``);
afterwards

    export ASCEND_CUSTOM_OPP_PATH=<install>/vendors/my_vendor

makes the binding (and so ``aclnn-stress``) find aclnnMyScale next to the built-in operators.
The library is compiled against the simulator root's headers (``acl/``, ``aclnn/``,
``aclsim.h``) and linked to its libnnopbase / libascendcl.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENDOR = "my_vendor"


def build(install: Path, vendor: str = VENDOR) -> Path:
    """Compile and install the package; returns its vendor folder."""
    from stress import sim

    root = sim.root()
    package = install / "vendors" / vendor
    lib, include = package / "op_api" / "lib", package / "op_api" / "include"
    lib.mkdir(parents=True, exist_ok=True)
    include.mkdir(parents=True, exist_ok=True)
    cc = shlex.split(os.environ.get("CC", "") or "cc")
    argv = [
        *cc, "-shared", "-fPIC", "-O2", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
        f"-I{root / 'include'}", f"-I{HERE}", str(HERE / "op_my_scale.c"),
        f"-L{root / 'lib64'}", "-lnnopbase", "-lascendcl", f"-Wl,-rpath,{root / 'lib64'}",
        "-o", str(lib / "libcust_opapi.so"),
    ]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"build.py: compiling op_my_scale.c failed:\n{proc.stderr}")
    shutil.copy2(HERE / "aclnn_my_scale.h", include / "aclnn_my_scale.h")
    (install / "vendors" / "config.ini").write_text(f"load_priority={vendor}\n")
    return package


def check(package: Path) -> None:
    """Run aclnnMyScale through stress.acl in a child process and compare with numpy."""
    env = {**os.environ, "ASCEND_CUSTOM_OPP_PATH": str(package), "STRESS_BACKEND": "sim"}
    proc = subprocess.run(
        [sys.executable, str(HERE / "check.py")], env=env, capture_output=True, text=True
    )
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        raise SystemExit(f"build.py: the check failed:\n{proc.stderr}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install-path", type=Path, default=HERE / "build" / "opp")
    parser.add_argument("--vendor", default=VENDOR)
    parser.add_argument("--no-check", action="store_true", help="build and install only")
    args = parser.parse_args(argv)
    package = build(args.install_path.resolve(), args.vendor)
    print(f"installed {package / 'op_api' / 'lib' / 'libcust_opapi.so'}")
    if not args.no_check:
        check(package)
    print(f"export ASCEND_CUSTOM_OPP_PATH={package}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
