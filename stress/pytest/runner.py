"""What the pytest plugin runs: a stress run on this process's device.

Kept apart from :mod:`stress.pytest.plugin` (hooks and fixtures only) so that it can be used and
tested without pytest's machinery.

* :class:`~stress.baseline.shared.BaselineStore` — one baseline file per backend, shared by
  every test and every pytest-xdist worker.
* :class:`StressRunner` — runs protocol phases over a list of cases with
  :class:`stress.engine.run.session.Session` (in this process by default, or in supervised
  children), writes ``results.jsonl`` + reports into its own directory and returns a
  :class:`StressResult`.
* :class:`~stress.pytest.result.StressResult` — verdicts, diagnosis, and a readable failure
  message (phase, case, verdict, baseline digest vs the digests seen, results, replay command).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stress.baseline.shared import BaselineStore
from stress.baseline.store import Baseline
from stress.config import PHASES, PYTEST_DURATION, RunConfig
from stress.corpus.parse import Case
from stress.errors import ConfigError
from stress.pytest.result import StressFailure, StressResult

__all__ = [
    "BaselineStore",
    "StressFailure",
    "StressResult",
    "StressRunner",
    "node_slug",
]

RUNS_FILE = "runs.jsonl"  # one line per stress run, per worker directory


def node_slug(nodeid: str, limit: int = 80) -> str:
    """A directory name for a test id: readable prefix + short hash (unique, filesystem-safe)."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid.split("/")[-1]).strip("_.") or "test"
    digest = hashlib.sha256(nodeid.encode()).hexdigest()[:8]
    return f"{slug[:limit]}-{digest}"


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
                from stress.engine.run.session import Session

                info = Session(self.config, [], backend=self.backend).backend_info()
                self._fingerprint = dict(info.fingerprint)
            else:
                from stress import acl
                from stress.engine.replay.baseline import backend_fingerprint

                self._fingerprint = backend_fingerprint(acl.runtime(self.backend))
        return self._fingerprint

    def _record(self, cases: Sequence[Case]) -> Baseline:
        """Record ``cases`` with the store's settings, in this process or an isolated child."""
        config = replace(
            self.config,
            repeats=self.baseline_store.repeats,
            canary=self.baseline_store.canary,
            deterministic=self.baseline_store.deterministic,
            device=self.device,
        )
        if not self.isolate:
            from stress import acl
            from stress.engine.replay.baseline import Recording, record_baseline

            return record_baseline(acl.runtime(self.backend), cases, Recording.of(config))
        from stress.corpus.shrink import write_corpus
        from stress.engine.run.session import Session

        with tempfile.TemporaryDirectory(prefix="stress-record-") as tmp:
            corpus = write_corpus(cases, Path(tmp) / "record.toml")
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

    def _run_config(
        self,
        phases: tuple[str, ...],
        threads: int | None,
        duration: float | None,
        iterations: int | None,
        seed: int | None,
        stream: str | Sequence[str] | None,
        context: str | None,
        repeats: int | None,
    ) -> RunConfig:
        """The runner's config with one run's overrides (None: keep the runner's value)."""
        if stream is None:  # the default (both), per-thread alone under per-thread contexts
            streams = ("per-thread",) if context == "per-thread" else self.config.streams
        else:
            streams = (stream,) if isinstance(stream, str) else tuple(stream)
        if streams == ("both",):
            streams = ("shared", "per-thread")
        base = self.config
        return replace(
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
            phases=phases,
        ).validate()

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
        from stress.corpus.shrink import write_corpus
        from stress.corpus.variants import run_variants
        from stress.engine.run.session import Session

        started = time.monotonic()
        cases = list(cases)
        control = list(control)
        if not cases:
            raise ConfigError("stress_run: no cases to run (pass cases or a corpus)")
        ids = [c.id for c in [*cases, *control]]
        dup = next((i for i in ids if ids.count(i) > 1), None)
        if dup is not None:
            raise ConfigError(f"stress_run: case id {dup!r} appears twice in the run")
        _check_sizes([*cases, *control], self.config.max_case_bytes)  # before the baseline
        chosen, control = _choose_phases(phases, cases, control)
        config = self._run_config(
            chosen, threads, duration, iterations, seed, stream, context, repeats
        )

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
        # in memory: no reading back (with the view variants the phase children derive too)
        session.cases, session.control_cases = run_variants(cases, config), control
        report = session.run()
        result = StressResult(
            report=report,
            out_dir=run_dir / "out",
            worker=self.worker,
            device=self.device,
            cases=cases,
            control=control,
            baselines=dict(session.header.baseline_cases),
            command=_replay_command(config, corpus, control_path, baseline_path, self.backend),
            seconds=time.monotonic() - started,
        )
        if log:  # into this worker's runs.jsonl, merged into the session summary
            with open(self.out_root / RUNS_FILE, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(result.run_line(nodeid, self.session).to_json()) + "\n")
        return result


def _choose_phases(
    phases: Sequence[str] | str | None, cases: list[Case], control: list[Case]
) -> tuple[tuple[str, ...], list[Case]]:
    """The phases a run makes (``control`` only with control cases) and the control cases it
    needs (none without a control phase; none that are also cases of the run)."""
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
    return chosen, control


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


def _check_sizes(cases: Sequence[Case], given: int | None) -> None:
    """Refuse a case over ``--stress-max-case-bytes`` (or the default share of host memory)
    before anything is allocated; the session checks the device's share again."""
    from stress.engine.call.case_size import check_case_sizes, default_max_case_bytes

    limit = given if given is not None else default_max_case_bytes()
    try:
        check_case_sizes(cases, limit, given=given is not None)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("--max-case-bytes", "--stress-max-case-bytes")) from None
