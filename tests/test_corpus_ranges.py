"""Legal ranges checked when a corpus loads (issue 31 item 4): a case outside what its
operator's declaration makes legal is refused with one line naming the file, the case, the
field, the value and the range; a recording error names its case once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stress.corpus.legal import MAX_RANK
from stress.corpus.parse import load_corpus
from stress.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
BACKWARD = REPO / "stress/ops/declarations/mhc_pre_sinkhorn_backward.toml"
FORWARD = REPO / "stress/ops/declarations/mhc_pre_sinkhorn.toml"
FIX = "a case that tests the rejection sets expect = { status = 161002 }"


def _corpus(tmp_path: Path, case: str, op: str = "mhc_pre_sinkhorn_backward") -> Path:
    path = tmp_path / "x.toml"
    path.write_text(f'[defaults]\nop = "{op}"\n\n[[case]]\nid = "bad"\n{case}\n')
    return path


def _refusal(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_corpus([path])
    text = str(info.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    ("case", "line"),
    [
        (
            "B = 2\nS = 128\nC = 0",
            "field 'C': 0 is outside its legal range [1, 99999] (C must be > 0; "
            f"{BACKWARD} [generate] legal); {FIX}",
        ),
        (
            "B = 2\nS = 128\nN = 0\nC = 256",
            f"field 'N': 0 is outside its legal range [4, 4] ({BACKWARD} [generate] legal); {FIX}",
        ),
        (
            "B = 1\nS = 8\nC = 100096",
            "field 'C': 100096 is outside its legal range [1, 99999] "
            f"({BACKWARD} [generate] legal); {FIX}",
        ),
        (
            "B = 1\nS = 8\nC = 1100",
            f"field 'C': 1100 is not a multiple of 128 (C must be a multiple of 128; {BACKWARD} "
            f"[dims]); {FIX}",
        ),
        (  # an attribute (numIters) out of its range
            "B = 1\nS = 8\nC = 128\nnum_iters = 5",
            "field 'num_iters': 5 is outside its legal range [20, 20] (num_iters must be 20; "
            f"{BACKWARD} [generate] legal); {FIX}",
        ),
        (  # a dtype its header allows, which the operator documents as rejected
            'B = 1\nS = 8\nC = 128\ndtype = "float32"',
            "field 'dtype': 'float32' breaks a documented constraint: dtype must be bf16 or "
            f"fp16 ({BACKWARD} [[generate.violation]] 'dtype'); {FIX}",
        ),
    ],
    ids=["C=0", "N=0", "C-over", "C-align", "num_iters", "dtype"],
)
def test_a_mhc_case_outside_its_legal_ranges_is_one_line(tmp_path: Path, case: str, line: str):
    path = _corpus(tmp_path, case)
    assert _refusal(path) == f"{path}: case 'bad', {line}"


def test_a_dtype_alias_matches_the_violation_it_names(tmp_path: Path):
    path = _corpus(tmp_path, 'B = 1\nS = 8\nC = 128\ndtype = "fp32"')
    assert "field 'dtype': 'fp32' breaks a documented constraint: dtype must be" in _refusal(path)


def test_an_attribute_variable_breaking_a_violation_is_refused(tmp_path: Path):
    path = _corpus(tmp_path, "B = 1\nS = 8\nC = 128\nhc_mult = 3", op="mhc_pre_sinkhorn")
    assert _refusal(path) == (
        f"{path}: case 'bad', field 'hc_mult': 3 breaks a documented constraint: hc_mult must "
        f"be 4 ({FORWARD} [[generate.violation]] 'hc-mult'); {FIX}"
    )


def test_a_rank_100_shape_is_refused_at_load(tmp_path: Path):
    path = _corpus(tmp_path, f"shape = {[1] * 99 + [2]}", op="add")
    assert _refusal(path) == (
        f"{path}: case 'bad', field 'shape': rank 100 is over {MAX_RANK}, the most dims an "
        f"aclnn operator takes (legal: rank <= {MAX_RANK}); {FIX}"
    )


def test_rank_8_loads_and_rank_9_does_not(tmp_path: Path):
    (case,) = load_corpus([_corpus(tmp_path, f"shape = {[1] * 7 + [2]}", op="add")])
    assert len(case.params["shape"]) == 8
    assert "rank 9 is over 8" in _refusal(_corpus(tmp_path, f"shape = {[1] * 9}", op="add"))


NEGATIVE = [
    ("c0", "C = 0"),
    ("n0", "N = 0\nC = 128"),
    ("align", "C = 100"),
    ("f32", 'C = 128\ndtype = "float32"'),
]


def test_negative_cases_may_break_the_ranges_on_purpose(tmp_path: Path):
    path = tmp_path / "neg.toml"
    path.write_text(
        '[defaults]\nop = "mhc_pre_sinkhorn_backward"\nexpect = { status = 161002 }\n\n'
        + "".join(f'[[case]]\nid = "{i}"\nB = 1\nS = 8\n{c}\n\n' for i, c in NEGATIVE)
        + '[[case]]\nid = "r9"\nop = "add"\nshape = [1, 1, 1, 1, 1, 1, 1, 1, 1]\n'
    )
    assert [c.id for c in load_corpus([path])] == ["c0", "n0", "align", "f32", "r9"]
    path.write_text(
        f'[[case]]\nid = "r100"\nop = "add"\nshape = {[1] * 100}\nexpect = {{ status = 161002 }}\n'
    )
    assert _refusal(path) == (
        f"{path}: case 'r100', field 'shape': rank 100 is over 64, the most dims the host "
        "arrays (numpy) hold (legal: rank <= 64)"
    )


def test_the_shipped_corpora_still_load(monkeypatch):
    from stress import ops

    ops.names()  # the built-in declarations loaded, then the catalogue restored afterwards
    for table in ("_CATALOGUE", "_DECLARED_SOURCE", "_DECLARATIONS"):
        monkeypatch.setattr(ops, table, dict(getattr(ops, table)))
    files = [REPO / "corpus/mhc.toml", *sorted((REPO / "corpus/ops").glob("*.toml"))]
    cases = load_corpus(files)
    assert len(cases) > 20 and any(c.negative for c in cases)


GENERATOR = """
def generate(values, seed, **_):
    raise ValueError(f"no inputs for H={values['H']}")
"""


def test_a_recording_error_names_the_case_once(tmp_path: Path):
    """A generator that raises while the baseline is recorded: the case and the file are
    named, the error's text appears once."""
    (tmp_path / "badgen.py").write_text(GENERATOR)
    decl = (REPO / "corpus/ops/add.toml").read_text()
    named = 'name = "badgen_add"\ngenerate = "badgen:generate"'
    decl = decl.replace('name = "declared_add"', named)
    corpus = tmp_path / "badgen.toml"
    corpus.write_text(decl)
    env = {
        **os.environ,
        "STRESS_BACKEND": "sim",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
        "ACLNN_STRESS_ALLOW_REFERENCE_IMPORTS": "1",
    }
    argv = ["run", "--corpus", str(corpus), "--record-baseline", "--budget", "4"]
    argv += ["--baseline", str(tmp_path / "bl.json"), "--out", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-m", "stress", *argv],
        cwd=REPO, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    error = done.stderr.strip().splitlines()[-1]
    assert error == (
        f"aclnn-stress: error: recording the baseline failed: case 'dadd-f32' ({corpus}): "
        "ValueError: no inputs for H=64"
    )
    assert error.count("no inputs for") == 1


def test_cases_built_in_python_are_checked_alike():
    """build_case (the pytest plugin's stress_case, stress.strategies) refuses the same way."""
    from stress.corpus.generate import build_case

    params = {"B": 1, "S": 8, "C": 0}
    with pytest.raises(ConfigError, match=r"^<generated>, field 'C': 0 is outside its legal"):
        build_case("mhc_pre_sinkhorn_backward", params)
    negative = build_case("mhc_pre_sinkhorn_backward", params, expect=161002)
    assert negative.negative and negative.params["C"] == 0
