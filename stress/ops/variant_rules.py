"""A declaration's ``[variants]`` table: the derived variants its operator opts out of, and why.

Every case derives views, size variants and twins automatically (stress.corpus.variants). An
operator whose documentation says it does not take some of them states so, with the reason::

    [variants]
    transpose = { reason = "aclnnFoo: self must be contiguous (its docs)", expect = 161002 }
    edge = { reason = "aclnnFoo: each dim at most 64 on this SoC (its docs)" }

Without ``expect`` no variant of that kind is derived. With it (view kinds only: transpose, pad,
offset) the variant is still derived, as a *negative* case that must fail with that status: an
operator documented to reject non-contiguous inputs is checked to reject them, instead of being
sent them as positive cases or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stress.errors import ConfigError
from stress.vocabulary import SIZE_VARIANTS, VIEWS

__all__ = ["KINDS", "VariantRule", "parse_variant_rules"]

#: The kinds a declaration may opt out of (``twins``: stress.corpus.twins).
KINDS: tuple[str, ...] = (*VIEWS, *SIZE_VARIANTS, "twins")


@dataclass(frozen=True)
class VariantRule:
    """One opted-out kind: why (the documentation's words), and the status its variants must
    fail with instead (None: none derived)."""

    reason: str
    expect: int | None = None


def parse_variant_rules(raw: Any, source: str) -> Mapping[str, VariantRule]:
    """The ``[variants]`` table of declaration ``source`` (kind -> rule)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source} [variants]: expected a table of kind = {{ reason = ... }}")
    rules = {}
    for kind, entry in raw.items():
        where = f"{source} [variants], field '{kind}'"
        if kind not in KINDS:
            raise ConfigError(f"{where}: unknown variant kind; one of {', '.join(KINDS)}")
        if not isinstance(entry, dict) or set(entry) - {"reason", "expect"}:
            raise ConfigError(f'{where}: expected {{ reason = "..." }} (and expect = STATUS)')
        reason, expect = entry.get("reason"), entry.get("expect")
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigError(f"{where}: reason: a non-empty string saying why (its docs)")
        if expect is not None and (
            kind not in VIEWS or not isinstance(expect, int) or isinstance(expect, bool)
        ):
            raise ConfigError(
                f"{where}: expect: an integer status, and only for a view kind "
                f"({', '.join(VIEWS)}); leave it out to derive none"
            )
        if expect == 0:
            raise ConfigError(f"{where}: expect: the non-zero status the operator must return")
        rules[kind] = VariantRule(reason.strip(), expect)
    return rules
