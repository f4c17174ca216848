"""The ``recycle`` allocator policy: a caching allocator in the harness, like torch_npu's.

Under ``--allocator recycle`` every call's device memory (inputs, outputs, workspace) comes from
one :class:`CachingAllocator` per phase, shared by every thread: a block a call gives back is not
freed with ``aclrtFree`` but pooled by its rounded size (:func:`round_size`, 512-byte classes as
torch_npu's ``kMinBlockSize``) and handed first — newest first — to the next request of that size
class, whichever case or thread asks. So an operator meets, within microseconds, addresses that
held another tensor of another case: a cache keyed on a device address instead of its content
replays stale data, which fresh ``aclrtMalloc`` addresses never show (``address-dependence``).

Reuse is stream-ordered, as in a stream-ordered allocator: a block given back on a stream goes
first to that stream's *pending* list; the next request *on the same stream* may take it at once
(its kernels run in order, after the launch that used it), but no other stream may until the
freeing stream has been synchronized after the free (:meth:`CachingAllocator.synchronized`),
which moves the stream's pending blocks to the shared pool. A block given back with no stream
(its call was synchronized) is shared at once.

:meth:`CachingAllocator.on` binds a stream and gives an object with ``malloc`` / ``free`` (the
interface :class:`stress.engine.call.prepared.OpCall` uses, like
:class:`~stress.engine.call.blockpool.BlockPool`). The allocator is locked: threads share it.
:meth:`CachingAllocator.release` frees every block at the end of the phase.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stress.acl.enums import MallocPolicy

__all__ = ["ALLOCATOR_POLICIES", "BLOCK_ROUND", "CachingAllocator", "StreamAllocator", "round_size"]

#: The allocator policies a phase runs under (``--allocator``; ``both`` schedules the two).
ALLOCATOR_POLICIES = ("fresh", "recycle")
#: Size classes: requests round up to a multiple of this many bytes (torch_npu's 512).
BLOCK_ROUND = 512


def round_size(nbytes: int) -> int:
    """The size class of a request of ``nbytes`` (> 0)."""
    return max(1, -(-nbytes // BLOCK_ROUND)) * BLOCK_ROUND


@dataclass(frozen=True)
class StreamAllocator:
    """The allocator bound to one stream: what one call's ``OpCall`` allocates with."""

    malloc: Callable[[int], int]
    free: Callable[[int], int]


class CachingAllocator:
    """Device blocks pooled by size class, reused stream-ordered (see the module docstring)."""

    def __init__(self, api: Any) -> None:
        self._api = api
        self._raw = api.raw
        self._lock = threading.Lock()
        self._size: dict[int, int] = {}  # every block allocated -> its size class
        self._free: dict[int, list[int]] = {}  # size class -> shared blocks, newest last
        self._pending: dict[Any, dict[int, list[int]]] = {}  # stream -> size class -> blocks
        self.reused = 0  # requests served from a block given back (for tests and the journal)
        self.allocated = 0  # requests that called aclrtMalloc

    def on(self, stream: Any) -> StreamAllocator:
        """``malloc`` / ``free`` for calls on ``stream`` (None: a call synchronized before it
        gives anything back, so its blocks are shared at once)."""
        return StreamAllocator(
            lambda nbytes: self.malloc(nbytes, stream), lambda ptr: self.free(ptr, stream)
        )

    def malloc(self, nbytes: int, stream: Any = None) -> int:
        """A block of at least ``nbytes``: the newest given back on ``stream`` and not yet
        shared, else the newest shared one of its size class, else a new one."""
        size = round_size(nbytes)
        with self._lock:
            for blocks in (self._pending.get(stream, {}).get(size), self._free.get(size)):
                if blocks:
                    self.reused += 1
                    return blocks.pop()
        dev = ctypes.c_void_p()
        status = self._raw.aclrtMalloc(ctypes.byref(dev), size, MallocPolicy.HUGE_FIRST)
        if status:
            self._api.check(status, "aclrtMalloc")
        with self._lock:
            self._size[dev.value] = size
            self.allocated += 1
        return dev.value

    def free(self, ptr: int, stream: Any = None) -> int:
        """Give ``ptr`` back: pending on ``stream`` until it is synchronized, shared at once
        when ``stream`` is None. A pointer the allocator did not hand out is freed with
        ``aclrtFree``. Returns 0 (``aclrtFree``'s success), like it."""
        with self._lock:
            size = self._size.get(ptr)
            if size is not None:
                target = self._free if stream is None else self._pending.setdefault(stream, {})
                target.setdefault(size, []).append(ptr)
                return 0
        return self._raw.aclrtFree(ptr)

    def synchronized(self, stream: Any) -> None:
        """``stream`` was synchronized: what it gave back before is safe for every stream."""
        with self._lock:
            for size, blocks in self._pending.pop(stream, {}).items():
                self._free.setdefault(size, []).extend(blocks)

    def release(self) -> None:
        """Free every block given back (at the end of a phase). A block still out — a call
        abandoned because its kernel may still be writing it — stays allocated."""
        with self._lock:
            ptrs = [p for blocks in self._free.values() for p in blocks]
            ptrs += [p for sizes in self._pending.values() for bs in sizes.values() for p in bs]
            for ptr in ptrs:
                del self._size[ptr]
            self._free.clear()
            self._pending.clear()
        for ptr in ptrs:
            self._raw.aclrtFree(ptr)
