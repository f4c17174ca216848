"""The operators a header declares, kept on disk between processes.

Every process that loads a corpus reads its declarations' headers: a C preprocessor (pcpp)
and a C parser (pycparser) over each header and what it includes — ~0.06 s of CPU for the
shipped corpus (importing both and parsing five headers, on the 2-core machine), on the path
of ``aclnn-stress run`` before its fork server starts, and in every process started cold.
What the reader finds is a function of its inputs alone: the header's text and path, the
include folders and defines, every file the preprocessor tried to open (its bytes, or that it
did not exist) and the reader's own code. :func:`read_header` keys a JSON file on the first
four (the paths as given and made absolute) and the code, records the files tried, and takes
the cached result only while each of them is as it was; otherwise (and for any error, never
cached) the header is read as before.

The cache lives in ``$XDG_CACHE_HOME/aclnn-stress/headers`` (else ``~/.cache/...``), beside
the simulator's builds; a folder that cannot be written only means no cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stress.ops.header_find import file_digest, find_header
from stress.ops.signature import CParam, HeaderInfo, OpSignature

__all__ = ["cache_dir", "read_header"]

#: The modules whose code decides what a header reads as (their text is in the key).
_READER = ("header.py", "signature.py")
#: Bumped when the cached document changes shape.
_FORMAT = 1


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/aclnn-stress/headers``, else ``~/.cache/aclnn-stress/headers``."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "aclnn-stress" / "headers"


def _key(text: str, source: str, dirs: Sequence[str], defines: Sequence[str]) -> str:
    h = hashlib.sha256(f"format={_FORMAT}\0".encode())
    here = Path(__file__).parent
    for name in _READER:
        h.update((here / name).read_bytes() + b"\0")
    # the path as given is in what the reader returns; the absolute ones say where it looked
    where = (source, os.path.abspath(source), os.path.realpath(source), *map(os.path.abspath, dirs))
    for part in (*where, "\0defines", *defines, "\0text", text):
        h.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()[:32]


def _to_json(info: HeaderInfo) -> dict[str, Any]:
    return {
        "header": info.header,
        "ops": [
            {
                "name": op.name,
                "header": op.header,
                "line": op.line,
                "params": [vars(p) for p in op.params],
            }
            for op in info.ops
        ],
    }


def _from_json(doc: dict[str, Any]) -> HeaderInfo:
    ops = tuple(
        OpSignature(op["name"], tuple(CParam(**p) for p in op["params"]), op["header"], op["line"])
        for op in doc["ops"]
    )
    return HeaderInfo(doc["header"], ops)


def _cached(path: Path) -> HeaderInfo | None:
    """The entry at ``path`` if every file it was read from is as it was then."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if any(file_digest(f) != d for f, d in doc["tried"].items()):
            return None
        return _from_json(doc["info"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _store(path: Path, info: HeaderInfo, tried: dict[str, str | None]) -> None:
    text = json.dumps({"info": _to_json(info), "tried": tried}, sort_keys=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass  # no cache: the next process reads the header again


def read_header(
    path: str | Path, include_dirs: Sequence[str | Path] = (), defines: Sequence[str] = ()
) -> HeaderInfo:
    """:func:`stress.ops.header.read_header`, from the cache when nothing it read changed."""
    found = find_header(path, include_dirs)
    try:
        text = found.read_text(encoding="utf-8", errors="replace")
    except OSError:
        from stress.ops.header import read_header as uncached

        return uncached(found, include_dirs, defines)  # says what is wrong, as it did
    dirs = [str(d) for d in include_dirs]
    entry = cache_dir() / f"{_key(text, str(found), dirs, list(defines))}.json"
    hit = _cached(entry)
    if hit is not None:
        return hit
    from stress.ops.header import read_header_text

    tried: dict[str, str | None] = {}
    info = read_header_text(text, str(found), include_dirs, defines, tried=tried)
    _store(entry, info, tried)
    return info
