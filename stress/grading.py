"""Verdicts and diagnosis, computed from call records alone (no device, no baseline file).

Per case and phase (worst first): ``CRASH``, ``HANG``, ``ERROR`` (an unexpected non-zero
status, or a negative case that did not fail as expected), ``UNWRITTEN`` (canary left in a
non-empty output), ``MISMATCH_RANDOM`` (outputs vary between calls and differ from the
baseline), ``MISMATCH_STABLE`` (every call gives the same wrong result), ``PASS``.

The run's diagnosis names the pattern across phases (DESIGN.md "Protocol"), checked in this
order: ``crash``, ``hang``, ``runtime-fault`` (the control operator fails, so the runtime or
harness is to blame), ``unwritten-output``, ``operator-error`` (a valid case fails with an error
status even serially), ``baseline-mismatch`` (serial replay disagrees with the baseline: a changed
or non-deterministic operator), ``order-dependence`` (single-threaded random order fails, serial
is clean), ``self-race`` (a case alone on many threads fails), ``cross-call-contamination``
(mixed or interleaved fail while isolated and control are clean), ``clean``. Single-threaded
patterns come before concurrent ones because they need no concurrency and therefore also explain
concurrent failures.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DIAGNOSES",
    "VERDICTS",
    "CaseVerdict",
    "PhaseVerdict",
    "call_failed",
    "case_verdict",
    "diagnose",
    "grade_phase",
    "interference_matrix",
    "worst",
]

VERDICTS = (
    "CRASH",
    "HANG",
    "ERROR",
    "UNWRITTEN",
    "MISMATCH_RANDOM",
    "MISMATCH_STABLE",
    "PASS",
)
_RANK = {v: i for i, v in enumerate(VERDICTS)}

DIAGNOSES = (
    "crash",
    "hang",
    "runtime-fault",
    "unwritten-output",
    "self-race",
    "cross-call-contamination",
    "order-dependence",
    "baseline-mismatch",
    "operator-error",
    "clean",
)


def worst(verdicts: Iterable[str]) -> str:
    """The most severe verdict (``PASS`` for none)."""
    return min(verdicts, key=_RANK.__getitem__, default="PASS")


@dataclass
class CaseVerdict:
    """A case's verdict in one phase, with the evidence."""

    id: str
    verdict: str
    calls: int
    digests: dict[str, int] = field(default_factory=dict)  # digest -> count (ok calls)
    mismatches: int = 0
    errors: dict[str, int] = field(default_factory=dict)  # "code api" -> count
    unwritten: dict[str, int] = field(default_factory=dict)  # output -> max elements
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "verdict": self.verdict,
            "calls": self.calls,
            "digests": self.digests,
            "mismatches": self.mismatches,
            "errors": self.errors,
            "unwritten": self.unwritten,
            "detail": self.detail,
        }


def call_failed(rec: Mapping[str, Any]) -> bool:
    """Whether one call record is a failure as it streams in (progress counts, time to detect):
    a result that differs from the baseline, a canary left, a crash or hang, an unexpected error
    status (a negative case's expected status matches)."""
    if rec.get("status") == "error" and rec.get("match"):
        return False
    return bool(
        rec.get("match") is False or rec.get("unwritten") or rec.get("status") in ("crash", "hang")
    )


def case_verdict(case_id: str, records: list[Mapping[str, Any]]) -> CaseVerdict:
    """Grade one case's call records of one phase."""
    v = CaseVerdict(case_id, "PASS", calls=len(records))
    ok = [r for r in records if r.get("status") == "ok"]
    v.digests = dict(Counter(r["digest"] for r in ok if "digest" in r))
    special = {r.get("status") for r in records} & {"crash", "hang"}
    bad_errors = [r for r in records if r.get("status") == "error" and not r.get("match")]
    for r in bad_errors:
        key = f"{r.get('code')} {r.get('api', '')}".strip()
        v.errors[key] = v.errors.get(key, 0) + 1
    for r in ok:
        for name, n in (r.get("unwritten") or {}).items():
            v.unwritten[name] = max(v.unwritten.get(name, 0), n)
    mismatched = [r for r in ok if r.get("match") is False]
    v.mismatches = len(mismatched)
    if "crash" in special:
        v.verdict = "CRASH"
        v.detail = next(r.get("message", "") for r in records if r.get("status") == "crash")
    elif "hang" in special:
        v.verdict = "HANG"
        v.detail = next(r.get("message", "") for r in records if r.get("status") == "hang")
    elif bad_errors:
        v.verdict = "ERROR"
        v.detail = bad_errors[0].get("message", "") or f"status {bad_errors[0].get('code')}"
    elif v.unwritten:
        v.verdict = "UNWRITTEN"
        v.detail = ", ".join(f"{k}: {n} elements kept the canary" for k, n in v.unwritten.items())
    elif mismatched:
        bad_digests = {r.get("digest") for r in mismatched}
        if len(mismatched) == len(ok) and len(bad_digests) == 1:
            v.verdict = "MISMATCH_STABLE"
            v.detail = f"all {len(ok)} calls gave the same wrong result"
        else:
            v.verdict = "MISMATCH_RANDOM"
            v.detail = (
                f"{len(mismatched)} of {len(ok)} calls differ from the baseline, "
                f"{len(v.digests)} distinct results"
            )
        if mismatched[0].get("message"):
            v.detail = mismatched[0]["message"]
    return v


@dataclass
class PhaseVerdict:
    """A phase's verdict: the worst of its cases, or CRASH/HANG when the phase died."""

    name: str
    verdict: str
    cases: list[CaseVerdict]
    status: str = "done"  # done | crashed | hung | interrupted | skipped | failed
    detail: str = ""
    variant: str = ""
    calls: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "variant": self.variant,
            "verdict": self.verdict,
            "status": self.status,
            "detail": self.detail,
            "calls": self.calls,
            "seconds": round(self.seconds, 3),
            "cases": [c.to_json() for c in self.cases],
        }


def grade_phase(
    name: str,
    records: list[Mapping[str, Any]],
    *,
    status: str = "done",
    detail: str = "",
    variant: str = "",
    case_order: Iterable[str] = (),
    seconds: float = 0.0,
) -> PhaseVerdict:
    """Verdicts of every case that has records in the phase (warm-up calls excluded)."""
    by_case: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        if not r.get("warmup"):
            by_case[r["case"]].append(r)
    order = [c for c in case_order if c in by_case] + sorted(set(by_case) - set(case_order))
    cases = [case_verdict(cid, by_case[cid]) for cid in order]
    verdict = worst(c.verdict for c in cases)
    if status == "crashed":
        verdict = "CRASH"
    elif status == "hung":
        verdict = worst([verdict, "HANG"])
    elif status == "failed":
        verdict = worst([verdict, "ERROR"])
    calls = sum(c.calls for c in cases)
    return PhaseVerdict(name, verdict, cases, status, detail, variant, calls, seconds)


def interference_matrix(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Victim x aggressor matrix of the interleaved phase: per cell, calls and mismatches."""
    cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        aggressor = r.get("aggressor")
        if aggressor is None or r.get("warmup"):
            continue
        cell = cells[(r["case"], aggressor)]
        cell[0] += 1
        bad = r.get("status") != "ok" and not r.get("match")
        bad |= r.get("status") == "ok" and (r.get("match") is False or bool(r.get("unwritten")))
        cell[1] += int(bad)
    victims = sorted({v for v, _ in cells})
    aggressors = sorted({a for _, a in cells})
    return {
        "victims": victims,
        "aggressors": aggressors,
        "cells": [
            {"victim": v, "aggressor": a, "calls": c[0], "failures": c[1]}
            for (v, a), c in sorted(cells.items())
        ],
    }


def diagnose(phases: Iterable[PhaseVerdict]) -> tuple[str, str]:
    """The run's diagnosis and a one-line explanation."""
    by_name: dict[str, list[PhaseVerdict]] = defaultdict(list)
    for p in phases:
        by_name[p.name].append(p)

    def verdicts(name: str) -> list[str]:
        return [p.verdict for p in by_name.get(name, [])]

    def fails(name: str) -> bool:
        return any(v != "PASS" for v in verdicts(name))

    every = [v for ps in by_name.values() for p in ps for v in [p.verdict]]
    all_cases = [(p.name, c) for ps in by_name.values() for p in ps for c in p.cases]

    def where(pred) -> str:
        hits = [f"{c.id} in {name}" for name, c in all_cases if pred(c.verdict)]
        return ", ".join(hits[:4]) + (" ..." if len(hits) > 4 else "")

    if "CRASH" in every:
        return "crash", "the process died during " + ", ".join(
            n for n in by_name if "CRASH" in verdicts(n)
        )
    if "HANG" in every:
        return "hang", "a call did not finish during " + ", ".join(
            n for n in by_name if "HANG" in verdicts(n)
        )
    if fails("control"):
        return "runtime-fault", (
            "the control operator fails under the same pool, context and stream policy: the "
            "runtime or the harness is at fault, not the operator under test"
        )
    if "UNWRITTEN" in every:
        return "unwritten-output", "outputs kept the canary: " + where(lambda v: v == "UNWRITTEN")
    # Single-threaded failures first: they need no concurrency, so they also explain failures
    # of the concurrent phases (a stale read shows up in mixed too).
    if fails("serial"):
        if any(v == "ERROR" for v in verdicts("serial")):
            return "operator-error", "valid cases fail even serially: " + where(
                lambda v: v == "ERROR"
            )
        return "baseline-mismatch", (
            "serial replay disagrees with the baseline: the operator changed or is not "
            "deterministic (re-record the baseline)"
        )

    def ruled_out(names: tuple[str, ...]) -> str:
        """What the clean phases rule out, and which of them this run skipped."""
        ran = [n for n in names if n in by_name]
        skipped = [n for n in names if n not in by_name]
        text = f"{' and '.join(ran)} clean" if ran else ""
        if skipped:
            text += ("; " if text else "") + f"{' and '.join(skipped)} not run"
        return text

    if fails("shuffled"):
        return "order-dependence", (
            "single-threaded calls in random order fail while serial repeats pass: state left "
            "by a previous call leaks into the next"
            if "serial" in by_name
            else "single-threaded calls in random order fail (serial not run, so a baseline "
            "mismatch is not ruled out): " + where(lambda v: v != "PASS")
        )
    if fails("isolated"):
        return "self-race", "one case alone on many threads fails: " + where(lambda v: v != "PASS")
    if fails("mixed") or fails("interleaved"):
        return "cross-call-contamination", (
            f"different cases in flight corrupt each other ({ruled_out(('isolated', 'control'))}"
            "): " + where(lambda v: v.startswith("MISMATCH") or v == "ERROR")
        )
    return "clean", "every phase passed"
