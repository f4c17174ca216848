"""The CLI's errors as one line each: argument errors (argparse prints an 11-line usage block),
and file-system errors that reach :func:`stress.cli.main` (a read-only or full disk)."""

from __future__ import annotations

import argparse
import re
import sys
from typing import NoReturn

__all__ = ["EXIT_CODES_HELP", "OneLineParser", "argument_error", "os_error_line"]

#: The exit codes, as ``--help`` and README state them.
EXIT_CODES_HELP = (
    "Exit codes: 0 clean, 1 findings, 2 usage/configuration/environment error, "
    "3 incomplete (the run was stopped or killed and found nothing in what it ran), "
    "130/143 interrupted by SIGINT/SIGTERM."
)

_INVALID = re.compile(r"^argument (?P<opt>[^:]+): invalid (?P<kind>\w+) value: (?P<value>.*)$")
_CHOICE = re.compile(
    r"^argument (?P<opt>[^:]+): invalid choice: (?P<value>.*?) \(choose from (?P<choices>.*)\)$"
)
_KINDS = {"int": "an integer", "float": "a number"}


def _option(name: str) -> str:
    """``-o/--out`` -> ``--out``: the long spelling, as the rest of the CLI names options."""
    return name.split("/")[-1]


def argument_error(prog: str, message: str) -> str:
    """argparse's ``message`` for ``prog`` as the one line the CLI prints, in the style of every
    other argument error (:class:`stress.config.RunConfig`'s): ``aclnn-stress: error: --OPTION
    must be WHAT IS ALLOWED, got VALUE``. An error that is about no one value (a missing or an
    unknown argument) ends with the ``--help`` to read."""
    if m := _INVALID.match(message):
        kind = _KINDS.get(m["kind"], f"a {m['kind']}")
        return f"aclnn-stress: error: {_option(m['opt'])} must be {kind}, got {m['value']}"
    if m := _CHOICE.match(message):
        choices = ", ".join(c.strip().strip("'") for c in m["choices"].split(","))
        return (
            f"aclnn-stress: error: {_option(m['opt'])} must be one of {choices}, got {m['value']}"
        )
    if message.startswith("argument ") and " must be " in message:  # a values.py type's error
        opt, _, rest = message[len("argument ") :].partition(": ")
        return f"aclnn-stress: error: {_option(opt)} {rest}"
    if message.startswith("argument "):
        opt, _, rest = message[len("argument ") :].partition(": ")
        message = f"{_option(opt)}: {rest.replace('argument ', '')}"
    return f"aclnn-stress: error: {message} (see {prog} --help)"


class OneLineParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose errors are one line and exit 2 (``--help``
    still prints the whole usage). Its sub-parsers are of the same class."""

    def error(self, message: str) -> NoReturn:
        print(argument_error(self.prog, message), file=sys.stderr)
        sys.exit(2)


def os_error_line(exc: OSError) -> str:
    """An :class:`OSError` as one line naming the path: ``PATH: No space left on device``."""
    where = exc.filename if exc.filename is not None else "(unknown file)"
    other = f" -> {exc.filename2}" if exc.filename2 is not None else ""
    what = exc.strerror or type(exc).__name__
    return f"{where}{other}: {what}"
