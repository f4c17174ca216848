"""Corpus loading: every bad input is a one-line ConfigError naming file, case and field."""

from __future__ import annotations

import pytest

from stress.corpus.parse import load_corpus, load_corpus_file
from stress.errors import ConfigError

GOOD = """
[defaults]
op = "add"
dtype = "bf16"

[[case]]
id = "a"
shape = [2, 3]
seed = 1

[[case]]
id = "b"
shape = [4]
dtype = "float32"
expect = { status = 161002 }
"""


def _write(tmp_path, text, name="c.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_good_corpus_merges_defaults_and_parses_params(tmp_path):
    a, b = load_corpus_file(_write(tmp_path, GOOD))
    assert a.params["dtype"] == "bf16" and a.params["shape"] == (2, 3) and a.seed == 1
    assert b.params["dtype"] == "float32" and b.expect.status == 161002 and b.negative
    alpha = next(arg for arg in a.spec.args if arg.name == "alpha")
    assert alpha.value(a.params) == 1.0  # the declaration's default (stress/ops/declarations)
    assert a.key != b.key and len(a.key) == 16


def test_default_seed_is_stable_and_differs_per_id(tmp_path):
    text = (
        '[[case]]\nid = "x"\nop = "add"\nshape = [1]\n[[case]]\nid = "y"\nop = "add"\nshape = [1]\n'
    )
    x1, y1 = load_corpus_file(_write(tmp_path, text))
    x2, _ = load_corpus_file(_write(tmp_path, text, "d.toml"))
    assert x1.seed == x2.seed and x1.seed != y1.seed


def test_int_alpha_stays_int(tmp_path):
    (c,) = load_corpus_file(_write(tmp_path, '[[case]]\nid="i"\nop="add"\nshape=[2]\nalpha=3\n'))
    assert c.params["alpha"] == 3 and isinstance(c.params["alpha"], int)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[case]\nid=1", "invalid TOML"),
        ("x = 1\n[[case]]\nid='a'\nop='add'\nshape=[1]", "unknown top-level key 'x'"),
        ("[defaults]\nop='add'\n", "no cases"),
        ("[[case]]\nop='add'\nshape=[1]", "case #1, field 'id'"),
        ("[[case]]\nid='bad id'\nop='add'\nshape=[1]", "field 'id'"),
        ("[[case]]\nid='a'\nshape=[1]", "case 'a', field 'op': required"),
        # an op no declaration registers (mul is one once any test loads corpus/ops/mul.toml)
        (
            "[[case]]\nid='a'\nop='no_such_op'\nshape=[1]",
            "case 'a', field 'op': unknown op 'no_such_op'",
        ),
        ("[[case]]\nid='a'\nop='add'", "case 'a', field 'shape': required"),
        ("[[case]]\nid='a'\nop='add'\nshape=[1]\nsize=3", "field 'size': not a parameter"),
        ("[[case]]\nid='a'\nop='add'\nshape='2x3'", "field 'shape': expected a list"),
        ("[[case]]\nid='a'\nop='add'\nshape=[-1]", "field 'shape': dimensions must be >= 0"),
        ("[[case]]\nid='a'\nop='add'\nshape=[1]\ndtype='f8'", "field 'dtype': 'f8' is not one"),
        ("[[case]]\nid='a'\nop='add'\nshape=[1]\nseed=-2", "field 'seed'"),
        ("[[case]]\nid='a'\nop='add'\nshape=[1]\nexpect=3", "field 'expect'"),
        ("[[case]]\nid='a'\nop='add'\nshape=[1]\nexpect={status=0}", "field 'expect.status'"),
        ("[[case]]\nid='a'\nop='add'\nshape=[1]\nexpect={code=1}", "field 'expect.code'"),
        (
            "[[case]]\nid='a'\nop='mhc_pre_sinkhorn_backward'\nB='2'\nS=1\nC=128",
            "case 'a', field 'B': expected int",
        ),
        ("[defaults]\nid='x'\n[[case]]\nop='add'\nshape=[1]", "[defaults] field 'id'"),
    ],
)
def test_bad_corpus_names_file_case_and_field(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_corpus_file(path)
    text = str(info.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text


def test_missing_file_and_duplicate_ids(tmp_path):
    with pytest.raises(ConfigError, match="corpus file not found"):
        load_corpus([tmp_path / "nope.toml"])
    one = _write(tmp_path, GOOD, "one.toml")
    two = _write(tmp_path, GOOD, "two.toml")
    with pytest.raises(ConfigError, match="case 'a', field 'id': duplicate"):
        load_corpus([one, two])
    with pytest.raises(ConfigError, match="no corpus given"):
        load_corpus([])


def test_shipped_corpora_load():
    cases = load_corpus(["corpus/mhc.toml", "corpus/control.toml"])
    ids = {c.id for c in cases}
    assert {"base-a", "base-b", "seq512", "empty-batch", "large-c"} <= ids
    mhc = [c for c in cases if c.op.startswith("mhc")]
    assert {c.params["dtype"] for c in mhc} == {"bf16", "fp16"}
    assert any(c.params["B"] == 0 for c in mhc) and any(c.params["S"] == 512 for c in mhc)
    assert {c.params["C"] for c in mhc if not c.negative} >= {128, 1024}
    control = [c for c in cases if c.source.endswith("control.toml")]
    assert control and all(c.op == "add" for c in control)
