"""Errors the user can fix: bad corpus, baseline, options or environment (CLI exit code 2)."""

from __future__ import annotations

__all__ = ["ConfigError"]


class ConfigError(Exception):
    """Bad input or environment. The message is one line naming the file, the field and the fix.

    The CLI prints it as ``aclnn-stress: error: <message>`` and exits with code 2.
    """

    exit_code = 2

    def __init__(self, message: str = "", *args: object) -> None:
        # the message often quotes the user's own input (a key, a value): control characters
        # in it (a newline in a TOML key) are escaped so that the error stays one line
        super().__init__(_one_line(str(message)), *args)


def _one_line(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
