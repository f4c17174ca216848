"""Device memory handed out by size: a caching allocator, and a way to keep addresses fresh.

A :class:`BlockPool` serves :class:`stress.engine.call.prepared.OpCall`'s device allocations
(inputs, outputs, workspace) from blocks a previous call of the same size gave back, newest
first, the way torch_npu's caching allocator does; it asks ``aclrtMalloc`` only when the pool
has none. A block given back stays allocated (the pool owns it), so it carries what the last
call left.

:meth:`BlockPool.seal` takes the pool's blocks out of service without freeing them: no later
call can be given their addresses until :meth:`BlockPool.release`. The baseline recorder uses
both (stress.engine.replay.baseline_order): each case fresh (its own calls recycle each
other's blocks, which are sealed when the case is done, so no other case's call ever ran at
its addresses), then again right after another case, in that case's blocks.

One pool serves one thread (the recorder's): it is not locked.
"""

from __future__ import annotations

import ctypes
from typing import Any

from stress.acl.enums import MallocPolicy

__all__ = ["BlockPool"]


class BlockPool:
    """A size-keyed pool of device blocks on the current context (see the module docstring)."""

    def __init__(self, api: Any) -> None:
        self._api = api
        self._raw = api.raw
        self._size: dict[int, int] = {}  # every block the pool allocated -> its size
        self._free: dict[int, list[int]] = {}  # size -> blocks given back, newest last
        self._sealed: list[int] = []

    def malloc(self, nbytes: int) -> int:
        """A block of ``nbytes``: the newest one given back at that size, else a new one."""
        blocks = self._free.get(nbytes)
        if blocks:
            return blocks.pop()
        dev = ctypes.c_void_p()
        status = self._raw.aclrtMalloc(ctypes.byref(dev), nbytes, MallocPolicy.HUGE_FIRST)
        if status:
            self._api.check(status, "aclrtMalloc")
        self._size[dev.value] = nbytes
        return dev.value

    def free(self, ptr: int) -> int:
        """Give ``ptr`` back to the pool (it stays allocated); a pointer the pool did not hand
        out is freed with ``aclrtFree``. Returns 0 (``aclrtFree``'s success), like it."""
        size = self._size.get(ptr)
        if size is None:
            return self._raw.aclrtFree(ptr)
        self._free.setdefault(size, []).append(ptr)
        return 0

    def seal(self) -> None:
        """Take every block given back out of service until :meth:`release`."""
        for blocks in self._free.values():
            self._sealed += blocks
        self._free.clear()

    def release(self) -> None:
        """Free every block the pool holds (after every call that used it was closed)."""
        self.seal()
        for ptr in self._sealed:
            self._raw.aclrtFree(ptr)
            self._size.pop(ptr, None)
        self._sealed.clear()
