"""Files the tool reads as data and writes as results: hostile input in, no half file out.

Reading (corpus, declaration, baseline, journal): the path must be a regular file (a FIFO would
block forever, ``/dev/zero`` never ends, a directory is an error), it is read with a size cap,
decoded as UTF-8, and parsed with bounded nesting; every failure is one :class:`ConfigError`
line naming the file, what is wrong and the fix.

Writing: :func:`atomic_write_bytes` writes a temp file in the same directory and renames it,
so a reader never sees half a file; the file gets the mode the umask gives (``mkstemp``'s 0600
would hide reports from the rest of a CI job).
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stress.errors import ConfigError

__all__ = [
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "atomic_write_bytes",
    "load_json",
    "load_toml",
    "nesting_depth",
    "output_file",
    "read_lines",
    "read_text",
]

#: Input files larger than this are refused (a corpus is kilobytes, a journal megabytes).
MAX_INPUT_BYTES = 1 << 30
#: A line of a streamed file (the journal) longer than this is refused: one record is kilobytes.
MAX_LINE_BYTES = 64 << 20
#: Deeper nesting of arrays / tables / objects than this is refused (the parsers recurse).
MAX_DEPTH = 64


def _open_regular(path: Path, kind: str, hint: str) -> int:
    """A read-only descriptor of the regular file ``path`` (never blocks on a FIFO)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ConfigError(f"{path}: {kind} not found{hint}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {kind}: {exc.strerror}{hint}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        what = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise ConfigError(f"{path}: the {kind} is {what}; name a regular file{hint}")
    return fd


def read_lines(
    path: str | Path, kind: str, *, cap: int = MAX_LINE_BYTES, fix: str = ""
) -> Iterator[tuple[int, str, bool]]:
    """The lines of the regular file ``path`` one at a time, in constant memory (a journal of
    a long run is hundreds of megabytes): ``(number, text, last)``, ``text`` without its line
    end, ``last`` true for the file's last line; a line over ``cap`` bytes or not UTF-8 is one
    :class:`ConfigError` naming the file and the line."""
    path = Path(path)
    hint = f"; {fix}" if fix else ""
    fd = _open_regular(path, kind, hint)
    with os.fdopen(fd, "rb") as fh:
        try:
            number, line = 1, fh.readline(cap + 1)
            while line:
                if len(line) > cap:
                    raise ConfigError(
                        f"{path}: line {number} of the {kind} is longer than {cap} bytes{hint}"
                    )
                following = fh.readline(cap + 1)
                try:
                    text = line.rstrip(b"\r\n").decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ConfigError(
                        f"{path}: line {number} of the {kind} is not UTF-8 text (byte "
                        f"{exc.start}){hint}"
                    ) from None
                yield number, text, not following
                number, line = number + 1, following
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the {kind}: {exc.strerror}{hint}") from None


def read_text(path: str | Path, kind: str, *, cap: int = MAX_INPUT_BYTES, fix: str = "") -> str:
    """The UTF-8 text of the regular file ``path`` (``kind``: "corpus file", "baseline"...)."""
    path = Path(path)
    hint = f"; {fix}" if fix else ""
    fd = _open_regular(path, kind, hint)
    try:
        info = os.fstat(fd)
        if info.st_size > cap:
            raise ConfigError(
                f"{path}: the {kind} is {info.st_size} bytes, more than the {cap} allowed{hint}"
            )
        chunks, size = [], 0
        while chunk := os.read(fd, min(1 << 20, cap + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:
                raise ConfigError(f"{path}: the {kind} grew past {cap} bytes while read{hint}")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {kind}: {exc.strerror}{hint}") from None
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: the {kind} is not UTF-8 text (byte {exc.start}){hint}"
        ) from None


def nesting_depth(text: str, opening: str = "[{", closing: str = "]}") -> int:
    """An upper bound of the bracket nesting of ``text`` (strings are not excluded: a bracket
    inside a string only makes the bound larger, never smaller)."""
    opened = sum(text.count(ch) for ch in opening)
    if opened <= MAX_DEPTH:  # no deeper than the brackets it opens: the bound, at C speed
        return opened
    depth = deepest = 0
    for ch in text:
        if ch in opening:
            depth += 1
            deepest = max(deepest, depth)
        elif ch in closing:
            depth = max(0, depth - 1)
    return deepest


def _check_depth(path: Path, text: str, kind: str) -> None:
    if nesting_depth(text) > MAX_DEPTH:
        raise ConfigError(
            f"{path}: the {kind} nests arrays or tables more than {MAX_DEPTH} deep; flatten it"
        )


def load_json(path: str | Path, kind: str, *, fix: str = "", text: str | None = None) -> Any:
    """The JSON document of ``path`` (regular file, size cap, UTF-8, bounded nesting)."""
    path = Path(path)
    text = read_text(path, kind, fix=fix) if text is None else text
    hint = f"; {fix}" if fix else ""
    if nesting_depth(text) > MAX_DEPTH:
        raise ConfigError(f"{path}: the {kind} nests more than {MAX_DEPTH} deep{hint}")
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ConfigError(f"{path}: corrupt {kind}, not valid JSON ({exc}){hint}") from None


def load_toml(path: str | Path, kind: str, *, fix: str = "") -> dict[str, Any]:
    """The TOML document of ``path`` (regular file, size cap, UTF-8, bounded nesting)."""
    path = Path(path)
    text = read_text(path, kind, fix=fix)
    _check_depth(path, text, kind)
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: Read once at import: ``os.umask`` is process-wide, changing it while threads write is a race.
_UMASK = _read_umask()


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same directory and a rename; the
    file's mode is what ``open()`` would give (0666 less the umask), not ``mkstemp``'s 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~_UMASK)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def output_file(path: Path, option: str) -> Path:
    """``path``, a file the tool will write, with its folder made; or one :class:`ConfigError`
    line naming ``option`` when it cannot be written there (checked before any long work)."""
    if path.is_dir():
        raise ConfigError(f"{path}: is a directory; {option} names the file to write")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ConfigError(
            f"{path}: its folder {path.parent} is a file; choose another {option}"
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot make its folder: {exc.strerror}; choose another {option}"
        ) from None
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{path}: its folder is not writable; choose another {option}")
    return path
