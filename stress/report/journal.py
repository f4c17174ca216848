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
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from stress.errors import ConfigError
from stress.files import MAX_DEPTH, nesting_depth, read_text
from stress.model import schema
from stress.records import CallRecord, PhaseResult
from stress.report.journal_schema import check_record

__all__ = ["RESULTS_FILE", "RESULTS_SCHEMA", "ResultWriter", "read_results"]

RESULTS_SCHEMA = schema("results")
RESULTS_FILE = "results.jsonl"


class ResultWriter:
    """Appends records to ``results.jsonl``; thread-safe; each line flushed at once."""

    def __init__(self, path: str | Path, *, keep: bool = False) -> None:
        """``keep``: also keep every record in :attr:`records`, so that the process that wrote
        the journal renders its report from memory instead of reading the file back."""
        self.path = Path(path)
        self.records: list[dict[str, Any]] = []
        self._keep = keep
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = open(self.path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, record: CallRecord | PhaseResult | dict[str, Any]) -> None:
        """Append one record: a typed one as its JSON, or a dict (header, notes, run end)."""
        if not isinstance(record, dict):
            record = record.to_json()
        line = json.dumps(record, separators=(",", ":"), default=_jsonable)
        with self._lock:
            if self._keep:
                self.records.append(json.loads(line))  # as a reader of the file would see it
            with self._naming_the_file():
                self._fh.write(line + "\n")
                self._fh.flush()

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


def read_results(path: str | Path) -> Iterator[dict[str, Any]]:
    """Records of a result file; a truncated or corrupt *last* line is skipped.

    A corrupt line elsewhere means the file was edited or mixed up: that is an error naming the
    line.
    """
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    lines = read_text(
        path, "result file", fix="run `aclnn-stress run --out DIR` first"
    ).splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            if nesting_depth(line) > MAX_DEPTH:
                raise ValueError("nested too deep")
            record = json.loads(line)
        except (ValueError, RecursionError):
            if number == len(lines):
                return  # the run was killed mid-write
            raise ConfigError(
                f"{path}: line {number} is not a JSON record; the file is damaged"
            ) from None
        if not isinstance(record, dict) or "type" not in record:
            raise ConfigError(f"{path}: line {number} has no 'type'; not an aclnn-stress result")
        check_record(record, path, number)
        yield record
