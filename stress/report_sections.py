"""The sections of a run's report (``report.json``) that are records of their own: the
minimal reproducer (also the journal's run-end carries it), the timing, the interleaved phase's
interference matrix; and a case verdict's split by API mode (:mod:`stress.grading.mode_split`).
:class:`stress.records.RunReport` holds them typed."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stress.record_json import JsonRecord

__all__ = [
    "MIN_PLAIN",
    "MODE_WORDS",
    "Interference",
    "ModeSplit",
    "PairCell",
    "Reproducer",
    "Timing",
]


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


@dataclass(frozen=True)
class PairCell:
    """One cell of the interleaved phase's victim x aggressor matrix."""

    victim: str
    aggressor: str
    calls: int
    failures: int

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


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
        try:
            return cls(
                tuple(data.get("victims", ())),
                tuple(data.get("aggressors", ())),
                tuple(PairCell(**c) for c in data.get("cells", ())),
            )
        except TypeError as exc:
            raise ValueError(f"bad interference cell: {exc}") from None


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
