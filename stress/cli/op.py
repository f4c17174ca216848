"""``aclnn-stress op``: what the framework reads from aclnn headers.

``op inspect HEADER [--json] [-I DIR] [-D NAME=V]`` prints the operators one header declares
(stress/ops/inspect_header.py); ``op list [--json] [-I DIR]`` lists every operator found in the
backend's headers (``include/aclnnop/aclnn_*.h`` of the CANN root or simulator, custom
packages' ``op_api/include``, and any ``-I`` folder), with the header that declares it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from stress.errors import ConfigError

__all__ = ["add_cli", "list_operators"]


def add_cli(subparsers: Any) -> None:
    """Add ``op inspect`` and ``op list`` to ``aclnn-stress``'s subparsers."""
    from stress.ops.inspect_header import build_parser

    p = subparsers.add_parser("op", help="read operators from aclnn headers (inspect, list)")
    sub = p.add_subparsers(dest="op_command", metavar="ACTION", required=True)
    inspect = build_parser()
    sub.add_parser(
        "inspect",
        parents=[inspect],
        add_help=False,
        help="print the operators a header declares (roles, types, optional)",
        description="Print the operators an aclnn header declares: each parameter's name (as a "
        "declaration's [params] names it), C type and role (input, output, inout, attr); --json "
        "prints the contract as data.",
        epilog="Exit codes: 0 done, 2 usage/configuration error (header not found or unreadable).",
    ).set_defaults(func=_cmd_inspect)
    ls = sub.add_parser(
        "list",
        help="every operator in the backend's headers",
        description="List every aclnn operator the backend's headers declare "
        "($ASCEND_HOME_PATH/include/aclnnop, custom packages' op_api/include, else the "
        "simulator's), with the header it is in.",
        epilog="Exit codes: 0 done, 2 usage/configuration error.",
    )
    ls.add_argument("--json", action="store_true", help="print [{name, header}] as JSON")
    ls.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                    help="also scan this folder's aclnn_*.h")  # fmt: skip
    ls.set_defaults(func=_cmd_list)


def _cmd_inspect(args: argparse.Namespace) -> int:
    from stress.ops.header import read_header
    from stress.ops.inspect_header import render

    info = read_header(args.header, args.include, args.define)
    print(json.dumps(info.to_json(), indent=2) if args.json else render(info))
    return 0


def _header_dirs(extra: list[str]) -> list[Path]:
    from stress.acl.backend import custom_op_dirs, discover

    dirs = [Path(d) for d in extra]
    try:
        backend = discover()
    except Exception as exc:
        print(f"aclnn-stress: note: no backend ({exc}); scanning the simulator's headers",
              file=sys.stderr)  # fmt: skip
        dirs.append(Path(__file__).resolve().parents[1] / "sim" / "src" / "include")
    else:
        dirs += list(backend.include_dirs)
        dirs += [d / "op_api" / "include" for d in custom_op_dirs(backend.root)]
    return dirs


def list_operators(dirs: list[Path]) -> list[tuple[str, str]]:
    """(operator, header) of every aclnn_*.h found under ``dirs`` (and their aclnnop/)."""
    from stress.ops.header import read_header

    found: dict[str, str] = {}
    headers = sorted({h.resolve() for d in dirs for pattern in ("aclnn_*.h", "aclnnop/aclnn_*.h")
                      for h in d.glob(pattern)})  # fmt: skip
    for h in headers:
        if h.name in ("aclnn_base.h", "aclnn_util.h"):
            continue
        try:
            info = read_header(h, [str(d) for d in dirs])
        except ConfigError as exc:
            print(f"aclnn-stress: warning: {exc}", file=sys.stderr)
            continue
        for op in info.ops:
            found.setdefault(op.name, str(h))
    return sorted(found.items())


def _cmd_list(args: argparse.Namespace) -> int:
    ops = list_operators(_header_dirs(args.include))
    if args.json:
        print(json.dumps([{"name": n, "header": h} for n, h in ops], indent=2))
    else:
        width = max((len(n) for n, _ in ops), default=0)
        for name, header in ops:
            print(f"{name:<{width}}  {header}")
    return 0
