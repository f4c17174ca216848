"""A run directory read for the HTML and JUnit reports: typed, immutable, from the files alone.

Inputs are the documented file formats, read through their typed records: ``results.jsonl`` (the
journal; a truncated last line, as a SIGKILL leaves it, is skipped) and any ``gradcheck*.json``
written by ``aclnn-stress gradcheck --json`` (:class:`stress.gradcheck_file.GradcheckFile`, the
record its writer writes). Verdicts and the diagnosis come from :mod:`stress.grading.verdicts`,
the same functions the console and ``report.json`` use, so the HTML says the same words.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stress.errors import ConfigError
from stress.gradcheck_file import COMMAND, GradcheckFile
from stress.grading.tally import JournalTally
from stress.journal.findings import Finding, read_jsonl
from stress.records import CallRecord, PhaseVerdict
from stress.report_sections import PairCell, Reproducer
from stress.vocabulary import PhaseStatus

__all__ = [
    "PairCell",
    "Run",
    "fingerprint",
    "load_gradcheck",
    "load_run",
    "read_journal",
    "sampling_tally",
]

JOURNAL = "results.jsonl"
#: calls drawn per phase on the timeline (every failing call listed is drawn too)
TIMELINE_CALLS = 5000
#: failing calls listed per (phase, case); the rest are counted
FAILING_CALLS_SHOWN = 25
SANITIZE_LOG = "sanitize.jsonl"  # written by `aclnn-stress sanitize DIR` (stress.sanitize.rerun)


@dataclass(frozen=True)
class Run:
    """Everything a report shows about one run directory."""

    dir: Path
    host: str
    version: str
    versions: Mapping[str, str]  # library versions, when the header records them
    started: str
    ended: str
    status: str  # done | interrupted (no run-end record: killed or still running)
    backend: Mapping[str, Any]
    config: Mapping[str, Any]
    corpus: tuple[str, ...]
    control: tuple[str, ...]  # the control corpus (aclnnAdd), when the run had one
    faults: str
    baseline_path: str
    baseline: Mapping[str, str]  # case id -> baseline call digest
    case_ids: tuple[str, ...]
    fingerprint: str  # of the corpus: case ids and content keys
    phases: tuple[PhaseVerdict, ...]
    calls: tuple[CallRecord, ...]  # drawn: each phase's first TIMELINE_CALLS, the failing listed
    pairs: tuple[PairCell, ...]
    victims: tuple[str, ...]
    aggressors: tuple[str, ...]
    diagnosis: str
    explanation: str
    reproducer: Reproducer | None
    notes: tuple[str, ...]
    gradchecks: tuple[GradcheckFile, ...]
    truncated: bool  # the journal's last line was cut (killed mid-write)
    #: ``aclnn-stress sanitize DIR`` findings (DIR/sanitize.jsonl: shadow-state checks, ASan, TSan)
    sanitizer: tuple[Finding, ...] = ()
    n_calls: int = 0  # call records in the journal
    #: (phase, variant) -> (its call records, the failing ones)
    phase_calls: Mapping[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    #: (phase, variant, case) -> (its failing calls, the first FAILING_CALLS_SHOWN of them)
    failing: Mapping[tuple[str, str, str], tuple[int, tuple[CallRecord, ...]]] = field(
        default_factory=dict
    )

    @property
    def seed(self) -> Any:
        return self.config.get("seed")

    @property
    def verdict_line(self) -> str:
        """The console's diagnosis line, word for word."""
        return f"diagnosis: {self.diagnosis} — {self.explanation}"


def read_journal(path: Path) -> JournalTally:
    """The journal streamed into a :class:`~stress.grading.tally.JournalTally` that keeps the
    calls the report draws (through :func:`stress.journal.results.read_results`, which skips a
    truncated last line and says so: the tally's ``truncated``)."""
    from stress.journal.results import read_results

    tally = sampling_tally()
    tally.feed(read_results(path, typed=True))
    return tally


def sampling_tally() -> JournalTally:
    """A tally that also keeps what the page draws: each phase's first calls, the failing
    calls listed per case."""
    return JournalTally(keep_calls=TIMELINE_CALLS, failing=FAILING_CALLS_SHOWN)


def fingerprint(cases: list[Mapping[str, Any]]) -> str:
    """A short hash of the corpus (ids and content keys, in order) shared by comparable runs."""
    items = [[c.get("id"), c.get("key"), c.get("op")] for c in cases]
    return hashlib.sha256(json.dumps(items).encode()).hexdigest()[:16]


def load_gradcheck(path: Path) -> GradcheckFile:
    """One gradcheck JSON file (``command: gradcheck``)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable gradcheck JSON file ({exc})") from None
    if not isinstance(doc, dict) or doc.get("command") != COMMAND:
        raise ConfigError(f"{path}: field 'command' is not 'gradcheck'; rename or remove the file")
    try:
        return GradcheckFile.from_json(doc, path)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: not a gradcheck JSON file this version reads ({exc})") from None


def _calls(tally: JournalTally) -> tuple[tuple[CallRecord, ...], dict, dict]:
    """The drawn calls of every phase, each phase's (calls, wrong) and its failing calls."""
    drawn: list[CallRecord] = []
    counts: dict[tuple[str, str], tuple[int, int]] = {}
    failing: dict[tuple[str, str, str], tuple[int, tuple[CallRecord, ...]]] = {}
    for key in tally.phases:
        sample = tally.sample(key)
        drawn += sample.calls
        counts[key] = (sample.total, sample.wrong)
        for case, (total, calls) in sample.failing.items():
            failing[(*key, case)] = (total, tuple(calls))
    return tuple(drawn), counts, failing


def load_run(run_dir: Path, tally: JournalTally | None = None) -> Run:
    """Read ``run_dir`` (its journal and gradcheck files) into a :class:`Run`: the journal is
    streamed and graded as ``report.json`` is (:mod:`stress.grading.tally`), keeping only the
    calls the page draws; ``tally``: the journal already read into a :func:`sampling_tally`."""
    run_dir = Path(run_dir)
    if tally is None:
        tally = read_journal(run_dir / JOURNAL)
    header = tally.header
    if not header:
        raise ConfigError(f"{run_dir / JOURNAL}: no 'run' header record; not a run journal")
    end = tally.run_end
    g = tally.graded()
    inter = g.interference
    calls, counts, failing = _calls(tally)
    return Run(
        dir=run_dir,
        host=str(header.host or header.backend.get("host") or run_dir.name),
        version=str(header.version or "?"),
        versions={str(k): str(v) for k, v in (header.versions or {}).items()},
        started=str(header.started or ""),
        ended=(end.ended or "") if end else "",
        status=str(end.status if end else PhaseStatus.INTERRUPTED),
        backend=header.backend,
        config=header.config,
        corpus=tuple(header.corpus),
        control=tuple(header.control),
        faults=header.faults or "",
        baseline_path=str(header.baseline_path or ""),
        baseline={k: str(v.get("digest", "")) for k, v in header.baseline_cases.items()},
        case_ids=tuple(header.case_ids),
        fingerprint=fingerprint([*header.cases, *header.control_cases]),
        phases=g.phases,
        calls=calls,
        pairs=inter.cells,
        victims=inter.victims,
        aggressors=inter.aggressors,
        diagnosis=str(g.diagnosis),
        explanation=g.explanation,
        reproducer=end.reproducer if end else None,
        notes=g.notes,
        gradchecks=tuple(load_gradcheck(p) for p in sorted(run_dir.glob("gradcheck*.json"))),
        truncated=tally.truncated,
        sanitizer=tuple(read_jsonl(run_dir / SANITIZE_LOG)),
        n_calls=tally.call_records,
        phase_calls=counts,
        failing=failing,
    )
