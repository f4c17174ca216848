"""``aclnn-stress reproduce DIR``: a finished run's failing case(s) as a standalone script.

The script (ctypes + numpy only, :mod:`stress.standalone`) is also written automatically to
``DIR/repro/reproduce.py`` when ``aclnn-stress run`` ends with findings (:func:`after_run`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stress.backend_option import add_backend_option
from stress.cli.run_folder import add_run_folder
from stress.errors import ConfigError
from stress.files import output_file
from stress.subcommand import Command

__all__ = ["COMMAND", "after_run", "cmd_reproduce"]


def _arguments(p: argparse.ArgumentParser) -> None:
    add_run_folder(p)
    p.add_argument("--case", action="append", default=[], metavar="ID",
                   help="case to reproduce (repeatable; two cases race each other)")  # fmt: skip
    p.add_argument("-o", "--output", metavar="FILE", type=Path,
                   help="where to write the script (default DIR/repro/reproduce.py)")  # fmt: skip
    p.add_argument("--iterations", type=int, default=50, metavar="N",
                   help="race rounds the script runs by default (default 50)")  # fmt: skip
    add_backend_option(p, "backend that generates inputs depending on another operator")


def cmd_reproduce(args: argparse.Namespace) -> int:
    """Write the script (a ConfigError reaches the CLI's one-line error, exit 2)."""
    from stress.standalone import write_script

    if args.iterations < 0:
        raise ConfigError(f"--iterations must be >= 0, got {args.iterations}")
    if args.output is not None:
        output_file(args.output, "-o")
    repro = write_script(args.run_dir, args.output, args.case, args.iterations, args.backend)
    side = f", {repro.bytes_side} in {repro.side_file}" if repro.side_file else ""
    replaying = f", {repro.replaying()}" if repro.replaying() else ""
    print(
        f"{repro.path}: {repro.phase} reproducer of {', '.join(repro.cases)} "
        f"({repro.bytes_embedded} bytes of inputs embedded{side}{replaying}); run it with "
        f"ASCEND_HOME_PATH=<CANN root> python3 {repro.path}"
    )
    return 0


COMMAND = Command(
    "reproduce",
    help="write a standalone ctypes script reproducing a run's failure",
    description="Write a self-contained Python script (ctypes + numpy, no aclnn-stress) that "
    "loads CANN from $ASCEND_HOME_PATH, makes the case's tensors from its seeded input bytes "
    "(embedded), runs the call(s) serially, interleaved and on two threads/streams in a loop, "
    "and compares every output with the run's baseline: exit 1 on a digest mismatch or "
    "unwritten (canary) bytes, 0 otherwise. Default cases: the run's minimal reproducer, else "
    "the failing cases of its first failing phase.",
    epilog="Exit codes: 0 written, 2 usage/configuration error.",
    arguments=_arguments,
    run=cmd_reproduce,
)


def after_run(out: Path | None, backend: str | None, *, quiet: bool = False) -> None:
    """Write ``out/repro/reproduce.py`` for a run with findings (best effort: a failure to
    write it is one line on stderr; the run's findings stand). ``quiet``: no line on stdout
    (``run --json``)."""
    from stress.standalone import write_script

    if out is None:
        return
    try:
        repro = write_script(out, backend=backend)
    except (ConfigError, OSError, KeyError, ValueError, RuntimeError) as exc:
        print(f"no standalone reproducer: {exc}", file=sys.stderr)
        return
    if not quiet:
        replaying = f", {repro.replaying()}" if repro.replaying() else ""
        print(f"standalone reproducer ({', '.join(repro.cases)}{replaying}): python3 {repro.path}")
