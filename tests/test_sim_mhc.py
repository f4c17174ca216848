"""The simulator's mHC kernels: aclnnMhcPreSinkhorn and aclnnMhcPreSinkhornBackward.

Against the numpy reference (stress/ops/_mhc_reference.py, exact-gradient backward) within the
OpSpec tolerances, the documented parameter errors and their messages, empty batches, the
deterministic / non-deterministic reductions, executor lifetime and leaks, the installed headers
and an unmodified third-party ctypes script.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stress import acl, sim
from stress.acl.enums import Format
from stress.engine.call.prepared import run_once
from stress.ops import _mhc_reference as ref
from stress.ops.mhc import MHC_PRE_SINKHORN as FWD
from stress.ops.mhc import MHC_PRE_SINKHORN_BACKWARD as BWD
from stress.ops.spec import AttrArg, TensorArg

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
FWD_API = "aclnnMhcPreSinkhornGetWorkspaceSize"
BWD_API = "aclnnMhcPreSinkhornBackwardGetWorkspaceSize"
NULLPTR, INVALID = 161001, 161002


def close(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> float:
    """Worst |a - e| / (atol * max|e| + rtol * |e|) (the OpSpec comparison); <= 1 passes."""
    assert actual.shape == expected.shape
    if actual.size == 0:
        return 0.0
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    allowance = atol * max(float(np.abs(e).max()), 1e-30) + rtol * np.abs(e)
    return float(np.max(np.abs(a - e) / np.maximum(allowance, 1e-300)))


def params(spec, **raw):
    return spec.parse_params({"N": 4, **raw}, "test")


def generate(ctx, stream, spec, p, seed):
    return spec.generate(p, seed, forward=lambda s, pp, i: run_once(ctx, stream, s, pp, i))


def assert_matches_reference(spec, p, inputs, out) -> None:
    expected = spec.reference(p, inputs)
    assert set(out) == set(expected)
    for name, exp in expected.items():
        assert out[name].dtype == exp.dtype, name
        ratio = close(out[name], exp, *spec.tolerances(p, name))
        assert ratio <= 1.0, f"{spec.name} {dict(p)}: {name} off by {ratio:.3g} x tolerance"


def digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


# ---- against the numpy reference --------------------------------------------------------------

# (B, S, C, dtype): 1 token, tile remainders (17, 25, 100 tokens), more blocks than threads,
# C = 128 and large C, empty batches, both dtypes.
SHAPES = [
    (1, 1, 128, "bf16"),
    (1, 1, 128, "fp16"),
    (2, 3, 128, "bf16"),
    (2, 3, 128, "fp16"),
    (1, 8, 1024, "bf16"),
    (1, 8, 1024, "fp16"),
    (3, 5, 256, "bf16"),
    (2, 9, 384, "fp16"),
    (1, 17, 128, "bf16"),
    (4, 6, 512, "bf16"),
    (2, 13, 640, "fp16"),
    (1, 25, 128, "fp16"),
    (5, 5, 256, "bf16"),
    (1, 64, 128, "bf16"),
    (2, 32, 256, "fp16"),
    (0, 8, 128, "bf16"),
    (3, 0, 256, "fp16"),
    (1, 3, 1152, "bf16"),
    (7, 1, 128, "fp16"),
    (2, 2, 2048, "bf16"),
    (1, 100, 128, "bf16"),
]


@pytest.mark.parametrize(("B", "S", "C", "dtype"), SHAPES)
def test_forward_matches_reference(ctx, stream, B, S, C, dtype):
    p = params(FWD, B=B, S=S, C=C, dtype=dtype)
    inputs = generate(ctx, stream, FWD, p, seed=B * 1000 + S * 10 + C)
    assert_matches_reference(FWD, p, inputs, run_once(ctx, stream, FWD, p, inputs))


@pytest.mark.parametrize(("B", "S", "C", "dtype"), SHAPES)
def test_backward_matches_reference(ctx, stream, B, S, C, dtype):
    p = params(BWD, B=B, S=S, C=C, dtype=dtype)
    inputs = generate(ctx, stream, BWD, p, seed=B * 1000 + S * 10 + C + 7)
    assert_matches_reference(BWD, p, inputs, run_once(ctx, stream, BWD, p, inputs))


@pytest.mark.parametrize("deterministic", [False, True])
@pytest.mark.parametrize(("hc_eps", "norm_eps"), [(1e-4, 1e-5), (1e-2, 1e-3), (0.0, 1e-6)])
def test_eps_values(rt, ctx, stream, hc_eps, norm_eps, deterministic):
    rt.set_deterministic(deterministic)
    raw = {"B": 2, "S": 5, "C": 256, "hc_eps": hc_eps, "norm_eps": norm_eps}
    for spec in (FWD, BWD):
        p = params(spec, **raw)
        inputs = generate(ctx, stream, spec, p, seed=11)
        assert_matches_reference(spec, p, inputs, run_once(ctx, stream, spec, p, inputs))


@settings(
    max_examples=12,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    B=st.integers(0, 3),
    S=st.integers(1, 12),
    c_blocks=st.integers(1, 6),
    dtype=st.sampled_from(["bf16", "fp16"]),
    seed=st.integers(0, 2**31 - 1),
)
def test_random_shapes_match_reference(ctx, stream, B, S, c_blocks, dtype, seed):
    for spec in (FWD, BWD):
        p = params(spec, B=B, S=S, C=128 * c_blocks, dtype=dtype)
        inputs = generate(ctx, stream, spec, p, seed)
        assert_matches_reference(spec, p, inputs, run_once(ctx, stream, spec, p, inputs))


def test_forward_without_backward_outputs(ctx, stream):
    """needBackward=false: the five saved outputs are NULL and hin/hPost/hRes are unchanged."""
    full = params(FWD, B=2, S=4, C=256)
    lean = params(FWD, B=2, S=4, C=256, need_backward=False)
    inputs = generate(ctx, stream, FWD, full, seed=3)
    with_saved = run_once(ctx, stream, FWD, full, inputs)
    without = run_once(ctx, stream, FWD, lean, inputs)
    assert set(without) == {"hin", "hPost", "hRes"}
    for name, value in without.items():
        np.testing.assert_array_equal(value, with_saved[name])


def test_backward_is_the_exact_gradient_not_the_kernel_eps_variant(ctx, stream):
    """With a large hcEps the exact and kernel-eps gradients differ by far more than the
    tolerance; the simulator must match the exact one (the reference's DECISION)."""
    p = params(BWD, B=2, S=6, C=128, hc_eps=1e-2)
    inputs = generate(ctx, stream, BWD, p, seed=5)
    out = run_once(ctx, stream, BWD, p, inputs)
    assert_matches_reference(BWD, p, inputs, out)
    names = ("gradHin", "gradHPost", "gradHRes", "x", "phi", "alpha", "bias")
    saved = ("hPre", "hcBeforeNorm", "invRms", "sumOut", "normOut")
    kernel = ref.backward(*(inputs[k] for k in names + saved), hc_eps=1e-2, kernel_eps=True)
    assert close(out["gradBias"], kernel["gradBias"], *BWD.tolerances(p, "gradBias")) > 1.0


def test_forward_is_deterministic_and_thread_independent(ctx, stream):
    p = params(FWD, B=3, S=40, C=256)
    inputs = generate(ctx, stream, FWD, p, seed=8)
    runs = [run_once(ctx, stream, FWD, p, inputs) for _ in range(3)]
    for name in runs[0]:
        assert len({digest(r[name]) for r in runs}) == 1, name


# ---- hand-built calls -----------------------------------------------------------------------


class Args:
    """Device tensors for one phase-1 call of an mHC op, built from (shape, dtype) per tensor
    argument; ``override`` replaces some, ``null`` passes NULL for some.  Contents are zeros."""

    def __init__(self, ctx, spec, p, *, override=None, null=(), attrs=None, inputs=None):
        self.owned = []
        self.tensors = {}
        self.values = []
        override = override or {}
        for arg in spec.args:
            if isinstance(arg, AttrArg):
                self.values.append((attrs or {}).get(arg.name, arg.value(p)))
                continue
            assert isinstance(arg, TensorArg)
            if arg.name in null or not arg.present(p):
                self.values.append(None)
                continue
            if arg.name in override and not isinstance(override[arg.name], tuple):
                self.values.append(override[arg.name])  # a raw handle
                continue
            shape, dtype = override.get(arg.name, (arg.shape(p), arg.dtype(p)))
            if inputs is not None and arg.name in inputs and arg.name not in override:
                t = acl.DeviceTensor.from_array(ctx, np.asarray(inputs[arg.name]))
            else:
                t = acl.DeviceTensor(ctx, shape, dtype)
                if t.buffer:
                    t.buffer.fill(0)
            self.owned.append(t)
            self.tensors[arg.name] = t
            self.values.append(t)

    def close(self):
        for t in self.owned:
            t.close()


def phase1_error(ctx, spec, p, **kw) -> acl.AclError:
    args = Args(ctx, spec, p, **kw)
    try:
        with pytest.raises(acl.AclError) as info:
            call = acl.prepare(ctx, spec.function, *args.values)
            call.close()
        return info.value
    finally:
        args.close()


def phase1_ok(ctx, spec, p, **kw) -> int:
    args = Args(ctx, spec, p, **kw)
    try:
        call = acl.prepare(ctx, spec.function, *args.values)
        size = call.workspace_size
        call.close()
        return size
    finally:
        args.close()


class RawTensor:
    """An aclTensor with explicit strides / format over a fresh device buffer."""

    def __init__(self, ctx, view, strides, dtype, fmt=Format.ND, data=None, storage=None):
        api = ctx.runtime.api
        self.api = api
        storage = storage or view
        nbytes = int(np.prod(storage)) * np.dtype(dtype).itemsize
        self.buffer = acl.DeviceBuffer(ctx, nbytes)
        if data is not None:
            self.buffer.upload(np.ascontiguousarray(data))
        else:
            self.buffer.fill(0)
        i64 = ctypes.c_int64
        self.handle = api.aclCreateTensor(
            (i64 * len(view))(*view),
            len(view),
            int(acl.acl_dtype(dtype)),
            (i64 * len(view))(*strides),
            0,
            int(fmt),
            (i64 * len(storage))(*storage),
            len(storage),
            self.buffer.ptr,
        )

    def close(self):
        self.api.aclDestroyTensor(self.handle)
        self.buffer.close()


# ---- parameter errors ----------------------------------------------------------------------------

BASE = {"B": 1, "S": 2, "C": 128}


@pytest.mark.parametrize("name", [a.name for a in BWD.args if isinstance(a, TensorArg)])
def test_backward_null_tensor(ctx, name):
    err = phase1_error(ctx, BWD, params(BWD, **BASE), null=(name,))
    assert err.code == NULLPTR
    assert f"{BWD_API}: {name} is NULL" in err.message


@pytest.mark.parametrize("name", [a.name for a in FWD.args if isinstance(a, TensorArg)])
def test_forward_null_tensor(ctx, name):
    err = phase1_error(ctx, FWD, params(FWD, **BASE), null=(name,))
    assert err.code == NULLPTR
    assert f"{FWD_API}: {name} is NULL" in err.message


def test_forward_saved_outputs_may_be_null_without_backward(ctx):
    p = params(FWD, **BASE, need_backward=False)
    names = ("hPre", "hcBeforeNorm", "invRms", "sumOut", "normOut")
    assert phase1_ok(ctx, FWD, p, null=names) == 0


def test_null_workspace_size_and_executor(rt, ctx):
    p = params(BWD, **BASE)
    args = Args(ctx, BWD, p)
    try:
        fn = rt.api.raw.aclnnMhcPreSinkhornBackwardGetWorkspaceSize
        ex = ctypes.c_void_p()
        size = ctypes.c_uint64()
        assert fn(*args.values, None, ctypes.byref(ex)) == NULLPTR
        assert "workspaceSize is NULL" in rt.api.recent_error_message()
        assert fn(*args.values, ctypes.byref(size), None) == NULLPTR
        assert "executor is NULL" in rt.api.recent_error_message()
    finally:
        args.close()


def _bwd_p(**kw):
    return params(BWD, **{**BASE, **kw})


def _fwd_p(**kw):
    return params(FWD, **{**BASE, **kw})


def case(case_id, spec, arg, text="", *, B=1, attrs=None, **override):
    """One invalid call: ``override`` maps tensor names to (shape, dtype); the message must
    start with "<api>: <arg>" and contain ``text``."""
    p = (_fwd_p if spec is FWD else _bwd_p)(B=B)
    kw = {"override": override, "attrs": attrs}
    return pytest.param(spec, p, kw, arg, text, id=case_id)


X = "x"
ERROR_CASES = [
    case("bwd-N3", BWD, X, "N (dim 2)", x=((1, 2, 3, 128), BF16)),
    case("bwd-N8", BWD, X, "must be 4", x=((1, 2, 8, 128), BF16)),
    case("bwd-C100", BWD, X, "128", x=((1, 2, 4, 100), BF16)),
    case("bwd-C0", BWD, X, "> 0", x=((1, 2, 4, 0), BF16)),
    case("bwd-C1e5", BWD, X, "100000", x=((1, 1, 4, 100096), BF16)),
    case("bwd-x3d", BWD, X, "4-D", x=((2, 4, 128), BF16)),
    case("bwd-x5d", BWD, X, "4-D", x=((1, 1, 2, 4, 128), BF16)),
    case("bwd-x-f32", BWD, X, "BF16 or", x=((1, 2, 4, 128), F32)),
    case("bwd-gh-f32", BWD, "gradHin", "dtype", gradHin=((1, 2, 128), F32)),
    case("bwd-phi-f16", BWD, "phi", "FLOAT", phi=((24, 512), F16)),
    case("bwd-hpre-bf16", BWD, "hPre", "dtype", hPre=((1, 2, 4), BF16)),
    case("bwd-gphi-f16", BWD, "gradPhi", "dtype", gradPhi=((24, 512), F16)),
    case("bwd-gx-dtype", BWD, "gradX", "gradHin's dtype", gradX=((1, 2, 4, 128), F16)),
    case("bwd-iters10", BWD, "sumOut", "20 iterations", sumOut=((20, 1, 2, 4), F32)),
    case("bwd-iters-odd", BWD, "sumOut", "got 41", sumOut=((41, 1, 2, 4), F32)),
    case("bwd-sum3d", BWD, "sumOut", "4-D", sumOut=((40, 2, 4), F32)),
    case(
        "bwd-norm-iters",
        BWD,
        "normOut",
        "[2*numIters, B, S, N, N]",
        normOut=((20, 1, 2, 4, 4), F32),
    ),
    case("bwd-gh-shape", BWD, "gradHin", "[B, S, C]", gradHin=((1, 2, 256), BF16)),
    case("bwd-ghpost", BWD, "gradHPost", "[B, S, N]", gradHPost=((1, 2, 3), F32)),
    case("bwd-ghres-5", BWD, "gradHRes", "[B, S, N, N]", gradHRes=((1, 2, 4, 5), F32)),
    case("bwd-ghres-2d", BWD, "gradHRes", "[B, S, N*N]", gradHRes=((2, 16), F32)),
    case("bwd-ghres-15", BWD, "gradHRes", "[B, S, N*N]", gradHRes=((1, 2, 15), F32)),
    case("bwd-phi", BWD, "phi", "[N*N+2N, N*C]", phi=((24, 256), F32)),
    case("bwd-alpha", BWD, "alpha", "[3]", alpha=((4,), F32)),
    case("bwd-bias", BWD, "bias", "[N*N+2N]", bias=((1, 24), F32)),
    case("bwd-hcbn", BWD, "hcBeforeNorm", "", hcBeforeNorm=((1, 2, 23), F32)),
    case("bwd-invrms", BWD, "invRms", "[B, S, 1]", invRms=((1, 2), F32)),
    case("bwd-hpre-B", BWD, "hPre", "", hPre=((2, 2, 4), F32)),
    case("bwd-gradx", BWD, "gradX", "", gradX=((1, 2, 4, 256), BF16)),
    case("bwd-gradphi", BWD, "gradPhi", "", gradPhi=((24, 1024), F32)),
    case("bwd-gradalpha", BWD, "gradAlpha", "", gradAlpha=((1,), F32)),
    case("bwd-gradbias", BWD, "gradBias", "", gradBias=((25,), F32)),
    # empty (B = 0) but otherwise invalid: the checks come first
    case("bwd-empty-N3", BWD, X, "N (dim 2)", B=0, x=((0, 2, 3, 128), BF16)),
    case("bwd-empty-shape", BWD, "gradPhi", "", B=0, gradPhi=((24, 5), F32)),
    case("fwd-N3", FWD, X, "N (dim 2)", x=((1, 2, 3, 128), BF16)),
    case("fwd-C100", FWD, X, "128", x=((1, 2, 4, 100), BF16)),
    case("fwd-C0", FWD, X, "> 0", x=((1, 2, 4, 0), BF16)),
    case("fwd-C1e5", FWD, X, "100000", x=((1, 1, 4, 100096), BF16)),
    case("fwd-tnd", FWD, X, "Ascend 950", x=((2, 4, 128), BF16)),
    case("fwd-hcmult3", FWD, "hcMult", "must be 4", attrs={"hcMult": 3}),
    case("fwd-hcmult8", FWD, "hcMult", "must be 4", attrs={"hcMult": 8}),
    case("fwd-iters10", FWD, "numIters", "must be 20", attrs={"numIters": 10}),
    case("fwd-x-f32", FWD, X, "BF16 or", x=((1, 2, 4, 128), F32)),
    case("fwd-hin-dtype", FWD, "hin", "x's dtype", hin=((1, 2, 128), F16)),
    case("fwd-hpost-dtype", FWD, "hPost", "FLOAT", hPost=((1, 2, 4), BF16)),
    case("fwd-phi", FWD, "phi", "", phi=((24, 128), F32)),
    case("fwd-alpha", FWD, "alpha", "", alpha=((3, 1), F32)),
    case("fwd-bias", FWD, "bias", "", bias=((23,), F32)),
    case("fwd-hin", FWD, "hin", "[B, S, C]", hin=((1, 2, 4, 128), BF16)),
    case("fwd-hres", FWD, "hRes", "[B, S, N*N]", hRes=((1, 2, 4, 4), F32)),
    case("fwd-sumout", FWD, "sumOut", "", sumOut=((20, 1, 2, 4), F32)),
    case("fwd-normout", FWD, "normOut", "", normOut=((40, 1, 2, 4), F32)),
    case("fwd-invrms", FWD, "invRms", "", invRms=((1, 2, 2), F32)),
    case("fwd-empty-hcmult", FWD, "hcMult", "", B=0, attrs={"hcMult": 2}),
]


@pytest.mark.parametrize(("spec", "p", "kw", "arg", "text"), ERROR_CASES)
def test_invalid_parameter(ctx, spec, p, kw, arg, text):
    err = phase1_error(ctx, spec, p, **kw)
    api = FWD_API if spec is FWD else BWD_API
    assert err.code == INVALID, err
    assert err.message.startswith(f"{api}: {arg}"), err.message
    assert text in err.message
    assert err.message.endswith(f"[{INVALID}]")


def test_documented_message(ctx):
    err = phase1_error(ctx, BWD, _bwd_p(), override={"x": ((1, 2, 3, 128), BF16)})
    assert err.message == f"{BWD_API}: x: N (dim 2) must be 4, got 3 [161002]"


def test_saved_outputs_not_checked_without_backward(ctx):
    """needBackward=false ignores the five saved outputs even when they are passed."""
    p = _fwd_p(need_backward=False)
    bad = {"sumOut": ((3,), F32), "hPre": ((1,), BF16)}
    args = Args(ctx, FWD, _fwd_p(), override=bad, attrs={"needBackward": False})
    try:
        call = acl.prepare(ctx, FWD.function, *args.values)
        call.close()
    finally:
        args.close()
    assert phase1_ok(ctx, FWD, p) == 0


@pytest.mark.parametrize("fmt", [Format.FRACTAL_NZ, Format.NC1HWC0])
def test_private_format_rejected(ctx, fmt):
    t = RawTensor(ctx, (24, 512), (512, 1), F32, fmt=fmt)
    try:
        err = phase1_error(ctx, BWD, _bwd_p(), override={"phi": t.handle})
    finally:
        t.close()
    assert err.code == INVALID
    assert err.message.startswith(f"{BWD_API}: phi: format")


def test_non_contiguous_output_rejected(ctx):
    t = RawTensor(ctx, (24, 512), (1, 24), F32, storage=(512, 24))
    try:
        err = phase1_error(ctx, BWD, _bwd_p(), override={"gradPhi": t.handle})
    finally:
        t.close()
    assert err.code == INVALID
    assert err.message.startswith(f"{BWD_API}: gradPhi: outputs are written in place")


# ---- non-contiguous inputs, 3-D gradHRes, mixed dtypes ------------------------------------


def _run_args(ctx, stream, spec, args):
    call = acl.prepare(ctx, spec.function, *args.values)
    try:
        call.launch(stream)
        stream.synchronize()
    finally:
        call.close()
    return {o.name: args.tensors[o.name].download() for o in spec.outputs if o.name in args.tensors}


def test_non_contiguous_input_is_gathered(rt, ctx, stream):
    rt.set_deterministic(True)
    p = _bwd_p(B=2, S=5, C=256)
    inputs = generate(ctx, stream, BWD, p, seed=21)
    phi = np.asarray(inputs["phi"])
    # phi (24, 1024) stored transposed: storage (1024, 24), strides (1, 24)
    t = RawTensor(ctx, phi.shape, (1, phi.shape[0]), F32, data=phi.T, storage=phi.shape[::-1])
    try:
        plain = Args(ctx, BWD, p, inputs=inputs)
        strided = Args(ctx, BWD, p, inputs=inputs, override={"phi": t.handle})
        try:
            a = _run_args(ctx, stream, BWD, plain)
            b = _run_args(ctx, stream, BWD, strided)
        finally:
            plain.close()
            strided.close()
    finally:
        t.close()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert_matches_reference(BWD, p, inputs, b)


def test_grad_hres_may_be_flattened(rt, ctx, stream):
    rt.set_deterministic(True)
    p = _bwd_p(B=2, S=3, C=128)
    inputs = generate(ctx, stream, BWD, p, seed=4)
    flat = {**inputs, "gradHRes": np.asarray(inputs["gradHRes"]).reshape(2, 3, 16)}
    a4 = Args(ctx, BWD, p, inputs=inputs)
    a3 = Args(ctx, BWD, p, inputs=flat, override={"gradHRes": ((2, 3, 16), F32)})
    a3.tensors["gradHRes"].upload(flat["gradHRes"])
    try:
        r4 = _run_args(ctx, stream, BWD, a4)
        r3 = _run_args(ctx, stream, BWD, a3)
    finally:
        a4.close()
        a3.close()
    for name in r4:
        np.testing.assert_array_equal(r4[name], r3[name], err_msg=name)


def test_mixed_half_dtypes(ctx, stream):
    """x bf16 with gradHin/gradX fp16 is accepted (the API checks each against BF16/FP16)."""
    p = _bwd_p(B=1, S=4, C=128, dtype="bf16")
    inputs = generate(ctx, stream, BWD, p, seed=9)
    mixed = {**inputs, "gradHin": np.asarray(inputs["gradHin"]).astype(F16)}
    over = {"gradHin": ((1, 4, 128), F16), "gradX": ((1, 4, 4, 128), F16)}
    args = Args(ctx, BWD, p, inputs=mixed, override=over)
    args.tensors["gradHin"].upload(mixed["gradHin"])
    try:
        out = _run_args(ctx, stream, BWD, args)
    finally:
        args.close()
    exp = BWD.reference(p, mixed)
    assert out["gradX"].dtype == F16
    for name, value in exp.items():
        tol = (1e-3, 1e-3) if name == "gradX" else BWD.tolerances(p, name)
        assert close(out[name], value, *tol) <= 1.0, name


# ---- empty batch -----------------------------------------------------------------------------


def test_empty_backward_writes_zeros(ctx, stream):
    """The problem report's case: B=0, S=8, C=128 -> success, workspace 0, and gradPhi (49152
    bytes), gradAlpha, gradBias written as zeros over a 0xAB canary."""
    p = _bwd_p(B=0, S=8, C=128)
    inputs = generate(ctx, stream, BWD, p, seed=1)
    args = Args(ctx, BWD, p, inputs=inputs)
    try:
        grads = {n: args.tensors[n] for n in ("gradPhi", "gradAlpha", "gradBias")}
        for t in grads.values():
            t.buffer.fill(0xAB)
        assert grads["gradPhi"].nbytes == 49152
        assert grads["gradPhi"].download_bytes() == b"\xab" * 49152
        call = acl.prepare(ctx, BWD.function, *args.values)
        assert call.workspace_size == 0
        call.launch(stream)
        stream.synchronize()
        call.close()
        assert args.tensors["gradX"].size == 0
        for name, t in grads.items():
            assert t.download_bytes() == bytes(t.nbytes), name
    finally:
        args.close()
    out = run_once(ctx, stream, BWD, p, inputs)  # the engine's path (canary-filled outputs)
    assert out["gradX"].shape == (0, 8, 4, 128)
    for name, shape in (("gradPhi", (24, 512)), ("gradAlpha", (3,)), ("gradBias", (24,))):
        assert out[name].shape == shape
        assert not out[name].view(np.uint8).any(), name


def test_empty_forward(ctx, stream):
    p = _fwd_p(B=0, S=8, C=128)
    assert phase1_ok(ctx, FWD, p) == 0
    out = run_once(ctx, stream, FWD, p, generate(ctx, stream, FWD, p, seed=1))
    assert out and all(v.size == 0 for v in out.values())


# ---- determinism -----------------------------------------------------------------------------

# 64 tokens -> 8 blocks of 8: enough partials for the summation order to matter.
DET_SHAPE = {"B": 2, "S": 32, "C": 256}


def _backward_runs(ctx, stream, n):
    p = _bwd_p(**DET_SHAPE)
    inputs = generate(ctx, stream, BWD, p, seed=99)
    return p, inputs, [run_once(ctx, stream, BWD, p, inputs) for _ in range(n)]


def test_non_deterministic_reduction_varies(rt, ctx, stream):
    rt.set_deterministic(False)
    p, inputs, runs = _backward_runs(ctx, stream, 6)
    assert len({digest(r["gradPhi"]) for r in runs}) >= 2
    assert len({digest(r["gradX"]) for r in runs}) == 1  # no reduction in gradX
    for r in runs:
        assert_matches_reference(BWD, p, inputs, r)


def test_deterministic_reduction_is_reproducible(rt, ctx, stream):
    rt.set_deterministic(True)
    p, inputs, runs = _backward_runs(ctx, stream, 5)
    for name in runs[0]:
        assert len({digest(r[name]) for r in runs}) == 1, name
    assert_matches_reference(BWD, p, inputs, runs[0])


def test_workspace_holds_the_block_partials(ctx):
    """blocks x (D*N*C + D + 3) floats; blocks = ceil(M / max(8, ceil(M / 24)))."""
    per_block = lambda c: (24 * 4 * c + 24 + 3) * 4  # noqa: E731
    assert phase1_ok(ctx, BWD, _bwd_p(**DET_SHAPE)) == 8 * per_block(DET_SHAPE["C"])  # 64 tokens
    assert phase1_ok(ctx, BWD, _bwd_p(B=1, S=1, C=128)) == 1 * per_block(128)
    assert phase1_ok(ctx, BWD, _bwd_p(B=4, S=100, C=128)) == 24 * per_block(128)  # 17 per block
    assert phase1_ok(ctx, BWD, _bwd_p(B=1, S=100, C=128)) == 13 * per_block(128)  # 8 per block
    assert phase1_ok(ctx, FWD, _fwd_p(**DET_SHAPE)) == 0


def test_determinism_is_captured_in_phase1(rt, ctx, stream):
    """The mode at GetWorkspaceSize counts, not the one at launch."""
    p = _bwd_p(**DET_SHAPE)
    inputs = generate(ctx, stream, BWD, p, seed=99)
    rt.set_deterministic(True)
    reference = run_once(ctx, stream, BWD, p, inputs)["gradPhi"]
    digests = set()
    for _ in range(4):
        rt.set_deterministic(True)
        args = Args(ctx, BWD, p, inputs=inputs)
        try:
            call = acl.prepare(ctx, BWD.function, *args.values)
            rt.set_deterministic(False)
            call.launch(stream)
            stream.synchronize()
            call.close()
            digests.add(digest(args.tensors["gradPhi"].download()))
        finally:
            args.close()
    assert digests == {digest(reference)}


# ---- executors, leaks, guards ----------------------------------------------------------------


def test_executor_is_single_use(rt, ctx, stream):
    p = _bwd_p(B=1, S=2, C=128)
    args = Args(ctx, BWD, p)
    try:
        call = acl.prepare(ctx, BWD.function, *args.values)
        call.launch(stream)
        stream.synchronize()
        ws = call.workspace.ptr if call.workspace else None
        status = rt.api.raw.aclnnMhcPreSinkhornBackward(
            ws, call.workspace_size, call.executor, stream.handle
        )
        assert status == INVALID
        assert "already run" in rt.api.recent_error_message()
        call.close()
    finally:
        args.close()


def _live(rt):
    counts = rt.live_objects()
    return {k: v for k, v in counts.items() if k != "streams"}


def test_no_leaks(rt, ctx, stream):
    before = _live(rt)
    for spec in (FWD, BWD):
        for raw in ({"B": 2, "S": 3, "C": 128}, {"B": 0, "S": 3, "C": 128}):
            p = params(spec, **raw)
            inputs = generate(ctx, stream, spec, p, seed=2)
            run_once(ctx, stream, spec, p, inputs)
        phase1_error(ctx, spec, params(spec, **BASE), override={"x": ((1, 2, 3, 128), BF16)})
        phase1_ok(ctx, spec, params(spec, **BASE))  # executor never launched: destroyed
    deadline = time.monotonic() + 5
    while _live(rt) != before and time.monotonic() < deadline:
        time.sleep(0.01)  # a finished launch releases its executor on the stream thread
    assert _live(rt) == before


def test_guard_bytes_intact_on_many_shapes(ctx, stream):
    """The runtime checks the guard bytes after every kernel; a write past an output or the
    workspace would fail the synchronize with 507015."""
    for B, S, C in ((1, 1, 128), (3, 11, 384), (1, 33, 256)):
        for spec in (FWD, BWD):
            p = params(spec, B=B, S=S, C=C)
            run_once(ctx, stream, spec, p, generate(ctx, stream, spec, p, seed=B + S))


# ---- headers and third-party use ------------------------------------------------------------


def test_headers_declare_double_eps(rt):
    root = sim.root()
    for name in ("aclnn_mhc_pre_sinkhorn.h", "aclnn_mhc_pre_sinkhorn_backward.h"):
        text = (root / "include" / "aclnnop" / name).read_text()
        assert "double hcEps" in text
    assert "double normEps" in (root / "include/aclnnop/aclnn_mhc_pre_sinkhorn.h").read_text()
    for spec in (FWD, BWD):  # the declared ops bind what the header declares
        assert spec.signature.param("hcEps").type == "double"


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")
def test_headers_compile_and_link(tmp_path):
    root = sim.root()
    src = tmp_path / "main.c"
    src.write_text(
        "#include <stdio.h>\n"
        '#include "aclnnop/aclnn_mhc_pre_sinkhorn.h"\n'
        '#include "aclnnop/aclnn_mhc_pre_sinkhorn_backward.h"\n'
        "int main(void) {\n"
        "    uint64_t ws = 0; aclOpExecutor *ex = NULL;\n"
        "    aclnnStatus f = aclnnMhcPreSinkhornGetWorkspaceSize(NULL, NULL, NULL, NULL, 4, 20,\n"
        "        1e-6, 1e-6, true, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &ws, &ex);\n"
        "    aclnnStatus b = aclnnMhcPreSinkhornBackwardGetWorkspaceSize(NULL, NULL, NULL, NULL,\n"
        "        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1e-6, NULL, NULL, NULL, NULL,\n"
        "        &ws, &ex);\n"
        '    printf("%d %d\\n", (int)f, (int)b);\n'
        "    return 0;\n"
        "}\n"
    )
    exe = tmp_path / "main"
    lib = root / "lib64"
    cc = os.environ.get("CC", "cc").split()
    build = subprocess.run(
        [*cc, "-std=c11", "-Wall", "-Werror", f"-I{root / 'include'}", str(src), "-o", str(exe),
         f"-L{lib}", "-lopapi", "-lnnopbase", "-lascendcl", f"-Wl,-rpath,{lib}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.split() == [str(NULLPTR), str(NULLPTR)]


SCRIPT = Path(__file__).resolve().parent / "scripts" / "third_party_mhc_backward.py"


def test_unmodified_third_party_script():
    env = {**os.environ, "ASCEND_HOME_PATH": str(sim.root())}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "PASS"
