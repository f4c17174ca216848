"""A declaration's ``[variants]`` table: an operator opts out of derived variants with the
reason its documentation gives (stress/ops/variant_rules.py); a view kind with ``expect`` is
derived as a negative case that must fail with that status."""

from __future__ import annotations

from pathlib import Path

import pytest

from stress.config import RunConfig
from stress.corpus.parse import load_corpus_file
from stress.corpus.size_variants import size_variants
from stress.corpus.twins import twins
from stress.corpus.variants import with_variants
from stress.engine.run.session import Session
from stress.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
ADD = (REPO / "corpus/ops/add.toml").read_text()


def _declaration(tmp_path: Path, table: str, name: str) -> Path:
    text = ADD.replace('name = "declared_add"', f'name = "{name}"')
    text = text.replace("[[case]]", f"{table}\n[[case]]", 1)
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


OPT_OUT = """
[variants]
transpose = { reason = "documented: self must be contiguous" }
pad = { reason = "documented: a padded self is refused", expect = 161002 }
edge = { reason = "documented: H at most 512 on this SoC" }
twins = { reason = "one dtype per build" }
"""


def test_opted_out_kinds_are_not_derived_and_a_view_with_a_status_is_negative(tmp_path):
    cases = load_corpus_file(_declaration(tmp_path, OPT_OUT, "nc_add"))
    plain = [c for c in cases if not c.negative]
    assert plain
    views = with_variants(cases, ("transpose", "pad", "offset"))[len(cases) :]
    kinds = {v.view for v in views}
    assert kinds == {"pad", "offset"}, [v.id for v in views]  # no transpose
    pads = [v for v in views if v.view == "pad"]
    assert pads and {v.expect.status for v in pads if v.expect} == {161002}
    assert len([v for v in pads if v.expect]) == len(pads)
    assert not [v for v in views if v.view == "offset" and v.negative]
    sizes = size_variants(cases, ("empty", "edge"))
    assert sizes and not [c for c in sizes if "@edge-" in c.id or "@large-" in c.id]
    assert twins(cases) == []
    # the same declaration without the table derives all of them
    full = load_corpus_file(_declaration(tmp_path, "", "full_add"))
    assert {v.view for v in with_variants(full, ("transpose",))[len(full) :]} == {"transpose"}
    assert [c for c in size_variants(full, ("edge",)) if "@edge-" in c.id]
    assert twins(full)


@pytest.mark.parametrize(
    "table, match",
    [
        ("[variants]\nfold = { reason = 'x' }", "field 'fold': unknown variant kind"),
        ("[variants]\npad = { expect = 161002 }", "reason: a non-empty string"),
        ("[variants]\nedge = { reason = 'x', expect = 161002 }", "only for a view kind"),
        ("[variants]\npad = { reason = 'x', expect = 0 }", "non-zero status"),
        ("[variants]\npad = 'x'", "expected { reason"),
    ],
)
def test_a_bad_variants_table_is_one_line_naming_the_field(tmp_path, table, match):
    with pytest.raises(ConfigError, match=match) as exc:
        load_corpus_file(_declaration(tmp_path, table, "bad_add"))
    assert "[variants]" in str(exc.value) and "\n" not in str(exc.value)


def test_a_view_the_operator_accepts_fails_its_negative_case(tmp_path):
    """The simulator's aclnnAdd takes a padded self, so the negative pad variant (documented
    to be refused) fails the run: it is checked, not skipped."""
    corpus = [str(_declaration(tmp_path, OPT_OUT, "neg_add"))]
    config = RunConfig(seed=1, variants=("pad",), phases=("serial",), duration=0.3, fail_fast=False)
    base = tmp_path / "base.json"
    Session(config, corpus, []).record_baseline(base)
    report = Session(config, corpus, [], baseline_path=base, out_dir=tmp_path / "r").run()
    data = report.to_json()
    serial = next(p for p in data["phases"] if p["name"] == "serial")
    bad = {c["id"]: c["verdict"] for c in serial["cases"] if c["verdict"] != "PASS"}
    assert bad and all(i.endswith("@pad") for i in bad), bad
    assert data["diagnosis"] != "clean"
