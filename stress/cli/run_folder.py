"""The ``DIR`` argument of the subcommands that work on a finished run's ``--out`` folder
(``reproduce``, ``sanitize``): one definition of it (``args.run_dir``)."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_run_folder"]


def add_run_folder(p: argparse.ArgumentParser) -> None:
    """Add the positional ``DIR``, the run folder, first: the command adds its options after."""
    p.add_argument("run_dir", metavar="DIR", type=Path, help="the --out folder of a run")
