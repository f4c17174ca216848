"""The job a parent gives its child, and the lines the child sends back down the pipe, typed.

A :class:`Job` is the JSON file a child reads first: an ``info`` job (load the backend, report
it), a ``record`` job (record a baseline) or a ``phase`` job (run one protocol phase).

A child (:mod:`stress.engine.isolation.child`) writes one JSON object a line: its own notices —
``ready`` (set up: the startup timeout ends), ``begin`` (a call started on a worker), ``held``
(set up ahead of its turn, waiting for the go: :mod:`stress.engine.run.early`), ``child-end``
(how the job ended, last) — and the journal records it produces, ``call``
(:class:`~stress.records.CallRecord`) and ``recorded`` (:class:`~stress.records.RecordedCase`);
``begin`` is :class:`~stress.records.CallBegin` (the phase runner below isolation sends it).
:func:`read_line` turns each into its typed record; nothing past it reads a line by key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stress.record_json import JsonRecord, emit, parse
from stress.records import BEGIN, CALL, RECORDED, CallBegin, CallRecord, RecordedCase
from stress.vocabulary import ChildStatus

__all__ = [
    "INFO",
    "PHASE",
    "RECORD",
    "BackendInfo",
    "ChildEnd",
    "ChildError",
    "Holding",
    "Job",
    "Ready",
    "read_line",
]

READY, HELD, CHILD_END = "ready", "held", "child-end"
INFO, RECORD, PHASE = "info", "record", "phase"  # a job's kinds


@dataclass(frozen=True)
class Job(JsonRecord):
    """What a child is to do: its ``kind`` (``info``, ``record``, ``phase``) on ``backend``
    (None: the default one); ``device`` (info); the run's ``config``
    (:meth:`stress.config.RunConfig.to_json`) and ``corpus`` files (record, phase); where to
    save the baseline, ``out`` (record); the phase, its stream policy, the ``control`` corpus and
    the ``baseline`` file (phase); ``hold``: set up, then wait for the go
    (:mod:`stress.engine.run.early`); ``announce``: send ``begin`` lines."""

    KIND = "job"
    TYPED = False

    kind: str
    backend: str | None = None
    device: int = 0
    config: Mapping[str, Any] = field(default_factory=dict)
    corpus: list[str] = field(default_factory=list)
    control: list[str] = field(default_factory=list)
    out: str = ""
    phase: str = ""
    stream: str = "shared"
    baseline: str = ""
    hold: bool = False
    announce: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Ready(JsonRecord):
    """The child is set up (backend loaded, inputs made): from now the silence limit holds."""

    KIND = READY

    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Holding(JsonRecord):
    """A step started ahead of its turn, set up and waiting for the go (``SIGUSR2`` to
    ``pid``)."""

    KIND = HELD

    pid: int
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChildError:
    """The exception a job ended with, as data for the parent: its type's name, its status
    code (ACL errors), its message, and whether it is the user's to fix (a
    :class:`~stress.errors.ConfigError`)."""

    name: str
    message: str
    code: int | None = None
    user: bool = False

    @classmethod
    def of(cls, exc: BaseException) -> ChildError:
        from stress.errors import ConfigError

        code = getattr(exc, "code", None)
        return cls(type(exc).__name__, str(exc), code, isinstance(exc, ConfigError))

    def to_json(self) -> dict[str, Any]:
        return {"type": self.name, "code": self.code, "message": self.message, "user": self.user}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChildError:
        known = {"name": data.get("type", "?"), "message": data.get("message", "")}
        return cls(**known, code=data.get("code"), user=bool(data.get("user")))


@dataclass(frozen=True)
class BackendInfo:
    """What an ``info`` job reports: the backend's fingerprint (what a baseline must match)
    and its information (device count, device memory, versions)."""

    fingerprint: Mapping[str, Any]
    info: Mapping[str, Any]


@dataclass(frozen=True)
class ChildEnd:
    """The child's last line: how its job ended (``status``, ``detail``) and what it made —
    the backend's fingerprint and information (``info`` jobs), the baseline's path or the
    order dependence that stopped it (``record`` jobs), the exception (``error``)."""

    status: ChildStatus
    detail: str = ""
    error: ChildError | None = None
    fingerprint: Mapping[str, Any] | None = None
    info: Mapping[str, Any] | None = None
    path: str | None = None
    order_dependence: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def backend(self) -> BackendInfo:
        return BackendInfo(self.fingerprint or {}, self.info or {})

    def to_json(self) -> dict[str, Any]:
        out = emit(self, CHILD_END, ("detail",))
        if self.error is not None:
            out["error"] = self.error.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ChildEnd:
        error = data.get("error")
        typed = {"error": None if error is None else ChildError.from_json(error)}
        return parse(cls, {**data, **typed}, CHILD_END, {"status": ChildStatus})


Line = Ready | CallBegin | Holding | ChildEnd | CallRecord | RecordedCase

_KINDS: dict[str, Any] = {
    READY: Ready,
    BEGIN: CallBegin,
    HELD: Holding,
    CHILD_END: ChildEnd,
    CALL: CallRecord,
    RECORDED: RecordedCase,
}


def read_line(data: Mapping[str, Any]) -> Line:
    """A pipe line's JSON object as its typed record; ``ValueError`` for a kind no child
    sends or a bad field."""
    kind = data.get("type")
    cls = _KINDS.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"a child's line of unknown type {kind!r}")
    return cls.from_json(data)
