"""Building one call's :class:`OpCall` for a case: the step every call mode begins with.

Each mode (back to back, interleaved, event, repeat) builds the call from the case the same way
and turns a build failure into the same outcome: an ACL error is the call's failure, a host
``MemoryError`` is ``host_out_of_memory``. The mode then decides what to do with that outcome.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np

from stress import acl
from stress.corpus.parse import Case
from stress.engine.call.prepared import OpCall
from stress.grading.judge import Outcome

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
    except acl.AclError as exc:
        return Outcome.failed(exc, start)
    except MemoryError as exc:
        return Outcome.host_out_of_memory(exc, start)
