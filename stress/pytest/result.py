"""The outcome of one stress run inside pytest: verdicts, diagnosis and a readable failure
message (phase, case, verdict, baseline digest vs the digests seen, results, replay command)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stress.corpus.parse import Case
from stress.records import CaseVerdict, PhaseVerdict, RunReport
from stress.report.pytest_summary import FailureLine, PhaseLine, RunLine, backend_label
from stress.vocabulary import Diagnosis, Verdict

__all__ = ["Failure", "StressFailure", "StressResult"]


class StressFailure(AssertionError):
    """A stress run found something (the message says what, where and how to replay it)."""


@dataclass
class StressResult:
    """The outcome of one :meth:`StressRunner.run`."""

    report: RunReport
    out_dir: Path
    worker: str
    device: int
    cases: list[Case]
    control: list[Case]
    baselines: dict[str, dict[str, Any]]  # case id -> {"digest", "status", "code", ...}
    command: str  # the CLI command that replays this run
    seconds: float = 0.0

    @property
    def diagnosis(self) -> str:
        return str(self.report.diagnosis)  # a plain str: it travels to xdist's controller

    @property
    def explanation(self) -> str:
        return self.report.explanation

    @property
    def ok(self) -> bool:
        """True when every phase passed (diagnosis ``clean``)."""
        return self.report.diagnosis == Diagnosis.CLEAN

    @property
    def phases(self) -> tuple[PhaseVerdict, ...]:
        return self.report.phases

    @property
    def verdicts(self) -> dict[tuple[str, str], str]:
        """(phase label, case id) -> verdict; the label is ``phase`` or ``phase[variant]``."""
        return {(_label(p), c.id): c.verdict for p in self.report.phases for c in p.cases}

    def verdict(self, phase: str, case: str) -> str:
        """The verdict of ``case`` in ``phase`` (the worst over the phase's variants)."""
        found = [
            c.verdict
            for p in self.report.phases
            if p.name == phase
            for c in p.cases
            if c.id == case
        ]
        if not found:
            raise KeyError(f"no verdict for case {case!r} in phase {phase!r}")
        return Verdict.combine(found)

    def failures(self) -> list[dict[str, Any]]:
        """Every (phase, case) that did not pass, with its evidence (as JSON)."""
        return [f.to_json() for f in self.failed()]

    def failed(self) -> list[Failure]:
        """Every (phase, case) that did not pass, with its evidence."""
        out = []
        for p in self.report.phases:
            if p.verdict == Verdict.PASS:
                continue
            bad_cases = [c for c in p.cases if c.verdict != Verdict.PASS]
            if not bad_cases:
                out.append(Failure(_label(p), str(p.verdict), p.detail or str(p.status)))
            for c in bad_cases:
                base = self.baselines.get(c.id, {})
                out.append(Failure(_label(p), str(c.verdict), c.detail, c, base))
        return out

    def summary_lines(self) -> list[str]:
        """One line per phase: ``phase  verdict  calls``."""
        return [
            f"  {_label(p):<28} {p.verdict:<16} {p.calls:>6} calls  {round(p.seconds, 3):.2f} s"
            for p in self.report.phases
        ]

    def message(self, limit: int = 12) -> str:
        """A readable account: diagnosis, each failing phase/case with verdict and digests,
        where the results are and how to replay the run."""
        seed = self.report.seed
        head = (
            f"stress run {'passed' if self.ok else 'found ' + self.diagnosis} on device "
            f"{self.device} (worker {self.worker}, backend {self._backend()}, seed {seed}, "
            f"{len(self.cases)} cases)"
        )
        lines = [head]
        if not self.ok and self.explanation:
            lines.append(f"  {self.explanation}")
        failures = self.failed()
        for f in failures[:limit]:
            lines.append(f"  {f.summary().line()}")
            if f.case is None:
                continue
            digests = f.case.digests
            if digests or f.baseline_digest:
                seen = ", ".join(
                    f"{d[:12]} x{n}" for d, n in sorted(digests.items(), key=lambda kv: -kv[1])[:4]
                )
                if len(digests) > 4:
                    seen += f", ... ({len(digests)} distinct)"
                base = f.baseline_digest
                lines.append(
                    f"      baseline digest {base[:12] if base else '(none)'}; "
                    f"seen: {seen or '(no successful call)'}"
                )
            if f.case.errors:
                lines.append(
                    "      errors: " + ", ".join(f"{k} x{n}" for k, n in f.case.errors.items())
                )
        if len(failures) > limit:
            lines.append(f"  ... and {len(failures) - limit} more (see report.md)")
        repro = self.report.reproducer
        if repro and repro.command:
            lines.append(f"  minimal reproducer ({len(repro.cases or ())} cases): {repro.command}")
        lines.append(f"  results: {self.out_dir / 'results.jsonl'} (report: report.md)")
        lines.append(f"  replay:  {self.command}")
        return "\n".join(lines)

    def _backend(self) -> str:
        return backend_label(self.report.backend)

    def assert_clean(self) -> None:
        """Raise :class:`StressFailure` with :meth:`message` unless every phase passed."""
        __tracebackhide__ = True
        if not self.ok:
            raise StressFailure(self.message())

    def run_line(self, nodeid: str = "", session: str | None = None) -> RunLine:
        """The line this run adds to its worker's ``runs.jsonl`` (merged by the controller)."""
        return RunLine(
            nodeid=nodeid,
            worker=self.worker,
            device=self.device,
            backend=self._backend(),
            seed=self.report.seed,
            out_dir=str(self.out_dir),
            diagnosis=self.diagnosis,
            explanation=self.explanation,
            verdict=str(self.report.verdict),
            cases=[c.id for c in self.cases],
            phases=tuple(PhaseLine(_label(p), str(p.verdict), p.calls) for p in self.phases),
            failures=tuple(f.summary() for f in self.failed()[:20]),
            seconds=round(self.seconds, 3),
            session=session,
        )

    def to_json(self, nodeid: str = "") -> dict[str, Any]:
        """:meth:`run_line`'s JSON."""
        return self.run_line(nodeid).to_json()

    def __repr__(self) -> str:
        return (
            f"<StressResult {self.diagnosis} device={self.device} worker={self.worker} "
            f"phases={[_label(p) + ':' + p.verdict for p in self.report.phases]}>"
        )


@dataclass(frozen=True)
class Failure:
    """A (phase, case) that did not pass (``case`` None: the phase failed as a whole), with
    its evidence: the case's graded verdict and the baseline's summary of it."""

    phase: str  # the phase's label: ``phase`` or ``phase[variant]``
    verdict: str
    detail: str
    case: CaseVerdict | None = None
    baseline: Mapping[str, Any] = field(default_factory=dict)

    @property
    def baseline_digest(self) -> str | None:
        return self.baseline.get("digest") or None

    def summary(self) -> FailureLine:
        """What the session's summary keeps of it."""
        return FailureLine(
            self.phase, self.case.id if self.case else None, self.verdict, self.detail
        )

    def to_json(self) -> dict[str, Any]:
        out = self.summary().to_json()
        c = self.case
        if c is None:
            return out
        return {
            **out,
            "calls": c.calls,
            "baseline_digest": self.baseline_digest,
            "baseline_status": self.baseline.get("status"),
            "digests": dict(c.digests),
            "errors": dict(c.errors),
            "unwritten": dict(c.unwritten),
        }


def _label(p: PhaseVerdict) -> str:
    return f"{p.name}[{p.variant}]" if p.variant else p.name
