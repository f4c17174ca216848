"""Bounds of generated cases and the documented constraints they violate, for any catalogue
operator: both come from its declaration (:mod:`stress.ops.generation`). Bounds are validated
eagerly: a bad one raises :class:`BoundsError` (a :class:`~stress.errors.ConfigError`) when a
strategy or generator is made, not when a case is drawn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stress import ops
from stress.errors import ConfigError
from stress.ops.declaration import OpDeclaration
from stress.ops.declared_draw import DeclaredBounds
from stress.ops.generation import Violation

__all__ = [
    "BoundsError",
    "check_int",
    "check_violations",
    "declaration",
    "make_bounds",
    "violations_of",
]


class BoundsError(ConfigError):
    """A bound given to a case strategy or generator is out of range."""


def check_int(name: str, value: Any, lo: int, hi: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise BoundsError(f"{name}={value!r}: expected an integer")
    if value < lo or (hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise BoundsError(f"{name}={value!r}: must be {rng}")


def declaration(op: str) -> OpDeclaration:
    """The declaration of catalogue op ``op`` (BoundsError naming the known ones)."""
    if op not in ops.names():
        raise BoundsError(f"unknown op {op!r}; known ops: {', '.join(ops.names())}")
    decl = ops.declaration_of(op)
    if decl is None:
        raise BoundsError(f"op {op!r} has no declaration to draw cases from")
    return decl


_BOUNDS = ("dims", "dtypes", "max_elements", "limits")


def make_bounds(op: str, **bounds: Any) -> DeclaredBounds:
    """The validated bounds of ``op``: ``dims`` ({name: (low, high)}), ``dtypes`` ({var: [...]}),
    ``max_elements`` (per tensor), ``limits`` ({"B*S": 512}); BoundsError naming the bad one."""
    from hypothesis.errors import InvalidArgument  # only where the strategies are used

    from stress.ops.declared_strategies import declared_bounds

    decl = declaration(op)
    unknown = sorted(set(bounds) - set(_BOUNDS))
    if unknown:
        raise BoundsError(f"{unknown[0]!r} is not a bound (bounds: {', '.join(_BOUNDS)})")
    try:
        return declared_bounds(decl, **bounds)
    except InvalidArgument as exc:
        raise BoundsError(str(exc)) from None


def violations_of(op: str) -> dict[str, tuple[str, int]]:
    """Violation name -> (the constraint it breaks, the status it must fail with)."""
    return {v.name: (v.what, v.status) for v in declaration(op).generation.violations}


def check_violations(op: str, violations: Sequence[str] | None) -> tuple[Violation, ...]:
    """The declared violations to draw from (all of ``op``'s when None); BoundsError naming an
    unknown one."""
    from hypothesis.errors import InvalidArgument

    from stress.ops.declared_strategies import violations_of as declared

    try:
        return declared(declaration(op), violations)
    except InvalidArgument as exc:
        raise BoundsError(str(exc)) from None
