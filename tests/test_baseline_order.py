"""An order-dependent operator cannot poison the baseline: each case is recorded at fresh
addresses, then checked after another case in its recycled memory; a disagreement is
``order-dependence`` at record time (one line naming the case, exit 1, no file written).

The simulator's ``weight-cache`` fault (aclnnMatmul caches its converted mat2 by device
address) shows it with corpus/ops/matmul.toml, whose matmul-f32 and matmul-f32-b share a shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import stress_cli

from stress.corpus.parse import load_corpus
from stress.engine.call.blockpool import BlockPool
from stress.engine.call.inputs import InputCache
from stress.engine.replay.baseline import Recording, record_baseline
from stress.engine.replay.baseline_order import OrderDependence, check_order

REPO = Path(__file__).resolve().parents[1]
MATMUL = REPO / "corpus/ops/matmul.toml"


def _record(tmp_path: Path, corpus: Path, faults: str, *extra: str):
    out = tmp_path / f"b-{faults or 'clean'}-{corpus.stem}.json"
    proc = stress_cli(
        "baseline", "record", "--corpus", str(corpus), "--control", "none", "--out", str(out),
        *extra, faults=faults,
    )  # fmt: skip
    return proc, out


def test_an_address_keyed_cache_is_address_dependence_at_record_time(tmp_path):
    """The disagreement in recycled memory is checked again at fresh addresses, after the same
    case: there the case agrees, so the line names the address, not the order."""
    # the corpus as written (its size variants share mat2's shape too, and are found first)
    proc, out = _record(tmp_path, MATMUL, "weight-cache", "--variants", "none")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("aclnn-stress: address-dependence: case matmul-f32 "), lines[0]
    assert "after case matmul-f32-b" in lines[0] and "not written" in lines[0]
    assert "agrees with it after case matmul-f32-b at fresh addresses" in lines[0]
    assert not out.exists()  # no baseline with a wrong value
    clean, out = _record(tmp_path, MATMUL, "", "--variants", "none")  # its 88 variants: ~2 s CPU
    assert clean.returncode == 0 and out.exists(), clean.stderr


def test_a_run_recording_its_baseline_stops_with_the_finding(tmp_path):
    base = tmp_path / "b.json"
    proc = stress_cli(
        "run", "--corpus", str(MATMUL), "--record-baseline", "--baseline", str(base),
        "--budget", "5", "--out", str(tmp_path / "run"), "--quiet", "--variants", "none",
        faults="weight-cache",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "address-dependence: case matmul-f32" in proc.stderr and not base.exists()


def test_the_fault_is_invisible_at_fresh_addresses_and_between_other_shapes(tmp_path):
    """Cases of distinct shapes never meet in the cache, and each case at its own addresses
    gets its own weights back: the faulty library records the clean library's values."""
    corpus = tmp_path / "matmul-two-shapes.toml"
    text = MATMUL.read_text()
    start = text.index('[[case]]\nid = "matmul-f32-b"')
    corpus.write_text(text[:start] + text[text.index('[[case]]\nid = "matmul-f16"') :])
    # as written: an edge variant of a case keeps its mat2 shape, and meets it in the cache
    faulty, out = _record(tmp_path, corpus, "weight-cache", "--variants", "none")
    assert faulty.returncode == 0, faulty.stderr
    clean, ref = _record(tmp_path, corpus, "", "--variants", "none")
    assert clean.returncode == 0, clean.stderr
    digests = [
        {cid: c["call_digest"] for cid, c in json.loads(p.read_text())["cases"].items()}
        for p in (out, ref)
    ]
    assert digests[0] == digests[1] and len(digests[0]) == 3


def test_the_block_pool_recycles_by_size_and_sealed_blocks_stay_out_of_reach(rt, ctx):
    pool = BlockPool(rt.api)
    a, b = pool.malloc(256), pool.malloc(256)
    c = pool.malloc(512)
    assert len({a, b, c}) == 3
    pool.free(a)
    pool.free(c)
    assert pool.malloc(256) == a and pool.malloc(512) == c  # newest of its size first
    pool.free(b)
    pool.seal()
    assert pool.malloc(256) not in (a, b)  # b is sealed, a still in use
    pool.release()


def test_check_order_names_the_case_that_disagrees(rt, ctx, stream):
    """The check against recorded values: a recording that differs (here: another case's
    values under its id) is caught; the true recording passes."""
    cases = [c for c in load_corpus([MATMUL]) if c.expect is None]
    baseline = record_baseline(rt, cases, Recording(repeats=1))
    cache = InputCache(ctx, stream)
    check_order(rt, ctx, stream, cases, cache, baseline.cases, canary=0xAB, timeout_ms=None)
    swapped = dict(baseline.cases)
    swapped["matmul-f32"] = baseline.cases["matmul-f32-b"]
    # the recording itself is wrong: the fresh re-check disagrees too, so it is the order
    order = r"^order-dependence: case matmul-f32 recorded after case matmul-f32-b,"
    with pytest.raises(OrderDependence, match=order):
        check_order(rt, ctx, stream, cases, cache, swapped, canary=0xAB, timeout_ms=None)
    assert OrderDependence.exit_code == 1


def test_recording_takes_a_runs_settings_and_skips_the_recycled_check_under_fresh_memory():
    from stress.config import RunConfig

    config = RunConfig(repeats=5, device=1, deterministic=False, allocator="fresh")
    r = Recording.of(config)
    assert (r.repeats, r.device, r.deterministic, r.canary) == (5, 1, False, config.canary)
    assert r.call_timeout_ms == config.call_timeout_ms and r.recycle is False
    assert Recording.of(RunConfig(allocator="recycle")).recycle is True
