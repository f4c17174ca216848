"""The journal's lines other than calls and phase ends, typed: the run header, a phase's
start, a note, the run's end. (:class:`~stress.records.CallRecord` and
:class:`~stress.records.PhaseResult` are in :mod:`stress.records`.)

Each reads and writes its own JSON (:mod:`stress.record_json`): the journal's keys, unknown
ones kept in ``extra``. :func:`typed_line` turns a journal object into its typed record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stress.record_json import JsonRecord, emit, parse
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
    "RunHeader",
    "typed_line",
]

RUN = "run"
PHASE_START = "phase-start"
NOTE = "note"
RUN_END = "run-end"


@dataclass(frozen=True)
class RunHeader(JsonRecord):
    """The journal's first line: everything grading, re-rendering and ``--resume`` need
    without the corpus files. ``config`` is the run's :class:`stress.config.RunConfig` as
    JSON, ``backend`` the backend's fingerprint, ``cases``/``control_cases`` the cases as
    declared (their JSON), ``baseline`` the baseline's ``path`` and its ``cases`` summary;
    ``host``/``versions``: where it ran and the library versions, when a writer says."""

    KIND = RUN

    schema: str | None = None
    version: str | None = None
    started: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    backend: Mapping[str, Any] = field(default_factory=dict)
    corpus: list[str] = field(default_factory=list)
    control: list[str] = field(default_factory=list)
    cases: list[Mapping[str, Any]] = field(default_factory=list)
    control_cases: list[Mapping[str, Any]] = field(default_factory=list)
    baseline: Mapping[str, Any] = field(default_factory=dict)
    faults: str | None = None
    host: str | None = None
    versions: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def baseline_path(self) -> str | None:
        return self.baseline.get("path")

    @property
    def baseline_cases(self) -> Mapping[str, Any]:
        """Case id -> the baseline's summary of it (``digest``, ``status``, ``code``, ...)."""
        return self.baseline.get("cases") or {}

    @property
    def case_ids(self) -> list[str]:
        """The ids of the corpus's cases, then the control corpus's, in their order."""
        return [str(c.get("id")) for c in [*self.cases, *self.control_cases]]


@dataclass(frozen=True)
class PhaseStart(JsonRecord):
    """A phase (one step of the schedule) starting: its name, variant, stream policy and how
    many cases it runs. Seen again for a phase already started: a ``--resume`` restart."""

    KIND = PHASE_START

    phase: str = "?"
    variant: str = ""
    stream: str | None = None
    cases: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return self.phase, self.variant


@dataclass(frozen=True)
class Note(JsonRecord):
    """A line the run wants in its report's notes (a resume, a forced baseline)."""

    KIND = NOTE

    message: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunEnd:
    """How the run ended: its status, when, its minimal reproducer (``None``: none was
    sought) and its timing."""

    status: PhaseStatus
    ended: str | None = None
    reproducer: Reproducer | None = None
    timing: Timing = field(default_factory=Timing)
    extra: Mapping[str, Any] = field(default_factory=dict)

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
    RUN: RunHeader,
    CALL: CallRecord,
    PHASE_END: PhaseResult,
    PHASE_START: PhaseStart,
    NOTE: Note,
    RUN_END: RunEnd,
}


def typed_line(data: Mapping[str, Any]) -> Any:
    """A journal object as its typed record (a line of a kind this version does not know as
    it is); ``ValueError`` naming the field when one is bad."""
    cls = _KINDS.get(data.get("type"))  # type: ignore[arg-type]
    return data if cls is None else cls.from_json(data)
