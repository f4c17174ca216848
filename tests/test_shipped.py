"""Which corpus a run without ``--corpus`` uses (stress/shipped.py): the working directory's
corpus/ when it has one, else the shipped corpora; the user's own paths are left as given."""

from __future__ import annotations

from pathlib import Path

from stress.cli.commands import DEFAULT_CONTROL, DEFAULT_CORPUS
from stress.shipped import default_paths, shipped_dir

REPO = Path(__file__).resolve().parents[1]


def _paths(corpus, control=DEFAULT_CONTROL):
    return default_paths(
        corpus, control, corpus_default=DEFAULT_CORPUS, control_default=DEFAULT_CONTROL
    )


def test_the_checkout_ships_its_corpus_folder():
    assert shipped_dir() == REPO / "corpus"  # an editable install: no stress/corpora/ beside it


def test_an_empty_folder_gets_the_shipped_corpora_and_is_told(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = _paths(None)
    assert got.corpus == (str(shipped_dir() / "mhc.toml"),)
    assert got.control == (str(shipped_dir() / "control.toml"),)
    assert got.shipped
    assert got.note.startswith("corpus: the shipped mhc.toml, control.toml from ")
    assert str(shipped_dir()) in got.note


def test_a_corpus_folder_in_the_working_directory_wins(tmp_path, monkeypatch):
    (tmp_path / "corpus").mkdir()
    for name in ("mhc.toml", "control.toml"):
        (tmp_path / "corpus" / name).write_text("# mine\n")
    monkeypatch.chdir(tmp_path)
    got = _paths(None)
    assert got.corpus == ("corpus/mhc.toml",) and got.control == ("corpus/control.toml",)
    assert not got.shipped
    assert got.note == "corpus: corpus/mhc.toml, corpus/control.toml (working directory)"


def test_named_paths_are_the_users_and_only_the_default_control_is_shipped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = _paths(["corpus/pool/mul.toml"])  # named: not looked up among the shipped
    assert got.corpus == ("corpus/pool/mul.toml",) and not got.shipped
    assert got.control == (str(shipped_dir() / "control.toml"),)
    assert got.note.startswith("corpus: the shipped control.toml from ")
    none = _paths(["mine.toml"], "none")
    assert none.control == () and none.note == ""
