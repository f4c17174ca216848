"""Host-side operator parameters besides tensors and scalars: ``aclIntArray``,
``aclFloatArray``, ``aclBoolArray``, ``aclTensorList`` and ``aclScalarList``, as owned handles.

Arrays copy their values at creation (CANN does too), so they own nothing else.  Lists take
ownership of their members, as CANN does: ``aclDestroyTensorList`` / ``aclDestroyScalarList``
destroy the member tensors / scalars (hicann/opbase acl_op_api.cpp).  Creating a list therefore
detaches the members' own ``aclDestroyTensor`` / ``aclDestroyScalar``: closing a member
afterwards frees only its device memory, and closing the list destroys the member handles.
Keep member tensors' memory alive while the list is in use.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

from stress.acl._handle import OwnedHandle
from stress.acl.tensor import DeviceTensor, Scalar

__all__ = ["BoolArray", "FloatArray", "IntArray", "ScalarList", "TensorList"]


def _api(owner):
    """The bound API of a Runtime, Context or anything with ``.runtime``."""
    rt = getattr(owner, "runtime", owner)
    return rt.api


class _FromCArray(OwnedHandle):
    """A handle CANN creates from a C array of ``_ctype`` and its length (``_create``, NULL for
    none) and releases with ``_destroy``; it passes to a C call as that pointer."""

    _ctype: type
    _create: str
    _destroy: str

    def _create_from(self, api, items: Sequence) -> None:
        n = len(items)
        buf = (self._ctype * max(n, 1))(*items)
        self.handle: int = getattr(api, self._create)(buf if n else None, n)
        self._own(getattr(api, self._destroy), self.handle)

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.handle)


class _Array(_FromCArray):
    _ctype = ctypes.c_int64
    _create = "aclCreateIntArray"
    _destroy = "aclDestroyIntArray"

    def __init__(self, owner, values: Sequence) -> None:
        self.values = tuple(values)
        self._create_from(_api(owner), self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {list(self.values)}>"


class IntArray(_Array):
    """``aclIntArray`` (int64 values)."""


class FloatArray(_Array):
    """``aclFloatArray`` (float32 values)."""

    _ctype = ctypes.c_float
    _create = "aclCreateFloatArray"
    _destroy = "aclDestroyFloatArray"


class BoolArray(_Array):
    """``aclBoolArray``."""

    _ctype = ctypes.c_bool
    _create = "aclCreateBoolArray"
    _destroy = "aclDestroyBoolArray"


class _List(_FromCArray):
    _ctype = ctypes.c_void_p
    _create = "aclCreateTensorList"
    _destroy = "aclDestroyTensorList"

    def __init__(self, owner, members: Sequence[OwnedHandle]) -> None:
        self.members = tuple(members)
        if any(m.closed for m in self.members):
            raise ValueError(f"{type(self).__name__}: a member is closed already")
        self._create_from(_api(owner), [m.handle for m in self.members])
        for m in self.members:
            m.detach()  # the list owns the member handles now: CANN destroys them with it

    def __len__(self) -> int:
        return len(self.members)

    def __getitem__(self, i: int):
        return self.members[i]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {len(self)}>"


class TensorList(_List):
    """``aclTensorList`` of :class:`DeviceTensor` members (it owns their aclTensor handles)."""

    def __init__(self, owner, members: Sequence[DeviceTensor]) -> None:
        super().__init__(owner, members)


class ScalarList(_List):
    """``aclScalarList`` of :class:`Scalar` members (it owns their aclScalar handles)."""

    _create = "aclCreateScalarList"
    _destroy = "aclDestroyScalarList"

    def __init__(self, owner, members: Sequence[Scalar]) -> None:
        super().__init__(owner, members)
