"""Errors the user can fix: bad corpus, baseline, options or environment (CLI exit code 2)."""

from __future__ import annotations

__all__ = ["ConfigError"]


class ConfigError(Exception):
    """Bad input or environment. The message is one line naming the file, the field and the fix.

    The CLI prints it as ``aclnn-stress: error: <message>`` and exits with code 2.
    """

    exit_code = 2
