"""`aclnn-stress corpus generate`: deterministic files that load back and run as expected."""

from __future__ import annotations

import subprocess
import sys

import pytest

from stress import cli
from stress.config import RunConfig
from stress.corpus.generate import BoundsError, build_case, case_id_for, generate_cases
from stress.corpus.parse import load_corpus_file
from stress.engine.run.session import Session
from stress.ops.declared_strategies import GenerateOptions


def _generate(*args: str) -> int:
    return cli.main(["corpus", "generate", *args])


@pytest.mark.parametrize("op", ["add", "mhc_pre_sinkhorn", "mhc_pre_sinkhorn_backward"])
@pytest.mark.parametrize("invalid", [False, True])
def test_same_seed_same_file_and_it_loads_back(tmp_path, op, invalid):
    extra = ["--invalid"] if invalid else []
    a, b, c = tmp_path / "a.toml", tmp_path / "b.toml", tmp_path / "c.toml"
    assert _generate("--op", op, "--count", "12", "--seed", "7", *extra, "--out", str(a)) == 0
    assert _generate("--op", op, "--count", "12", "--seed", "7", *extra, "--out", str(b)) == 0
    assert _generate("--op", op, "--count", "12", "--seed", "8", *extra, "--out", str(c)) == 0
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()
    text = a.read_text()
    assert text.startswith("# 12 generated") and f"--op {op} --count 12 --seed 7" in text
    loaded = load_corpus_file(a)
    expected = generate_cases(op, GenerateOptions(12, 7, invalid=invalid))
    assert [x.id for x in loaded] == [x.id for x in expected]
    assert [x.key for x in loaded] == [x.key for x in expected]  # same op, params, seed, expect
    assert all(x.op == op for x in loaded)
    assert [x.description for x in loaded] == [x.description for x in expected]
    if invalid:
        assert all(x.expect is not None and x.expect.status == 161002 for x in loaded)
        assert all(x.description.startswith("violates: ") for x in loaded)
        names = {"broadcast", "dtype", "n", "iters", "zero", "limit", "align", "mult"}
        assert all(x.id.rsplit("-", 1)[-1] in names for x in loaded)
    else:
        assert all(x.expect is None for x in loaded)


def test_generated_shapes_stay_small_by_default():
    for case in generate_cases("mhc_pre_sinkhorn_backward", GenerateOptions(50, 3)):
        p = case.params
        assert p["B"] * p["S"] <= 512 and 128 <= p["C"] <= 1024 and p["C"] % 128 == 0
        assert p["N"] == 4 and p["num_iters"] == 20 and p["dtype"] in ("bf16", "fp16")
    for case in generate_cases("add", GenerateOptions(50, 3)):
        n = 1
        for d in case.params["shape"]:
            n *= d
        assert n <= 4096


def test_bounds_options_and_violation_subsets(tmp_path):
    out = tmp_path / "c.toml"
    args = ["--op", "mhc_pre_sinkhorn_backward", "--count", "20", "--seed", "1"]
    assert _generate(*args, "--limit", "B*S=32", "--dim", "C=128:256", "--out", str(out)) == 0
    for case in load_corpus_file(out):
        assert case.params["B"] * case.params["S"] <= 32 and case.params["C"] <= 256
    assert "--dim C=128:256 --limit 'B*S=32'" in out.read_text()
    wide = tmp_path / "wide.toml"  # C widened past [dims] up to [generate] legal
    assert _generate(*args, "--dim", "C=2048:4096", "--dim", "B=1:1", "--dim", "S=1:2",
                     "--out", str(wide)) == 0  # fmt: skip
    widened = load_corpus_file(wide)
    assert widened and all(2048 <= c.params["C"] <= 4096 for c in widened)
    inv = tmp_path / "inv.toml"
    assert _generate(*args, "--invalid", "--violations", "n,num-iters", "--out", str(inv)) == 0
    cases = load_corpus_file(inv)
    assert {c.id.split("-", 3)[-1] for c in cases} <= {"n", "num-iters"}
    assert any(c.params["N"] != 4 for c in cases) and any(
        c.params["num_iters"] != 20 for c in cases
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--op", "add", "--dim", "C=128:256"], "'C' is not a dimension of add"),
        (["--op", "mhc_pre_sinkhorn", "--dim", "C=200:250"], "holds no multiple of 128"),
        (["--op", "mhc_pre_sinkhorn", "--dim", "C=128:200000"], "<= 99999"),
        (["--op", "mhc_pre_sinkhorn", "--dim", "C"], "expected NAME=VALUE"),
        (["--op", "mhc_pre_sinkhorn", "--limit", "B*S=x"], "expected EXPR=MAX"),
        (["--op", "add", "--count", "0"], "count=0: must be >= 1"),
        (["--op", "add", "--dtypes", "float64"], "choose from"),
        (["--op", "add", "--violations", "broadcast"], "--violations: only with --invalid"),
        (["--op", "add", "--invalid", "--violations", "n"], "'n' is not a constraint of op"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(tmp_path, capsys, args, message):
    assert _generate(*args, "--out", str(tmp_path / "x.toml")) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.toml").exists()


def test_existing_file_is_not_overwritten_without_force(tmp_path, capsys):
    out = tmp_path / "c.toml"
    out.write_text("# mine\n")
    assert _generate("--op", "add", "--out", str(out)) == 2
    assert "already exists" in capsys.readouterr().err and out.read_text() == "# mine\n"
    assert _generate("--op", "add", "--out", str(out), "--force") == 0
    assert len(load_corpus_file(out)) == 10


def test_stdout_without_out_and_through_the_console_script(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "stress", "corpus", "generate", "--op", "add", "--count", "3",
         "--seed", "5"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / "out.toml"
    path.write_text(proc.stdout)
    assert [c.id for c in load_corpus_file(path)] == ["add-s5-000", "add-s5-001", "add-s5-002"]


def test_build_case_validates_like_the_corpus_loader():
    case = build_case("add", {"shape": [2, 3]}, seed=1)
    assert case.id == "add-shape2x3-s1" and case.params["dtype"] == "float32"
    neg = build_case("mhc_pre_sinkhorn_backward", {"B": 1, "S": 8, "N": 3, "C": 128},
                     expect={"status": 161002})  # fmt: skip
    assert neg.id == case_id_for(neg.op, neg.params, 0, 161002) and neg.expect.status == 161002
    from stress.errors import ConfigError

    with pytest.raises(ConfigError, match="field 'shape'"):
        build_case("add", {"shape": "2x3"})
    with pytest.raises(ConfigError, match="unknown op 'conv'"):
        build_case("conv", {})
    with pytest.raises(ConfigError, match=r"expect\.status"):
        build_case("add", {"shape": [1]}, expect=0)
    with pytest.raises(BoundsError, match="max_side"):
        generate_cases("add", GenerateOptions(1, 0, bounds={"max_side": 0}))
    with pytest.raises(BoundsError, match="max_elements=0"):
        generate_cases("add", GenerateOptions(1, 0, bounds={"max_elements": 0}))


def test_generated_corpora_run_clean_through_the_engine(tmp_path):
    """Valid cases pass, and every violation fails with its expected status (a negative case
    passes when it fails as documented), through the same engine as `aclnn-stress run`."""
    valid, invalid = tmp_path / "valid.toml", tmp_path / "invalid.toml"
    assert _generate("--op", "add", "--count", "4", "--seed", "2", "--out", str(valid)) == 0
    assert _generate("--op", "mhc_pre_sinkhorn_backward", "--count", "4", "--seed", "2",
                     "--invalid", "--dim", "C=128:256", "--out", str(invalid)) == 0  # fmt: skip
    session = Session(
        # the generated cases as written (their variants are tests/test_size_variants.py's)
        RunConfig(seed=1, threads=2, iterations=2, phases=("serial", "mixed"), variants=()),
        [str(valid), str(invalid)],
        baseline_path=tmp_path / "baseline.json",
        out_dir=tmp_path / "out",
        isolate=False,
        record_missing=True,
        shrink_budget=0,
    )
    report = session.run().to_json()
    assert report["diagnosis"] == "clean", report["explanation"]
