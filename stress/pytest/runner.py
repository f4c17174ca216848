"""What the pytest plugin runs: the baseline store, a stress run and its result.

Kept apart from :mod:`stress.pytest.plugin` (hooks and fixtures only) so that it can be used and
tested without pytest's machinery.

* :class:`BaselineStore` — one baseline file per backend, shared by every test and every
  pytest-xdist worker: cases are recorded on first use and merged in under an exclusive lock
  (``fcntl.flock``) with an atomic rename, so workers never clobber each other's cases.
* :class:`StressRunner` — runs protocol phases over a list of cases with
  :class:`stress.engine.session.Session` (in this process by default, or in supervised children),
  writes ``results.jsonl`` + reports into its own directory and returns a :class:`StressResult`.
* :class:`StressResult` — verdicts, diagnosis, and a readable failure message (phase, case,
  verdict, baseline digest vs the digests seen, where the results are, the replay command).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stress.baseline.store import Baseline
from stress.config import CANARY, PHASES, PYTEST_DURATION, RunConfig
from stress.corpus.parse import Case
from stress.errors import ConfigError
from stress.model import Diagnosis, Verdict

__all__ = [
    "BaselineStore",
    "StressFailure",
    "StressResult",
    "StressRunner",
    "node_slug",
]

RUNS_FILE = "runs.jsonl"  # one line per stress run, per worker directory


class StressFailure(AssertionError):
    """A stress run found something (the message says what, where and how to replay it)."""


def node_slug(nodeid: str, limit: int = 80) -> str:
    """A directory name for a test id: readable prefix + short hash (unique, filesystem-safe)."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid.split("/")[-1]).strip("_.") or "test"
    digest = hashlib.sha256(nodeid.encode()).hexdigest()[:8]
    return f"{slug[:limit]}-{digest}"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


# -- baselines -------------------------------------------------------------------------------
@dataclass
class BaselineStore:
    """A baseline file grown case by case, safe for concurrent writers (processes).

    ``ensure(cases)`` returns a :class:`Baseline` holding every requested case: cases missing
    from the file (or changed since: another key) are recorded with ``record(cases)`` and merged
    in, under an exclusive lock on ``<path>.lock``, then the file is replaced atomically. A file
    recorded on another backend, or with other settings, is started afresh.
    """

    path: Path
    deterministic: bool = True
    canary: int = CANARY
    repeats: int = RunConfig.repeats

    def _usable(self, fingerprint: dict[str, Any]) -> Baseline | None:
        if not self.path.exists():
            return None
        try:
            baseline = Baseline.load(self.path)
            baseline.check_compatible(
                fingerprint, [], deterministic=self.deterministic, canary=self.canary
            )
        except ConfigError:
            return None  # corrupt, or from another backend / settings: record afresh
        return baseline

    def ensure(self, cases: Sequence[Case], fingerprint: dict[str, Any], record) -> Baseline:
        """The baseline of ``cases``; ``record(cases) -> Baseline`` records the missing ones."""
        with _locked(self.path.with_name(self.path.name + ".lock")):
            baseline = self._usable(fingerprint)
            have = baseline.cases if baseline else {}
            missing = [c for c in cases if c.id not in have or have[c.id].key != c.key]
            if not missing and baseline is not None:
                return baseline
            fresh: Baseline = record(missing)
            merged = dict(have)
            merged.update(fresh.cases)
            files = sorted(
                {
                    *((baseline.corpus.get("files") or []) if baseline else []),
                    *fresh.corpus["files"],
                }
            )
            result = Baseline(
                backend=fresh.backend,
                corpus={"cases": {cid: cb.key for cid, cb in merged.items()}, "files": files},
                deterministic=self.deterministic,
                repeats=self.repeats,
                cases=merged,
                canary=self.canary,
            )
            result.save(self.path)
            return result

    @staticmethod
    def subset(baseline: Baseline, cases: Sequence[Case]) -> Baseline:
        """The part of ``baseline`` that ``cases`` need (a run's own snapshot)."""
        return Baseline(
            backend=baseline.backend,
            corpus={
                "cases": {c.id: c.key for c in cases},
                "files": sorted({c.source for c in cases}),
            },
            deterministic=baseline.deterministic,
            repeats=baseline.repeats,
            cases={c.id: baseline.cases[c.id] for c in cases},
            canary=baseline.canary,
            created=baseline.created,
        )


# -- results ---------------------------------------------------------------------------------
@dataclass
class StressResult:
    """The outcome of one :meth:`StressRunner.run`."""

    report: dict[str, Any]
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
        return self.report["diagnosis"]

    @property
    def explanation(self) -> str:
        return self.report.get("explanation", "")

    @property
    def ok(self) -> bool:
        """True when every phase passed (diagnosis ``clean``)."""
        return self.report["diagnosis"] == Diagnosis.CLEAN

    @property
    def phases(self) -> list[dict[str, Any]]:
        return self.report["phases"]

    @property
    def verdicts(self) -> dict[tuple[str, str], str]:
        """(phase label, case id) -> verdict; the label is ``phase`` or ``phase[variant]``."""
        return {
            (_label(p), c["id"]): c["verdict"] for p in self.report["phases"] for c in p["cases"]
        }

    def verdict(self, phase: str, case: str) -> str:
        """The verdict of ``case`` in ``phase`` (the worst over the phase's variants)."""
        from stress.engine.grading import worst

        found = [
            c["verdict"]
            for p in self.report["phases"]
            if p["name"] == phase
            for c in p["cases"]
            if c["id"] == case
        ]
        if not found:
            raise KeyError(f"no verdict for case {case!r} in phase {phase!r}")
        return worst(found)

    def failures(self) -> list[dict[str, Any]]:
        """Every (phase, case) that did not pass, with its evidence."""
        out = []
        for p in self.report["phases"]:
            if p["verdict"] == Verdict.PASS:
                continue
            bad_cases = [c for c in p["cases"] if c["verdict"] != Verdict.PASS]
            if not bad_cases:
                out.append(
                    {
                        "phase": _label(p),
                        "case": None,
                        "verdict": p["verdict"],
                        "detail": p.get("detail") or p.get("status", ""),
                    }
                )
            for c in bad_cases:
                base = self.baselines.get(c["id"], {})
                out.append(
                    {
                        "phase": _label(p),
                        "case": c["id"],
                        "verdict": c["verdict"],
                        "detail": c.get("detail", ""),
                        "calls": c.get("calls", 0),
                        "baseline_digest": base.get("digest") or None,
                        "baseline_status": base.get("status"),
                        "digests": c.get("digests", {}),
                        "errors": c.get("errors", {}),
                        "unwritten": c.get("unwritten", {}),
                    }
                )
        return out

    def summary_lines(self) -> list[str]:
        """One line per phase: ``phase  verdict  calls``."""
        return [
            f"  {_label(p):<28} {p['verdict']:<16} {p['calls']:>6} calls  {p['seconds']:.2f} s"
            for p in self.report["phases"]
        ]

    def message(self, limit: int = 12) -> str:
        """A readable account: diagnosis, each failing phase/case with verdict and digests,
        where the results are and how to replay the run."""
        seed = self.report.get("seed")
        head = (
            f"stress run {'passed' if self.ok else 'found ' + self.diagnosis} on device "
            f"{self.device} (worker {self.worker}, backend {self._backend()}, seed {seed}, "
            f"{len(self.cases)} cases)"
        )
        lines = [head]
        if not self.ok and self.explanation:
            lines.append(f"  {self.explanation}")
        failures = self.failures()
        for f in failures[:limit]:
            lines.append(
                f"  {f['phase']}: {f['case'] or '(phase)'} {f['verdict']}"
                + (f" — {f['detail']}" if f.get("detail") else "")
            )
            if f.get("case") is None:
                continue
            digests = f.get("digests") or {}
            if digests or f.get("baseline_digest"):
                seen = ", ".join(
                    f"{d[:12]} x{n}" for d, n in sorted(digests.items(), key=lambda kv: -kv[1])[:4]
                )
                if len(digests) > 4:
                    seen += f", ... ({len(digests)} distinct)"
                base = f["baseline_digest"]
                lines.append(
                    f"      baseline digest {base[:12] if base else '(none)'}; "
                    f"seen: {seen or '(no successful call)'}"
                )
            if f.get("errors"):
                lines.append(
                    "      errors: " + ", ".join(f"{k} x{n}" for k, n in f["errors"].items())
                )
        if len(failures) > limit:
            lines.append(f"  ... and {len(failures) - limit} more (see report.md)")
        repro = self.report.get("reproducer")
        if repro and repro.get("command"):
            lines.append(f"  minimal reproducer ({len(repro['cases'])} cases): {repro['command']}")
        lines.append(f"  results: {self.out_dir / 'results.jsonl'} (report: report.md)")
        lines.append(f"  replay:  {self.command}")
        return "\n".join(lines)

    def _backend(self) -> str:
        b = self.report.get("backend", {})
        return "sim" if b.get("simulator") else str(b.get("kind", "?"))

    def assert_clean(self) -> None:
        """Raise :class:`StressFailure` with :meth:`message` unless every phase passed."""
        __tracebackhide__ = True
        if not self.ok:
            raise StressFailure(self.message())

    def to_json(self, nodeid: str = "") -> dict[str, Any]:
        """The line this run adds to its worker's ``runs.jsonl`` (merged by the controller)."""
        return {
            "nodeid": nodeid,
            "worker": self.worker,
            "device": self.device,
            "backend": self._backend(),
            "seed": self.report.get("seed"),
            "out_dir": str(self.out_dir),
            "diagnosis": self.diagnosis,
            "explanation": self.explanation,
            "verdict": self.report.get("verdict"),
            "cases": [c.id for c in self.cases],
            "phases": [
                {"phase": _label(p), "verdict": p["verdict"], "calls": p["calls"]}
                for p in self.report["phases"]
            ],
            "failures": [
                {k: f.get(k) for k in ("phase", "case", "verdict", "detail")}
                for f in self.failures()[:20]
            ],
            "seconds": round(self.seconds, 3),
        }

    def __repr__(self) -> str:
        return (
            f"<StressResult {self.diagnosis} device={self.device} worker={self.worker} "
            f"phases={[_label(p) + ':' + p['verdict'] for p in self.report['phases']]}>"
        )


def _label(p: dict[str, Any]) -> str:
    return f"{p['name']}[{p['variant']}]" if p.get("variant") else p["name"]


# -- running ---------------------------------------------------------------------------------
@dataclass
class StressRunner:
    """Runs protocol phases on one device of this process's runtime (or in children)."""

    backend: str | None
    device: int
    worker: str
    out_root: Path  # this worker's directory: <--stress-out>/<worker>
    baseline_store: BaselineStore
    config: RunConfig = field(default_factory=lambda: RunConfig(duration=PYTEST_DURATION))
    isolate: bool = False
    shrink_budget: float = 0.0
    session: str = ""  # the pytest session's id (the controller's), written into runs.jsonl
    _fingerprint: dict[str, Any] | None = field(default=None, init=False, repr=False)
    _dirs: set[str] = field(default_factory=set, init=False, repr=False)

    # -- backend ---------------------------------------------------------------------------
    def fingerprint(self) -> dict[str, Any]:
        """The backend fingerprint baselines are checked against (loaded once)."""
        if self._fingerprint is None:
            if self.isolate:
                from stress.engine.session import Session

                info = Session(self.config, [], backend=self.backend).backend_info()
                self._fingerprint = info["fingerprint"]
            else:
                from stress import acl
                from stress.baseline.record import backend_fingerprint

                self._fingerprint = backend_fingerprint(acl.runtime(self.backend))
        return self._fingerprint

    def _record(self, cases: Sequence[Case]) -> Baseline:
        if not self.isolate:
            from stress import acl
            from stress.baseline.record import record_baseline

            return record_baseline(
                acl.runtime(self.backend),
                cases,
                repeats=self.baseline_store.repeats,
                canary=self.baseline_store.canary,
                deterministic=self.baseline_store.deterministic,
                device=self.device,
                call_timeout_ms=self.config.call_timeout_ms,
            )
        from stress.engine.session import Session
        from stress.engine.shrink import write_corpus

        with tempfile.TemporaryDirectory(prefix="stress-record-") as tmp:
            corpus = write_corpus(cases, Path(tmp) / "record.toml")
            config = replace(
                self.config,
                repeats=self.baseline_store.repeats,
                canary=self.baseline_store.canary,
                deterministic=self.baseline_store.deterministic,
                device=self.device,
            )
            session = Session(config, [str(corpus)], backend=self.backend, isolate=True)
            path = session.record_baseline(Path(tmp) / "baseline.json")
            return Baseline.load(path)

    def baseline_for(self, cases: Sequence[Case]) -> Baseline:
        """A baseline holding ``cases`` (recorded into the store when missing)."""
        return self.baseline_store.ensure(cases, self.fingerprint(), self._record)

    # -- a run -----------------------------------------------------------------------------
    def new_dir(self, nodeid: str) -> Path:
        base = node_slug(nodeid) if nodeid else "run"
        name, n = base, 1
        while name in self._dirs or (self.out_root / name).exists():
            n += 1
            name = f"{base}-{n}"
        self._dirs.add(name)
        return self.out_root / name

    def run(
        self,
        cases: Sequence[Case],
        control: Sequence[Case] = (),
        *,
        nodeid: str = "",
        phases: Sequence[str] | None = None,
        threads: int | None = None,
        duration: float | None = None,
        iterations: int | None = None,
        seed: int | None = None,
        stream: str | Sequence[str] | None = None,
        context: str | None = None,
        repeats: int | None = None,
        isolate: bool | None = None,
        log: bool = True,
    ) -> StressResult:
        """Run ``phases`` (default: all; ``control`` only with control cases) over ``cases``.

        The run gets its own directory under ``out_root`` (corpus, control and baseline
        snapshot, ``out/results.jsonl`` and reports); with ``log`` it is listed in the worker's
        ``runs.jsonl`` (trial runs of a shrink are not)."""
        from stress.engine.session import Session
        from stress.engine.shrink import write_corpus

        started = time.monotonic()
        cases = list(cases)
        control = list(control)
        if not cases:
            raise ConfigError("stress_run: no cases to run (pass cases or a corpus)")
        ids = [c.id for c in [*cases, *control]]
        dup = next((i for i in ids if ids.count(i) > 1), None)
        if dup is not None:
            raise ConfigError(f"stress_run: case id {dup!r} appears twice in the run")
        chosen = tuple(phases) if phases is not None else PHASES
        if isinstance(phases, str):
            chosen = tuple(p.strip() for p in phases.split(",") if p.strip())
        unknown = [p for p in chosen if p not in PHASES]
        if unknown:
            raise ConfigError(f"stress_run: unknown phase {unknown[0]!r}; phases: {PHASES}")
        if not control:
            if phases is not None and "control" in chosen:
                raise ConfigError(
                    "stress_run: the control phase needs control cases (--stress-control)"
                )
            chosen = tuple(p for p in chosen if p != "control")
        elif "control" not in chosen:
            control = []  # not needed: no control phase (no baseline to record for them)
        else:
            control = [c for c in control if c.id not in {x.id for x in cases}]
        if stream is None:
            streams = self.config.streams
        else:
            streams = (stream,) if isinstance(stream, str) else tuple(stream)
        if streams == ("both",):
            streams = ("shared", "per-thread")
        base = self.config
        config = replace(
            base,
            seed=base.seed if seed is None else seed,
            threads=base.threads if threads is None else threads,
            context=base.context if context is None else context,
            streams=streams,
            duration=None if iterations is not None else (duration or base.duration),
            iterations=iterations,
            repeats=base.repeats if repeats is None else repeats,
            device=self.device,
            deterministic=self.baseline_store.deterministic,
            canary=self.baseline_store.canary,
            phases=chosen,
        ).validate()

        run_dir = self.new_dir(nodeid)
        run_dir.mkdir(parents=True, exist_ok=True)
        corpus = write_corpus(cases, run_dir / "corpus.toml", f"cases of {nodeid or 'a run'}")
        control_path = (
            write_corpus(control, run_dir / "control.toml", "control cases") if control else None
        )
        baseline = self.baseline_for([*cases, *control])
        snapshot = BaselineStore.subset(baseline, [*cases, *control])
        baseline_path = snapshot.save(run_dir / "baseline.json")
        session = Session(
            config,
            [str(corpus)],
            [str(control_path)] if control_path else [],
            baseline_path=baseline_path,
            out_dir=run_dir / "out",
            backend=self.backend,
            isolate=self.isolate if isolate is None else isolate,
            shrink_budget=self.shrink_budget,
        )
        report = session.run()
        header = session.header
        result = StressResult(
            report=report,
            out_dir=run_dir / "out",
            worker=self.worker,
            device=self.device,
            cases=cases,
            control=control,
            baselines=header.get("baseline", {}).get("cases", {}),
            command=_replay_command(config, corpus, control_path, baseline_path, self.backend),
            seconds=time.monotonic() - started,
        )
        if log:  # into this worker's runs.jsonl, merged into the session summary
            with open(self.out_root / RUNS_FILE, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({**result.to_json(nodeid), "session": self.session}) + "\n")
        return result


def _replay_command(
    config: RunConfig, corpus: Path, control: Path | None, baseline: Path, backend: str | None
) -> str:
    parts = [
        *([f"STRESS_BACKEND={backend}"] if backend else []),
        *(
            [f"ACLSIM_FAULTS={os.environ['ACLSIM_FAULTS']}"]
            if os.environ.get("ACLSIM_FAULTS")
            else []
        ),
        "aclnn-stress run",
        f"--corpus {corpus}",
        f"--control {control if control else 'none'}",
        f"--baseline {baseline}",
        *config.to_cli_args(),
    ]
    return " ".join(parts)
