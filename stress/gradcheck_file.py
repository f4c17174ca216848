"""The file ``aclnn-stress gradcheck --json`` writes, typed: one definition of its fields.

:mod:`stress.gradcheck.result` builds a :class:`GradcheckFile` and writes its :meth:`to_json`;
the HTML report reads the file back with :meth:`GradcheckFile.from_json`. The JSON keys are the
field names, in declaration order (``command: gradcheck`` first). A number that is not finite
is ``null`` in the file and ``None`` here. Reading is lenient, as a report of an older or partial
file must be: a key the file lacks reads as unknown (``""``, ``"?"``, ``None``, empty).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["COMMAND", "GradRule", "GradSummary", "GradcheckElement", "GradcheckFile", "finite"]

COMMAND = "gradcheck"  # the file's ``command``


def finite(value: Any) -> float | None:
    """``value`` as the file holds a number: a float, ``None`` when it is not finite."""
    x = float(value)
    return x if math.isfinite(x) else None


def finites(values: Iterable[Any]) -> tuple[float | None, ...]:
    return tuple(finite(v) for v in values)


def _floats(values: Any) -> tuple[float | None, ...]:
    return tuple(None if v is None else float(v) for v in values or ())


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _fields_json(record: Any) -> dict[str, Any]:
    """A record's JSON object: its JSON fields in declaration order."""
    return {
        f.name: _json(getattr(record, f.name))
        for f in dataclasses.fields(record)
        if f.metadata.get("json", True)
    }


def _json(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, tuple | list):
        return [_json(v) for v in value]
    return value


@dataclass(frozen=True)
class GradcheckElement:
    """One swept element: the FD value per effective step against the backward, and the
    classification's numbers (the file's ``elements``)."""

    element: str  # its name, e.g. ``x[0,1,2,3]``
    tensor: str
    index: tuple[int, ...]
    backward: float | None  # g, the backward's value
    scale: float | None  # S, RMS of the gradient block holding the element
    steps: tuple[float | None, ...]  # effective steps (None where the step rounded away)
    fd: tuple[float | None, ...]  # FD value per step
    loss_quantum: float | None
    noise_per_step: tuple[float | None, ...]
    estimate: float | None  # f*, the converged FD value
    noise: float | None
    truncation: float | None
    tolerance: float | None
    allowed: float | None  # K*(sigma + t) + tolerance
    diff: float | None  # f* - g
    rel_diff: float | None
    resolution: float | None
    noise_limited: bool
    verdict: str  # agrees | biased | unconverged
    sign_flip: bool
    best_step: float | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return _fields_json(self)

    @classmethod
    def from_json(cls, e: Mapping[str, Any]) -> GradcheckElement:
        """An entry of the file's ``elements``; ``backward`` reads as 0 when missing."""
        return cls(
            element=str(e.get("element")),
            tensor=str(e.get("tensor", "")),
            index=tuple(int(i) for i in e.get("index") or ()),
            backward=float(e.get("backward") or 0.0),
            scale=_number(e.get("scale")),
            steps=_floats(e.get("steps")),
            fd=_floats(e.get("fd")),
            loss_quantum=_number(e.get("loss_quantum")),
            noise_per_step=_floats(e.get("noise_per_step")),
            estimate=e.get("estimate"),
            noise=_number(e.get("noise")),
            truncation=_number(e.get("truncation")),
            tolerance=_number(e.get("tolerance")),
            allowed=e.get("allowed"),
            diff=_number(e.get("diff")),
            rel_diff=_number(e.get("rel_diff")),
            resolution=_number(e.get("resolution")),
            noise_limited=bool(e.get("noise_limited", False)),
            verdict=str(e.get("verdict", "?")),
            sign_flip=bool(e.get("sign_flip", False)),
            best_step=_number(e.get("best_step")),
            reason=str(e.get("reason", "")),
        )


@dataclass(frozen=True)
class GradRule:
    """The classification rule's constants the run used (the file's ``rule``)."""

    k_sigma: float | None = None
    rtol_fp32: float | None = None
    settle_rtol: float | None = None
    noise_factor: float | None = None
    drift_rel: float | None = None

    def to_json(self) -> dict[str, Any]:
        return _fields_json(self)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> GradRule:
        return cls(**{f: _number(doc.get(f)) for f in _names(cls)})


@dataclass(frozen=True)
class GradSummary:
    """The run's counts and verdict (the file's ``summary``): elements per verdict first."""

    counts: Mapping[str, int]  # verdict -> elements (written as keys of the summary itself)
    sign_flips: int = 0
    noise_limited: int = 0
    verdict: str = "?"  # biased if any element is, else unconverged if any is, else agrees
    exit_code: int = 0

    def to_json(self) -> dict[str, Any]:
        return {**self.counts, **{f: getattr(self, f) for f in _names(GradSummary)[1:]}}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> GradSummary:
        named = _names(cls)[1:]
        counts = {k: v for k, v in doc.items() if k not in named and type(v) is int}
        return cls(
            counts=counts,
            sign_flips=int(doc.get("sign_flips", 0)),
            noise_limited=int(doc.get("noise_limited", 0)),
            verdict=str(doc.get("verdict", "?")),
            exit_code=int(doc.get("exit_code", 0)),
        )


@dataclass(frozen=True)
class GradcheckFile:
    """One ``aclnn-stress gradcheck --json`` file."""

    op: str  # the backward operator checked
    params: Mapping[str, Any]
    seed: int | None
    eps: tuple[float, ...]  # the relative FD steps swept
    fd: str  # description of the FD evaluation
    backward: str  # description of the backward under test
    backend: str | None
    rule: GradRule
    notes: tuple[str, ...]
    elements: tuple[GradcheckElement, ...]
    summary: GradSummary
    elapsed_s: float | None
    #: the file it was read from (None for one being written); not one of its JSON fields
    path: Path | None = field(default=None, compare=False, metadata={"json": False})

    @property
    def verdict(self) -> str:
        return self.summary.verdict

    def to_json(self) -> dict[str, Any]:
        return {"command": COMMAND, **_fields_json(self)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], path: Path | None = None) -> GradcheckFile:
        """The file's JSON (``command: gradcheck``), read from ``path``; a value of the wrong
        kind is a ``ValueError`` or ``TypeError``."""
        seed = doc.get("seed")
        return cls(
            op=str(doc.get("op", "")),
            params=doc.get("params", {}),
            seed=None if seed is None else int(seed),
            eps=tuple(float(e) for e in doc.get("eps") or ()),
            fd=str(doc.get("fd", "")),
            backward=str(doc.get("backward", "")),
            backend=doc.get("backend"),
            rule=GradRule.from_json(doc.get("rule") or {}),
            notes=tuple(str(n) for n in doc.get("notes") or ()),
            elements=tuple(GradcheckElement.from_json(e) for e in doc.get("elements", [])),
            summary=GradSummary.from_json(doc.get("summary") or {}),
            elapsed_s=_number(doc.get("elapsed_s")),
            path=path,
        )


def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))
