"""The one check every table of a declaration file makes first: no key it does not know.

The error names the file and table (``at``), the first unknown key and the keys allowed, so a
typo in ``[op]``, ``[gradcheck]`` or ``[generate]`` reads the same wherever it is made."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from stress.errors import ConfigError

__all__ = ["reject_unknown_keys"]


def reject_unknown_keys(raw: Mapping[str, Any], allowed: Collection[str], at: str) -> None:
    """Raise :class:`ConfigError` naming the first key of ``raw`` (sorted) not in ``allowed``."""
    unknown = sorted(set(raw) - set(allowed))
    if unknown:
        raise ConfigError(
            f"{at}, field '{unknown[0]}': unknown; allowed: {', '.join(sorted(allowed))}"
        )
