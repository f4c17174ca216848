"""``RunConfig``: every option of a stress run, its default, its validation, in one place.

The CLI (:meth:`RunConfig.from_cli`), the pytest plugin (:meth:`RunConfig.from_pytest`), the job
runner of the phase children (:meth:`RunConfig.from_json`) and ``make stress`` (the CLI) all
build one; :meth:`RunConfig.to_cli_args` writes the command line that replays a run. The
defaults below are the only ones; ``--help`` and README's option table are generated from or
checked against :data:`DEFAULTS`.

One budget differs on purpose: the pytest plugin runs each concurrent phase for
:data:`PYTEST_DURATION` seconds unless ``--stress-duration`` says otherwise, so that a plain
``pytest`` stays fast; the CLI's default is :data:`DEFAULT_DURATION`. For the same reason the
plugin derives no view variants (:data:`PYTEST_VARIANTS`) unless ``--stress-variants`` asks.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from stress.errors import ConfigError
from stress.option_values import factor, int_in, seconds_in
from stress.vocabulary import SIZE_VARIANTS, View

__all__ = [
    "ALL_VARIANTS",
    "CANARY",
    "CONCURRENT_PHASES",
    "CONTEXT_POLICIES",
    "DEFAULTS",
    "DEFAULT_DURATION",
    "MAX_THREADS",
    "OPT_IN_VARIANTS",
    "PHASES",
    "PYTEST_DURATION",
    "PYTEST_VARIANTS",
    "STREAM_POLICIES",
    "VARIANTS",
    "RunConfig",
    "check_device",
]

#: In the order the diagnosis weighs them (see :mod:`stress.engine.run.schedule`): the fail-fast
#: burst first, the control next, so a fail-fast run stops as soon as a diagnosis stands.
PHASES = ("burst", "control", "serial", "shuffled", "isolated", "interleaved", "mixed")
CONCURRENT_PHASES = ("burst", "isolated", "mixed", "control")
CONTEXT_POLICIES = ("shared", "per-thread")
STREAM_POLICIES = ("shared", "per-thread")

#: The byte prefilled into every output before a call (see :mod:`stress.grading.digest`).
CANARY = 0xAB
#: Seconds per concurrent phase when neither a duration nor a number of iterations is given.
DEFAULT_DURATION = 6.0
#: The pytest plugin's default seconds per concurrent phase (short: plain ``pytest`` stays fast).
PYTEST_DURATION = 0.5
#: More worker threads than this are refused: thread start-up, not the operator, would fail.
MAX_THREADS = 256
MAX_REPEATS = 10_000
MAX_CALL_TIMEOUT = 24 * 3600.0
#: The view variants a run derives from every case by default: all of them.
VIEWS: tuple[str, ...] = tuple(str(v) for v in View)
#: Every variant kind a run derives by default: the views, then the sizes (empties, edges:
#: stress.corpus.size_variants).
VARIANTS: tuple[str, ...] = (*VIEWS, *SIZE_VARIANTS)
#: The API modes a call may run in (stress.engine.replay.modes): ``plain`` (single-use),
#: ``repeat`` (stress.engine.call.repeatable), ``event`` (stress.engine.call.event_mode),
#: ``pipeline`` (stress.engine.call.pipeline); a run draws one per call among those ``--modes``
#: names, all by default.
MODES: tuple[str, ...] = ("plain", "repeat", "event", "pipeline")
#: Variant kinds a run derives only when ``--variants`` names them (or ``all``): the one-field
#: twins (stress.corpus.twins), which would take make stress past its 30 s.
OPT_IN_VARIANTS: tuple[str, ...] = ("twins",)
ALL_VARIANTS: tuple[str, ...] = (*VARIANTS, *OPT_IN_VARIANTS)
#: The pytest plugin's default view variants: none (``--stress-variants`` turns them on), so
#: that a plain ``pytest`` stays fast; the CLI's default is every kind (:data:`VARIANTS`).
PYTEST_VARIANTS: tuple[str, ...] = ()


def check_device(device: int, device_count: int) -> None:
    """Refuse a ``--device`` the backend does not have: one line naming the option."""
    if not 0 <= device < device_count:
        raise ConfigError(
            f"--device {device}: the backend has {device_count} device(s) "
            f"(0..{device_count - 1}); choose one of them"
        )


@dataclass(frozen=True)
class RunConfig:
    """Everything that shapes a run (stored in the result file, so a run can be replayed)."""

    seed: int = 0
    threads: int = 8
    context: str = "shared"  # shared | per-thread
    # stream policies the concurrent phases run under: both by default, so that kernels overlap
    # (per-thread streams) as well as host threads sharing one stream (README "--stream")
    streams: tuple[str, ...] = STREAM_POLICIES
    duration: float | None = None  # seconds per concurrent phase (None: DEFAULT_DURATION)
    iterations: int | None = None  # rounds per concurrent phase (per case for isolated)
    repeats: int = 3  # K: calls per case in serial and shuffled (and in a baseline recording)
    canary: int = CANARY
    call_timeout: float = 10.0  # seconds: a call still running then is a HANG (the upper bound)
    # the adaptive limit below it (stress.engine.replay.hang_rule): a call of a case with a
    # recorded time is suspect past max(hang_floor, hang_factor x its p99), a HANG once confirmed
    hang_floor: float = 0.5  # seconds (README "Hangs": why)
    hang_factor: float = 50.0
    device: int = 0
    deterministic: bool = True
    phases: tuple[str, ...] = PHASES
    fail_fast: bool = True  # stop once a diagnosis stands (see stress.engine.run.schedule)
    budget_s: float | None = None  # seconds for the whole run, divided across phases
    include_dirs: tuple[str, ...] = ()  # -I: folders for declarations' headers (absolute)
    # a case whose tensors take more bytes is refused at load (None: stress.engine.call.case_size's
    # default, a quarter of host memory and of the device memory the runtime reports)
    max_case_bytes: int | None = None
    # the corpus cases one phase runs, by id (empty: all): the scheduler's focused diagnostic
    # steps after a failure (stress.engine.run.schedule.focus_steps); never a user option
    focus: tuple[str, ...] = ()
    # a diagnostic step: the phase ends at its first failing call (it confirmed the burst's
    # finding; more calls would not change the diagnosis); never a user option
    confirm: bool = False
    # the corpus cases a sampled phase takes first (the burst's failing cases in the focused
    # shuffled step: its sample always holds them); never a user option
    first: tuple[str, ...] = ()
    # variants derived from every case (stress.corpus.variants, .size_variants; () with
    # --variants none)
    variants: tuple[str, ...] = VARIANTS
    # size variants the baseline lacks (recorded before they were derived): the run and its
    # phase children skip them, the journal says so (stress.engine.run.baseline_step); never a
    # user option
    unrecorded: tuple[str, ...] = ()
    # device memory: fresh aclrtMalloc per call, a caching allocator that recycles blocks
    # across cases and threads (stress.engine.call.caching_allocator), or both: the scheduler
    # runs the shuffled phase under each (stress.engine.run.schedule.plan; README "--allocator")
    allocator: str = "both"
    # the policy this phase's calls run under (fresh | recycle), set per step by the
    # scheduler; never a user option
    phase_allocator: str = "fresh"
    # the API modes calls are drawn from (MODES; stress.engine.call.repeatable)
    modes: tuple[str, ...] = MODES

    DEFAULT_DURATION = DEFAULT_DURATION  # kept as a class attribute for existing callers

    def __post_init__(self) -> None:
        object.__setattr__(self, "streams", tuple(self.streams))
        object.__setattr__(self, "phases", tuple(self.phases))
        object.__setattr__(self, "include_dirs", tuple(self.include_dirs))
        object.__setattr__(self, "focus", tuple(self.focus))
        object.__setattr__(self, "first", tuple(self.first))
        object.__setattr__(self, "variants", tuple(self.variants))
        object.__setattr__(self, "unrecorded", tuple(self.unrecorded))
        object.__setattr__(self, "modes", tuple(self.modes))

    # -- validation ------------------------------------------------------------------------
    def validate(self) -> RunConfig:
        """Raise a one-line :class:`ConfigError` naming the option and the fix; returns self."""
        int_in("--seed", self.seed, 0, 2**64 - 1)
        int_in("--threads", self.threads, 1, MAX_THREADS)
        int_in("--repeats", self.repeats, 1, MAX_REPEATS)
        int_in("--canary", self.canary, 0, 255, "a byte (0..255)")
        int_in("--device", self.device, 0, 2**31 - 1)
        if self.context not in CONTEXT_POLICIES:
            raise ConfigError(f"--context must be shared or per-thread, got {self.context!r}")
        if self.allocator not in ("fresh", "recycle", "both"):
            raise ConfigError(f"--allocator must be fresh, recycle or both, got {self.allocator!r}")
        if not self.streams:
            raise ConfigError("--stream: no stream policy given; use shared, per-thread or both")
        for s in self.streams:
            if s not in STREAM_POLICIES:
                raise ConfigError(f"--stream must be shared, per-thread or both, got {s!r}")
        if self.context == "per-thread" and "shared" in self.streams:
            raise ConfigError(
                "--context per-thread needs --stream per-thread: a stream belongs to one context"
            )
        if self.duration is not None:
            seconds_in("--duration", self.duration, MAX_CALL_TIMEOUT)
        if self.iterations is not None:
            int_in("--iterations", self.iterations, 1, 2**31 - 1)
        seconds_in("--call-timeout", self.call_timeout, MAX_CALL_TIMEOUT)
        seconds_in("--hang-floor", self.hang_floor, MAX_CALL_TIMEOUT)
        factor("--hang-factor", self.hang_factor)
        if self.budget_s is not None:
            seconds_in("--budget", self.budget_s, MAX_CALL_TIMEOUT)
        if self.max_case_bytes is not None:
            int_in("--max-case-bytes", self.max_case_bytes, 1, 2**63 - 1)
        unknown = [p for p in self.phases if p not in PHASES]
        if unknown:
            raise ConfigError(
                f"--phases: unknown phase {unknown[0]!r}; phases: {', '.join(PHASES)}"
            )
        if not self.phases:
            raise ConfigError(f"--phases: no phase given; phases: {', '.join(PHASES)}")
        for v in self.variants:
            if v not in ALL_VARIANTS:
                raise ConfigError(
                    f"--variants: unknown variant {v!r}; variants: {', '.join(ALL_VARIANTS)} "
                    "(or none)"
                )
        bad = [m for m in self.modes if m not in MODES]
        if bad or not self.modes:
            raise ConfigError(
                f"--modes: unknown mode {bad[0] if bad else ''!r}; modes: {', '.join(MODES)}"
            )
        for d in self.include_dirs:
            if not Path(d).is_dir():
                raise ConfigError(f"-I {d}: not a directory; give a folder holding headers")
        return self

    def check_device(self, device_count: int) -> None:
        """Refuse a ``--device`` the backend does not have (before the first phase)."""
        check_device(self.device, device_count)

    # -- derived ---------------------------------------------------------------------------
    @property
    def call_timeout_ms(self) -> int:
        return int(self.call_timeout * 1000)

    def with_(self, **changes: Any) -> RunConfig:
        """A copy with ``changes`` (validated)."""
        return replace(self, **changes).validate()

    # -- JSON (the run header of results.jsonl, and the job of a phase child) ---------------
    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["streams"] = list(self.streams)
        d["phases"] = list(self.phases)
        d["include_dirs"] = list(self.include_dirs)
        d["variants"] = list(self.variants)
        d["modes"] = list(self.modes)
        # a phase child's job only: the run header keeps its format
        for key in ("focus", "confirm", "first", "unrecorded"):
            if not d[key]:
                del d[key]
        if self.phase_allocator == "fresh":
            del d["phase_allocator"]
        if self.focus:
            d["focus"] = list(self.focus)
        if self.first:
            d["first"] = list(self.first)
        if self.unrecorded:
            d["unrecorded"] = list(self.unrecorded)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RunConfig:
        known = {f.name for f in fields(cls)}
        d = {k: v for k, v in d.items() if k in known}
        d["streams"] = tuple(d.get("streams", ("shared",)))
        d["phases"] = tuple(d.get("phases", PHASES))
        d["include_dirs"] = tuple(d.get("include_dirs", ()))
        d["focus"] = tuple(str(c) for c in d.get("focus", ()))
        d["first"] = tuple(str(c) for c in d.get("first", ()))
        d["unrecorded"] = tuple(str(c) for c in d.get("unrecorded", ()))
        d["variants"] = tuple(d.get("variants", VARIANTS))
        d["modes"] = tuple(d.get("modes", MODES))
        return cls(**d)

    # -- entry points ----------------------------------------------------------------------
    @classmethod
    def from_cli(cls, args: Any, *, phases: Sequence[str] | None = None) -> RunConfig:
        """From the CLI's parsed arguments (``run`` and ``baseline record``).

        A missing ``--seed`` draws a random one (printed, so the run can be replayed)."""
        import secrets

        context = getattr(args, "context", None) or cls.context
        stream = getattr(args, "stream", None)
        if stream is None:
            streams: tuple[str, ...] = ("per-thread",) if context == "per-thread" else cls.streams
        else:
            streams = ("shared", "per-thread") if stream == "both" else (stream,)
        seed = getattr(args, "seed", None)
        return cls(
            seed=seed if seed is not None else secrets.randbits(32),
            threads=_given(args, "threads", cls.threads),
            context=context,
            streams=streams,
            duration=getattr(args, "duration", None),
            iterations=getattr(args, "iterations", None),
            repeats=_given(args, "repeats", cls.repeats),
            canary=_given(args, "canary", cls.canary),
            call_timeout=_given(args, "call_timeout", cls.call_timeout),
            hang_floor=_given(args, "hang_floor", cls.hang_floor),
            hang_factor=_given(args, "hang_factor", cls.hang_factor),
            device=_given(args, "device", cls.device),
            deterministic=_given(args, "deterministic", cls.deterministic),
            phases=tuple(phases) if phases is not None else _given(args, "phases", PHASES),
            fail_fast=_given(args, "fail_fast", cls.fail_fast),
            budget_s=getattr(args, "budget", None),
            include_dirs=tuple(str(Path(d).resolve()) for d in _given(args, "include", ())),
            max_case_bytes=getattr(args, "max_case_bytes", None),
            variants=_given(args, "variants", cls.variants),
            allocator=_given(args, "allocator", cls.allocator),
            modes=_given(args, "modes", cls.modes),
        ).validate()

    @classmethod
    def from_pytest(cls, option: Any) -> RunConfig:
        """The session-wide settings of the pytest plugin (``config.option``); per-test values
        (phases, cases, device binding) are applied with :meth:`with_`."""
        seed = getattr(option, "stress_seed", None)
        duration = getattr(option, "stress_duration", None)
        return cls(
            seed=0 if seed is None else seed,
            threads=_given(option, "stress_threads", cls.threads),
            duration=PYTEST_DURATION if duration is None else duration,
            call_timeout=_given(option, "stress_call_timeout", cls.call_timeout),
            hang_floor=_given(option, "stress_hang_floor", cls.hang_floor),
            hang_factor=_given(option, "stress_hang_factor", cls.hang_factor),
            device=_given(option, "stress_device", cls.device),
            max_case_bytes=getattr(option, "stress_max_case_bytes", None),
            # no view variants unless asked: they quadruple a corpus the plugin runs unbudgeted
            variants=_given(option, "stress_variants", PYTEST_VARIANTS),
        ).validate()

    def to_cli_args(self, *, budget: bool = True) -> list[str]:
        """The ``aclnn-stress run`` options that reproduce this configuration."""
        stream = "both" if len(self.streams) > 1 else self.streams[0]
        args = [
            f"--phases {','.join(self.phases)}",
            f"--seed {self.seed}",
            f"--threads {self.threads}",
            f"--stream {stream}",
            f"--context {self.context}",
        ]
        if self.allocator != RunConfig.allocator:
            args.append(f"--allocator {self.allocator}")
        if self.variants != VARIANTS:
            args.append(f"--variants {','.join(self.variants) or 'none'}")
        if self.modes != MODES:
            args.append(f"--modes {','.join(self.modes)}")
        if budget and self.budget_s is not None:
            args.append(f"--budget {self.budget_s:g}")
        elif budget and self.iterations is not None:
            args.append(f"--iterations {self.iterations}")
        elif budget:
            seconds = self.duration if self.duration is not None else DEFAULT_DURATION
            args.append(f"--duration {seconds:g}")
        args.append(f"--device {self.device}")
        for flag, value, default in (
            ("--repeats", self.repeats, RunConfig.repeats),
            ("--call-timeout", self.call_timeout, RunConfig.call_timeout),
            ("--hang-floor", self.hang_floor, RunConfig.hang_floor),
            ("--hang-factor", self.hang_factor, RunConfig.hang_factor),
        ):
            if value != default:
                args.append(f"{flag} {value:g}")
        if self.canary != CANARY:
            args.append(f"--canary {self.canary:#x}")
        if not self.deterministic:
            args.append("--no-deterministic")
        if not self.fail_fast:
            args.append("--no-fail-fast")
        args += [f"-I {shlex.quote(d)}" for d in self.include_dirs]
        if self.max_case_bytes is not None:
            args.append(f"--max-case-bytes {self.max_case_bytes}")
        return args


#: Every option's default, as documented in README and ``--help``.
DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(RunConfig)}


def _given(ns: Any, name: str, default: Any) -> Any:
    value = getattr(ns, name, None)
    return default if value is None else value
