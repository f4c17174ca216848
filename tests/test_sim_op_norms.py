"""aclnnSoftmax, aclnnRmsNorm and aclnnLayerNorm on the simulator: hypothesis shapes, dims and
dtypes against float64 numpy references (tolerance of the output dtype), strided and
transposed inputs, optional LayerNorm weight/bias/mean/rstd, empty tensors, validation."""

from __future__ import annotations

import _rawacl as r
import numpy as np
import op_references as ref
import pytest
from _simops import Session, values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
NORM = [ref.F32, ref.F16, ref.BF16]
LAYOUTS = st.sampled_from(["contiguous", "strided", "transposed"])


@pytest.fixture()
def sess():
    s = Session()
    yield s
    s.close()


def close(got, want, dtype, scale=4.0):
    rtol, atol = ref.tolerance(dtype)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol * scale)


@given(data=st.data())
@SETTINGS
def test_softmax_matches_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=5))
    nd = len(shape)
    dim = data.draw(st.integers(-max(nd, 1), max(nd, 1) - 1))
    xdt = data.draw(st.sampled_from([*NORM, ref.F64]))
    outdt = data.draw(st.sampled_from([xdt, ref.F32]))
    x = values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), shape, xdt)
    want = ref.softmax(x, dim)
    s = Session()
    try:
        tx, _, _ = s.tensor(x, data.draw(LAYOUTS))
        o = s.output(shape, outdt, data.draw(st.sampled_from(["contiguous", "strided"])))
        assert s.call("aclnnSoftmax", tx, dim, o.t) == r.OK, s.msg()
        close(o.read(), want, outdt if xdt != ref.F64 else ref.F32)
    finally:
        s.close()


@given(data=st.data())
@SETTINGS
def test_rms_norm_matches_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=6))
    g = data.draw(st.integers(1, len(shape)))
    xdt, gdt = data.draw(st.sampled_from(NORM)), data.draw(st.sampled_from(NORM))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x, gamma = values(rng, shape, xdt), values(rng, shape[len(shape) - g :], gdt)
    eps = data.draw(st.sampled_from([1e-6, 1e-2]))
    y_want, rstd_want = ref.rms_norm(x, gamma, eps)
    stat_shape = rstd_want.shape if data.draw(st.booleans()) else rstd_want.shape[: len(shape) - g]
    s = Session()
    try:
        tx, _, _ = s.tensor(x, data.draw(LAYOUTS))
        tg, _, _ = s.tensor(gamma, data.draw(LAYOUTS))
        y, rs = s.output(shape, xdt), s.output(stat_shape, np.float32)
        assert s.call("aclnnRmsNorm", tx, tg, eps, y.t, rs.t) == r.OK, s.msg()
        close(y.read(), y_want, xdt, scale=8.0)
        close(rs.read(), rstd_want.reshape(stat_shape), ref.F32)
    finally:
        s.close()


@given(data=st.data())
@SETTINGS
def test_layer_norm_matches_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=6))
    g = data.draw(st.integers(1, len(shape)))
    xdt = data.draw(st.sampled_from(NORM))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = values(rng, shape, xdt)
    norm_shape = shape[len(shape) - g :]
    w = (
        values(rng, norm_shape, data.draw(st.sampled_from(NORM)))
        if data.draw(st.booleans())
        else None
    )
    b = (
        values(rng, norm_shape, data.draw(st.sampled_from(NORM)))
        if data.draw(st.booleans())
        else None
    )
    with_stats = data.draw(st.booleans())
    eps = 1e-5
    y_want, mean_want, rstd_want = ref.layer_norm(x, g, w, b, eps)
    s = Session()
    try:
        tx, _, _ = s.tensor(x, data.draw(LAYOUTS))
        tw = s.tensor(w)[0] if w is not None else None
        tb = s.tensor(b)[0] if b is not None else None
        y = s.output(shape, xdt)
        mean = s.output(mean_want.shape, np.float32) if with_stats else None
        rstd = s.output(rstd_want.shape, np.float32) if with_stats else None
        rc = s.call(
            "aclnnLayerNorm", tx, s.int_array(norm_shape), tw, tb, eps, y.t,
            mean.t if mean else None, rstd.t if rstd else None,
        )  # fmt: skip
        assert rc == r.OK, s.msg()
        close(y.read(), y_want, xdt, scale=8.0)
        if with_stats:
            close(mean.read(), mean_want, ref.F32)
            np.testing.assert_allclose(rstd.read(), rstd_want, rtol=1e-4)
    finally:
        s.close()


def test_empty_inputs_succeed(sess):
    tx, _, _ = sess.tensor(np.zeros((0, 4), np.float32))
    tg, _, _ = sess.tensor(np.ones((4,), np.float32))
    o = sess.output((0, 4), np.float32)
    assert sess.call("aclnnSoftmax", tx, 1, o.t) == r.OK
    rs = sess.output((0, 1), np.float32)
    assert sess.call("aclnnRmsNorm", tx, tg, 1e-6, o.t, rs.t) == r.OK
    assert (
        sess.call("aclnnLayerNorm", tx, sess.int_array([4]), None, None, 1e-5, o.t, None, None)
        == r.OK
    )


def test_validation_errors(sess):
    x, _, _ = sess.tensor(np.ones((2, 4), np.float32))
    xi, _, _ = sess.tensor(np.ones((2, 4), np.int32))
    g3, _, _ = sess.tensor(np.ones((3,), np.float32))
    g4, _, _ = sess.tensor(np.ones((4,), np.float32))
    y, rs, bad = (
        sess.output((2, 4), np.float32),
        sess.output((2, 1), np.float32),
        sess.output((4,), np.float32),
    )
    cases = [
        (("aclnnSoftmax", None, 0, y.t), r.NN_NULLPTR, "self is NULL"),
        (("aclnnSoftmax", x, 2, y.t), r.NN_INVALID, "dim 2 is out of range"),
        (("aclnnSoftmax", xi, 0, y.t), r.NN_INVALID, "self dtype INT32"),
        (("aclnnSoftmax", x, 0, bad.t), r.NN_INVALID, "must equal self shape"),
        (("aclnnRmsNorm", x, None, 1e-6, y.t, rs.t), r.NN_NULLPTR, "gamma is NULL"),
        (("aclnnRmsNorm", x, g3, 1e-6, y.t, rs.t), r.NN_INVALID, "trailing dims"),
        (("aclnnRmsNorm", x, g4, 1e-6, y.t, bad.t), r.NN_INVALID, "rstdOut shape"),
        (
            ("aclnnLayerNorm", x, None, None, None, 1e-5, y.t, None, None),
            r.NN_NULLPTR,
            "normalizedShape is NULL",
        ),
        (
            ("aclnnLayerNorm", x, sess.int_array([3]), None, None, 1e-5, y.t, None, None),
            r.NN_INVALID,
            "trailing dims",
        ),
        (
            ("aclnnLayerNorm", x, sess.int_array([4]), g3, None, 1e-5, y.t, None, None),
            r.NN_INVALID,
            "weightOptional shape",
        ),
        (
            ("aclnnLayerNorm", x, sess.int_array([4]), None, None, 1e-5, y.t, bad.t, None),
            r.NN_INVALID,
            "meanOutOptional shape",
        ),
    ]
    for (op, *args), code, frag in cases:
        rc = sess.call(op, *args)
        msg = sess.msg()
        assert rc == code and frag in msg, (op, rc, msg)
