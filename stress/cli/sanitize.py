"""``aclnn-stress sanitize DIR``: re-run a finished run's reproducers under a sanitizer
(:func:`stress.sanitize.rerun.sanitize_run` does the work)."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence

from stress.cli.run_folder import add_run_folder
from stress.errors import ConfigError
from stress.sanitize.hostsan import HOST_TOOLS
from stress.sanitize.rerun import SHADOW, sanitize_run
from stress.subcommand import Command

__all__ = ["COMMAND", "cmd_sanitize", "main"]


def _arguments(p: argparse.ArgumentParser) -> None:
    add_run_folder(p)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per re-run")
    p.add_argument(
        "--tool",
        choices=(SHADOW, *HOST_TOOLS),
        default=SHADOW,
        help="shadow: the simulator's initcheck/racecheck/memcheck (default); asan / tsan: re-run "
        "on the simulator built with AddressSanitizer / ThreadSanitizer (docs/sanitizer.md)",
    )


def cmd_sanitize(args: argparse.Namespace) -> int:
    """Run the command (a ConfigError reaches the CLI's one-line error, exit 2)."""
    if not math.isfinite(args.timeout) or args.timeout <= 0:
        raise ConfigError(f"--timeout must be a finite number of seconds > 0, got {args.timeout}")
    result = sanitize_run(args.run_dir, args.timeout, args.tool)
    if not result.reruns:
        print("nothing to re-run: the run has no reproducer and no failing case")
    for line in sorted({f.summary() for f in result.findings}):
        print(line)
    print(f"{len(result.findings)} finding(s); {result.run_dir / 'sanitize.json'}")
    return 1 if result.findings else 0


COMMAND = Command(
    "sanitize",
    help="re-run a finished run's reproducers under the sanitizer",
    description="Re-run the minimal reproducer (or the failing cases) of the run in DIR under "
    "the simulator's sanitizer (ACLSIM_SANITIZE=initcheck,racecheck,memcheck), or under "
    "mssanitizer on a real CANN install, and add the findings to DIR/report.json next to the "
    "diagnosis they explain (DIR/sanitize.json, one finding a line in DIR/sanitize.jsonl).",
    epilog="Exit codes: 0 no findings, 1 findings, 2 usage/configuration error.",
    arguments=_arguments,
    run=cmd_sanitize,
)


def main(argv: Sequence[str] | None = None) -> int:
    """`aclnn-stress sanitize DIR` as a function: 0 no findings, 1 findings, 2 error."""
    from stress.cli import main as cli_main

    return cli_main(["sanitize", *(argv if argv is not None else sys.argv[1:])])
