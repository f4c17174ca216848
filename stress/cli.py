"""Command-line interface: ``aclnn-stress``.

Exit codes: 0 clean, 1 findings, 2 usage / configuration / environment error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from stress import __version__
from stress.errors import ConfigError

__all__ = ["main"]

EXIT_CLEAN, EXIT_FINDINGS, EXIT_CONFIG = 0, 1, 2


def _cmd_info(args: argparse.Namespace) -> int:
    from stress import acl

    rt = acl.runtime(args.backend)
    info = rt.info()
    if args.json:
        print(json.dumps(info, indent=2))
        return EXIT_CLEAN
    kind = info["backend"] + (" (simulator)" if info["simulator"] else "")
    print(f"backend       {kind}")
    print(f"root          {info['root']}")
    for name, path in info["libraries"].items():
        print(f"library       {name} -> {path}")
    print(f"soc           {info['soc'] or '(aclrtGetSocName not available)'}")
    print(f"version       {info['version'] or '(aclsysGetVersionStr not available)'}")
    print(f"devices       {info['device_count']}")
    return EXIT_CLEAN


def _cmd_sim(args: argparse.Namespace) -> int:
    from stress import sim

    try:
        root = sim.build(force=True) if args.sim_command == "build" else sim.root()
    except sim.SimBuildError as exc:
        raise ConfigError(str(exc)) from exc
    print(root)
    return EXIT_CLEAN


def _cmd_run(args: argparse.Namespace) -> int:
    print("no corpus yet: the stress engine is not implemented in this version")
    return EXIT_CLEAN


def _backend_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        choices=("auto", "sim", "cann"),
        default=None,
        help="which CANN to load (default: $STRESS_BACKEND, else auto: a real install when an "
        "NPU is present, else the bundled simulator)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aclnn-stress",
        description="Stress-test CANN aclnn operators for cross-call contamination, unwritten "
        "outputs and wrong gradients, on a real NPU or on the bundled CANN simulator.",
        epilog="Exit codes: 0 clean, 1 findings, 2 usage/configuration/environment error.",
    )
    parser.add_argument("--version", action="version", version=f"aclnn-stress {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("info", help="show the backend: libraries, SoC, version, device count")
    _backend_option(p)
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.set_defaults(func=_cmd_info)

    p = sub.add_parser(
        "sim",
        help="build or locate the CANN simulator",
        description="The simulator is a C implementation of the CANN ABI laid out as a CANN root. "
        "Point third-party ctypes scripts at it with ASCEND_HOME_PATH=$(aclnn-stress sim path).",
    )
    simsub = p.add_subparsers(dest="sim_command", metavar="ACTION", required=True)
    simsub.add_parser("path", help="print the simulator root (building it first if needed)")
    simsub.add_parser("build", help="rebuild the simulator now and print its root")
    p.set_defaults(func=_cmd_sim)

    p = sub.add_parser("run", help="run the stress protocol over a corpus")
    _backend_option(p)
    p.set_defaults(func=_cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except ConfigError as exc:
        print(f"aclnn-stress: error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("aclnn-stress: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
