"""The journal's lines other than calls and phase ends, typed: a phase's start, a note, the
run's end. (:class:`~stress.records.CallRecord` and :class:`~stress.records.PhaseResult` are
in :mod:`stress.records`; the run header is read as its JSON object.)

Each reads and writes its own JSON (:mod:`stress.record_json`): the journal's keys, unknown
ones kept in ``extra``. :func:`typed_line` turns a journal object into its typed record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stress.record_json import emit, parse
from stress.records import CALL, PHASE_END, CallRecord, PhaseResult
from stress.report_sections import Reproducer, Timing
from stress.vocabulary import PhaseStatus

__all__ = [
    "NOTE",
    "PHASE_START",
    "RUN",
    "RUN_END",
    "Note",
    "PhaseStart",
    "RunEnd",
    "is_header",
    "typed_line",
]

RUN = "run"  # the run header: the one line read as its JSON object
PHASE_START = "phase-start"
NOTE = "note"
RUN_END = "run-end"


@dataclass(frozen=True)
class PhaseStart:
    """A phase (one step of the schedule) starting: its name, variant, stream policy and how
    many cases it runs. Seen again for a phase already started: a ``--resume`` restart."""

    phase: str = "?"
    variant: str = ""
    stream: str | None = None
    cases: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return self.phase, self.variant

    def to_json(self) -> dict[str, Any]:
        return emit(self, PHASE_START)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PhaseStart:
        return parse(cls, data, PHASE_START, {})


@dataclass(frozen=True)
class Note:
    """A line the run wants in its report's notes (a resume, a forced baseline)."""

    message: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return emit(self, NOTE)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Note:
        return parse(cls, data, NOTE, {})


@dataclass(frozen=True)
class RunEnd:
    """How the run ended: its status, when, its minimal reproducer (``None``: none was
    sought) and its timing."""

    status: PhaseStatus
    ended: str | None = None
    reproducer: Reproducer | None = None
    timing: Timing = field(default_factory=Timing)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        """The run ran to its end."""
        return self.status == PhaseStatus.DONE

    def to_json(self) -> dict[str, Any]:
        out = emit(self, RUN_END)
        out["reproducer"] = None if self.reproducer is None else self.reproducer.to_json()
        out["timing"] = self.timing.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunEnd:
        repro, timing = data.get("reproducer"), data.get("timing") or {}
        sections = {
            "reproducer": None if repro is None else Reproducer.from_json(repro),
            "timing": timing if isinstance(timing, Timing) else Timing.from_json(timing),
        }
        return parse(cls, {**data, **sections}, RUN_END, {"status": PhaseStatus})


_KINDS: dict[str, Any] = {
    CALL: CallRecord,
    PHASE_END: PhaseResult,
    PHASE_START: PhaseStart,
    NOTE: Note,
    RUN_END: RunEnd,
}


def is_header(line: Any) -> bool:
    """``line`` (as :func:`typed_line` or a journal reader gives it) is the run header."""
    return isinstance(line, Mapping) and line.get("type") == RUN


def typed_line(data: Mapping[str, Any]) -> Any:
    """A journal object as its typed record (the run header, and a line of a kind this
    version does not know, as they are); ``ValueError`` naming the field when one is bad."""
    cls = _KINDS.get(data.get("type"))  # type: ignore[arg-type]
    return data if cls is None else cls.from_json(data)
