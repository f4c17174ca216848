"""Tensors and scalars: ``aclTensor`` over a :class:`DeviceBuffer`, ``aclScalar`` from a value.

Tensors are contiguous, ND format, offset 0, view shape = storage shape, as in the CANN samples.
A 0-element tensor gets a NULL data pointer and no allocation (CANN accepts that; aclrtMalloc(0)
would not). bf16 uses ``ml_dtypes.bfloat16``.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import ml_dtypes
import numpy as np

from stress.acl._handle import OwnedHandle
from stress.acl.enums import DataType, Format
from stress.acl.memory import DeviceBuffer
from stress.acl.runtime import Context

__all__ = ["DeviceTensor", "Scalar", "acl_dtype", "numpy_dtype"]

_NUMPY_TO_ACL: dict[np.dtype, DataType] = {
    np.dtype(np.float32): DataType.FLOAT,
    np.dtype(np.float16): DataType.FLOAT16,
    np.dtype(ml_dtypes.bfloat16): DataType.BF16,
    np.dtype(np.float64): DataType.DOUBLE,
    np.dtype(np.int8): DataType.INT8,
    np.dtype(np.int16): DataType.INT16,
    np.dtype(np.int32): DataType.INT32,
    np.dtype(np.int64): DataType.INT64,
    np.dtype(np.uint8): DataType.UINT8,
    np.dtype(np.uint16): DataType.UINT16,
    np.dtype(np.uint32): DataType.UINT32,
    np.dtype(np.uint64): DataType.UINT64,
    np.dtype(np.bool_): DataType.BOOL,
    np.dtype(np.complex64): DataType.COMPLEX64,
    np.dtype(np.complex128): DataType.COMPLEX128,
}
_ACL_TO_NUMPY = {v: k for k, v in _NUMPY_TO_ACL.items()}


def acl_dtype(dtype: np.typing.DTypeLike) -> DataType:
    """The aclDataType of a numpy dtype (``TypeError`` for one CANN has no type for)."""
    dt = np.dtype(dtype)
    try:
        return _NUMPY_TO_ACL[dt]
    except KeyError:
        raise TypeError(f"no aclDataType for numpy dtype {dt}") from None


def numpy_dtype(dtype: DataType | int) -> np.dtype:
    """The numpy dtype of an aclDataType."""
    try:
        return _ACL_TO_NUMPY[DataType(dtype)]
    except (KeyError, ValueError):
        raise TypeError(f"no numpy dtype for aclDataType {dtype}") from None


def _int64_array(values: Sequence[int]) -> ctypes.Array:
    return (ctypes.c_int64 * max(len(values), 1))(*values)


def _contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    return strides[::-1]


def _destroy_tensor(api, handle: int) -> None:
    api.aclDestroyTensor(handle)


class DeviceTensor(OwnedHandle):
    """An ``aclTensor`` describing a contiguous device array it owns (with its memory)."""

    def __init__(self, context: Context, shape: Sequence[int], dtype: np.typing.DTypeLike) -> None:
        self.context = context
        self.shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in self.shape):
            raise ValueError(f"negative dimension in shape {self.shape}")
        self.dtype = np.dtype(dtype)
        self.acl_dtype = acl_dtype(self.dtype)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize
        self.buffer = DeviceBuffer(context, self.nbytes) if self.nbytes else None
        api = context.runtime.api
        ndim = len(self.shape)
        dims = _int64_array(self.shape)
        try:
            self.handle: int = api.aclCreateTensor(
                dims,
                ndim,
                int(self.acl_dtype),
                _int64_array(_contiguous_strides(self.shape)),
                0,
                int(Format.ND),
                dims,
                ndim,
                self.buffer.ptr if self.buffer else None,
            )
        except Exception:
            if self.buffer:
                self.buffer.close()
            raise
        self._own(_destroy_tensor, api, self.handle)

    @classmethod
    def from_array(cls, context: Context, array: np.ndarray) -> DeviceTensor:
        """A device copy of ``array`` (any layout; uploaded C-contiguous)."""
        tensor = cls(context, array.shape, array.dtype)
        tensor.upload(array)
        return tensor

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.handle)

    @property
    def ptr(self) -> int | None:
        return self.buffer.ptr if self.buffer else None

    def upload(self, array: np.ndarray) -> None:
        if array.shape != self.shape or np.dtype(array.dtype) != self.dtype:
            raise ValueError(
                f"upload of {array.dtype}{list(array.shape)} into a tensor of "
                f"{self.dtype}{list(self.shape)}"
            )
        if self.buffer:
            self.buffer.upload(array)

    def download(self) -> np.ndarray:
        """The tensor's contents as a new numpy array."""
        out = np.empty(self.shape, dtype=self.dtype)
        if self.buffer:
            self.buffer.download_into(out)
        return out

    def download_bytes(self) -> bytes:
        return self.buffer.download() if self.buffer else b""

    def close(self) -> None:
        """Destroy the aclTensor, then free its memory."""
        super().close()
        if self.buffer:
            self.buffer.close()

    def __repr__(self) -> str:
        return f"<DeviceTensor {self.dtype}{list(self.shape)} handle={self.handle:#x}>"


def _destroy_scalar(api, handle: int) -> None:
    api.aclDestroyScalar(handle)


class Scalar(OwnedHandle):
    """An ``aclScalar`` (host value, copied by CANN at creation)."""

    def __init__(self, context_or_runtime, value: float | int | bool, dtype: np.typing.DTypeLike):
        rt = getattr(context_or_runtime, "runtime", context_or_runtime)
        self.dtype = np.dtype(dtype)
        self.value = value
        raw = np.array([value], dtype=self.dtype).tobytes()
        buf = ctypes.create_string_buffer(raw, len(raw))
        api = rt.api
        self.handle: int = api.aclCreateScalar(buf, int(acl_dtype(self.dtype)))
        self._own(_destroy_scalar, api, self.handle)

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.handle)

    def __repr__(self) -> str:
        return f"<Scalar {self.value!r}:{self.dtype}>"
