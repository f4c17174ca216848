"""Command-line interface: ``aclnn-stress``.

Exit codes: 0 clean, 1 findings, 2 usage / configuration / environment error. The parser is in
:mod:`.parser`, the commands in :mod:`.commands`.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Sequence

from stress.cli.commands import EXIT_CLEAN, EXIT_CONFIG, EXIT_FINDINGS
from stress.cli.parser import build_parser
from stress.errors import ConfigError

__all__ = ["EXIT_CLEAN", "EXIT_CONFIG", "EXIT_FINDINGS", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[..., int] = args.func
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return func(args)
    except ConfigError as exc:
        print(f"aclnn-stress: error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("aclnn-stress: interrupted", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
