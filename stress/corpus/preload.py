"""Corpus files parsed once per run, before the phase children are forked.

Every phase child used to parse the run's corpus again (1 000 generated cases: ~0.5–0.8 s a
child, seven children a run). The fork server parses each file once (:func:`warm`) and the
children it forks inherit the parsed cases; :func:`load` returns them where the file's bytes
and the include folders are those that were parsed, else parses as
:func:`stress.corpus.parse.load_corpus` does. Case objects are shared, never changed after
parsing; each call returns a new list.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from stress.corpus.parse import Case, load_corpus, load_corpus_file
from stress.errors import ConfigError
from stress.files import read_text

__all__ = ["load", "warm"]

_PARSED: dict[tuple[str, str, tuple[str, ...]], list[Case]] = {}


def _key(path: str | Path, include_dirs: Sequence[str | Path]) -> tuple[str, str, tuple[str, ...]]:
    # read as the parser reads it: a regular file under the size cap, never blocking on a FIFO
    # or reading /dev/zero without end (Path.read_bytes did both, before any check ran)
    text = read_text(path, "corpus file")
    digest = hashlib.sha256(text.encode()).hexdigest()
    return str(path), digest, tuple(str(d) for d in include_dirs)


def _file(path: str | Path, include_dirs: Sequence[str | Path] = ()) -> list[Case]:
    try:
        key = _key(path, include_dirs)
    except (OSError, ConfigError):  # parsing says what is wrong with the file, in its words
        return load_corpus_file(path, include_dirs)
    hit = _PARSED.get(key)
    if hit is None:
        hit = _PARSED[key] = load_corpus_file(path, include_dirs)
    return list(hit)


def warm(paths: Iterable[str | Path], include_dirs: Sequence[str | Path] = ()) -> None:
    """Parse each file of ``paths`` and keep its cases, unless this process has them already
    (the session loads through :func:`load` before it forks the fork server); a file that
    fails is left to the job that loads it, which then says why."""
    for path in paths:
        try:
            _file(path, include_dirs)
        except Exception:  # reported by the job that needs the file
            continue


def load(paths: Iterable[str | Path], include_dirs: Sequence[str | Path] = ()) -> list[Case]:
    """As :func:`stress.corpus.parse.load_corpus`, with the files parsed before (here or in
    the process this one was forked from) reused, and kept."""
    return load_corpus(paths, include_dirs, load_file=_file)
