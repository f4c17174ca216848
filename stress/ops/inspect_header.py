"""``aclnn-stress op inspect HEADER [--json] [-I DIR] [-D NAME[=VALUE]]``: what a header declares.

Prints every operator of the header with its phase-1 parameters in C order (name, C type, role,
whether it may be NULL). ``--json`` prints the contract
``{"header": str, "ops": [{"name": str, "params": [{"name", "type", "role", "optional"}]}]}``.
Exit status 0, or 2 with a one-line error naming the file and line for a header it cannot read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from stress.errors import ConfigError
from stress.ops.header_options import add_header_options

if TYPE_CHECKING:  # the header reader (pycparser) is imported when a header is read
    from stress.ops.signature import HeaderInfo

__all__ = ["add_arguments", "build_parser", "main", "render"]


def build_parser(prog: str = "aclnn-stress op inspect") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's arguments (``aclnn-stress op inspect`` takes the same)."""
    parser.add_argument("header", help="an aclnn_*.h path, or e.g. aclnnop/aclnn_add.h (-I)")
    parser.add_argument("--json", action="store_true", help="print the JSON contract")
    add_header_options(parser)


def render(info: HeaderInfo) -> str:
    """The human-readable listing of ``info``."""
    lines = [info.header]
    for op in info.ops:
        lines.append(f"  {op.name}  ({len(op.params)} parameters)")
        width = max((len(p.name) for p in op.params), default=0)
        twidth = max((len(p.type) for p in op.params), default=0)
        for p in op.params:
            extra = "  may be NULL" if p.optional else ""
            tag = f"  [documented {p.tag}]" if p.tag else ""
            lines.append(f"    {p.name:<{width}}  {p.type:<{twidth}}  {p.role:<6}{extra}{tag}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Run the command with ``argv`` (without the program and sub-command names)."""
    from stress.ops.header import read_header

    args = build_parser().parse_args(argv)
    try:
        info = read_header(args.header, args.include, args.define)
    except ConfigError as exc:
        print(f"aclnn-stress: error: {exc}", file=sys.stderr)
        return ConfigError.exit_code
    print(json.dumps(info.to_json(), indent=2) if args.json else render(info))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
