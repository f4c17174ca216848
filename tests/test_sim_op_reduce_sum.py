"""aclnnReduceSum on the simulator: dims (negative, empty = all), keepDims, the dtype
argument (cast first, then summed), strided views and empty reductions against numpy, and the
validation errors."""

from __future__ import annotations

import _rawacl as r
import numpy as np
import op_references as ref
import pytest
from _simops import ACL_DT, Session, values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@pytest.fixture()
def sess():
    s = Session()
    yield s
    s.close()


def compare(got, want, dtype):
    dtype = np.dtype(dtype)
    if ref.category(dtype) <= 1:
        np.testing.assert_array_equal(got, want)
    else:
        rtol, atol = ref.tolerance(dtype)
        scale = 8.0  # sums of up to 256 terms of |x| ~ 4: absolute error grows with the count
        np.testing.assert_allclose(
            got.astype(np.complex128), want.astype(np.complex128), rtol=rtol, atol=atol * scale
        )


@given(data=st.data())
@SETTINGS
def test_reduce_sum_matches_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    nd = len(shape)
    dims = data.draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd)) if nd else []
    dims = [d - nd if data.draw(st.booleans()) else d for d in dims]
    keep = data.draw(st.booleans())
    xdt = data.draw(st.sampled_from(ref.MATH_DTYPES))
    dtype = data.draw(st.sampled_from([xdt, *ref.MATH_DTYPES]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = values(rng, shape, xdt)
    if ref.category(dtype) == 2 and ref.category(xdt) == 1:
        x = (x % 64).astype(xdt)  # exact in every float type
    want = ref.reduce_sum(x, dims, keep, dtype)
    s = Session()
    try:
        tx, _, _ = s.tensor(x, data.draw(st.sampled_from(["contiguous", "strided", "transposed"])))
        o = s.output(want.shape, dtype)
        rc = s.call("aclnnReduceSum", tx, s.int_array(dims), keep, ACL_DT[np.dtype(dtype)], o.t)
        assert rc == r.OK, s.msg()
        compare(o.read(), want, dtype)
    finally:
        s.close()


def test_empty_reduction_gives_zeros(sess):
    tx, _, _ = sess.tensor(np.zeros((3, 0), np.float32))
    o = sess.output((3,), np.float32)
    assert sess.call("aclnnReduceSum", tx, sess.int_array([1]), False, 0, o.t) == r.OK
    np.testing.assert_array_equal(o.read(), np.zeros(3, np.float32))


def test_validation_errors(sess):
    tx, _, _ = sess.tensor(np.ones((2, 3), np.float32))
    o2 = sess.output((2,), np.float32)
    cases = [
        ((None, sess.int_array([1]), False, 0, o2.t), r.NN_NULLPTR, "self is NULL"),
        ((tx, None, False, 0, o2.t), r.NN_NULLPTR, "dim is NULL"),
        ((tx, sess.int_array([2]), False, 0, o2.t), r.NN_INVALID, "out of range"),
        ((tx, sess.int_array([1, -1]), False, 0, o2.t), r.NN_INVALID, "repeats"),
        ((tx, sess.int_array([1]), True, 0, o2.t), r.NN_INVALID, "must be [2, 1]"),
        ((tx, sess.int_array([1]), False, 3, o2.t), r.NN_INVALID, "must equal dtype INT32"),
        ((tx, sess.int_array([1]), False, 7, o2.t), r.NN_INVALID, "dtype UINT16 is not supported"),
    ]
    for args, code, frag in cases:
        rc = sess.call("aclnnReduceSum", *args)
        msg = sess.msg()
        assert rc == code and frag in msg, (rc, msg)
