"""The device memory a phase's calls run in: fresh ``aclrtMalloc`` or the caching allocator.

``config.phase_allocator`` (set per step by the scheduler, :func:`stress.engine.run.schedule.plan`)
names the policy: ``fresh`` gives every call its own ``aclrtMalloc`` blocks (the call's
:class:`~stress.engine.call.prepared.OpCall` frees them with ``aclrtFree``); ``recycle`` gives
every call of the phase, on every thread, blocks from one
:class:`~stress.engine.call.caching_allocator.CachingAllocator`, freed when the phase ends.
"""

from __future__ import annotations

import threading
from typing import Any

from stress.engine.call.caching_allocator import CachingAllocator

__all__ = ["RecyclingMemory"]

_MADE = threading.Lock()  # the workers' first calls race to make the phase's allocator


class RecyclingMemory:
    """A mixin of the phase runner: ``runtime`` and ``config`` come from it."""

    runtime: Any
    config: Any
    _caching: CachingAllocator | None = None

    def recycler(self) -> CachingAllocator | None:
        """The phase's caching allocator under ``recycle`` (made on first use), else None."""
        if self.config.phase_allocator != "recycle":
            return None
        with _MADE:
            if self._caching is None:
                self._caching = CachingAllocator(self.runtime.api)
            return self._caching

    def release_memory(self) -> None:
        """Free the caching allocator's blocks (the phase's calls are all closed)."""
        if self._caching is not None:
            self._caching.release()
            self._caching = None
