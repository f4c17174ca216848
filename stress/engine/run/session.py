"""A whole run: baseline check, every phase in a supervised child, results, reports.

The parent process never loads CANN itself (unless isolation is off): a crash or hang in an
operator ends a child, becomes a verdict, and the remaining phases still run. Results stream to
``<out>/results.jsonl`` as they arrive; the reports are rendered from that file at the end (and
by ``aclnn-stress report`` at any time).
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from stress.baseline.store import backend_tag, default_baseline_path
from stress.config import RunConfig
from stress.corpus import preload
from stress.corpus.parse import Case
from stress.corpus.variants import run_variants
from stress.engine.call.case_size import check_case_sizes, default_max_case_bytes
from stress.engine.isolation.forkserver import ForkServer
from stress.engine.isolation.messages import BackendInfo, ChildEnd, Line
from stress.engine.isolation.supervise import ChildResult, run_child, run_in_process
from stress.engine.replay.baseline_order import OrderDependence
from stress.engine.run import baseline_step as bstep
from stress.engine.run.child_failure import failure_text
from stress.engine.run.early import Ahead, EarlyStart, early_server, first_job, is_file
from stress.engine.run.header import run_header
from stress.engine.run.in_flight import limit_threads
from stress.engine.run.phase_step import first_failure_line, phase_job, run_step
from stress.engine.run.refocus import refocus
from stress.engine.run.reproducer import Reproducer
from stress.engine.run.resume import Resumed
from stress.engine.run.rundir import claim_run_dir, new_out_dir
from stress.engine.run.schedule import (
    NEVER_EARLY,
    Scheduler,
    Step,
    burst_findings,
    fail_fast_note,
    focus_note,
    focus_steps,
    plan,
    settled,
    settled_at,
)
from stress.engine.run.step_batch import FocusedSteps, Held, control_spare
from stress.errors import ConfigError
from stress.grading.assemble import report_from
from stress.grading.tally import JournalTally
from stress.journal.lines import RunHeader
from stress.journal.results import RESULTS_FILE, ResultWriter, read_results
from stress.records import CallRecord, RunReport
from stress.report.writers import live_tally, write_reports
from stress.session_ui import SessionUI
from stress.vocabulary import PhaseStatus

__all__ = ["Session", "SessionUI", "new_out_dir"]


@dataclass
class Session:
    """One ``aclnn-stress run``."""

    config: RunConfig
    corpus: Sequence[str]
    control: Sequence[str] = ()
    baseline_path: Path | None = None
    out_dir: Path | None = None
    backend: str | None = None
    isolate: bool = True
    force: bool = False
    record_missing: bool = False
    ui: SessionUI = field(default_factory=SessionUI)
    env: dict[str, str] = field(default_factory=dict)  # extra environment for the children
    shrink_budget: float = 45.0  # seconds for minimising a failing mix (0: off)

    cases: list[Case] = field(init=False, default_factory=list)
    _t0: float = field(init=False, default=0.0)
    _first: CallRecord | None = field(init=False, default=None)  # the first failing call
    control_cases: list[Case] = field(init=False, default_factory=list)
    header: RunHeader = field(init=False, default_factory=RunHeader)  # the journal's first line
    recording: Path | None = field(init=False, default=None)  # the baseline being recorded now
    finished_phases: list[str] = field(init=False, default_factory=list)  # "phase variant"
    resume: Resumed | None = None  # --resume: the stopped run this one continues
    tally: JournalTally = field(init=False, default_factory=JournalTally)  # the graded journal
    _server: ForkServer | None = field(init=False, default=None)  # forks the phase children
    _ahead: FocusedSteps = field(init=False, default_factory=FocusedSteps)  # run at once
    early: EarlyStart | None = None  # the fork server, info job and first step started ahead

    # -- jobs -------------------------------------------------------------------------------
    def _job(
        self, job: dict[str, Any], on_record: Callable[[Line], None], **kw: Any
    ) -> ChildResult:
        job = {"backend": self.backend, **job}
        if not self.isolate:
            return run_in_process(job, on_record)
        silence = self.config.call_timeout * 2 + 10
        grace = self.config.call_timeout  # calls in flight at an interrupt may end, no longer
        result = run_child(
            job, on_record, silence_timeout=silence, env=self.env, stop_grace=grace,
            server=self._server, **kw,
        )  # fmt: skip
        error = result.error
        if result.status == PhaseStatus.FAILED and error is not None and error.user:
            raise ConfigError(error.message)
        return result

    def _require_done(self, result: ChildResult, what: str) -> ChildEnd:
        if result.status != PhaseStatus.DONE or result.end is None:
            raise ConfigError(f"{what} failed: {failure_text(result)}")
        return result.end

    def backend_info(self) -> BackendInfo:
        """Fingerprint and info of the backend (loaded in a child: the one started ahead by
        :mod:`.early` when it ran this very job)."""
        job = {"kind": "info", "device": self.config.device}
        ahead = self.early.take_info({"backend": self.backend, **job}) if self.early else None
        result = ahead if ahead is not None else self._job(job, lambda r: None)
        return self._require_done(result, "loading the backend").backend

    def start_early(self, early: EarlyStart | None) -> None:
        """Take the fork server started for this session (:func:`.early.start_early`) and send
        it now, before the checks, the backend-info job and, with a named baseline file, the
        first step, held before its first call (:class:`.early.Ahead`; ``isolate`` only)."""
        if early is None or not self.isolate or early.env != {**os.environ, **self.env}:
            return
        self.early = early
        self._server = early.server
        job = {"backend": self.backend, "kind": "info", "device": self.config.device}
        early.ask_info(lambda j: self._job(j, lambda r: None), job)
        path = self.baseline_path  # missing: recorded first, or the run refused (in order)
        ready = self.resume is None and not self.record_missing and path and is_file(path)
        first = first_job(self.config, self.corpus, self.control, str(path)) if ready else None
        if first is not None:  # its grace as run_child's stop_grace
            run = lambda j, rec, stop: self._job(j, rec, cancel=stop)  # noqa: E731
            early.ahead = Ahead(run, first, grace=self.config.call_timeout)

    # -- baseline ---------------------------------------------------------------------------
    def default_baseline(self, fingerprint: dict[str, Any]) -> Path:
        """``baselines/<corpus stems>.<backend>.json``; the backend tag is ``cann``, ``sim``, or
        ``sim-<faults>`` when simulator faults are on (their baselines must not mix)."""
        return default_baseline_path([*self.corpus, *self.control], backend_tag(fingerprint))

    def record_baseline(self, path: Path, on_case: Callable[[Line], None] | None = None) -> Path:
        corpus, config = [*self.corpus, *self.control], self.config.to_json()
        job = {"kind": "record", "corpus": corpus, "config": config, "out": str(path)}
        result = self._job(job, on_case or (lambda r: None))
        end = self._require_done(result, "recording the baseline")
        if end.order_dependence:
            raise OrderDependence(end.order_dependence)
        return Path(end.path or path)

    def record_missing_baseline(self, path: Path, stale: str | None = None) -> None:
        """Record the missing (or ``stale``) baseline ``path`` (:func:`record_missing`);
        ``recording`` names it meanwhile (an interrupt then says the baseline was not written)."""

        def record(p: Path, on_case: Callable[[Line], None]) -> None:
            self.recording = p
            self.record_baseline(p, on_case)
            self.recording = None

        bstep.record_missing(path, self.ui.message, record, stale)

    # -- the run ----------------------------------------------------------------------------
    def _check_sizes(self, device_bytes: int | None = None) -> None:
        """Refuse a case over --max-case-bytes (or the default share of host/device memory)."""
        given = self.config.max_case_bytes
        limit = given if given is not None else default_max_case_bytes(device_bytes)
        for cases in (self.cases, self.control_cases):
            check_case_sizes(cases, limit, given=given is not None, device_bytes=device_bytes)

    def load(self) -> None:
        # the corpus and the view variants derived from it (the phase children derive the same)
        # kept parsed (preload): the fork server, forked after, and its children inherit them
        cases = preload.load(self.corpus, self.config.include_dirs)
        self.cases = run_variants(cases, self.config)
        phases = self.config.phases
        if "control" in phases or ("burst" in phases and self.control):
            if not self.control:
                raise ConfigError(
                    "the control phase needs --control PATH (or drop it from --phases)"
                )
            self.control_cases = preload.load(self.control, self.config.include_dirs)
            clash = {c.id for c in self.cases} & {c.id for c in self.control_cases}
            if clash:
                raise ConfigError(
                    f"case id '{sorted(clash)[0]}' is in both the corpus and the control corpus"
                )
        self._check_sizes()

    def run(self) -> RunReport:
        """Run every phase; returns the report (also written to the out dir)."""
        self._t0 = time.monotonic()
        self.config.validate()
        # the fork server the children are forked from imports and parses meanwhile (or did:
        # started before the session, :mod:`.early`)
        warm = ([*self.corpus, *self.control], self.config.include_dirs)
        env = {**os.environ, **self.env}
        with early_server(self.early, self.isolate, env, *warm) as self._server:
            if not self.cases:
                self.load()
            out = self.out_dir or new_out_dir(seed=self.config.seed)
            lock = claim_run_dir(out, self.ui.message)  # before anything slow: exit 2 at once
            self.ui.run_start(out)
            try:
                if (out / RESULTS_FILE).exists() and self.resume is None:
                    raise ConfigError(
                        f"{out}: already holds results; choose another --out "
                        "(nothing is overwritten)"
                    )
                self.out_dir = out
                return self._run_in(out)
            finally:
                lock.release()

    def _run_in(self, out: Path) -> dict[str, Any]:
        info = self.backend_info()
        count = info.info.get("device_count")
        if count is not None:
            self.config.check_device(int(count))
        self._check_sizes(info.info.get("device_memory"))
        fingerprint = info.fingerprint
        path = self.baseline_path or self.default_baseline(fingerprint)
        # the size variants the baseline lacks skipped (here and in every child); the file read once
        read, cases, config = bstep.read_once(), self.cases, self.config
        self.cases, self.config, skipped = bstep.skip_unrecorded(Path(path), cases, config, read)
        # no more calls in flight than the memory free fits (fewer threads for a big case)
        every_case = [*self.cases, *self.control_cases]
        self.config, memory = limit_threads(self.config, every_case, info.info)
        baseline, warnings = bstep.run_baseline(
            Path(path),
            fingerprint,
            # a view variant is graded against its twin's baseline: it has none of its own
            [*(c for c in self.cases if not c.view), *self.control_cases],
            self.config,
            self.force,
            self.record_missing_baseline if self.record_missing else None,
            read,
        )
        # the journal graded as it is written, with the bounded sample of calls the HTML
        # report draws (so the report is rendered without reading the journal back)
        tally = self.tally = live_tally()
        with ResultWriter(out / RESULTS_FILE, on_write=tally.add) as writer:
            if self.resume is None:
                self.header = run_header(
                    self.config, (self.corpus, self.control), (self.cases, self.control_cases),
                    self.env, info, path, baseline,
                )  # fmt: skip
                writer.write(self.header)
            else:  # the stopped run's records count, its finished phases are not run again
                self.header = self.resume.header
                tally.feed(self.resume.records())
                writer.write({"type": "note", "message": f"resumed by pid {os.getpid()}"})
            for w in warnings:
                writer.write({"type": "note", "message": f"baseline forced: {w}"})
            if skipped:
                self._note(skipped, writer)
            if memory.limited:
                self._note(memory.note(), writer)
            status = PhaseStatus.DONE
            reproducer = None
            timing: dict[str, Any] = {"first_detection_s": None, "diagnosis_s": None}
            try:
                timing["diagnosis_s"] = self._run_phases(writer, str(path))
                timing["first_detection_s"] = self._first.elapsed if self._first else None
                writer.sync()
                if self.shrink_budget > 0:
                    try:
                        shrinker = Reproducer(
                            self.config, self.cases, out, str(path), budget=self.shrink_budget,
                            say=self.ui.message, run_job=self._job, env=self.env,
                        )  # fmt: skip
                        reproducer = shrinker.find(report_from(tally, final=False))
                    except (ConfigError, OSError, ValueError, KeyError) as exc:
                        # the findings stand without a reproducer: say why there is none
                        reproducer = {"verified": False, "note": f"shrinking failed: {exc}"}
            except BaseException as exc:  # the run-end says how it stopped; the error goes on
                interrupted = isinstance(exc, KeyboardInterrupt)
                status = PhaseStatus.INTERRUPTED if interrupted else PhaseStatus.FAILED
                raise
            finally:
                self._ahead.cancel()  # the steps after the one that settled it
                writer.write(
                    {
                        "type": "run-end",
                        "status": status,
                        "ended": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                        "reproducer": reproducer,
                        "timing": timing,
                    }
                )
                writer.sync()
                report = write_reports(out, tally)
        return report

    def _run_phases(self, writer: ResultWriter, baseline: str) -> float | None:
        """Run the scheduled phases (stopping early under fail-fast; once the burst failed,
        the diagnostic phases focus on what failed: :func:`focus_steps`); returns the seconds
        since the start at which the final diagnosis first stood (None when clean)."""
        scheduler = Scheduler(self.config, plan(self.config))
        steps = scheduler.steps  # a list: after a failing burst the steps after it are rewritten
        ran: list[str] = []
        history: list[tuple[float, str, str]] = []
        focused = False
        for i, step in enumerate(steps):
            config = self._ahead.config(i) or scheduler.config_for(i, time.monotonic() - self._t0)
            if self._resumed(step):
                ran.append(step.phase)
                continue
            began = time.monotonic()
            if step.phase == "burst" and not focused and self.isolate and self.config.fail_fast:
                run = partial(self._ahead_job, baseline)  # its first failure starts the control
                self._ahead.arm(partial(control_spare, steps, i, scheduler.step_config, run))
            held = self._ahead.take(i, step, config)
            self._run_phase(writer, step, baseline, config, held)
            wall = held.seconds if held else time.monotonic() - began
            scheduler.observe(i, wall, config.duration)
            ran.append(step.phase)
            graded = self.tally.graded(final=False)  # the diagnosis, no report
            diagnosis = graded.diagnosis
            history.append((round(time.monotonic() - self._t0, 3), diagnosis, graded.explanation))
            done = i + 1 == len(steps) or steps[i + 1].phase != step.phase
            if not self.config.fail_fast:
                continue
            if not focused and step.phase != "burst" and diagnosis not in NEVER_EARLY:
                focused = True  # first seen after a clean burst: its cases where samples ran
                if note := refocus(steps, i, writer.path, self.cases):
                    self._note(note, writer)
                    continue
            if settled(diagnosis, ran, self.config.phases, graded.explanation, done):
                if steps[i + 1 :]:
                    self._note(fail_fast_note(diagnosis, step, steps[i + 1 :]), writer)
                break
            # at the first failing burst (a later stream policy's burst would add only a case
            # or two): the diagnostic steps next
            if step.phase == "burst" and not focused and diagnosis not in NEVER_EARLY:
                focused = True
                self._focus(steps, i, writer, baseline, scheduler)
        return settled_at(history)

    def _focus(
        self, steps: list[Step], i: int, writer: ResultWriter, baseline: str, sched: Scheduler
    ) -> None:
        """After the failing burst ``steps[i]``: the steps after it focus on what it found
        (:func:`focus_steps`), started at once when isolated and taken in order."""
        found = burst_findings(read_results(writer.path, typed=True), [c.id for c in self.cases])
        steps[i + 1 :] = focus_steps(steps[i + 1 :], steps[: i + 1], found)
        self._note(focus_note(found, steps[i + 1 :]), writer)
        if self.isolate:
            fixed = partial(sched.config_for, elapsed=time.monotonic() - self._t0)
            run = partial(self._ahead_job, baseline)
            self._ahead.start(steps, i + 1, fixed, self._resumed, run)

    def _resumed(self, step: Step) -> bool:
        return bool(self.resume) and (step.phase, step.variant) in self.resume.done  # type: ignore

    def _phase_job(self, phase: str, stream: str, baseline: str, config: RunConfig) -> dict:
        control = self.control if self.control_cases else []
        return phase_job(phase, stream, config, self.corpus, control, baseline)

    def _ahead_job(self, baseline: str, step: Step, config: RunConfig, *run: Any) -> ChildResult:
        job = self._phase_job(step.phase, step.stream, baseline, config)
        return self._job(job, *run[:1], cancel=run[1])  # a step run ahead (:func:`start_ahead`)

    def _note(self, message: str, writer: ResultWriter) -> None:
        writer.write({"type": "note", "message": message})
        self.ui.message(message)

    def _first_failure(self, rec: CallRecord) -> None:
        if self._first is not None or rec.warmup or not rec.failed:
            return
        self._first = rec
        self.ui.message(first_failure_line(rec))
        if rec.phase == "burst" and self.resume is None:
            self._ahead.first_failure()

    def _run_phase(
        self,
        writer: ResultWriter,
        step: Step,
        baseline: str,
        config: RunConfig | None = None,
        held: Held | None = None,
    ) -> None:
        config = config or self.config
        cases = self.control_cases if step.phase == "control" else config.focus or self.cases
        n_cases = len(cases) + (len(self.control_cases) if step.phase == "burst" else 0)
        job = self._phase_job(step.phase, step.stream, baseline, config)
        ahead = self.early.take_ahead(job) if self.early else None  # the first step, set up
        run = ahead.drain if ahead else partial(self._job, job)
        ui, t0, first = self.ui, self._t0, self._first_failure
        status = run_step(writer, ui, step, n_cases, config, run, t0, first, held)
        if status == PhaseStatus.DONE:
            self.finished_phases.append(f"{step.phase} {step.variant}".strip())
