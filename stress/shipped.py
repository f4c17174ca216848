"""The shipped corpora, and which corpus ``run`` uses when none is named.

One copy lives in the source tree as ``corpus/`` (where the Makefile, the tests and the docs
name them: ``corpus/mhc.toml``); the wheel carries the same files as package data,
``stress/corpora/`` (setup.py copies them at build time). A default path such as
``corpus/mhc.toml`` is read from the working directory when it has one (a user's own corpus
folder), else from the shipped corpora: the installed package's ``stress/corpora/``, or the
checkout's ``corpus/`` under an editable install.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["DefaultPaths", "default_paths", "shipped_corpus_files", "shipped_dir"]

_PACKAGED = Path(__file__).resolve().parent / "corpora"  # in an installed wheel
_CHECKOUT = Path(__file__).resolve().parents[1] / "corpus"  # in a source checkout
_PREFIX = "corpus/"
_CONTROL = "corpus/control.toml"


def shipped_dir() -> Path | None:
    """The folder of the shipped corpora: the package's, else the checkout's; None if neither."""
    for folder in (_PACKAGED, _CHECKOUT):
        if (folder / "mhc.toml").is_file():
            return folder
    return None


def shipped_corpus_files() -> list[Path]:
    """The shipped corpus files (``*.toml`` of :func:`shipped_dir` but the control corpus): the
    pytest plugin's default where its rootdir has no corpus/ folder."""
    folder = shipped_dir()
    if folder is None:
        return []
    return sorted(p for p in folder.glob("*.toml") if p.name != Path(_CONTROL).name)


@dataclass(frozen=True)
class DefaultPaths:
    """The corpus and control paths a run uses; ``shipped``: the corpus is the shipped default
    (no ``--corpus``, no corpus/ folder here); ``note``: the console line saying which it used
    (empty when the user named every path)."""

    corpus: tuple[str, ...]
    control: tuple[str, ...]
    shipped: bool
    note: str


def _resolve(path: str, folder: Path | None) -> tuple[str, bool]:
    """``path`` as given when it exists here or names no shipped file, else the shipped one."""
    if Path(path).exists() or folder is None or not path.startswith(_PREFIX):
        return path, False
    candidate = folder / path[len(_PREFIX) :]
    return (str(candidate), True) if candidate.is_file() else (path, False)


def default_paths(
    corpus: list[str] | None, control: str, *, corpus_default: tuple[str, ...], control_default: str
) -> DefaultPaths:
    """The paths of a run given ``--corpus`` (None: not given) and ``--control`` ("none": no
    control): a default path resolves as the module says; a path the user named is theirs."""
    folder = shipped_dir()
    given = bool(corpus)
    pairs = (
        [(p, False) for p in corpus] if corpus else [_resolve(p, folder) for p in corpus_default]
    )
    controls: list[tuple[str, bool]] = []
    if control != "none":
        controls.append(
            _resolve(control, folder) if control == control_default else (control, False)
        )
    from_shipped = [Path(p).name for p, shipped in [*pairs, *controls] if shipped]
    note = ""
    if from_shipped:
        note = (
            f"corpus: the shipped {', '.join(from_shipped)} from {folder} "
            "(no corpus/ folder in the working directory)"
        )
    elif not given:
        note = f"corpus: {', '.join(p for p, _ in [*pairs, *controls])} (working directory)"
    shipped = not given and all(s for _, s in pairs)
    return DefaultPaths(tuple(p for p, _ in pairs), tuple(p for p, _ in controls), shipped, note)
