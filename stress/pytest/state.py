"""The pytest plugin's per-session state: its settings (a :class:`~stress.config.RunConfig`
plus corpus, output and xdist worker), built once from the options in ``pytest_configure``."""

from __future__ import annotations

import datetime as _dt
import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from stress.config import RunConfig

if TYPE_CHECKING:
    from stress.corpus.parse import Case
    from stress.pytest.runner import StressRunner
    from stress.report.pytest_summary import PytestSummary

__all__ = ["BACKENDS", "State", "build_state", "marker_cases", "state"]

BACKENDS = ("auto", "sim", "cann")

# A small aclnnAdd control set, used when no control corpus is given or found.
_BUILTIN_CONTROL = (
    {"id": "control-add-f32", "op": "add", "shape": [64, 128], "seed": 901},
    {
        "id": "control-add-bf16-bcast",
        "op": "add",
        "shape": [8, 64, 128],
        "other_shape": [128],
        "dtype": "bf16",
        "seed": 902,
    },
    {"id": "control-add-fp16", "op": "add", "shape": [256, 64], "dtype": "fp16", "seed": 903},
)


# -- state -----------------------------------------------------------------------------------
@dataclass
class State:
    """The plugin's per-session settings and lazily created objects (in ``config.stash``)."""

    config: pytest.Config
    backend: str | None
    run_config: RunConfig  # the session's settings; per-test values are applied per run
    seed: int
    device_base: int
    isolate: bool
    shrink: float
    corpus_paths: list[Path]
    control_paths: list[Path] | None  # None: the built-in control set; []: no control
    out_root: Path
    baseline_dir: Path | None
    session: str  # id of the whole (xdist) session: the controller's, handed to workers
    worker: str  # "main" without xdist, else "gw0", "gw1", ...
    worker_index: int
    controller: bool
    _corpus: list[Case] | None = None
    _control: list[Case] | None = None
    runner: StressRunner | None = None
    binding: dict[str, Any] | None = None
    bindings: dict[str, dict[str, Any]] = field(default_factory=dict)
    summary: PytestSummary | None = None
    summary_error: str = ""  # the summary could not be written: why
    corpus_note: str = ""  # where the default corpus came from, when not the rootdir's corpus/

    # -- cases -----------------------------------------------------------------------------
    def corpus(self) -> list[Case]:
        if self._corpus is None:
            self._corpus = _load(self.corpus_paths, "--stress-corpus") if self.corpus_paths else []
        return self._corpus

    def control(self) -> list[Case]:
        if self._control is None:
            if self.control_paths is None:
                from stress.corpus.generate import case_from_fields

                self._control = [
                    case_from_fields(c, source="<built-in control>") for c in _BUILTIN_CONTROL
                ]
            else:
                self._control = (
                    _load(self.control_paths, "--stress-control") if self.control_paths else []
                )
        return self._control

    def lookup(self, case_id: str, where: str) -> Case:
        for case in [*self.corpus(), *self.control()]:
            if case.id == case_id:
                return case
        known = ", ".join(c.id for c in self.corpus()) or "(the corpus is empty)"
        raise pytest.UsageError(
            f"{where}: stress_case({case_id!r}): no such case in the corpus "
            f"({', '.join(map(str, self.corpus_paths)) or 'none given: --stress-corpus'}); "
            f"known ids: {known}"
        )

    # -- device binding --------------------------------------------------------------------
    def bind(self) -> StressRunner:
        """Load the backend (once) and bind this process's device; returns the runner."""
        if self.runner is not None:
            return self.runner
        from stress.baseline.shared import BaselineStore
        from stress.baseline.store import backend_tag
        from stress.errors import ConfigError
        from stress.pytest.runner import StressRunner
        from stress.report_sections import Fingerprint

        try:
            if self.isolate:
                from stress.engine.run.session import Session

                info = Session(self.run_config, [], backend=self.backend).backend_info()
                fingerprint, count = info.fingerprint, int(info.info["device_count"])
            else:
                from stress import acl
                from stress.engine.replay.baseline import backend_fingerprint

                rt = acl.runtime(self.backend)
                fingerprint, count = backend_fingerprint(rt), rt.device_count
        except ConfigError as exc:
            why = f"stress: cannot load the backend: {exc}"
            raise pytest.fail.Exception(why, pytrace=False) from None
        if count < 1:
            pytest.fail("stress: the backend reports no devices", pytrace=False)
        device = (self.device_base + self.worker_index) % count
        kind = Fingerprint.from_json(fingerprint).family("cann")
        store = BaselineStore(self.baseline_path(backend_tag(fingerprint)))
        runner = StressRunner(
            backend=self.backend,
            device=device,
            worker=self.worker,
            out_root=self.out_root / self.worker,
            baseline_store=store,
            config=self.run_config.with_(seed=self.seed, device=device),
            isolate=self.isolate,
            shrink_budget=self.shrink,
            session=self.session,
        )
        runner._fingerprint = fingerprint
        self.runner = runner
        self.binding = {
            "worker": self.worker,
            "device": device,
            "device_count": count,
            "backend": kind,
        }
        return runner

    def baseline_path(self, tag: str) -> Path:
        """``pytest.<backend tag>.json`` (``sim``, ``cann``, ``sim-<faults>``: a fault may show
        in serial replay too, so each fault set keeps its own file)."""
        if self.baseline_dir is not None:
            root = self.baseline_dir
        elif getattr(self.config, "cache", None) is not None:
            root = Path(self.config.cache.mkdir("stress-baselines"))
        else:
            root = self.out_root / "baselines"
        return root / f"pytest.{tag}.json"


STATE = pytest.StashKey[State]()


def state(config: pytest.Config) -> State:
    return config.stash[STATE]


def _load(paths: Sequence[Path], option: str) -> list[Case]:
    from stress.corpus.parse import load_corpus
    from stress.errors import ConfigError

    try:
        return load_corpus(paths)
    except ConfigError as exc:
        raise pytest.UsageError(f"{option}: {exc}") from None


def _expand(paths: Sequence[str | Path], base: Path, option: str) -> list[Path]:
    """Files as given; a directory stands for its *.toml files (sorted)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw).expanduser()
        p = p if p.is_absolute() else base / p
        if p.is_dir():
            found = sorted(p.glob("*.toml"))
            if not found:
                raise pytest.UsageError(f"{option} {raw}: no *.toml corpus files in {p}")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise pytest.UsageError(f"{option} {raw}: no such file or directory ({p})")
    return out


def _worker(config: pytest.Config) -> tuple[str, int, bool]:
    """(worker id, index, is the controller) from xdist's workerinput.

    Not from ``PYTEST_XDIST_WORKER``: a session started inside an xdist worker (pytester, or a
    test that runs pytest in-process) inherits that variable but is a controller of its own.
    """
    workerinput = getattr(config, "workerinput", None)
    if not workerinput:
        return "main", 0, True
    wid = workerinput["workerid"]
    m = re.search(r"(\d+)$", wid)
    return wid, int(m.group(1)) if m else 0, False


def _case_paths(
    config: pytest.Config, invocation: Path, rootdir: Path, ini_base: Path
) -> tuple[list[Path], list[Path] | None, str]:
    """Corpus and control files: the option, else the ini value, else ``<rootdir>/corpus``,
    else (no such folder) the shipped corpora as ``run`` uses them (``None`` for the control:
    the built-in aclnnAdd set); and the note saying the corpus is the shipped one."""
    opt = config.option
    # corpus: the option, else the ini value, else <rootdir>/corpus/*.toml (lazy, not checked)
    control_opt = opt.stress_control
    control_paths: list[Path] | None
    if control_opt is not None and control_opt.strip().lower() == "none":
        control_paths = []
    elif control_opt is not None:
        control_paths = _expand([control_opt], invocation, "--stress-control")
    elif config.getini("stress_control"):
        control_paths = _expand(config.getini("stress_control"), ini_base, "stress_control (ini)")
    elif (rootdir / "corpus" / "control.toml").is_file():
        control_paths = [rootdir / "corpus" / "control.toml"]
    else:
        control_paths = None
    explicit, note = bool(opt.stress_corpus), ""
    if explicit:
        corpus_paths = _expand(opt.stress_corpus, invocation, "--stress-corpus")
    elif config.getini("stress_corpus"):
        corpus_paths = _expand(config.getini("stress_corpus"), ini_base, "stress_corpus (ini)")
    elif (rootdir / "corpus").is_dir():
        corpus_paths = sorted((rootdir / "corpus").glob("*.toml"))
    else:
        from stress.shipped import shipped_corpus_files, shipped_dir

        corpus_paths = shipped_corpus_files()
        if corpus_paths:
            note = f"the shipped corpora from {shipped_dir()} (no corpus/ folder in {rootdir})"
    skip = {p.resolve() for p in (control_paths or [])}
    corpus_paths = [p for p in corpus_paths if p.resolve() not in skip]
    return corpus_paths, control_paths, note


def _ini_max_case_bytes(config: pytest.Config, run_config: RunConfig) -> RunConfig:
    """``stress_max_case_bytes`` from the ini file when ``--stress-max-case-bytes`` is not given."""
    text = config.getini("stress_max_case_bytes")
    if run_config.max_case_bytes is not None or not text:
        return run_config
    from stress.option_values import parse_bytes

    try:
        return replace(run_config, max_case_bytes=parse_bytes(text))
    except ValueError as exc:
        raise pytest.UsageError(f"ini stress_max_case_bytes: {exc}") from None


def _run_config(config: pytest.Config) -> RunConfig:
    """The session's RunConfig from the ``--stress-*`` options and the ini file."""
    from stress.errors import ConfigError

    try:
        run_config = RunConfig.from_pytest(config.option)
    except ConfigError as exc:
        raise pytest.UsageError(str(exc).replace("--", "--stress-", 1)) from None
    return _ini_max_case_bytes(config, run_config)


def _check_numbers(opt: Any) -> None:
    if opt.stress_device < 0:
        raise pytest.UsageError(f"--stress-device must be >= 0, got {opt.stress_device}")
    if opt.stress_shrink < 0:
        raise pytest.UsageError(f"--stress-shrink must be >= 0 seconds, got {opt.stress_shrink}")
    if opt.stress_seed is not None and opt.stress_seed < 0:
        raise pytest.UsageError(f"--stress-seed must be >= 0, got {opt.stress_seed}")


def _backend(opt: Any) -> str | None:
    """``--stress-backend``, else ``$STRESS_BACKEND``, lower-cased (None: neither)."""
    backend = opt.stress_backend or os.environ.get("STRESS_BACKEND") or None
    if backend is not None and backend.strip().lower() not in BACKENDS:
        raise pytest.UsageError(
            f"STRESS_BACKEND={backend!r} is not a backend: use one of {', '.join(BACKENDS)} "
            "(or --stress-backend)"
        )
    return backend.strip().lower() if backend else None


def _out_root(opt: Any, workerinput: dict[str, Any], invocation: Path) -> Path:
    """The session's output folder: the controller's (a worker), ``--stress-out``, else a new
    ``stress-out/pytest-<time>-<pid>`` under the invocation folder."""
    if workerinput.get("stress_out"):
        return Path(workerinput["stress_out"])
    if opt.stress_out:
        out_root = Path(opt.stress_out)
        return out_root if out_root.is_absolute() else invocation / out_root
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    base = invocation / "stress-out" / f"pytest-{stamp}-{os.getpid()}"
    out_root, n = base, 1
    while out_root.exists():  # another session of this process, this second
        n += 1
        out_root = base.with_name(f"{base.name}-{n}")
    return out_root


def _baseline_dir(opt: Any, workerinput: dict[str, Any], invocation: Path) -> Path | None:
    baseline_dir = workerinput.get("stress_baseline_dir") or opt.stress_baseline_dir
    if baseline_dir is None:
        return None
    baseline_dir = Path(baseline_dir)
    return baseline_dir if baseline_dir.is_absolute() else invocation / baseline_dir


def build_state(config: pytest.Config) -> tuple[State, bool, str | None]:
    """The session's state from its options (a bad option is a ``pytest.UsageError``), whether
    the corpus was given explicitly, and the control option as given."""
    opt = config.option
    run_config = _run_config(config)
    _check_numbers(opt)
    backend = _backend(opt)
    invocation = Path(config.invocation_params.dir)
    rootdir = Path(config.rootpath)
    ini_base = Path(config.inipath).parent if config.inipath else rootdir
    corpus_paths, control_paths, corpus_note = _case_paths(config, invocation, rootdir, ini_base)
    wid, index, controller = _worker(config)
    workerinput = getattr(config, "workerinput", None) or {}
    seed = workerinput.get("stress_seed", opt.stress_seed)
    out_root = _out_root(opt, workerinput, invocation)
    session = workerinput.get("stress_session") or f"{os.getpid()}-{random.getrandbits(32):08x}"
    state = State(
        config=config,
        backend=backend,
        run_config=run_config,
        seed=random.SystemRandom().randrange(2**31) if seed is None else int(seed),
        device_base=opt.stress_device,
        isolate=opt.stress_isolate,
        shrink=opt.stress_shrink,
        corpus_paths=corpus_paths,
        control_paths=control_paths,
        out_root=out_root,
        baseline_dir=_baseline_dir(opt, workerinput, invocation),
        session=session,
        worker=wid,
        worker_index=index,
        controller=controller,
        corpus_note=corpus_note,
    )
    return state, bool(opt.stress_corpus), opt.stress_control


def marker_cases(node: Any, state: State, where: str) -> list[Case]:
    from stress.corpus.generate import case_from_fields
    from stress.errors import ConfigError

    cases: list[Case] = []
    markers = list(node.iter_markers("stress_case"))
    for mark in reversed(markers):  # module, class, then the function's, top decorator first
        if mark.args and mark.kwargs:
            raise pytest.UsageError(
                f"{where}: stress_case takes corpus ids or one case as keywords, not both "
                f"(got {mark.args!r} and {mark.kwargs!r})"
            )
        for arg in mark.args:
            if not isinstance(arg, str):
                raise pytest.UsageError(f"{where}: stress_case({arg!r}): expected a case id")
            cases.append(state.lookup(arg, where))
        if mark.kwargs:
            if "op" not in mark.kwargs:
                raise pytest.UsageError(
                    f"{where}: stress_case(...): 'op' is required (e.g. op='add')"
                )
            try:
                cases.append(case_from_fields(mark.kwargs, source=where))
            except ConfigError as exc:
                raise pytest.UsageError(f"stress_case marker: {exc}") from None
    unique: dict[str, Case] = {}
    for c in cases:
        if c.id in unique and unique[c.id].key != c.key:
            raise pytest.UsageError(f"{where}: two different stress_case markers use id {c.id!r}")
        unique[c.id] = c
    return list(unique.values())
