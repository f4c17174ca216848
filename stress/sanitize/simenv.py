"""Print the environment a plain ctypes script needs to run on an instrumented simulator.

``eval "$(python -m stress.sanitize.simenv tsan /tmp/tsan)"`` exports ``ACLSIM_VARIANT``,
``LD_PRELOAD`` (the sanitizer runtime), ``TSAN_OPTIONS`` / ``ASAN_OPTIONS`` (reports to
``/tmp/tsan.<pid>``) and ``ASCEND_HOME_PATH`` (the variant's root, built first).
"""

from __future__ import annotations

import os
import shlex
import sys

from stress.errors import ConfigError
from stress.sim import variant


def main(argv: list[str] | None = None) -> int:
    """``python -m stress.sanitize.simenv asan|tsan [LOG_PREFIX]``: print the shell exports a plain
    ctypes script needs to run on that variant (``eval "$(python -m stress.sanitize.simenv tsan)"``,
    see the module doc), building the variant first so ``ASCEND_HOME_PATH`` points at it."""
    from stress.sim import _build

    args = sys.argv[1:] if argv is None else argv
    if not args or len(args) > 2:
        print("usage: python -m stress.sanitize.simenv asan|tsan [LOG_PREFIX]", file=sys.stderr)
        return 2
    try:
        var = variant.get(args[0])
        os.environ["ACLSIM_VARIANT"] = var.name
        env = variant.runtime_env(var, _build._compiler(), args[1] if len(args) > 1 else "")
        env["ASCEND_HOME_PATH"] = str(_build.build())
    except (ConfigError, _build.SimBuildError) as exc:
        print(f"stress.sanitize.simenv: {exc}", file=sys.stderr)
        return 2
    for key, value in env.items():
        print(f"export {key}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
