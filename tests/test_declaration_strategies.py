"""Hypothesis strategies and the deterministic generator over a declaration's ranges."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.errors import InvalidArgument

from stress.errors import ConfigError
from stress.ops.declared import resolve, to_opspec
from stress.ops.declared_strategies import (
    GenerateOptions,
    cases_toml,
    declared_cases,
    generate_cases,
)
from tests.test_declaration import HEADERS, RMS, _load

HALF = RMS.replace('rstdOut = { shape = ["B", 1]', 'rstdOut = { shape = ["B", "H/2"]')


@pytest.fixture(scope="module")
def rms(tmp_path_factory):
    return _load(tmp_path_factory.mktemp("rms"), RMS)


@pytest.fixture(scope="module")
def half(tmp_path_factory):
    return _load(tmp_path_factory.mktemp("half"), HALF)


def _check_consistent(decl, case, max_elements=None):
    values = resolve(decl, case.params())
    b, h = case.dims["B"], case.dims["H"]
    assert 0 <= b <= 8 and 1 <= h <= 4096
    assert values["x"].shape == (b, h) == values["yOut"].shape
    assert values["gamma"].shape == (h,)
    assert values["x"].dtype == values["gamma"].dtype == values["yOut"].dtype
    assert case.dtypes["T"] in ("float32", "float16", "bf16")
    if max_elements is not None:
        largest = max(int(np.prod(v.shape)) for v in values.values() if hasattr(v, "shape"))
        assert largest <= max_elements  # per tensor
    return values


def test_strategy_keeps_related_shapes_consistent(rms):
    @settings(max_examples=40, deadline=None)
    @given(declared_cases(rms, max_elements=2048))
    def check(case):
        _check_consistent(rms, case, 2048)
        spec = to_opspec(rms)
        params = spec.parse_params(case.params(), case.id)
        assert spec.generate(params, case.seed)["x"].shape == (case.dims["B"], case.dims["H"])

    check()


def test_strategy_respects_narrower_bounds(rms):
    @settings(max_examples=25, deadline=None)
    @given(declared_cases(rms, dims={"H": (3, 5)}, dtypes={"T": ["bf16"]}))
    def check(case):
        assert 3 <= case.dims["H"] <= 5 and case.dtypes == {"T": "bf16"}

    check()


def test_expressions_reject_cases_that_do_not_resolve(half):
    cases = generate_cases(half, GenerateOptions(20, 1, bounds={"max_elements": 4096}))
    assert len(cases) == 20
    assert all(c.dims["H"] % 2 == 0 for c in cases)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dims": {"W": (1, 2)}}, "'W' is not a dimension"),
        ({"dims": {"H": (0, 4)}}, r"1 <= low <= high <= 4096"),
        ({"dims": {"H": (9, 4)}}, r"low <= high"),
        ({"dtypes": {"T": ["int32"]}}, "choose from float32, float16, bf16"),
        ({"max_elements": 0}, "max_elements=0"),
    ],
)
def test_bad_bounds_fail_when_the_strategy_is_created(rms, kwargs, message):
    with pytest.raises(InvalidArgument, match=message):
        declared_cases(rms, **kwargs)
    with pytest.raises(ConfigError, match=message):
        generate_cases(rms, GenerateOptions(3, 0, bounds=kwargs))


def test_generate_cases_is_deterministic_and_round_trips(rms, tmp_path):
    a = generate_cases(rms, GenerateOptions(12, 5, bounds={"max_elements": 10000}))
    assert a == generate_cases(rms, GenerateOptions(12, 5, bounds={"max_elements": 10000}))
    assert a != generate_cases(rms, GenerateOptions(12, 6, bounds={"max_elements": 10000}))
    assert len({c.id for c in a}) == 12
    for c in a:
        _check_consistent(rms, c, 10000)
    reloaded = _load(tmp_path, RMS + "\n" + cases_toml(a))
    assert [(c.id, c.params(), c.seed) for c in reloaded.cases] == [
        (c.id, c.params(), c.seed) for c in a
    ]


def test_generate_cases_says_when_the_ranges_are_too_narrow(tmp_path):
    decl = _load(tmp_path, RMS.replace("B = [0, 8]", "B = [5, 8]").replace(
        "H = [1, 4096]", "H = [4000, 4096]"))  # fmt: skip
    with pytest.raises(ConfigError, match="widen"):
        generate_cases(
            decl, GenerateOptions(2, 0, bounds={"dims": {"H": (4000, 4096)}, "max_elements": 100})
        )
    assert HEADERS.is_dir()


def test_dimension_multiples_are_kept(tmp_path):
    decl = _load(
        tmp_path, RMS.replace("H = [1, 4096]", "H = { range = [1, 4096], multiple = 128 }")
    )
    cases = generate_cases(decl, GenerateOptions(10, 2, bounds={"max_elements": 1 << 16}))
    assert cases and all(c.dims["H"] % 128 == 0 and c.dims["H"] >= 128 for c in cases)

    @settings(max_examples=20, deadline=None)
    @given(declared_cases(decl))
    def check(case):
        assert case.dims["H"] % 128 == 0

    check()
    with pytest.raises(ConfigError, match=r"field 'H': no multiple of 128 in \[1, 100\]"):
        _load(tmp_path, RMS.replace("H = [1, 4096]", "H = { range = [1, 100], multiple = 128 }"))


def test_generated_declared_cases_run_on_the_simulator(ctx, stream):
    """Cases generated from the mHC forward declaration alone (declared values, no Python
    generator) are accepted by the simulator's operator and write every output."""
    from pathlib import Path

    from stress.engine.call.prepared import run_once
    from stress.grading.digest import DEFAULT_CANARY
    from stress.ops.declaration import load_declaration

    decl = load_declaration(Path(__file__).parent / "declarations" / "mhc_pre_sinkhorn.toml")
    spec = to_opspec(decl)
    for case in generate_cases(decl, GenerateOptions(3, 4, bounds={"max_elements": 1 << 15})):
        p = spec.parse_params(case.params(), case.id)
        out = run_once(ctx, stream, spec, p, spec.generate(p, case.seed))
        assert sorted(out) == sorted(spec.output_shapes(p))
        for name, shape in spec.output_shapes(p).items():
            assert out[name].shape == shape
            assert not (out[name].view(np.uint8) == DEFAULT_CANARY).all() or out[name].size == 0, (
                name
            )
