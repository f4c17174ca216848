"""The result file: JSON Lines written as things happen, read back tolerantly.

Every record is one line, flushed as soon as it is written, so a run that is interrupted or
killed leaves a valid prefix; the reader skips a truncated last line. Reports are rendered from
this file alone (jcstress style), so it carries everything grading needs: the run header holds
the corpus and the baseline digests, and every call record holds its own digests and match.

Record types (``type`` field): ``run`` (header), ``phase-start``, ``call``, ``phase-end``,
``note``, ``run-end``.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from stress.errors import ConfigError
from stress.files import MAX_DEPTH, nesting_depth, read_lines
from stress.journal.lines import typed_line
from stress.journal.schema import check_record, parse_record
from stress.records import CallRecord, PhaseResult
from stress.vocabulary import schema

__all__ = ["RESULTS_FILE", "RESULTS_SCHEMA", "JournalReader", "ResultWriter", "read_results"]

RESULTS_SCHEMA = schema("results")
RESULTS_FILE = "results.jsonl"
Record = CallRecord | PhaseResult | dict[str, Any]


class ResultWriter:
    """Appends records to ``results.jsonl``; thread-safe; each line flushed at once."""

    def __init__(
        self, path: str | Path, *, on_write: Callable[[Record], None] | None = None
    ) -> None:
        """``on_write``: called with every record written (under the writer's lock), so that the
        process that writes the journal grades it as it goes (a
        :class:`stress.grading.tally.JournalTally`) instead of keeping or re-reading it: a typed
        record as it is, a dict typed as the typed reader would give it (the run header stays
        a dict: :func:`stress.journal.lines.typed_line`)."""
        self.path = Path(path)
        self._on_write = on_write
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = open(self.path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, record: Record) -> None:
        """Append one record: a typed one as its JSON, or a dict (header, notes, run end)."""
        data = record if isinstance(record, dict) else record.to_json()
        line = json.dumps(data, separators=(",", ":"), default=_jsonable)
        with self._lock:
            with self._naming_the_file():
                self._fh.write(line + "\n")
                self._fh.flush()
            if self._on_write is not None:  # after the line is on its way: it is never lost
                self._on_write(typed_line(json.loads(line)) if isinstance(record, dict) else record)

    def sync(self) -> None:
        """Flush to the disk (at phase ends: survive a machine crash, not only ours)."""
        with self._lock:
            with self._naming_the_file():
                self._fh.flush()
                os.fsync(self._fh.fileno())

    @contextlib.contextmanager
    def _naming_the_file(self) -> Iterator[None]:
        """A write error (a full disk) names the journal: a bare one names no file."""
        try:
            yield
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(self.path)) from None

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                with self._naming_the_file():
                    self._fh.close()  # flushes first

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


class JournalReader(Iterator[Any]):
    """The records of a result file, read one line at a time (:func:`read_results`); once it
    has read the file to its end, ``truncated`` says whether it skipped a cut last line.
    ``typed``: every line but the run header comes as its typed record (:class:`CallRecord`,
    :class:`PhaseResult`, :mod:`stress.journal.lines`), checked and built in one pass
    (:func:`~stress.journal.schema.parse_record`)."""

    def __init__(self, path: str | Path, *, typed: bool = False) -> None:
        path = Path(path)
        self.path = path / RESULTS_FILE if path.is_dir() else path
        self.truncated = False
        self.typed = typed
        self._records = self._read()

    def __next__(self) -> Any:
        return next(self._records)

    def _read(self) -> Iterator[Any]:
        path = self.path
        lines = read_lines(path, "result file", fix="run `aclnn-stress run --out DIR` first")
        for number, line, last in lines:
            if not line.strip():
                continue
            if nesting_depth(line) > MAX_DEPTH:  # no record nests so deep, cut or whole
                raise ConfigError(
                    f"{path}: line {number} nests more than {MAX_DEPTH} deep; not a journal "
                    "record (the file is damaged or not an aclnn-stress result file)"
                )
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                if last and line.lstrip().startswith("{"):  # a record's start: cut mid-write
                    self.truncated = True
                    return
                raise ConfigError(
                    f"{path}: line {number} is not a JSON record; the file is damaged or not "
                    "an aclnn-stress result file"
                ) from None
            if not isinstance(record, dict) or "type" not in record:
                raise ConfigError(
                    f"{path}: line {number} has no 'type'; not an aclnn-stress result"
                )
            if self.typed:
                yield parse_record(record, path, number)
            else:
                check_record(record, path, number)
                yield record


def read_results(path: str | Path, *, typed: bool = False) -> JournalReader:
    """Records of a result file (or of ``DIR/results.jsonl``), read one line at a time, as
    dicts (``typed``: typed records, the run header a dict); a truncated *last* line (the start of
    a JSON object, as a kill mid-write leaves it) is skipped (the reader's ``truncated`` says
    so).

    Any other line that is not a record (corrupt, nested deeper than any record, not an
    object) means the file was edited, mixed up or is no journal: an error naming the line.
    """
    return JournalReader(path, typed=typed)
