"""aclnnCat on the simulator: a tensor list of mixed dtypes (promoted, then converted to out's
dtype), strided and transposed members, negative dims, legacy 1-D empty members skipped,
against numpy.concatenate; validation errors."""

from __future__ import annotations

import ctypes

import _rawacl as r
import numpy as np
import op_references as ref
import pytest
from _simops import Session, bits_view, values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


def tensor_list(s: Session, tensors: list[int]) -> int:
    """aclCreateTensorList; the list owns its members from here on (destroying it destroys
    them, as in CANN), so the session stops tracking them."""
    nb = s.acl.libs["nnopbase"]
    nb.aclCreateTensorList.restype = ctypes.c_void_p
    nb.aclCreateTensorList.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint64]
    nb.aclDestroyTensorList.argtypes = [ctypes.c_void_p]
    arr = (ctypes.c_void_p * max(len(tensors), 1))(*tensors)
    h = nb.aclCreateTensorList(arr, len(tensors))
    assert h, s.msg()
    for t in tensors:
        s.tensors.remove(t)
    s.others.append(("aclDestroyTensorList", h))
    if not hasattr(s.acl, "aclDestroyTensorList"):
        s.acl.aclDestroyTensorList = nb.aclDestroyTensorList
    return h


@pytest.fixture()
def sess():
    s = Session()
    yield s
    s.close()


@given(data=st.data())
@SETTINGS
def test_cat_matches_numpy(data):
    nd = data.draw(st.integers(1, 4))
    base = data.draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd))
    dim = data.draw(st.integers(-nd, nd - 1))
    count = data.draw(st.integers(1, 4))
    dtypes = [data.draw(st.sampled_from(ref.MATH_DTYPES)) for _ in range(count)]
    promoted = dtypes[0]
    for d in dtypes[1:]:
        promoted = ref.promote(promoted, d)
    outdt = data.draw(st.sampled_from([d for d in ref.MATH_DTYPES if ref.can_cast(promoted, d)]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    parts = []
    for d in dtypes:
        shape = list(base)
        shape[dim] = data.draw(st.integers(0, 3))
        parts.append(values(rng, shape, d))
    legacy = data.draw(st.booleans()) and nd > 1
    s = Session()
    try:
        members = [
            s.tensor(p, data.draw(st.sampled_from(["contiguous", "strided", "transposed"])))[0]
            for p in parts
        ]
        if legacy:
            members.insert(
                data.draw(st.integers(0, len(members))), s.tensor(np.zeros(0, np.float32))[0]
            )
        want = np.concatenate([ref.to_out(p, outdt) for p in parts], axis=dim)
        o = s.output(want.shape, outdt)
        rc = s.call("aclnnCat", tensor_list(s, members), dim, o.t)
        assert rc == r.OK, s.msg()
        if np.dtype(outdt).kind == "c":
            np.testing.assert_array_equal(o.read(), want)
        else:
            np.testing.assert_array_equal(bits_view(o.read()), bits_view(want.astype(outdt)))
    finally:
        s.close()


def test_validation_errors(sess):
    a = sess.tensor(np.ones((2, 3), np.float32))[0]
    b = sess.tensor(np.ones((2, 4), np.float32))[0]
    c = sess.tensor(np.ones((2, 3), np.float32))[0]
    o = sess.output((4, 3), np.float32)
    oi = sess.output((4, 3), np.int32)
    assert sess.call("aclnnCat", None, 0, o.t) == r.NN_NULLPTR and "tensors is NULL" in sess.msg()
    lst = tensor_list(sess, [a, b])
    assert sess.call("aclnnCat", lst, 0, o.t) == r.NN_INVALID and "does not match" in sess.msg()
    lst2 = tensor_list(sess, [c])
    assert sess.call("aclnnCat", lst2, 2, o.t) == r.NN_INVALID and "out of range" in sess.msg()
    assert sess.call("aclnnCat", lst2, 0, o.t) == r.NN_INVALID and "add up to 2" in sess.msg()
    assert sess.call("aclnnCat", lst2, 0, oi.t) == r.NN_INVALID and "cannot be cast" in sess.msg()
