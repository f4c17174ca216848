"""Binding helpers for aclIntArray / aclFloatArray / aclBoolArray / aclTensorList /
aclScalarList (stress.acl.params): owned handles that follow CANN's ownership rules."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from stress import acl


def _size(rt, fn: str, handle: int) -> int:
    n = ctypes.c_uint64()
    getattr(rt.api, fn)(handle, ctypes.byref(n))
    return n.value


@pytest.mark.parametrize(
    ("cls", "getter", "values"),
    [
        (acl.IntArray, "aclGetIntArraySize", [1, -2, 1 << 40]),
        (acl.FloatArray, "aclGetFloatArraySize", [0.5, 2.0]),
        (acl.BoolArray, "aclGetBoolArraySize", [True, False, True, True]),
        (acl.IntArray, "aclGetIntArraySize", []),
    ],
)
def test_arrays_are_owned_handles(rt, cls, getter, values):
    before = rt.live_objects()["arrays"]
    with cls(rt, values) as arr:
        assert len(arr) == len(values)
        assert _size(rt, getter, arr.handle) == len(values)
        assert rt.live_objects()["arrays"] == before + 1
    assert rt.live_objects()["arrays"] == before


def test_tensor_list_owns_its_members_handles(rt, ctx):
    """CANN's aclDestroyTensorList destroys the member tensors (acl_op_api.cpp): after the list
    is closed no aclTensor is left, and closing a member frees only its memory (no second
    aclDestroyTensor, which CANN would turn into a double free)."""
    live = rt.live_objects()
    members = [acl.DeviceTensor.from_array(ctx, np.full((2, 3), i, np.float32)) for i in range(3)]
    tl = acl.TensorList(ctx, members)
    assert _size(rt, "aclGetTensorListSize", tl.handle) == 3
    assert rt.live_objects()["lists"] == live["lists"] + 1
    for m in members:
        m.close()  # memory freed; the aclTensor belongs to the list
    assert rt.live_objects()["tensors"] == live["tensors"] + 3
    tl.close()
    after = rt.live_objects()
    assert after["tensors"] == live["tensors"] and after["lists"] == live["lists"]
    assert after["allocations"] == live["allocations"]


def test_scalar_list_owns_its_members(rt):
    live = rt.live_objects()
    members = [acl.Scalar(rt, float(i), np.float32) for i in range(4)]
    with acl.ScalarList(rt, members) as sl:
        assert len(sl) == 4 and _size(rt, "aclGetScalarListSize", sl.handle) == 4
        assert members and all(m.closed for m in members)  # handed over
    assert rt.live_objects()["scalars"] == live["scalars"]


def test_list_of_a_closed_member_is_refused(rt):
    s = acl.Scalar(rt, 1.0, np.float32)
    s.close()
    with pytest.raises(ValueError, match="closed"):
        acl.ScalarList(rt, [s])
