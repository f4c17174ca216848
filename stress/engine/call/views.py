"""The memory of a view variant's input (:mod:`stress.corpus.variants`): the strides, storage
offset and storage shape ``aclCreateTensor`` is given, and the storage's bytes.

Strides and the offset are in elements, as CANN and torch count them. The storage holds the
tensor's logical values where the view reads them and :data:`FILL` bytes everywhere else (the
padding, the elements before the offset), so an operator that reads the storage as if it were
contiguous computes with the fill pattern and gives another digest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from stress.corpus.variants import BROADCAST, OFFSET, PAD, applies, broadcast_dim
from stress.vocabulary import split_view

if TYPE_CHECKING:
    from stress.corpus.parse import Case

__all__ = ["FILL", "ViewGeometry", "broadcast_values", "geometry", "storage_bytes"]

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
    if view == BROADCAST:  # storage of one slice along the expanded dim, read with stride 0
        d = broadcast_dim(shape)
        storage = (*shape[:d], 1, *shape[d + 1 :])
        st = _contiguous(storage)
        return ViewGeometry((*st[:d], 0, *st[d + 1 :]), 0, storage)
    storage = (OFFSET + int(np.prod(shape, dtype=np.int64)),)
    return ViewGeometry(_contiguous(shape), OFFSET, storage)


def broadcast_values(case: Case, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The host inputs of a ``broadcast`` variant (and of its contiguous twin, recorded under
    its id): each input a broadcast view expands holds its first slice along that dim all
    along it, what the stride-0 view reads; other cases' ``inputs`` as given."""
    if split_view(case.id)[1] != BROADCAST:
        return dict(inputs)
    from stress.ops.spec import TensorArg, TensorListArg

    expanded, p = set(), case.params
    for a in case.spec.args:
        if not isinstance(a, TensorArg | TensorListArg) or a.output or a.inout:
            continue
        if isinstance(a, TensorArg) and a.present(p):
            expanded.add(a.name)
        elif isinstance(a, TensorListArg) and a.present(p):
            expanded |= {a.member(i) for i in range(len(a.shapes(p)))}
    out = dict(inputs)
    for name, host in inputs.items():
        d = broadcast_dim(host.shape) if name in expanded else None
        if d is not None:
            out[name] = np.ascontiguousarray(np.broadcast_to(host.take([0], axis=d), host.shape))
    return out


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
