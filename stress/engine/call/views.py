"""The memory of a view variant's input (:mod:`stress.corpus.variants`): the strides, storage
offset and storage shape ``aclCreateTensor`` is given, and the storage's bytes.

Strides and the offset are in elements, as CANN and torch count them. The storage holds the
tensor's logical values where the view reads them and :data:`FILL` bytes everywhere else (the
padding, the elements before the offset), so an operator that reads the storage as if it were
contiguous computes with the fill pattern and gives another digest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stress.corpus.variants import OFFSET, PAD, applies

__all__ = ["FILL", "ViewGeometry", "geometry", "storage_bytes"]

#: The byte the storage outside the view holds (0x5A5A... is a large finite float of every
#: width: a kernel that reads it as data cannot hide it in a rounding).
FILL = 0x5A


@dataclass(frozen=True)
class ViewGeometry:
    """One tensor's view: element strides and offset into a storage of ``storage`` dims
    (row-major), ``elements`` long."""

    strides: tuple[int, ...]
    offset: int
    storage: tuple[int, ...]

    @property
    def elements(self) -> int:
        return int(np.prod(self.storage, dtype=np.int64))


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(strides[::-1])


def geometry(view: str, shape: tuple[int, ...]) -> ViewGeometry | None:
    """The ``view`` layout of a tensor of ``shape`` (None where it would be the contiguous one:
    :func:`stress.corpus.variants.applies`)."""
    if not applies(view, shape):
        return None
    if view == "transpose":  # storage (..., n, m) holds the transpose of the (..., m, n) view
        storage = (*shape[:-2], shape[-1], shape[-2])
        st = _contiguous(storage)
        return ViewGeometry((*st[:-2], st[-1], st[-2]), 0, storage)
    if view == "pad":  # rows of shape[-1] + PAD elements (rank 1: one element in PAD + 1)
        if len(shape) == 1:
            return ViewGeometry((PAD + 1,), 0, (shape[0], PAD + 1))
        storage = (*shape[:-1], shape[-1] + PAD)
        return ViewGeometry((*_contiguous(storage)[:-1], 1), 0, storage)
    storage = (OFFSET + int(np.prod(shape, dtype=np.int64)),)
    return ViewGeometry(_contiguous(shape), OFFSET, storage)


def storage_bytes(host: np.ndarray, g: ViewGeometry) -> np.ndarray:
    """The storage of ``host`` laid out as ``g`` (a 1-D array of ``host``'s dtype): ``host``'s
    values where the view reads them, :data:`FILL` bytes elsewhere."""
    storage = np.empty(g.elements, host.dtype)
    storage.view(np.uint8)[:] = FILL
    item = host.dtype.itemsize
    view = np.lib.stride_tricks.as_strided(
        storage[g.offset :],
        shape=host.shape,
        strides=tuple(s * item for s in g.strides),
        writeable=True,
    )
    view[...] = host
    return storage
