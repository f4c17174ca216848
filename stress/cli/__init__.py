"""Command-line interface: ``aclnn-stress``.

Exit codes: 0 clean, 1 findings, 2 usage / configuration / environment error (one line on
stderr, never a traceback), 3 incomplete (the run was stopped or killed and found nothing in
what it ran), 130 / 143 interrupted by SIGINT / SIGTERM. The parser is in :mod:`.parser`, the
commands in :mod:`.commands`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from stress.cli.commands import EXIT_CLEAN, EXIT_CONFIG, EXIT_FINDINGS, EXIT_INCOMPLETE
from stress.cli.errors import os_error_line
from stress.cli.parser import build_parser, command_of
from stress.cli.stdout import guard_stdout
from stress.errors import ConfigError
from stress.signals import exit_code, interruptible

__all__ = [
    "EXIT_CLEAN",
    "EXIT_CONFIG",
    "EXIT_FINDINGS",
    "EXIT_INCOMPLETE",
    "build_parser",
    "main",
]


def main(argv: Sequence[str] | None = None) -> int:
    out = guard_stdout()
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command_of(argv), full=False)  # imports only the command it runs
    args = parser.parse_args(argv)
    func: Callable[..., int] = args.func
    with interruptible():
        try:
            code = func(args)
        except ConfigError as exc:  # exit 2; a finding raised as one (order-dependence) 1
            code = getattr(exc, "exit_code", EXIT_CONFIG)
            print(f"aclnn-stress: {'error: ' if code == EXIT_CONFIG else ''}{exc}", file=sys.stderr)
        except KeyboardInterrupt as exc:
            print(f"aclnn-stress: interrupted ({exc or 'SIGINT'})", file=sys.stderr)
            code = exit_code(exc)
        except OSError as exc:  # a file the tool writes: read-only, full disk, vanished dir
            print(f"aclnn-stress: error: {os_error_line(exc)}", file=sys.stderr)
            code = EXIT_CONFIG
    out.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
