"""``aclnn-stress op``: what the framework reads from aclnn headers.

``op inspect HEADER [--json] [-I DIR] [-D NAME=V]`` prints the operators one header declares
(stress/ops/inspect_header.py); ``op new HEADER [--function NAME] [-o FILE]`` writes a declaration
skeleton for one of them (stress/ops/skeleton.py); ``op list [--json] [-I DIR]`` lists every
operator found in the backend's headers (``include/aclnnop/aclnn_*.h`` of the CANN root or
simulator, custom packages' ``op_api/include``, and any ``-I`` folder), with the header that
declares it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from stress.errors import ConfigError
from stress.ops.header_options import add_header_options
from stress.subcommand import Command

__all__ = ["COMMAND", "ROLE_RULE", "list_operators"]

ROLE_RULE = """\
Roles: a tensor or tensor list parameter's role is the first of these that applies
(the header's const-ness, names and @param tags are each wrong alone in real headers):
  1. not const: output (inout if its name ends in Ref)
  2. const, name ends in Ref: inout
  3. tagged @param [in] / [out] / [in,out] in the header's doc comment: as tagged
  4. named gradOut, gradOutput or grad_output (+Optional): input, a backward's
     upstream gradient (torch's convention), although the name ends in Out
  5. named out or ending in Out / OutOptional: output
  6. else: input
A name ending in Optional may be NULL. Every other parameter is an attr. Where
the rule is wrong for an operator, its declaration says so: [op] roles = { p = "input" }."""


def _inspect_arguments(p: argparse.ArgumentParser) -> None:
    from stress.ops.inspect_header import add_arguments

    add_arguments(p)


def _list_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print [{name, header}] as JSON")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                   help="also scan this folder's aclnn_*.h")  # fmt: skip


def _new_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("header", help="an aclnn_*.h path, or e.g. aclnnop/aclnn_add.h (-I)")
    p.add_argument(
        "--function",
        metavar="NAME",
        help="the operator (default: the one named after the header, else the first it declares)",
    )
    p.add_argument(
        "-o", dest="output", metavar="FILE", help="write the declaration here (default: print it)"
    )
    add_header_options(p)


def _cmd_new(args: argparse.Namespace) -> int:
    from stress.ops.new_declaration import new_declaration

    out = Path(args.output) if args.output else None
    text, function = new_declaration(args.header, args.function, out, args.include, args.define)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
        print(
            f"aclnn-stress: wrote {out} ({function}); check its CHECK lines, then: "
            f"aclnn-stress run --corpus {out} --record-baseline",
            file=sys.stderr,
        )
    return 0


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


COMMAND = Command(
    "op",
    help="read operators from aclnn headers (inspect, new, list)",
    actions=(
        Command(
            "inspect",
            help="print the operators a header declares (roles, types, optional)",
            description="Print the operators an aclnn header declares: each parameter's name (as "
            "a declaration's [params] names it), C type and role (input, output, inout, attr); "
            "--json prints the contract as data.",
            epilog=ROLE_RULE + "\n\nExit codes: 0 done, 2 usage/configuration error (header not "
            "found or unreadable).",
            arguments=_inspect_arguments,
            run=_cmd_inspect,
            preformatted=True,
        ),
        Command(
            "new",
            help="write a declaration skeleton for an operator of a header",
            description="Write a declaration for one operator of an aclnn header that runs as "
            "written: every parameter by its header name with its role, tensors over small named "
            "dims, dtypes from the doc comment (else float32/float16), typed attribute defaults, "
            "one case, and comments naming what to check (shapes that must agree, legal ranges). "
            "Run it with: aclnn-stress run --corpus FILE --record-baseline",
            epilog="Exit codes: 0 written, 2 usage/configuration error (header not found or "
            "unreadable, no such function, FILE exists).",
            arguments=_new_arguments,
            run=_cmd_new,
        ),
        Command(
            "list",
            help="every operator in the backend's headers",
            description="List every aclnn operator the backend's headers declare "
            "($ASCEND_HOME_PATH/include/aclnnop, custom packages' op_api/include, else the "
            "simulator's), with the header it is in.",
            epilog="Exit codes: 0 done, 2 usage/configuration error.",
            arguments=_list_arguments,
            run=_cmd_list,
        ),
    ),
)
