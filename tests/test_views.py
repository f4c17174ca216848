"""View variants (stress.corpus.variants, stress.engine.call.views): derived cases, their memory,
the tensors the engine creates for them, and view invariance on the simulator."""

from __future__ import annotations

import ctypes
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from stress.corpus.parse import corpus_text, load_corpus, load_corpus_file
from stress.corpus.variants import OFFSET, PAD, VIEWS, broadcast_dim, split_view, with_variants
from stress.engine.call.execute import run_call
from stress.engine.call.inputs import generate_inputs
from stress.engine.call.layout import layout
from stress.engine.call.prepared import OpCall
from stress.engine.call.views import FILL, geometry, storage_bytes
from stress.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


def _read_view(storage: np.ndarray, g, shape) -> np.ndarray:
    item = storage.dtype.itemsize
    return np.lib.stride_tricks.as_strided(
        storage[g.offset :], shape=shape, strides=tuple(s * item for s in g.strides)
    )


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (7,)])
def test_storage_reads_back_the_values_and_fills_the_rest(view, shape):
    g = geometry(view, shape)
    if g is None:  # transpose of a rank-1 tensor: nothing to transpose
        assert view == "transpose" and len(shape) == 1
        return
    host = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    if view == "broadcast":  # its values: one slice, expanded (a storage of that slice)
        d = broadcast_dim(shape)
        host = np.ascontiguousarray(np.broadcast_to(host.take([0], axis=d), shape))
        storage = storage_bytes(host, g)
        assert storage.size == host.size // shape[d] and 0 in g.strides
        np.testing.assert_array_equal(_read_view(storage, g, shape), host)
        return
    storage = storage_bytes(host, g)
    np.testing.assert_array_equal(_read_view(storage, g, shape), host)
    # every element the view does not read holds the fill pattern (a transpose has none: its
    # storage is the values in another order)
    fill = np.frombuffer(bytes([FILL]) * 4, np.float32)[0]
    assert (storage == fill).sum() == storage.size - host.size
    assert storage.size > host.size or storage.tobytes() != host.tobytes()
    # and the layout is not the contiguous one
    contiguous = tuple(int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
    assert (g.strides, g.offset) != (contiguous, 0)


def test_geometry_of_each_kind():
    t = geometry("transpose", (2, 3, 4))
    assert t.storage == (2, 4, 3) and t.strides == (12, 1, 3) and t.offset == 0
    p = geometry("pad", (2, 3, 4))
    assert p.storage == (2, 3, 4 + PAD) and p.strides == (3 * (4 + PAD), 4 + PAD, 1)
    o = geometry("offset", (3, 4))
    assert o.offset == OFFSET and o.strides == (4, 1) and o.elements == OFFSET + 12
    b = geometry("broadcast", (1, 3, 4))  # the first dim past 1 is expanded
    assert b.storage == (1, 1, 4) and b.strides == (4, 0, 1) and b.offset == 0
    assert geometry("broadcast", (1, 1)) is None  # nothing to expand
    assert geometry("transpose", (1, 5)) is None  # a size-1 dim: a transpose changes nothing
    assert geometry("pad", (0, 5)) is None  # no elements


def test_variants_are_derived_from_every_positive_case():
    cases = load_corpus([REPO / "corpus/ops/add.toml"])
    derived = with_variants(cases, VIEWS)
    assert derived[: len(cases)] == cases
    variants = derived[len(cases) :]
    assert variants and all(v.view and v.id == f"{v.twin}@{v.view}" for v in variants)
    by_id = {c.id: c for c in cases}
    for v in variants:
        twin = by_id[v.twin]
        assert not twin.negative and (v.params, v.seed) == (twin.params, twin.seed)
        assert v.key != twin.key and split_view(v.id) == (twin.id, v.view)
    negatives = [c.id for c in cases if c.negative]
    assert not [v for v in variants if v.twin in negatives]
    assert with_variants(cases, ()) == cases


def test_a_variant_round_trips_through_a_corpus_file(tmp_path):
    cases = with_variants(load_corpus([REPO / "corpus/pool/mul.toml"]), ("pad",))
    variant = next(c for c in cases if c.view)
    path = tmp_path / "repro.toml"
    path.write_text(corpus_text([variant]))
    (back,) = load_corpus_file(path)
    assert (back.id, back.view, back.key) == (variant.id, "pad", variant.key)
    path.write_text(corpus_text([variant]).replace('view = "pad"', 'view = "diagonal"'))
    with pytest.raises(ConfigError, match="field 'view'"):
        load_corpus_file(path)


def _strides(raw, handle) -> tuple[list[int], int, list[int]]:
    p, n, off = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64(), ctypes.c_int64()
    assert raw.aclGetViewStrides(handle, ctypes.byref(p), ctypes.byref(n)) == 0
    strides = [p[i] for i in range(n.value)]
    assert raw.aclGetViewOffset(handle, ctypes.byref(off)) == 0
    assert raw.aclGetStorageShape(handle, ctypes.byref(p), ctypes.byref(n)) == 0
    return strides, off.value, [p[i] for i in range(n.value)]


@pytest.mark.parametrize("corpus", ["corpus/ops/matmul.toml", "corpus/ops/softmax.toml"])
def test_the_engine_creates_views_and_the_simulator_honours_them(ctx, stream, corpus):
    """Each variant's input tensors carry its strides / offset / storage shape, and its
    outputs are bit-identical to its contiguous twin's (view invariance); a broadcast view's
    twin is the same call on its expanded values, laid out dense."""
    cases = with_variants(load_corpus([REPO / corpus]), VIEWS)
    by_id = {c.id: c for c in cases}
    seen = set()
    for v in (c for c in cases if c.view):
        twin = replace(v, view="") if v.view == "broadcast" else by_id[v.twin]
        inputs = generate_inputs(twin)
        wanted = {
            (slot.view.strides, slot.view.offset, slot.view.storage)
            for kind, slot in layout(v.spec, v.params, v.key, v.view)
            if kind == "tensor" and slot.view is not None
        }
        assert wanted, v.id  # every variant lays out at least one input as a view
        with OpCall(ctx, v.spec, v.params, inputs, layout_key=v.key, view=v.view) as call:
            made = set()
            for h in call._tensors:
                strides, offset, storage = _strides(call._raw, h)
                made.add((tuple(strides), offset, tuple(storage)))
        assert wanted <= made, (v.id, wanted, made)
        want = run_call(ctx, stream, twin, inputs)
        got = run_call(ctx, stream, v, inputs)
        assert got.status == want.status == "ok", (v.id, got.message)
        for name, arr in want.outputs.items():
            assert got.outputs[name].tobytes() == arr.tobytes(), (v.id, name)
        seen.add(v.view)
    assert seen == set(VIEWS)


SHIPPED = sorted(
    str(p.relative_to(REPO))
    for pat in ("corpus/*.toml", "corpus/pool/*.toml")
    for p in REPO.glob(pat)
)


@pytest.mark.slow
@pytest.mark.parametrize("corpus", SHIPPED)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_shipped_corpus_is_clean_with_every_variant(tmp_path, corpus, seed):
    """0 false positives: the clean simulator, every view variant of every case, every phase
    but the control, both stream policies."""
    from stress.config import PHASES, RunConfig
    from stress.engine.run.session import Session

    config = RunConfig(
        seed=seed,
        streams=("shared", "per-thread"),
        iterations=2,
        phases=tuple(p for p in PHASES if p != "control"),
        fail_fast=False,
    )
    baseline = tmp_path / "baseline.json"
    Session(config, [str(REPO / corpus)], []).record_baseline(baseline)
    session = Session(
        config, [str(REPO / corpus)], [], baseline_path=baseline, out_dir=tmp_path / "out"
    )
    report = session.run().to_json()
    bad = [(p["name"], c["id"], c["verdict"]) for p in report["phases"] for c in p["cases"]
           if c["verdict"] != "PASS"]  # fmt: skip
    assert not bad and report["diagnosis"] == "clean", bad
    assert report["variants"]["kinds"], report["variants"]  # the variants ran


def test_variants_option_and_config():
    import argparse

    from stress.cli.values import variants
    from stress.config import ALL_VARIANTS, VARIANTS, RunConfig

    # every view kind, then the size kinds (stress.corpus.size_variants); all adds the twins
    assert VARIANTS == (*VIEWS, "empty", "edge")
    assert variants("none") == () and variants("default") == VARIANTS
    assert variants("all") == ALL_VARIANTS == (*VARIANTS, "twins")
    assert variants("offset,transpose") == ("transpose", "offset")  # in derivation order
    with pytest.raises(argparse.ArgumentTypeError, match="unknown variant 'diag'"):
        variants("pad,diag")
    assert RunConfig().variants == VARIANTS  # on by default
    config = RunConfig(variants=("pad",))
    assert RunConfig.from_json(config.to_json()).variants == ("pad",)
    assert "--variants pad" in config.to_cli_args()
    assert "--variants none" in RunConfig(variants=()).to_cli_args()
    args = RunConfig().to_cli_args()
    assert args and not any(a.startswith("--variants") for a in args)
    with pytest.raises(ConfigError, match="--variants: unknown variant 'diag'"):
        RunConfig(variants=("diag",)).validate()


def test_one_variant_per_case_under_a_budget_is_drawn_from_the_id():
    from stress.config import RunConfig
    from stress.corpus.variants import run_variants

    cases = load_corpus([REPO / "corpus/mhc.toml"])
    full = run_variants(cases, RunConfig(seed=3))
    budgeted = run_variants(cases, RunConfig(seed=3, budget_s=10))
    per_case = {}
    for c in budgeted[len(cases) :]:
        per_case.setdefault(c.twin, []).append(c.view)
    assert per_case and all(len(v) == 1 for v in per_case.values())
    assert {c.id for c in budgeted} <= {c.id for c in full}
    # any subset of the corpus derives the same variant for a case (the phase children do)
    again = run_variants(cases[::-1], RunConfig(seed=3, budget_s=10))
    assert {c.id for c in again} == {c.id for c in budgeted}
    kinds = {v for seed in range(6) for c in run_variants(cases, RunConfig(seed=seed, budget_s=1))
             for v in [c.view] if v}  # fmt: skip
    assert kinds == set(VIEWS)  # over seeds every kind comes round


def test_a_broadcast_view_is_graded_by_its_own_dense_twin():
    """A stride-0 view reads one slice over and over: its values are that slice expanded, so
    its reference is the contiguous call on those values, recorded under the variant's id (not
    its case's baseline), and the run grades it there."""
    from stress.config import RunConfig
    from stress.corpus.variants import recorded_cases

    cases = load_corpus([REPO / "corpus/ops/matmul.toml"])
    (view,) = [c for c in with_variants(cases, ("broadcast",)) if c.id == "matmul-f32@broadcast"]
    assert (view.twin, view.reference) == ("matmul-f32", "matmul-f32@broadcast")
    recorded = {c.id: c for c in recorded_cases(cases, RunConfig(variants=("broadcast",)))}
    dense = recorded[view.id]
    assert dense.view == "" and dense.reference == view.id  # laid out contiguously
    assert view.id in {c.id for c in recorded_cases(cases, RunConfig())}  # on by default
    assert view.id not in {c.id for c in recorded_cases(cases, RunConfig(variants=("pad",)))}
    base, expanded = generate_inputs(cases[0]), generate_inputs(view)
    assert generate_inputs(dense)["self"].tobytes() == expanded["self"].tobytes()
    for name, arr in expanded.items():  # each input: its first row, repeated (M = 8 rows)
        assert (arr == arr[:1]).all() and not (base[name] == base[name][:1]).all(), name
