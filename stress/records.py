"""The records that cross module boundaries, typed: a call record and a phase's end.

A :class:`CallRecord` is one ``call`` line of the results journal (``results.jsonl``); a
:class:`PhaseResult` is a ``phase-end`` line. Each type reads and writes its own JSON next to its
definition, and writes exactly the keys the journal always had: an optional field that is
``None`` is left out (``match`` is always written: ``null`` means "no baseline to compare
with"), and keys this version does not know are kept in ``extra`` and written back, so a
journal from a newer or older writer survives a round trip. The journal's schema version is
:data:`stress.vocabulary.SCHEMAS` ``["results"]``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from stress.errors import ConfigError
from stress.files import load_json
from stress.record_json import emit, json_fields, member, names, parse
from stress.report_sections import Interference, ModeSplit, PairCell, Reproducer, Timing
from stress.vocabulary import Diagnosis, PhaseStatus, RunVerdict, Status, Verdict, is_failure

__all__ = [
    "BEGIN",
    "CALL",
    "PHASE_END",
    "CallBegin",
    "CallRecord",
    "CaseVerdict",
    "Interference",
    "PairCell",
    "PhaseResult",
    "PhaseVerdict",
    "RecordedCase",
    "Reproducer",
    "RunReport",
    "Timing",
    "json_fields",
    "load_report",
]

CALL = "call"  # the ``type`` of a call record
PHASE_END = "phase-end"  # the ``type`` of a phase's end record
RECORDED = "recorded"  # the ``type`` of a recording child's line per case
BEGIN = "begin"  # the ``type`` of a child's line for a call that started
_parse, _emit, _member = parse, emit, member
R = TypeVar("R")


@dataclass(frozen=True)
class CallRecord:
    """One call: where it ran, how it ended, what it produced, whether that matched.

    The field names are the journal's keys. ``status`` is how the call ended; ``match`` whether
    the result equals the baseline (``None``: no baseline), for an error whether it was the
    expected one; ``digest``/``outputs`` the sha256 of the call and of each output (ok calls);
    ``unwritten`` output -> elements that kept the canary; ``warmup`` calls are not graded.
    """

    phase: str
    case: str
    status: Status
    seq: int | None = None
    worker: int | None = None
    round: int | None = None
    code: int | None = None
    api: str | None = None
    message: str | None = None
    match: bool | None = None
    digest: str | None = None
    outputs: Mapping[str, str] | None = None
    unwritten: Mapping[str, int] | None = None
    # output -> elements that kept the canary, not confirmed by the second one (not a failure
    # by itself; graded per phase: stress.grading.canaries), and the byte the call used
    kept: Mapping[str, int] | None = None
    canary: int | None = None  # the byte outputs and workspace were prefilled with
    workspace: int | None = None  # bytes of workspace (absent: none)
    tolerance_ratio: float | None = None
    t: float | None = None  # perf_counter at the call's start (seconds)
    dur: float | None = None  # seconds
    warmup: bool | None = None
    rep: int | None = None
    fill: int | None = None
    aggressor: str | None = None
    order: str | None = None
    group: list[str] | None = None  # a PCT schedule: the other calls of the group
    position: int | None = None  # a PCT schedule: this call's index in the group
    schedule: list[str] | None = None  # a PCT schedule: its steps, "case.phase1" ...
    variant: str | None = None
    allocator: str | None = None  # fresh | recycle: the device memory policy it ran under
    # the API mode (stress.engine.call.repeatable; absent: plain) and, for a repeatable
    # executor, which of its launches this is (0 first; rebound: after aclSet*TensorAddr)
    mode: str | None = None
    launch: int | None = None
    rebound: bool | None = None
    elapsed: float | None = None  # seconds since the run began
    extra: Mapping[str, Any] = field(default_factory=dict)

    _ALWAYS: ClassVar[tuple[str, ...]] = ("match",)

    @property
    def failed(self) -> bool:
        """:func:`stress.vocabulary.is_failure` of this record."""
        return is_failure(self)

    def replace(self, **changes: Any) -> CallRecord:
        """A copy with ``changes``: the fields copied in one ``__dict__`` update, not through
        the frozen ``__init__`` (the parent stamps every call record the child sends)."""
        if not _CALL_FIELDS.issuperset(changes):
            unknown = sorted(changes.keys() - _CALL_FIELDS)
            raise TypeError(f"CallRecord has no field {unknown[0]!r}")
        new = object.__new__(CallRecord)
        fields = new.__dict__
        fields.update(self.__dict__)
        fields.update(changes)
        return new

    def to_json(self) -> dict[str, Any]:
        """The journal line's object: the known keys that are set, then the unknown ones."""
        return _emit(self, CALL, self._ALWAYS)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CallRecord:
        """A record from a journal line (``ValueError`` naming the field when it is not one)."""
        return _parse(cls, data, CALL, {"status": Status})


_CALL_FIELDS = json_fields(CallRecord) | {"extra"}  # what CallRecord.replace may change


@dataclass(frozen=True)
class PhaseResult:
    """How one phase (one child process) ended: the journal's ``phase-end`` line.

    ``signal``/``returncode``/``stderr_tail``/``in_flight`` are there only when the child
    crashed, hung or failed.
    """

    phase: str
    variant: str
    status: PhaseStatus
    detail: str = ""
    calls: int = 0
    seconds: float = 0.0
    signal: str | None = None
    returncode: int | None = None
    stderr_tail: str | None = None
    in_flight: list[dict[str, Any]] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    _ALWAYS: ClassVar[tuple[str, ...]] = ("signal", "returncode", "stderr_tail", "in_flight")

    def to_json(self) -> dict[str, Any]:
        out = _emit(self, PHASE_END, ())
        if any(k in out for k in self._ALWAYS):  # the crash details come as a set
            out.update({k: getattr(self, k) for k in self._ALWAYS})
            out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PhaseResult:
        defaults = {"status": PhaseStatus.DONE, "variant": ""}
        return _parse(cls, data, PHASE_END, {"status": PhaseStatus}, defaults)


@dataclass(frozen=True)
class RecordedCase:
    """One case's freshly recorded baseline, as the recording child reports it (``recorded``):
    its status and code, how it will be graded, whether repeats gave one bit pattern, its
    agreement with the numpy reference (``ok`` true/false/None) and unwritten outputs."""

    case: str
    status: Status
    code: int
    grading: str
    bit_deterministic: bool
    reference: Mapping[str, Any] = field(default_factory=dict)
    unwritten: Mapping[str, int] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return _emit(self, RECORDED, ())

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RecordedCase:
        return _parse(cls, data, RECORDED, {"status": Status})


@dataclass(frozen=True)
class CallBegin:
    """A call started on ``worker`` (a child's ``begin`` line): it is in flight until its
    record arrives, and what a crash or a hang of the child is charged to. ``launches``: how
    many launches the call makes (a repeatable executor's), for the hang rule."""

    worker: int = 0
    case: str | None = None
    aggressor: str | None = None
    round: int | None = None
    launches: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def flying(self) -> dict[str, Any]:
        """The fields a record of the call that never ended takes from this one, in the order
        a phase-end line's ``in_flight`` lists them."""
        said = {"worker": self.worker, "case": self.case}
        said.update(aggressor=self.aggressor, round=self.round)
        return {k: v for k, v in said.items() if v is not None}

    def to_json(self) -> dict[str, Any]:
        return _emit(self, BEGIN, ())

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CallBegin:
        return _parse(cls, data, BEGIN, {})


# -- graded results (stress.grading.verdicts computes them; report.json holds their JSON) -------
@dataclass(frozen=True)
class CaseVerdict:
    """A case's verdict in one phase, with the evidence."""

    id: str
    verdict: Verdict
    calls: int
    digests: Mapping[str, int] = field(default_factory=dict)  # digest -> count (ok calls)
    mismatches: int = 0
    errors: Mapping[str, int] = field(default_factory=dict)  # "code api" -> count
    unwritten: Mapping[str, int] = field(default_factory=dict)  # output -> max elements
    detail: str = ""
    # a failing case's results split by prefill byte: which buffer (stress.grading.prefill)
    prefill: str = ""
    # a case failing only on later launches of its repeatable executor (stress.grading.reuse)
    reuse: str = ""
    # a case failing only in one API mode, its plain calls passing (stress.grading.mode_split):
    # the sentence, and the counts the diagnosis weighs (grading's; report.json has the sentence)
    mode_dependence: str = ""
    mode_split: ModeSplit | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "verdict": str(self.verdict),
            "calls": self.calls,
            "digests": dict(self.digests),
            "mismatches": self.mismatches,
            "errors": dict(self.errors),
            "unwritten": dict(self.unwritten),
            "detail": self.detail,
            **({"prefill": self.prefill} if self.prefill else {}),
            **({"reuse": self.reuse} if self.reuse else {}),
            **({"mode_dependence": self.mode_dependence} if self.mode_dependence else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseVerdict:
        return cls(**{**data, "verdict": _member(Verdict, data.get("verdict"), "verdict")})


@dataclass(frozen=True)
class PhaseVerdict:
    """A phase's verdict: the worst of its cases, or CRASH/HANG when the phase died."""

    name: str
    verdict: Verdict
    cases: tuple[CaseVerdict, ...]
    status: PhaseStatus = PhaseStatus.DONE
    detail: str = ""
    variant: str = ""
    calls: int = 0
    seconds: float = 0.0

    @property
    def title(self) -> str:
        """``name``, or ``name [variant]`` for a phase run under one of several policies."""
        return self.name + (f" [{self.variant}]" if self.variant else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "variant": self.variant,
            "verdict": str(self.verdict),
            "status": str(self.status),
            "detail": self.detail,
            "calls": self.calls,
            "seconds": round(self.seconds, 3),
            "cases": [c.to_json() for c in self.cases],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PhaseVerdict:
        return cls(
            **{
                **data,
                "verdict": _member(Verdict, data.get("verdict"), "verdict"),
                "status": _member(PhaseStatus, data.get("status"), "status"),
                "cases": tuple(CaseVerdict.from_json(c) for c in data.get("cases", ())),
            }
        )


@dataclass(frozen=True)
class RunReport:
    """A run's report: ``report.json`` is :meth:`to_json` (schema ``report`` in
    :data:`stress.vocabulary.SCHEMAS`); keys this version does not know are kept in ``extra``."""

    schema: str
    backend: Mapping[str, Any]
    config: Mapping[str, Any]
    seed: int | None
    corpus: list[str]
    baseline: str | None
    started: str | None
    phases: tuple[PhaseVerdict, ...]
    interference: Interference
    diagnosis: Diagnosis
    explanation: str
    verdict: RunVerdict
    complete: bool
    status: PhaseStatus
    reproducer: Reproducer | None
    notes: list[str]
    calls: int
    timing: Timing
    extra: Mapping[str, Any] = field(default_factory=dict)  # e.g. "sanitizer"

    def replace(self, **changes: Any) -> RunReport:
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in names(RunReport)}
        out.update(
            phases=[p.to_json() for p in self.phases],
            interference=self.interference.to_json(),
            reproducer=None if self.reproducer is None else self.reproducer.to_json(),
            timing=self.timing.to_json(),
            diagnosis=str(self.diagnosis),
            verdict=str(self.verdict),
            status=str(self.status),
        )
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunReport:
        """A report from its JSON (``report.json``), or from the document :func:`stress.report.
        assemble.build_report` assembles (its ``phases`` already :class:`PhaseVerdict`)."""
        phases = tuple(
            p if isinstance(p, PhaseVerdict) else PhaseVerdict.from_json(p)
            for p in data.get("phases", ())
        )
        repro = data.get("reproducer")
        sections = {
            "phases": phases,
            "interference": _section(Interference, data.get("interference") or {}),
            "reproducer": None if repro is None else _section(Reproducer, repro),
            "timing": _section(Timing, data.get("timing") or {}),
        }
        enums = {"diagnosis": Diagnosis, "verdict": RunVerdict, "status": PhaseStatus}
        return _parse(cls, {**data, **sections}, "report", enums)


def _section(cls: type[R], data: Any) -> R:
    """A report section from its JSON, or the typed section as it is."""
    return data if isinstance(data, cls) else cls.from_json(data)  # type: ignore[attr-defined]


def load_report(path: Path, *, fix: str) -> RunReport:
    """``report.json`` read back: the one way a report is read (one line naming the file and
    what is wrong, ending in ``fix``, when it is not one)."""
    data = load_json(path, "run report", fix=fix)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not a JSON object; not a run report; {fix}")
    try:
        return RunReport.from_json(data)
    except (ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{path}: {exc}; {fix}") from None
