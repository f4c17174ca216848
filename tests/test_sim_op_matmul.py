"""aclnnMatmul on the simulator: torch.matmul's 1-D / 2-D / batched-broadcast rules, strided
and transposed views, cubeMathType (USE_FP16 rounds FLOAT inputs to fp16), K = 0, against a
float64 numpy reference; validation errors."""

from __future__ import annotations

import _rawacl as r
import numpy as np
import op_references as ref
import pytest
from _simops import Session, values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
FLOATS = [ref.F32, ref.F16, ref.BF16]


@pytest.fixture()
def sess():
    s = Session()
    yield s
    s.close()


@st.composite
def operand_shapes(draw):
    n, k, m = draw(st.integers(1, 5)), draw(st.integers(0, 6)), draw(st.integers(1, 5))
    a_nd, b_nd = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch = draw(st.lists(st.integers(1, 3), min_size=2, max_size=2))
    a = [k] if a_nd == 1 else [*[draw(st.sampled_from([1, b])) for b in batch][4 - a_nd :], n, k]
    b = [k] if b_nd == 1 else [*[draw(st.sampled_from([1, b])) for b in batch][4 - b_nd :], k, m]
    return a, b


@given(data=st.data())
@SETTINGS
def test_matmul_matches_numpy(data):
    a_shape, b_shape = data.draw(operand_shapes())
    adt, bdt = data.draw(st.sampled_from(FLOATS)), data.draw(st.sampled_from(FLOATS))
    promoted = ref.promote(adt, bdt)
    outdt = data.draw(st.sampled_from([d for d in FLOATS if ref.can_cast(promoted, d)]))
    cube = data.draw(st.sampled_from([0, 1, 2, 3]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a, b = values(rng, a_shape, adt), values(rng, b_shape, bdt)
    round_to = ref.F16 if cube == 2 and promoted == ref.F32 else None
    want = ref.matmul(a, b, round_to)
    s = Session()
    try:
        ta, _, _ = s.tensor(a, data.draw(st.sampled_from(["contiguous", "strided", "transposed"])))
        tb, _, _ = s.tensor(b, data.draw(st.sampled_from(["contiguous", "strided", "transposed"])))
        o = s.output(want.shape, outdt)
        rc = s.call("aclnnMatmul", ta, tb, o.t, cube)
        assert rc == r.OK, s.msg()
        rtol, atol = ref.tolerance(outdt)
        if cube in (1, 3) and promoted == ref.F32:
            rtol, atol = 2e-3, 2e-2  # HF32 keeps 10 mantissa bits of each input
        np.testing.assert_allclose(o.read().astype(np.float64), want, rtol=rtol, atol=atol * 8)
    finally:
        s.close()


def test_use_fp16_rounds_float_inputs(sess):
    """1 + 2^-12 is not an fp16 value: with USE_FP16 the product sees 1.0."""
    a = np.array([[1 + 2.0**-12]], np.float32)
    ta, _, _ = sess.tensor(a)
    tb, _, _ = sess.tensor(np.ones((1, 1), np.float32))
    o = sess.output((1, 1), np.float32)
    assert sess.call("aclnnMatmul", ta, tb, o.t, 0) == r.OK
    assert o.read()[0, 0] == np.float32(1 + 2.0**-12)
    assert sess.call("aclnnMatmul", ta, tb, o.t, 2) == r.OK
    assert o.read()[0, 0] == np.float32(1.0)


def test_validation_errors(sess):
    t23, _, _ = sess.tensor(np.ones((2, 3), np.float32))
    t32, _, _ = sess.tensor(np.ones((3, 2), np.float32))
    ti, _, _ = sess.tensor(np.ones((3, 2), np.int32))
    o22 = sess.output((2, 2), np.float32)
    cases = [
        ((None, t32, o22.t, 0), r.NN_NULLPTR, "self is NULL"),
        ((t23, t32, None, 0), r.NN_NULLPTR, "out is NULL"),
        ((t23, t23, o22.t, 0), r.NN_INVALID, "cannot be multiplied"),
        ((t23, t32, o22.t, 4), r.NN_INVALID, "cubeMathType 4"),
        ((t23, ti, o22.t, 0), r.NN_INVALID, "mat2 dtype INT32"),
        ((t32, t23, o22.t, 0), r.NN_INVALID, "must be [3, 3]"),
    ]
    for args, code, frag in cases:
        rc = sess.call("aclnnMatmul", *args)
        msg = sess.msg()
        assert rc == code and frag in msg, (rc, msg)
