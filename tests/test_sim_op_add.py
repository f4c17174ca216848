"""aclnnAdd / Adds / InplaceAdd / InplaceAdds and aclnnMul / InplaceMul on the simulator
through raw ctypes, against the numpy references in op_references.py: every pair of the 12
real dtypes with torch's promotion, broadcasting, strided and transposed views, empty tensors,
bit-exact results (tolerance only for complex), and the documented validation errors."""

from __future__ import annotations

import _rawacl as r
import numpy as np
import op_references as ref
import pytest
from _simops import Out, Session, bits_view, values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
DTYPES = st.sampled_from(ref.MATH_DTYPES)
LAYOUTS = st.sampled_from(["contiguous", "strided", "transposed"])


@pytest.fixture()
def sess():
    s = Session()
    yield s
    s.close()


def check_equal(got: np.ndarray, want: np.ndarray, dtype) -> None:
    assert got.shape == want.shape
    if np.dtype(dtype).kind == "c":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    elif np.dtype(dtype).kind == "f" or np.dtype(dtype) == ref.BF16:
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
    else:
        np.testing.assert_array_equal(bits_view(got), bits_view(want.astype(dtype)))


def alpha_for(promoted, draw):
    """An alpha that casts to the promoted type, and its scalar dtype."""
    if ref.category(promoted) <= 1:
        return draw(st.sampled_from([0, 1, 2, -3])), np.int64
    return draw(st.sampled_from([1.0, 0.5, -1.25, 3.0])), draw(
        st.sampled_from([np.float32, np.float64])
    )


@given(data=st.data())
@SETTINGS
def test_binary_tensor_forms_match_numpy(data):
    kind = data.draw(st.sampled_from(["add", "mul"]))
    inplace = data.draw(st.booleans())
    xs, ys = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4)
    ).input_shapes
    if inplace:
        xs = np.broadcast_shapes(xs, ys)
    xdt, ydt = data.draw(DTYPES), data.draw(DTYPES)
    promoted = ref.promote(xdt, ydt)
    outdt = (
        xdt
        if inplace
        else data.draw(st.sampled_from([d for d in ref.MATH_DTYPES if ref.can_cast(promoted, d)]))
    )
    if not ref.can_cast(promoted, outdt):
        outdt = None  # in-place into a lower category: must be refused
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x, y = values(rng, xs, xdt), values(rng, ys, ydt)
    alpha, adt = alpha_for(promoted, data.draw)
    s = Session()
    try:
        tx, px, gx = s.tensor(x, data.draw(LAYOUTS))
        ty, _, _ = s.tensor(y, data.draw(LAYOUTS))
        out_shape = np.broadcast_shapes(xs, ys)
        a = s.scalar(alpha, adt)
        if inplace:
            op = "aclnnInplaceAdd" if kind == "add" else "aclnnInplaceMul"
            args = (tx, ty, a) if kind == "add" else (tx, ty)
            rc = s.call(op, *args)
            if outdt is None:
                assert rc == r.NN_INVALID and "cannot be cast to selfRef" in s.msg()
                return
            got = Out(s, tx, px, xs, np.dtype(xdt), gx).read()
        else:
            o = s.output(out_shape, outdt, data.draw(st.sampled_from(["contiguous", "strided"])))
            op = "aclnnAdd" if kind == "add" else "aclnnMul"
            args = (tx, ty, a, o.t) if kind == "add" else (tx, ty, o.t)
            rc = s.call(op, *args)
            got = o.read()
        assert rc == r.OK, s.msg()
        want = ref.binary(kind, x, y, alpha, promoted, outdt)
        check_equal(got, want, outdt)
    finally:
        s.close()


@given(data=st.data())
@SETTINGS
def test_adds_scalar_forms_match_numpy(data):
    inplace = data.draw(st.booleans())
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    xdt = data.draw(DTYPES)
    sval, sdt, scat = data.draw(
        st.sampled_from(
            [
                (2, np.int64, 1),
                (-3, np.int32, 1),
                (0.5, np.float32, 2),
                (1.25, np.float64, 2),
                (1 - 2j, np.complex64, 3),
            ]
        )
    )
    promoted = ref.promote_scalar(xdt, scat)
    outdt = xdt if inplace else promoted
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = values(rng, shape, xdt)
    alpha, adt = alpha_for(promoted, data.draw)
    s = Session()
    try:
        tx, px, gx = s.tensor(x, data.draw(LAYOUTS))
        other, a = s.scalar(sval, sdt), s.scalar(alpha, adt)
        if inplace:
            rc = s.call("aclnnInplaceAdds", tx, other, a)
            if not ref.can_cast(promoted, xdt):
                assert rc == r.NN_INVALID, s.msg()
                return
            got = Out(s, tx, px, shape, np.dtype(xdt), gx).read()
        else:
            o = s.output(shape, outdt)
            rc = s.call("aclnnAdds", tx, other, a, o.t)
            got = o.read()
        assert rc == r.OK, s.msg()
        check_equal(got, ref.binary("add", x, np.asarray(sval), alpha, promoted, outdt), outdt)
    finally:
        s.close()


def test_empty_tensors_succeed_and_write_nothing(sess):
    x = np.zeros((0, 3), np.float32)
    tx, _, _ = sess.tensor(x)
    ty, _, _ = sess.tensor(np.ones((3,), np.float32))
    o = sess.output((0, 3), np.float32)
    assert sess.call("aclnnAdd", tx, ty, sess.scalar(1.0, np.float32), o.t) == r.OK
    assert sess.call("aclnnMul", tx, ty, o.t) == r.OK


def test_validation_errors(sess):
    t, _, _ = sess.tensor(np.ones((2, 3), np.float32))
    t4, _, _ = sess.tensor(np.ones((4,), np.float32))
    ti, _, _ = sess.tensor(np.ones((2, 3), np.int32))
    a = sess.scalar(1.0, np.float32)
    cases = [
        (("aclnnAdd", None, t, a, t), r.NN_NULLPTR, "self is NULL"),
        (("aclnnAdd", t, t, None, t), r.NN_NULLPTR, "alpha is NULL"),
        (("aclnnMul", t, None, t), r.NN_NULLPTR, "other is NULL"),
        (("aclnnAdds", t, None, a, t), r.NN_NULLPTR, "other is NULL"),
        (("aclnnInplaceAdd", None, t, a), r.NN_NULLPTR, "selfRef is NULL"),
        (("aclnnAdd", t, t4, a, t), r.NN_INVALID, "cannot be broadcast"),
        (("aclnnMul", t, t, t4), r.NN_INVALID, "must equal the broadcast shape"),
        (("aclnnAdd", t, t, a, ti), r.NN_INVALID, "cannot be cast to out dtype INT32"),
        (("aclnnAdd", ti, ti, sess.scalar(0.5, np.float32), ti), r.NN_INVALID, "not an integer"),
        (("aclnnInplaceMul", ti, t), r.NN_INVALID, "cannot be cast to selfRef"),
    ]
    for (op, *args), code, frag in cases:
        rc = sess.call(op, *args)
        msg = sess.msg()
        assert rc == code and frag in msg and op in msg, (op, rc, msg)


def test_inplace_add_with_broadcast_other_reads_before_it_writes(sess):
    """selfRef += other where other is a view of selfRef's own first row (aliasing)."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    tx, px, gx = sess.tensor(x)
    row = r.make_tensor(sess.acl, (3,), 0, px)  # aliases row 0 of selfRef
    sess.tensors.append(row)
    assert sess.call("aclnnInplaceAdd", tx, row, sess.scalar(1.0, np.float32)) == r.OK
    np.testing.assert_array_equal(
        Out(sess, tx, px, (2, 3), np.dtype(np.float32), gx).read(), x + x[0]
    )
