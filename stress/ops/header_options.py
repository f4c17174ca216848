"""The ``-I DIR`` and ``-D NAME[=V]`` options of every command that reads an aclnn header
(``op inspect``, ``op new``, ``corpus import-msopst``): one definition, so the commands take
the same spelling and pass the same ``include``/``define`` lists to
:func:`stress.ops.header.read_header`."""

from __future__ import annotations

import argparse

__all__ = ["add_header_options"]

# flag, args attribute, metavar, help
_OPTIONS = (
    ("-I", "include", "DIR", "add an include dir (searched for the header and its #includes)"),
    ("-D", "define", "NAME[=V]", "define a macro (e.g. an unknown visibility macro: -D MY_API=)"),
)


def add_header_options(parser: argparse.ArgumentParser) -> None:
    """Add ``-I`` (into ``args.include``) and ``-D`` (into ``args.define``), both repeatable."""
    for flag, dest, metavar, text in _OPTIONS:
        parser.add_argument(
            flag, dest=dest, action="append", default=[], metavar=metavar, help=text
        )
