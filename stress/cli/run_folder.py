"""The subcommands that work on a finished run's ``--out`` folder (``reproduce``, ``sanitize``):
one definition of how such a command is added and of its ``DIR`` argument (``args.run_dir``)."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_run_folder_command"]


def add_run_folder_command(
    sub: argparse._SubParsersAction, name: str, *, help: str, description: str, epilog: str
) -> argparse.ArgumentParser:
    """Add subcommand ``name`` taking the run folder ``DIR``; the caller adds its options."""
    p = sub.add_parser(name, help=help, description=description, epilog=epilog)
    p.add_argument("run_dir", metavar="DIR", type=Path, help="the --out folder of a run")
    return p
