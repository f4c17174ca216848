"""Building one call's :class:`OpCall` for a case: the step every call mode begins with.

Each mode (back to back, interleaved, event, repeat, pipeline) builds the call from the case the
same way and turns a build failure into the same outcome: an ACL error is the call's failure, a
host ``MemoryError`` is ``host_out_of_memory``. The mode then decides what to do with that
outcome. A :class:`CallSite` is what a mode is given: where the call runs and what it runs on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from stress import acl
from stress.corpus.parse import Case
from stress.engine.call.prepared import OpCall
from stress.grading.digest import DEFAULT_CANARY
from stress.grading.judge import Outcome

__all__ = ["CallSite", "open_call"]

C = TypeVar("C", bound=OpCall)


def open_call(
    kind: type[C],
    context: acl.Context,
    case: Case,
    inputs: Mapping[str, np.ndarray],
    start: float,
    **kwargs: Any,
) -> C | Outcome:
    """``kind`` (an :class:`OpCall` or subclass) built for ``case`` with ``inputs``; the failed
    outcome (timed from ``start``) when building it fails. ``kwargs`` go to the constructor
    (``canary``, ``allocator``)."""
    try:
        return kind(
            context,
            case.spec,
            case.params,
            inputs,
            layout_key=case.key,
            view=case.view,
            **kwargs,
        )
    except (acl.AclError, MemoryError) as exc:
        return Outcome.of_error(exc, start)


@dataclass(frozen=True)
class CallSite:
    """One call of an API mode: the worker's context and launch stream, the case and its host
    inputs, the canary byte its outputs are prefilled with, and the synchronisation timeout
    (milliseconds; None waits as long as it takes)."""

    context: acl.Context
    stream: acl.Stream
    case: Case
    inputs: Mapping[str, np.ndarray]
    canary: int = DEFAULT_CANARY
    timeout_ms: int | None = None

    def open(self, kind: type[C], start: float) -> C | Outcome:
        """:func:`open_call` of ``kind`` here."""
        return open_call(kind, self.context, self.case, self.inputs, start, canary=self.canary)
