"""Owned handles: deterministic release with ``close()``/``with``, ``weakref.finalize`` fallback.

The finalizer holds only the release function and plain values (never the object), so a handle
that is dropped without ``close()`` is still released when collected. Finalizers do not run at
interpreter exit (``atexit = False``): CANN must not be torn down from exit handlers, and the
process exiting releases everything anyway.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, Self

__all__ = ["OwnedHandle"]


class OwnedHandle:
    """Base class of every object that owns a CANN resource."""

    _finalizer: weakref.finalize

    def _own(self, release: Callable[..., Any], *args: Any) -> None:
        self._finalizer = weakref.finalize(self, release, *args)
        self._finalizer.atexit = False

    def close(self) -> None:
        """Release the resource now (idempotent); errors from the release call propagate."""
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None and finalizer.alive:
            finalizer()

    def detach(self) -> None:
        """Forget the resource without releasing it (it was released by someone else)."""
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer.detach()

    @property
    def closed(self) -> bool:
        finalizer = getattr(self, "_finalizer", None)
        return finalizer is None or not finalizer.alive

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
