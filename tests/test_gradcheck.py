"""Tests for ``stress.gradcheck``: classification, element parsing, reference/backend FD, CLI."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest

from stress.errors import ConfigError
from stress.gradcheck import check as gc
from stress.gradcheck import cli as gc_cli
from stress.gradcheck import device as gc_device
from stress.gradcheck.evaluate import ReferenceFD
from stress.ops import _mhc_reference as ref
from stress.ops.mhc import MHC_PRE_SINKHORN_BACKWARD as BWD
from stress.ops.mhc import forward_host_inputs
from stress.subcommand import add_command
from tests._sim_available import sim_api

SMALL = {"B": 2, "S": 4, "N": 4, "C": 128}
SEED = 7
REPORT_SHAPE = {"B": 4, "S": 256, "N": 4, "C": 1024}
REPORT_SEED = 20261023
REPORT_ELEMENTS = ["bias[8]", "bias[12]", "bias[23]", "phi[12,2048]", "phi[23,4095]"]
ALL_KINDS = [
    "x[0,1,2,3]",
    "x[1,3,0,127]",
    "phi[0,0]",
    "phi[5,300]",
    "phi[23,511]",
    "alpha[0]",
    "alpha[1]",
    "alpha[2]",
    "bias[0]",
    "bias[5]",
    "bias[23]",
]
STEPS = gc.DEFAULT_EPS
MHC_FUNCTIONS = ("aclnnMhcPreSinkhorn", "aclnnMhcPreSinkhornBackward")


# ---------------------------------------------------------------------------------------------
# test doubles of a backward under test (numpy reference, then altered)


def drifting_backward(params, host):
    """TEST DOUBLE of a drifting backward: gradPhi scaled by (1 + 2e-2), the rest honest."""
    out = dict(BWD.reference(params, host))
    out["gradPhi"] = out["gradPhi"] * np.float32(1.02)
    return out


def sign_flipping_backward(params, host):
    """TEST DOUBLE of a backward with the wrong sign on gradBias."""
    out = dict(BWD.reference(params, host))
    out["gradBias"] = -out["gradBias"]
    return out


def kernel_eps_backward(params, host):
    """The A2/A3 kernel's eps placement (an honest backward that differs by O(hc_eps))."""
    return ref.backward(
        host["gradHin"],
        host["gradHPost"],
        host["gradHRes"],
        *(host[k] for k in ("x", "phi", "alpha", "bias")),
        *(host[k] for k in ("hPre", "hcBeforeNorm", "invRms", "sumOut", "normOut")),
        hc_eps=params["hc_eps"],
        kernel_eps=True,
    )


# ---------------------------------------------------------------------------------------------
# classify: a pure function of the sweep


def _fd(limit, a2=0.4, a4=-0.2, steps=STEPS):
    return [limit + a2 * h**2 + a4 * h**4 for h in steps]


def test_converging_sequence_matching_the_backward_agrees():
    g = 1.3
    c = gc.classify(STEPS, _fd(g), g, noise=1e-14, tolerance=1e-3 * g, scale=g)
    assert c.verdict == gc.AGREES and not c.sign_flip
    assert c.estimate == pytest.approx(g, rel=1e-6)
    assert c.truncation < 1e-5


def test_converging_to_a_value_2e2_away_is_biased():
    g = 1.3
    c = gc.classify(STEPS, _fd(g * 1.02), g, noise=1e-14, tolerance=1e-3 * g, scale=g)
    assert c.verdict == gc.BIASED and not c.sign_flip
    assert c.diff == pytest.approx(0.02 * g, rel=1e-4)
    assert abs(c.diff) > 10 * c.allowed


def test_opposite_sign_is_biased_with_sign_flip():
    g = 1.3
    c = gc.classify(STEPS, _fd(-g), g, noise=1e-14, tolerance=1e-3 * g, scale=g)
    assert c.verdict == gc.BIASED and c.sign_flip


def test_small_opposite_sign_below_threshold_is_no_sign_flip():
    # both values inside the tolerance: they agree, the sign difference means nothing
    c = gc.classify(STEPS, _fd(-1e-5, a2=0, a4=0), 1e-5, tolerance=1e-3, scale=1.0)
    assert c.verdict == gc.AGREES and not c.sign_flip


def test_non_settling_sequence_is_unconverged():
    g = 1.3
    fd = [g * (1 + 0.1 * (-1) ** i) for i in range(len(STEPS))]
    c = gc.classify(STEPS, fd, g, noise=1e-14, tolerance=1e-3 * g, scale=g)
    assert c.verdict == gc.UNCONVERGED
    assert "does not settle" in c.reason


def test_slowly_oscillating_sequence_is_unconverged():
    g = 1.0
    fd = [g + 0.013 * (i % 2) for i in range(len(STEPS))]
    assert gc.classify(STEPS, fd, g, tolerance=1e-3, scale=g).verdict == gc.UNCONVERGED


@pytest.mark.parametrize("seed", range(20))
def test_noise_within_the_estimated_floor_is_not_misclassified(seed):
    """FD dominated by rounding noise n(h) = q/2h: the estimated floor keeps it from 'biased'."""
    rng = np.random.default_rng(seed)
    g, q = 2.0, 4e-4  # n(0.005) = 0.04 = 2 % of g
    noise = gc.noise_per_step(q, STEPS)
    fd = [v + 0.28 / 0.5 * n * rng.standard_normal() for v, n in zip(_fd(g), noise, strict=True)]
    c = gc.classify(STEPS, fd, g, noise=q, tolerance=1e-3 * g, scale=g)
    assert c.verdict == gc.AGREES, c
    assert c.noise > 0


def test_noisy_but_clearly_wrong_is_still_biased():
    rng = np.random.default_rng(0)
    g, q = 2.0, 4e-4
    noise = gc.noise_per_step(q, STEPS)
    fd = [v + 0.5 * n * rng.standard_normal() for v, n in zip(_fd(1.4 * g), noise, strict=True)]
    assert gc.classify(STEPS, fd, g, noise=q, tolerance=1e-3 * g, scale=g).verdict == gc.BIASED


def test_nan_and_repeated_steps_are_ignored():
    g = 1.3
    steps = [0.2, 0.1, 0.1, math.nan, 0.05, 0.02]
    fd = [*_fd(g, steps=[0.2, 0.1]), 99.0, math.nan, *_fd(g, steps=[0.05, 0.02])]
    c = gc.classify(steps, fd, g, tolerance=1e-3 * g, scale=g)
    assert c.verdict == gc.AGREES and c.estimate == pytest.approx(g, rel=1e-5)


def test_fewer_than_two_usable_steps_is_unconverged():
    c = gc.classify([0.1, 0.05], [1.0, math.nan], 1.0, tolerance=1e-3)
    assert c.verdict == gc.UNCONVERGED and math.isnan(c.estimate)


def test_exact_zero_gradient_agrees():
    c = gc.classify(STEPS, [0.0] * len(STEPS), 0.0)
    assert c.verdict == gc.AGREES


def test_non_finite_backward_is_biased():
    c = gc.classify(STEPS, _fd(1.0), math.nan, tolerance=1e-3, scale=1.0)
    assert c.verdict == gc.BIASED and "not finite" in c.reason


def test_backward_rtol_per_dtype():
    import ml_dtypes

    assert gc.backward_rtol(np.dtype(np.float32)) == gc.RTOL_FP32
    assert gc.backward_rtol(np.dtype(ml_dtypes.bfloat16)) == 2.0**-7
    assert gc.backward_rtol(np.dtype(np.float16)) == gc.RTOL_FP32
    assert gc.backward_rtol(np.dtype(np.float16), 1e-4) == 2.0**-10
    # the mHC pair's gradients: gradX follows x's dtype, the rest are fp32
    p = PAIR.backward.parse_params(SMALL, "test")
    assert PAIR.grad_dtype("x", p) == np.dtype(ml_dtypes.bfloat16)
    assert PAIR.grad_dtype("phi", p) == np.dtype(np.float32)


# ---------------------------------------------------------------------------------------------
# elements


PAIR = gc.load_pair("mhc_pre_sinkhorn_backward")
SHAPES = PAIR.shapes(PAIR.backward.parse_params(SMALL, "test"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bias[8]", gc.Element("bias", (8,))),
        (" phi[ 12 , 511 ] ", gc.Element("phi", (12, 511))),
        ("x[1,3,0,127]", gc.Element("x", (1, 3, 0, 127))),
        ("alpha[2]", gc.Element("alpha", (2,))),
    ],
)
def test_parse_element(text, expected):
    el = gc.parse_element(text, SHAPES)
    assert el == expected
    assert gc.parse_element(str(el), SHAPES) == el


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("gamma[1]", r"--element 'gamma\[1\]': unknown tensor 'gamma' \(one of x, phi"),
        ("phi[3]", r"--element 'phi\[3\]': phi has rank 2 \(shape \(24, 512\)\), got 1 index"),
        ("x[0,0,0]", r"x has rank 4 \(shape \(2, 4, 4, 128\)\)"),
        ("bias[24]", r"--element 'bias\[24\]': index 24 out of range for axis 0 of bias"),
        ("phi[0,512]", r"index 512 out of range for axis 1 of phi \(shape \(24, 512\)\)"),
        ("alpha[-1]", r"--element 'alpha\[-1\]': indices must be non-negative integers"),
        ("bias 8", r"--element 'bias 8': expected TENSOR\[i,j,...\]"),
        ("bias[]", r"bias has rank 1"),
    ],
)
def test_parse_element_errors_name_the_option(text, match):
    with pytest.raises(ConfigError, match=match):
        gc.parse_element(text, SHAPES)


def test_sample_elements_is_seeded_distinct_and_in_range():
    a = gc.sample_elements(SHAPES, 5, SEED)
    assert a == gc.sample_elements(SHAPES, 5, SEED)
    assert a != gc.sample_elements(SHAPES, 5, SEED + 1)
    assert len(a) == len(set(a)) == 5 + 5 + 3 + 5  # alpha has only 3 elements
    for el in a:
        assert el.index and all(
            0 <= i < d for i, d in zip(el.index, SHAPES[el.tensor], strict=True)
        )
    empty = PAIR.shapes(PAIR.backward.parse_params({**SMALL, "B": 0}, "test"))
    assert not [e for e in gc.sample_elements(empty, 3, SEED) if e.tensor == "x"]
    with pytest.raises(ConfigError, match="--sample"):
        gc.sample_elements(SHAPES, -1, SEED)


def test_parse_eps():
    assert gc.parse_eps("0.05,0.2,0.1,0.1") == (0.2, 0.1, 0.05)
    for bad in ("0.1", "0.1,abc", "0.1,-0.05", "0.1,0.1", "0.1,inf"):
        with pytest.raises(ConfigError, match="--eps"):
            gc.parse_eps(bad)


def test_block_scale_uses_the_declared_column_group():
    p = PAIR.backward.parse_params(SMALL, "test")

    def scale(text, g):
        el = gc.parse_element(text, SHAPES)
        return gc.block_scale(np.asarray(g)[PAIR.block(el, p)[0]])

    g = np.zeros(24)
    g[:4], g[4:8], g[8:] = 100.0, 10.0, 1.0
    assert scale("bias[2]", g) == pytest.approx(100.0)
    assert scale("bias[5]", g) == pytest.approx(10.0)
    assert scale("bias[23]", g) == pytest.approx(1.0)
    assert scale("alpha[1]", [1.0, -3.0, 2.0]) == 3.0
    assert PAIR.block(gc.parse_element("bias[5]", SHAPES), p)[1] == "hPost"
    assert PAIR.block(gc.parse_element("x[0,0,0,0]", SHAPES), p) == ((slice(None),), None)
    g[9] = np.nan  # a garbage entry does not poison the scale of its block
    assert scale("bias[23]", g) == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------------
# FD through the float64 reference


def test_reference_backward_agrees_for_every_tensor():
    r = gc.gradcheck(SMALL, SEED, ALL_KINDS, sample=2, backward="reference")
    assert [str(row.element) for row in r.rows[: len(ALL_KINDS)]] == ALL_KINDS
    assert {row.element.tensor for row in r.rows} == set(PAIR.tensors)
    bad = [(str(row.element), row.result.reason) for row in r.rows if row.verdict != gc.AGREES]
    assert not bad
    assert r.verdict == gc.AGREES and r.exit_code == 0
    assert all(not row.noise_limited for row in r.rows)
    assert r.backend is None  # nothing loaded
    doc = json.loads(json.dumps(r.to_json(), allow_nan=False))
    assert doc["summary"]["agrees"] == len(r.rows) and doc["seed"] == SEED
    assert doc["elements"][0]["element"] == "x[0,1,2,3]"
    assert len(doc["elements"][0]["fd"]) == len(gc.DEFAULT_EPS)


def test_kernel_eps_placement_agrees():
    r = gc.gradcheck(SMALL, SEED, ALL_KINDS, backward=kernel_eps_backward)
    assert r.rows and all(row.verdict == gc.AGREES for row in r.rows), [
        row.result for row in r.rows
    ]


def test_fp16_case_agrees():
    r = gc.gradcheck({**SMALL, "dtype": "fp16"}, SEED, ALL_KINDS, backward="reference")
    assert r.rows and all(row.verdict == gc.AGREES for row in r.rows)


def test_drifting_backward_is_biased_for_phi_only():
    r = gc.gradcheck(SMALL, SEED, ALL_KINDS, sample=3, backward=drifting_backward)
    phi = [row for row in r.rows if row.element.tensor == "phi"]
    big = [row for row in phi if abs(row.backward) >= 0.2 * row.scale]
    assert len(big) >= 3
    assert all(row.verdict == gc.BIASED and not row.result.sign_flip for row in big)
    for row in big:  # the FD recovers the drift itself, 2e-2*|g|, well above 1e-3*max(|g|, S)
        assert -row.result.diff == pytest.approx(0.02 / 1.02 * row.backward, rel=1e-3)
        assert abs(row.result.diff) > 3 * row.result.allowed
    others = [row for row in r.rows if row.element.tensor != "phi"]
    assert others and all(row.verdict == gc.AGREES for row in others)
    assert r.verdict == gc.BIASED and r.exit_code == 1


def test_sign_flipping_backward_is_flagged():
    r = gc.gradcheck(
        SMALL, SEED, ["bias[5]", "bias[23]", "phi[5,300]"], backward=sign_flipping_backward
    )
    by = {str(row.element): row for row in r.rows}
    assert by["bias[5]"].verdict == gc.BIASED and by["bias[5]"].result.sign_flip
    assert by["bias[23]"].result.sign_flip
    assert by["phi[5,300]"].verdict == gc.AGREES
    assert r.to_json()["summary"]["sign_flips"] == 2


def test_incremental_x_evaluation_matches_the_full_forward():
    p = BWD.parse_params(SMALL, "test")
    inputs = forward_host_inputs(p, SEED)
    g = ref.make_grads(2, 4, 4, 128, inputs["x"].dtype, SEED)
    grads = {"hin": g["grad_hin"], "hPost": g["grad_hpost"], "hRes": g["grad_hres"]}
    fast = ReferenceFD(PAIR, p, inputs, grads, incremental=True)
    plain = ReferenceFD(PAIR, p, inputs, grads, incremental=False)
    for text in ("x[0,0,0,0]", "x[1,3,3,127]", "x[0,2,1,64]"):
        el = gc.parse_element(text, SHAPES)
        for h in (0.2, 0.005):
            plus, minus, h_eff = fast.steps(el, h)
            assert h_eff == pytest.approx(h, rel=1e-12)
            a, b = fast.delta(el, plus, minus), plain.delta(el, plus, minus)
            assert a == pytest.approx(b, rel=1e-9, abs=1e-13)
            assert a != 0


def test_empty_batch_agrees_on_zero_gradients():
    r = gc.gradcheck(
        {**SMALL, "B": 0},
        SEED,
        ["bias[3]", "phi[9,10]", "alpha[1]"],
        sample=1,
        backward="reference",
    )
    assert r.rows and all(row.verdict == gc.AGREES and row.backward == 0 for row in r.rows)
    with pytest.raises(ConfigError, match="out of range"):
        gc.gradcheck({**SMALL, "B": 0}, SEED, ["x[0,0,0,0]"], backward="reference")


def test_gradcheck_option_errors():
    with pytest.raises(ConfigError, match="no elements"):
        gc.gradcheck(SMALL, SEED, [], backward="reference")
    with pytest.raises(ConfigError, match="--fd"):
        gc.gradcheck(SMALL, SEED, ["bias[0]"], fd="device", backward="reference")
    with pytest.raises(ConfigError, match="field 'C'"):
        gc.gradcheck({**SMALL, "C": -1}, SEED, ["bias[0]"], backward="reference")


# ---------------------------------------------------------------------------------------------
# the backend code path, on a fake device that runs the numpy float32 forward/backward


class FakeDevice:
    """TEST DOUBLE of the backend: runs each OpSpec's numpy reference (float32, bf16 hin)."""

    kind = "fake"
    drift = 1.0  # gradPhi/gradBias scale: != 1 makes it a drifting backward

    def __init__(self, backend, functions):
        self.functions = tuple(functions)
        self.calls = 0

    def run(self, spec, params, inputs):
        self.calls += 1
        out = dict(spec.reference(params, dict(inputs)))
        if spec is BWD and self.drift != 1.0:
            for k in ("gradPhi", "gradBias"):
                out[k] = out[k] * np.float32(self.drift)
        return out

    def close(self):
        pass


@pytest.fixture()
def fake_device(monkeypatch):
    monkeypatch.setattr(gc_device, "Device", FakeDevice)
    return FakeDevice


def test_backend_fd_path_on_a_fake_device(fake_device):
    els = ["x[0,1,2,3]", "bias[0]", "bias[9]", "phi[12,100]", "alpha[2]"]
    r = gc.gradcheck(SMALL, SEED, els, fd="backend", backward="backend")
    assert r.backend == "fake"
    assert r.rows and all(row.verdict == gc.AGREES for row in r.rows), [
        row.result for row in r.rows
    ]
    by = {str(row.element): row for row in r.rows}
    # x is bf16 on the device: the effective steps are what bf16 can represent
    x = by["x[0,1,2,3]"]
    assert any(abs(h - e) > 1e-6 for h, e in zip(x.steps, gc.DEFAULT_EPS, strict=True))
    assert r.notes and "effective step" in r.notes[0]
    # res-group elements only touch fp32 outputs: resolved well below 2e-2
    assert not by["bias[9]"].noise_limited and not by["phi[12,100]"].noise_limited
    # elements feeding bf16 hin carry a much larger loss quantum
    assert by["bias[0]"].quantum > 100 * by["bias[9]"].quantum


def test_backend_fd_sees_a_drifting_backend_backward(fake_device, monkeypatch):
    monkeypatch.setattr(FakeDevice, "drift", 1.02)
    r = gc.gradcheck(SMALL, SEED, ["bias[9]", "bias[23]", "phi[12,100]"], fd="backend")
    assert [row.verdict for row in r.rows] == [gc.BIASED] * 3


def test_missing_operator_is_a_config_error(monkeypatch):
    class NoKernels(FakeDevice):
        def __init__(self, backend, functions):
            raise ConfigError(f"the fake backend does not export {', '.join(functions)}")

    monkeypatch.setattr(gc_device, "Device", NoKernels)
    with pytest.raises(ConfigError, match="aclnnMhcPreSinkhornBackward"):
        gc.gradcheck(SMALL, SEED, ["bias[0]"])
    with pytest.raises(ConfigError, match=r"aclnnMhcPreSinkhorn$"):
        gc.gradcheck(SMALL, SEED, ["bias[0]"], fd="backend", backward="reference")


# ---------------------------------------------------------------------------------------------
# the simulator (skipped until it exports the mHC kernels)


@pytest.fixture()
def sim_mhc():
    sim_api(*MHC_FUNCTIONS)  # skips without the simulator; fails under CI=true
    return "sim"


def test_sim_backward_agrees_with_reference_fd(sim_mhc):
    r = gc.gradcheck(SMALL, SEED, ALL_KINDS, fd="reference", backward="backend", backend=sim_mhc)
    assert r.backend == "sim"
    assert r.rows and all(row.verdict == gc.AGREES for row in r.rows), [
        row.result for row in r.rows
    ]


def test_sim_forward_fd_agrees_with_reference_backward(sim_mhc):
    r = gc.gradcheck(SMALL, SEED, ALL_KINDS, fd="backend", backward="reference", backend=sim_mhc)
    assert r.rows and all(row.verdict == gc.AGREES for row in r.rows), [
        row.result for row in r.rows
    ]


def test_sim_forward_fd_agrees_with_sim_backward(sim_mhc):
    r = gc.gradcheck(SMALL, SEED, ALL_KINDS, fd="backend", backward="backend", backend=sim_mhc)
    assert r.rows and all(row.verdict == gc.AGREES for row in r.rows), [
        row.result for row in r.rows
    ]


# ---------------------------------------------------------------------------------------------
# CLI


def _run_cli(argv):
    parser = argparse.ArgumentParser(prog="aclnn-stress")
    sub = parser.add_subparsers(dest="command", required=True)
    add_command(sub, gc_cli.COMMAND)
    args = parser.parse_args(argv)
    return args.func(args)


SMALL_ARGS = ["gradcheck", "--B", "2", "--S", "4", "--C", "128", "--seed", str(SEED)]


def test_cli_reference_run_prints_and_writes_json(tmp_path, capsys):
    out = tmp_path / "gc.json"
    rc = _run_cli(
        [*SMALL_ARGS, "--backward", "reference", "--element", "bias[8]", "phi[12,100]",
         "--element", "x[0,0,0,0]", "--json", str(out)]
    )  # fmt: skip
    text = capsys.readouterr().out
    assert rc == 0
    assert f"seed={SEED}" in text and "eps sweep: 0.2, 0.1, 0.05, 0.02, 0.01, 0.005" in text
    assert "noise floor" in text and "3 agrees" in text and "bias[8]" in text
    doc = json.loads(out.read_text())
    assert [e["element"] for e in doc["elements"]] == ["bias[8]", "phi[12,100]", "x[0,0,0,0]"]
    assert doc["summary"]["exit_code"] == 0 and doc["params"]["B"] == 2


def test_cli_default_samples_two_per_tensor(capsys):
    assert _run_cli([*SMALL_ARGS, "--backward", "reference", "--eps", "0.1,0.05,0.02"]) == 0
    assert "8 elements: 8 agrees" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--element", "phi[99,0]"], r"--element 'phi\[99,0\]': index 99 out of range"),
        (["--element", "w[0]"], "unknown tensor 'w'"),
        (["--eps", "0.1"], "--eps"),
        (["--sample", "-2"], "--sample"),
        (["--B", "-1"], r"option --B: must be >= 0"),
        (["--num-iters", "-1"], r"option --num-iters"),
        (
            ["--num-iters", "0"],
            r"^--num-iters 0: leaves mhc_pre_sinkhorn_backward's sumOut empty \(shape "
            r"\[2\*num_iters, B, S, N\] = \(0, 2, 4, 4\)\).* use --num-iters >= 1 \(its "
            r"default: 20\)$",
        ),
        (["--set", "num_iters=0"], r"^--set num_iters 0: leaves .*sumOut empty"),
        (["--dtype", "int32"], r"--dtype int32: x of mhc_pre_sinkhorn would be int32"),
        (["--dtype", "fp8"], r"option --dtype: 'fp8' is not one of"),
        (["--json", "/nonexistent/dir/x.json"], "--json"),
    ],
)
def test_cli_bad_options_are_config_errors(extra, match):
    with pytest.raises(ConfigError, match=match):
        _run_cli([*SMALL_ARGS, "--backward", "reference", *extra])


def test_cli_num_iters_0_is_one_line_naming_the_option_exit_2(capsys):
    """The operator would refuse it with its own 161002 status: the option's line comes first."""
    from stress import cli

    assert cli.main(["gradcheck", "--num-iters", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("aclnn-stress: error: --num-iters 0: ")
    assert "161002" not in err and "use --num-iters >= 1" in err


def test_render_on_a_terminal_shows_progress_and_flags():
    import io

    from rich.console import Console

    from stress.gradcheck import render

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=220, color_system=None)
    with render.progress(console) as tick:
        assert tick is not None
        r = gc.gradcheck(
            SMALL, SEED, ["bias[5]", "phi[5,300]"], backward=sign_flipping_backward, progress=tick
        )
    render.report(console, r)
    text = buf.getvalue()
    assert "SIGN FLIP" in text and "1 biased (1 sign flips)" in text
    assert "bias[5]: biased: |f*-g|" in text


def test_cli_help_explains_rule_and_exit_codes(capsys):
    with pytest.raises(SystemExit):
        _run_cli(["gradcheck", "--help"])
    text = capsys.readouterr().out
    for word in ("unconverged", "biased", "agrees", "exit codes", "--fd", "--backward", "noise"):
        assert word in text


# ---------------------------------------------------------------------------------------------
# the report's large shape (acceptance)


@pytest.mark.slow
def test_report_shape_agrees():
    """B=4 S=256 N=4 C=1024 seed 20261023: the report's elements agree (FD via float64)."""
    try:
        from stress import acl

        api = acl.runtime().api
        have = all(api.has(f) for f in MHC_FUNCTIONS)
    except Exception:
        have = False
    backward = "backend" if have else "reference"
    r = gc.gradcheck(REPORT_SHAPE, REPORT_SEED, REPORT_ELEMENTS, backward=backward)
    assert [row.verdict for row in r.rows] == [gc.AGREES] * 5, [row.result for row in r.rows]
    assert all(row.resolution < 2e-3 for row in r.rows)


@pytest.mark.slow
def test_report_shape_drift_is_biased():
    """The same elements with a 2e-2 drift in gradPhi/gradBias (test double) are biased."""

    def drifting_phi_bias(params, host):
        out = dict(BWD.reference(params, host))
        for k in ("gradPhi", "gradBias"):
            out[k] = out[k] * np.float32(1.02)
        return out

    r = gc.gradcheck(REPORT_SHAPE, REPORT_SEED, REPORT_ELEMENTS, backward=drifting_phi_bias)
    assert [row.verdict for row in r.rows] == [gc.BIASED] * 5


def test_aclnn_stress_main_runs_gradcheck(capsys):
    """Through ``stress.cli.main``, which registers the gradcheck subcommand."""
    from stress import cli

    with pytest.raises(SystemExit) as exc:
        cli.build_parser().parse_args(["gradcheck", "--help"])
    capsys.readouterr()
    assert exc.value.code == 0  # `gradcheck --help` exits 0: the subcommand is registered
    argv = [*SMALL_ARGS, "--backward", "reference"]
    assert cli.main([*argv, "--element", "bias[8]"]) == 0
    assert cli.main([*argv, "--element", "bias[80]"]) == 2
    assert "aclnn-stress: error: --element 'bias[80]'" in capsys.readouterr().err
