"""The sections of a run's report (``report.json``) that are records of their own: the
minimal reproducer (also the journal's run-end carries it), the timing, the interleaved phase's
interference matrix, a failing case and its twin in flight (``twins``), the backend's
fingerprint (``backend``, a baseline file's too); and a case verdict's split by API mode
(:mod:`stress.grading.mode_split`). :class:`stress.records.RunReport` holds the first three
typed; ``twins`` and ``backend`` keep their JSON there, read through :class:`TwinPair` and
:class:`Fingerprint`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from stress.record_json import JsonRecord

__all__ = [
    "MIN_PLAIN",
    "MODE_WORDS",
    "Fingerprint",
    "Interference",
    "ModeSplit",
    "PairCell",
    "Reproducer",
    "Timing",
    "TwinPair",
]

F = TypeVar("F", bound="_Flat")


@dataclass(frozen=True)
class Reproducer(JsonRecord):
    """The minimal reproducer (report.json's and the run-end's ``reproducer``): the phase and
    cases that still fail, the corpus written for them and the command that replays them
    (``verified``: a trial run failed with them), or a ``note`` saying why there is none."""

    KIND = "reproducer"
    TYPED = False

    phase: str | None = None
    cases: list[str] | None = None
    corpus: str | None = None
    command: str | None = None
    verified: bool | None = None
    trials: int | None = None
    note: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Timing(JsonRecord):
    """When the run knew (report.json's ``timing``, seconds from its start): its first failing
    call, and the final diagnosis first standing (``None``: not found / clean)."""

    KIND = "timing"
    TYPED = False
    ALWAYS = ("first_detection_s", "diagnosis_s")

    first_detection_s: float | None = None
    diagnosis_s: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


class _Flat:
    """A section whose JSON is its fields as they are (``WHAT`` names it in errors)."""

    WHAT: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_json(cls: type[F], data: Mapping[str, Any]) -> F:
        try:
            return cls(**data)
        except TypeError as exc:
            raise ValueError(f"bad {cls.WHAT}: {exc}") from None  # type: ignore[attr-defined]


@dataclass(frozen=True)
class PairCell(_Flat):
    """One cell of the interleaved phase's victim x aggressor matrix."""

    WHAT = "interference cell"

    victim: str
    aggressor: str
    calls: int
    failures: int


@dataclass(frozen=True)
class Interference:
    """The interleaved phase's victim x aggressor matrix (report.json's ``interference``)."""

    victims: tuple[str, ...] = ()
    aggressors: tuple[str, ...] = ()
    cells: tuple[PairCell, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "victims": list(self.victims),
            "aggressors": list(self.aggressors),
            "cells": [c.to_json() for c in self.cells],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Interference:
        return cls(
            tuple(data.get("victims", ())),
            tuple(data.get("aggressors", ())),
            tuple(PairCell.from_json(c) for c in data.get("cells", ())),
        )


#: Plain calls that must pass beside a concurrent phase's failing mode (ModeSplit.strong).
MIN_PLAIN = 4

#: What each non-plain mode does differently, for the explanation.
MODE_WORDS = {
    "repeat": "a repeatable executor launched several times",
    "event": "the outputs consumed on a second stream after an event",
    "pipeline": "phase 1 on one thread, the launch on another",
}


@dataclass(frozen=True)
class ModeSplit:
    """A case whose failing calls all ran in one API mode, ``mode``, while its plain calls pass
    (:mod:`stress.grading.mode_split`): ``failed`` of the mode's ``calls`` failed, ``plain``
    plain calls passed. Its sentence is the case verdict's ``mode_dependence`` in report.json."""

    mode: str
    failed: int
    calls: int
    plain: int

    @property
    def evidence(self) -> str:
        what = MODE_WORDS.get(self.mode, self.mode)
        return (
            f"{self.failed} of {self.calls} calls in the {self.mode} mode ({what}) fail while its "
            f"{self.plain} plain calls pass"
        )

    @property
    def strong(self) -> bool:
        """Whether it also holds on many threads: :data:`MIN_PLAIN` plain calls pass, and at
        least two and at least half the mode's calls fail."""
        return self.plain >= MIN_PLAIN and self.failed >= 2 and 2 * self.failed >= self.calls


@dataclass(frozen=True)
class TwinPair(_Flat):
    """A case and its twin (:mod:`stress.corpus.twins`) among a run's failing cases in flight,
    with the field they differ in (report.json's ``twins``; :mod:`stress.grading.twin_field`)."""

    WHAT = "twins entry"

    case: str
    twin: str
    field: str
    both_failed: bool


@dataclass(frozen=True)
class Fingerprint(JsonRecord):
    """A backend's fingerprint (report.json's and a baseline file's ``backend``; written by
    :func:`stress.engine.replay.baseline.backend_fingerprint`): its ``kind`` (``cann``,
    ``sim``...), whether it is the simulator, the SoC, the runtime's version, its libraries'
    hashes, its root and (the simulator) the faults on; other keys (the header's
    ``device_count``) in ``extra``."""

    KIND = "backend"
    TYPED = False

    kind: str | None = None
    simulator: bool = False
    soc: str | None = None
    version: str | None = None
    libraries: Mapping[str, Any] | None = None
    root: str | None = None
    faults: list[str] = field(default_factory=list)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def family(self, unknown: str) -> str:
        """``sim`` on the simulator, else its kind (``unknown`` when it names none)."""
        return "sim" if self.simulator else self.kind or unknown

    @property
    def tag(self) -> str:
        """The backend part of a baseline file name: ``cann``, ``sim``, or
        ``sim-<fault>+<fault>`` when simulator faults are on (baselines of different fault
        sets must not mix)."""
        tag = self.family("cann")
        return tag + "-" + "+".join(self.faults) if self.faults else tag
