"""Gradcheck results: per element and per run, and the record of each in the JSON file
(:mod:`stress.gradcheck_file`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stress.gradcheck.classify import (
    Classification,
)
from stress.gradcheck.elements import (
    AGREES,
    BIASED,
    DRIFT_REL,
    K_SIGMA,
    NOISE_FACTOR,
    RTOL_FP32,
    SETTLE_RTOL,
    UNCONVERGED,
    VERDICTS,
    Element,
)
from stress.gradcheck.pair import DEFAULT_OP
from stress.gradcheck_file import (
    GradcheckElement,
    GradcheckFile,
    GradRule,
    GradSummary,
    finite,
    finites,
)

#: the numbers of a :class:`Classification` the file holds under the same names
_CLASSIFICATION_NUMBERS = ("estimate", "noise", "truncation", "tolerance", "allowed", "diff")


@dataclass
class ElementResult:
    """One row of the report."""

    element: Element
    backward: float  # g, the backward's value
    scale: float  # S, RMS of the gradient block holding the element (block_scale)
    steps: tuple[float, ...]  # effective steps (NaN where the step rounded away)
    fd: tuple[float, ...]  # FD value per step (NaN where none)
    quantum: float  # q, the loss quantum
    noise: tuple[float, ...]  # FD noise per step
    result: Classification

    @property
    def verdict(self) -> str:
        return self.result.verdict

    @property
    def resolution(self) -> float:
        """Smallest relative error ``|f*-g| / max(|g|, S)`` this row would call biased."""
        den = max(abs(self.backward), self.scale)
        return self.result.allowed / den if den > 0 else math.inf

    @property
    def noise_limited(self) -> bool:
        """True when FD noise/truncation hide a relative error of :data:`DRIFT_REL`."""
        return not self.resolution <= DRIFT_REL

    def record(self) -> GradcheckElement:
        """This row as the JSON file holds it (the classification's numbers under their own
        names, NaN as None)."""
        r = self.result
        return GradcheckElement(
            element=str(self.element),
            tensor=self.element.tensor,
            index=tuple(int(i) for i in self.element.index),
            backward=finite(self.backward),
            scale=finite(self.scale),
            steps=finites(self.steps),
            fd=finites(self.fd),
            loss_quantum=finite(self.quantum),
            noise_per_step=finites(self.noise),
            **{name: finite(getattr(r, name)) for name in _CLASSIFICATION_NUMBERS},
            rel_diff=finite(_rel(r.diff, self.backward, self.scale)),
            resolution=finite(self.resolution),
            noise_limited=self.noise_limited,
            verdict=r.verdict,
            sign_flip=bool(r.sign_flip),
            best_step=finite(r.best_step),
            reason=r.reason,
        )


@dataclass
class GradcheckResult:
    """Everything one gradcheck run found; render with :mod:`stress.gradcheck.render`."""

    params: dict[str, Any]
    seed: int
    eps: tuple[float, ...]
    fd: str  # description of the FD evaluation
    backward: str  # description of the backward under test
    backend: str | None
    rows: list[ElementResult]
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    op: str = DEFAULT_OP  # the backward operator checked

    def count(self, verdict: str) -> int:
        return sum(r.verdict == verdict for r in self.rows)

    @property
    def sign_flips(self) -> int:
        return sum(r.result.sign_flip for r in self.rows)

    @property
    def verdict(self) -> str:
        """``biased`` if any element is, else ``unconverged`` if any is, else ``agrees``."""
        for v in (BIASED, UNCONVERGED):
            if self.count(v):
                return v
        return AGREES

    @property
    def exit_code(self) -> int:
        """1 when any element is biased, else 0."""
        return 1 if self.count(BIASED) else 0

    def record(self) -> GradcheckFile:
        """The run as ``gradcheck --json`` writes it."""
        return GradcheckFile(
            op=self.op,
            params=_jsonable(self.params),
            seed=int(self.seed),
            eps=tuple(float(e) for e in self.eps),
            fd=self.fd,
            backward=self.backward,
            backend=self.backend,
            rule=GradRule(
                k_sigma=K_SIGMA,
                rtol_fp32=RTOL_FP32,
                settle_rtol=SETTLE_RTOL,
                noise_factor=NOISE_FACTOR,
                drift_rel=DRIFT_REL,
            ),
            notes=tuple(self.notes),
            elements=tuple(r.record() for r in self.rows),
            summary=GradSummary(
                counts={v: self.count(v) for v in VERDICTS},
                sign_flips=self.sign_flips,
                noise_limited=sum(r.noise_limited for r in self.rows),
                verdict=self.verdict,
                exit_code=self.exit_code,
            ),
            elapsed_s=finite(self.elapsed_s),
        )

    def to_json(self) -> dict[str, Any]:
        return self.record().to_json()


def _rel(diff: float, g: float, scale: float) -> float:
    den = max(abs(g), scale)
    return diff / den if den > 0 else (0.0 if diff == 0 else math.inf)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float | np.floating):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


# --------------------------------------------------------------------------------------------
# the check
