"""``corpus generate --variants`` and the strategies' ``variants``: generated cases with the
views, size variants and twins a run derives, written so that they load back as those
variants (``view``, ``derived``), and drawn by hypothesis the same way."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import InvalidArgument

from stress.cli import main
from stress.corpus import strategies as sst
from stress.corpus.parse import load_corpus_file
from stress.vocabulary import size_kind, split_view, variant_kind

REPO = Path(__file__).resolve().parents[1]
MATMUL = str(REPO / "corpus/ops/matmul.toml")


def _generate(tmp_path: Path, *args: str) -> list:
    out = tmp_path / "gen.toml"
    assert main(["corpus", "generate", *args, "--out", str(out)]) == 0
    return load_corpus_file(out)


def test_a_declarations_cases_come_with_their_views_and_edges(tmp_path):
    cases = _generate(
        tmp_path, "--declaration", MATMUL, "--count", "2", "--variants", "transpose,edge"
    )
    plain = [c for c in cases if not variant_kind(c.id)]
    views = [c for c in cases if split_view(c.id)[1] == "transpose"]
    edges = [c for c in cases if size_kind(c.id) == "edge"]
    assert len(plain) == 2 and len(views) == 2 and edges, [c.id for c in cases]
    assert len({c.id for c in cases}) == len(cases)
    assert {v.view for v in views} == {"transpose"}
    # the edges reach past the [dims] range generated cases draw from (K <= 128): the legal one
    assert max(c.params["K"] for c in edges) > 2048
    again = _generate(tmp_path, "--declaration", MATMUL, "--count", "2", "--force")
    assert {c.id for c in again} == {c.id for c in plain}  # the same draw without variants


def test_a_built_in_operators_cases_come_with_their_twins(tmp_path):
    cases = _generate(
        tmp_path, "--op", "mhc_pre_sinkhorn_backward", "--count", "2", "--variants", "twins,pad"
    )
    twins = [c for c in cases if variant_kind(c.id) == "twins"]
    pads = [c for c in cases if c.view == "pad"]
    assert twins and len(pads) == 2, [c.id for c in cases]
    for t in twins:  # one field differs from its case
        base = next(c for c in cases if c.id == t.id.rpartition("@")[0])
        differ = [k for k in base.params if base.params[k] != t.params[k]]
        assert len(differ) == 1, (t.id, differ)


def test_variants_refused_for_invalid_cases(capsys):
    args = ["corpus", "generate", "--declaration", MATMUL, "--invalid", "--variants", "pad"]
    assert main(args) == 2
    assert "--variants: only for valid cases" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"variants": "pad"}, "expected a sequence"),
        ({"variants": ["pads"]}, "unknown kind 'pads'"),
        ({"variants": ["edge"], "max_case_bytes": 0}, "max_case_bytes=0"),
    ],
)
def test_strategy_variants_are_validated_when_created(kw, match):
    with pytest.raises(InvalidArgument, match=match):
        sst.valid_cases("mhc_pre_sinkhorn_backward", **kw)


def test_strategies_draw_each_kind_of_variant():
    strategy = sst.valid_cases(
        "mhc_pre_sinkhorn_backward",
        variants=["pad", "edge", "twins"],
        max_case_bytes=1 << 20,
        dims={"C": (128, 256)},
    )
    quick = settings(
        database=None, max_examples=200, suppress_health_check=list(HealthCheck), deadline=None
    )
    # that each kind is drawn needs no shrinking of the example found (it took ~90% of the time)
    drawn = settings(quick, phases=(Phase.explicit, Phase.reuse, Phase.generate))
    for kind in ("pad", "edge", "twins"):
        found = find(
            strategy,
            lambda c, k=kind: variant_kind(c.id) == k,
            settings=drawn,
        )
        assert variant_kind(found.id) == kind, found.id
    unvaried = find(strategy, lambda c: True, settings=quick)
    assert not variant_kind(unvaried.id), unvaried.id  # shrinks to the case itself
