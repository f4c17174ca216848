"""Baseline files: atomic save/load, tolerance arrays, fingerprint checks, corrupt files."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

from stress.baseline.store import Baseline, CaseBaseline, OutputBaseline
from stress.corpus.parse import load_corpus_file
from stress.errors import ConfigError

BACKEND = {"kind": "sim", "soc": "S", "version": "V", "libraries": {"a": "1"}}


def _corpus(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[[case]]\nid="a"\nop="add"\nshape=[2]\n[[case]]\nid="b"\nop="add"\nshape=[3]\n')
    return load_corpus_file(p)


def _baseline(cases, *, deterministic_b=True):
    arr = np.arange(3, dtype=np.float32).astype(ml_dtypes.bfloat16)
    cb_b = CaseBaseline(
        id="b",
        key=cases[1].key,
        op="add",
        status="ok",
        call_digest="dd",
        outputs={"out": OutputBaseline("d", [3], "bfloat16")},
        bit_deterministic=deterministic_b,
        arrays=None if deterministic_b else {"out": arr},
    )
    cb_a = CaseBaseline(id="a", key=cases[0].key, op="add", status="error", code=161002)
    return Baseline(BACKEND, {"cases": {}}, True, 3, {"a": cb_a, "b": cb_b})


def test_roundtrip_with_tolerance_arrays(tmp_path):
    cases = _corpus(tmp_path)
    path = _baseline(cases, deterministic_b=False).save(tmp_path / "b.json")
    assert (tmp_path / "b.json.npz").exists()
    loaded = Baseline.load(path)
    assert loaded.cases["a"].status == "error" and loaded.cases["a"].code == 161002
    b = loaded.cases["b"]
    assert b.grading == "tolerance" and b.arrays["out"].dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(b.arrays["out"].astype(np.float32), [0, 1, 2])
    assert not list(tmp_path.glob(".b.json*"))  # no temp files left behind


def test_deterministic_baseline_has_no_npz(tmp_path):
    cases = _corpus(tmp_path)
    (tmp_path / "b.json.npz").write_bytes(b"stale")
    _baseline(cases).save(tmp_path / "b.json")
    assert not (tmp_path / "b.json.npz").exists()
    assert Baseline.load(tmp_path / "b.json").cases["b"].grading == "digest"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "corrupt baseline"),
        (json.dumps({"schema": "other/1"}), "field 'schema'"),
        (json.dumps({"schema": "aclnn-stress/baseline/1", "cases": {}}), "field 'backend'"),
    ],
)
def test_corrupt_baselines_are_refused_in_one_line(tmp_path, content, message):
    path = tmp_path / "b.json"
    path.write_text(content)
    with pytest.raises(ConfigError) as info:
        Baseline.load(path)
    assert message in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value) and "re-record" in str(info.value)


def test_missing_npz_is_refused(tmp_path):
    cases = _corpus(tmp_path)
    _baseline(cases, deterministic_b=False).save(tmp_path / "b.json")
    (tmp_path / "b.json.npz").unlink()
    with pytest.raises(ConfigError, match=r"b\.json\.npz"):
        Baseline.load(tmp_path / "b.json")


def test_missing_baseline_says_how_to_record(tmp_path):
    with pytest.raises(ConfigError, match="aclnn-stress baseline record"):
        Baseline.load(tmp_path / "none.json")


def test_fingerprint_mismatch_refused_unless_forced(tmp_path):
    cases = _corpus(tmp_path)
    b = _baseline(cases)
    assert b.check_compatible(BACKEND, cases, deterministic=True, canary=0xAB) == []
    other = {**BACKEND, "libraries": {"a": "2"}}
    with pytest.raises(ConfigError, match=r"backend libraries differ.*--force"):
        b.check_compatible(other, cases, deterministic=True, canary=0xAB)
    problems = b.check_compatible(other, cases, deterministic=True, canary=0xAB, force=True)
    assert len(problems) == 1
    with pytest.raises(ConfigError, match="deterministic mode on"):
        b.check_compatible(BACKEND, cases, deterministic=False, canary=0xAB)
    with pytest.raises(ConfigError, match="canary"):
        b.check_compatible(BACKEND, cases, deterministic=True, canary=0x11)


def test_changed_case_is_refused(tmp_path):
    cases = _corpus(tmp_path)
    b = _baseline(cases)
    p = tmp_path / "c.toml"
    p.write_text('[[case]]\nid="a"\nop="add"\nshape=[2]\nalpha=2.0\n')
    changed = load_corpus_file(p)
    with pytest.raises(ConfigError, match="case 'a' changed"):
        b.check_compatible(BACKEND, changed, deterministic=True, canary=0xAB)
