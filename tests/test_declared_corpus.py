"""Declared operators through every command: the declaration-only corpora of corpus/ops/ run
clean through ``aclnn-stress run``, ``corpus generate`` writes runnable declared corpora, the
hypothesis strategies draw cases the simulator accepts, the pytest plugin runs a declared op
named in a marker, generated corpora (shrinking, reproducers, isolated children) refer back to
the declarations, and the shared-layer fault ``scratch-pool`` over two non-mHC declared
operators is diagnosed as cross-call contamination naming the pair."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import stress_cli
from hypothesis import HealthCheck, given, settings

from stress.corpus import load_corpus
from stress.corpus.parse import corpus_text
from stress.engine.call.prepared import run_once
from stress.ops.declaration import load_declaration
from stress.ops.declared import to_opspec
from stress.ops.declared_strategies import declared_cases

ROOT = Path(__file__).resolve().parent.parent
OPS = sorted((ROOT / "corpus" / "ops").glob("*.toml"))
DECLS = ROOT / "tests" / "declarations"
PHASES = "serial,shuffled,interleaved,isolated,mixed"

pytest_plugins = ["pytester"]


def _run(tmp: Path, *corpora: str, phases: str = PHASES, faults: str | None = None, **kw):
    args = ["run", *(a for c in corpora for a in ("--corpus", c)), "--control", "none",
            "--phases", phases, "--record-baseline", "--threads", "2", "--out", str(tmp / "out"),
            "--baseline", str(tmp / "baseline.json"), "--no-isolate", "--quiet",
            *kw.get("extra", ("--iterations", "2"))]  # fmt: skip
    env = {"env": {**os.environ, **kw["env"]}} if "env" in kw and faults is None else {}
    proc = stress_cli(*args, faults=faults, timeout=120, **env)
    report = tmp / "out" / "report.json"
    return proc, json.loads(report.read_text()) if report.exists() else None


def test_every_simulator_operator_has_a_declared_corpus():
    functions = {load_declaration(p).function for p in OPS}
    assert functions >= {"aclnnAdd", "aclnnAdds", "aclnnInplaceAdd", "aclnnMul", "aclnnMatmul",
                         "aclnnRmsNorm", "aclnnSoftmax", "aclnnReduceSum", "aclnnCat",
                         "aclnnLayerNorm"}  # fmt: skip
    for path in OPS:
        assert "[op]" in path.read_text(), path  # declarations only: no Python op behind them


def test_every_declared_corpus_runs_clean_in_one_run(tmp_path):
    """Every corpus of corpus/ops/ through all five phases in one run, as written (their
    variants: the slow per-corpus sweep below and tests/test_size_variants.py, test_views.py)."""
    proc, report = _run(tmp_path, *map(str, OPS), extra=("--iterations", "2", "--variants", "none"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["diagnosis"] == "clean"
    assert {p["name"] for p in report["phases"]} == set(PHASES.split(","))
    ran = {c["id"] for p in report["phases"] for c in p["cases"]}
    assert ran >= {c.id for c in load_corpus(OPS)}


@pytest.mark.slow
@pytest.mark.parametrize("corpus", OPS, ids=[p.stem for p in OPS])
def test_declared_corpus_runs_clean(tmp_path, corpus):
    """Each corpus alone with every variant (~20 s of CPU each): ``-m slow``."""
    proc, report = _run(tmp_path, str(corpus))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["diagnosis"] == "clean"
    ran = {c["id"] for p in report["phases"] for c in p["cases"]}
    assert ran >= {c.id for c in load_corpus([corpus])}


def test_corpus_generate_writes_a_runnable_declared_corpus(tmp_path):
    out = tmp_path / "gen.toml"
    proc = stress_cli("corpus", "generate", "--declaration", str(ROOT / "corpus/ops/cat.toml"),
                      "--count", "4", "--seed", "3", "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    again = stress_cli("corpus", "generate", "--declaration", str(ROOT / "corpus/ops/cat.toml"),
                       "--count", "4", "--seed", "3")  # fmt: skip
    assert again.stdout == out.read_text()  # deterministic
    cases = load_corpus([out])
    assert len(cases) == 4 and {c.op for c in cases} == {"cat"}
    proc, report = _run(tmp_path, str(out), phases="serial,mixed")
    assert proc.returncode == 0 and report["diagnosis"] == "clean", proc.stdout + proc.stderr


def test_written_corpora_refer_to_their_declarations(tmp_path):
    cases = load_corpus([ROOT / "corpus/ops/reduce_sum.toml", ROOT / "corpus/ops/layer_norm.toml"])
    path = tmp_path / "repro.toml"
    path.write_text(corpus_text(cases))
    again = load_corpus([path])
    assert [(c.id, c.op, c.key) for c in again] == [(c.id, c.op, c.key) for c in cases]


_RMS = load_declaration(ROOT / "corpus/ops/rms_norm.toml")
_RMS_SPEC = to_opspec(_RMS)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=declared_cases(_RMS, dims={"B": (0, 4), "H": (1, 64)}, max_elements=512))
def test_strategy_cases_run_on_the_simulator(ctx, stream, case):
    params = _RMS_SPEC.parse_params(case.params(), "drawn")
    p = _RMS_SPEC.uploaded(params)
    assert p["x"][0][1] == p["gamma"][0][0]  # related shapes stay consistent
    out = run_once(ctx, stream, _RMS_SPEC, params, _RMS_SPEC.generate(params, case.seed or 0))
    assert out["yOut"].shape == p["x"][0]


def test_bad_declaration_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text((ROOT / "corpus/ops/softmax.toml").read_text().replace("dim = -1", "dimm = -1"))
    proc = stress_cli("run", "--corpus", str(bad), "--control", "none", "--iterations", "1")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "dimm" in lines[0], proc.stderr


def test_pytest_plugin_runs_a_declared_op(pytester):
    pytester.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.stress_case(op="cat", A=2, B=3, H=8, seed=1)
        def test_cat(stress_cases, stress_run):
            assert stress_cases[0].spec.function == "aclnnCat"
            stress_run(stress_cases, phases=("serial", "mixed"), control=False, iterations=2)
        """
    )
    result = pytester.runpytest_subprocess(
        "-p", "stress", "--stress-corpus", str(ROOT / "corpus/ops/cat.toml"),
        "--stress-control", "none", "--stress-threads", "2", "-p", "no:randomly",
    )  # fmt: skip
    result.assert_outcomes(passed=1)


def test_scratch_pool_fault_names_the_declared_pair(tmp_path):
    proc, report = _run(tmp_path, str(DECLS / "scratch_mul.toml"), str(DECLS / "scratch_add.toml"),
                        phases="serial,mixed", faults="scratch-pool",
                        extra=("--stream", "per-thread", "--duration", "1", "--threads", "4",
                               "--variants", "none"),  # the pair alone, as declared
                        )  # fmt: skip
    assert report is not None, proc.stderr
    assert report["diagnosis"] == "cross-call-contamination", report["explanation"]
    assert "sp-mul" in report["explanation"] and "sp-add" in report["explanation"]


def test_op_list_finds_every_simulator_operator():
    proc = stress_cli("op", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    names = {o["name"] for o in json.loads(proc.stdout)}
    for path in OPS:
        assert load_declaration(path).function in names
    assert {"aclnnMhcPreSinkhorn", "aclnnMhcPreSinkhornBackward", "aclnnInplaceMul"} <= names


def test_op_inspect_prints_the_json_contract():
    proc = stress_cli("op", "inspect", "aclnnop/aclnn_layer_norm.h", "--json")
    assert proc.returncode == 0, proc.stderr
    (op,) = json.loads(proc.stdout)["ops"]
    assert op["name"] == "aclnnLayerNorm"
    roles = {p["name"]: (p["type"], p["role"], p["optional"]) for p in op["params"]}
    assert roles["normalizedShape"] == ("aclIntArray", "attr", False)
    assert roles["rstdOutOptional"] == ("aclTensor", "output", True)
    missing = stress_cli("op", "inspect", "aclnn_nope.h")
    assert missing.returncode == 2 and "aclnn_nope.h" in missing.stderr


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_custom_package_operator_from_its_declaration_alone(tmp_path):
    """The example package, built with its one documented command, then stressed from
    examples/custom_op/my_scale.toml: the binding finds aclnnMyScale in libcust_opapi.so."""
    build = subprocess.run(
        [sys.executable, str(ROOT / "examples/custom_op/build.py"), "--install-path",
         str(tmp_path / "opp")], capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout + build.stderr
    package = tmp_path / "opp" / "vendors" / "my_vendor"
    proc, report = _run(tmp_path, str(ROOT / "examples/custom_op/my_scale.toml"),
                        env={"ASCEND_CUSTOM_OPP_PATH": str(package)})  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["diagnosis"] == "clean"


def test_readme_declaration_example_runs_verbatim(tmp_path, ctx, stream):
    text = (ROOT / "README.md").read_text().split("## Declared operators", 1)[1]
    example = text.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "rms.toml").write_text(example)
    (case,) = load_corpus([tmp_path / "rms.toml"])
    out = run_once(ctx, stream, case.spec, case.params, case.spec.generate(case.params, case.seed))
    assert out["yOut"].shape == (4, 1024) and out["rstdOut"].shape == (4, 1)
