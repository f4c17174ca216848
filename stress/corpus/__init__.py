"""Cases: the corpus TOML files (:mod:`.parse`), generated cases (:mod:`.generate`) and the
hypothesis strategies that draw them (:mod:`.strategies`, imported on demand: it needs
hypothesis)."""

from stress.corpus.parse import Case, Expect, corpus_text, load_corpus, load_corpus_file

__all__ = ["Case", "Expect", "corpus_text", "load_corpus", "load_corpus_file"]
