"""An attribute twin must not keep outputs the changed attribute would change (keepDims)."""

from _cli import REPO

from stress.corpus import twins
from stress.corpus.parse import load_corpus_file


def test_no_attribute_twin_for_a_case_that_states_its_outputs() -> None:
    cases = load_corpus_file(REPO / "corpus" / "ops" / "reduce_sum.toml")
    ids = [t.id for t in twins.twins(cases)]
    assert ids, "dtype twins are still made"
    assert not [i for i in ids if "@attr-keepDims" in i]
