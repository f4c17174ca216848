"""The ``recycle`` allocator (stress.engine.call.caching_allocator) on the simulator: blocks
pooled by size class and handed out newest first, stream-ordered reuse, shared across threads,
and what a phase under it writes to the journal."""

from __future__ import annotations

import threading

import pytest

from stress.engine.call.caching_allocator import BLOCK_ROUND, CachingAllocator, round_size


@pytest.fixture()
def alloc(rt, ctx):
    a = CachingAllocator(rt.api)
    yield a
    a.release()


def test_sizes_round_to_512_byte_classes():
    assert round_size(1) == BLOCK_ROUND == 512
    assert round_size(512) == 512
    assert round_size(513) == 1024


def test_a_freed_block_goes_to_the_next_request_of_its_size_class(alloc):
    a = alloc.malloc(100)
    b = alloc.malloc(100)
    assert a != b
    alloc.free(a)
    alloc.free(b)
    assert alloc.malloc(300) == b  # the same class (512), newest first
    assert alloc.malloc(512) == a
    big = alloc.malloc(2000)  # another class: a new block
    assert big not in (a, b)
    assert (alloc.reused, alloc.allocated) == (2, 3)


def test_a_block_freed_on_a_stream_serves_that_stream_before_it_synchronizes(alloc):
    s1, s2 = object(), object()
    a = alloc.malloc(64, s1)
    alloc.free(a, s1)
    other = alloc.malloc(64, s2)  # another stream may not take it yet
    assert other != a
    assert alloc.malloc(64, s1) == a  # the same stream may: its kernels run in order
    alloc.free(a, s1)
    alloc.synchronized(s1)  # after the freeing stream synchronized, every stream may
    assert alloc.malloc(64, s2) == a


def test_threads_share_the_pool(alloc, device):
    a = alloc.malloc(256)
    alloc.free(a)
    got = []

    def worker():
        device.default_context.bind()
        got.append(alloc.malloc(256))

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert got == [a]


def test_release_keeps_blocks_still_out(rt, ctx):
    alloc = CachingAllocator(rt.api)
    out = alloc.malloc(64)
    given = alloc.malloc(64)
    alloc.free(given)
    alloc.release()
    # the block still out (an abandoned call's) was not freed: it can still be given back
    assert alloc.free(out) == 0
    alloc.release()
