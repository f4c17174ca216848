"""pytest plugin: stress tests of CANN aclnn operators as ordinary test items.

Registered through the ``pytest11`` entry point ``stress`` (installed with the package; also
``pytest -p stress``). Hooks live here; what they run is in :mod:`stress.pytest.runner`.

Options (group ``stress``): ``--stress-backend``, ``--stress-threads``, ``--stress-duration``,
``--stress-corpus``, ``--stress-control``, ``--stress-out``, ``--stress-seed``,
``--stress-device``, ``--stress-isolate``, ``--stress-baseline-dir``, ``--stress-shrink``.

Markers: ``stress`` (a concurrency stress test; select with ``-m stress``), ``npu`` (needs real
hardware: skipped on the simulator), ``stress_case(...)`` (cases for the test: corpus ids, or one
case as keywords).

Fixtures: ``stress_runtime`` / ``stress_device`` (session: the runtime, and the device this
process is bound to), ``stress_corpus`` / ``stress_control`` (session: the loaded cases),
``stress_cases`` (the test's cases: its ``stress_case`` markers, else the corpus),
``stress_case_item`` (one test item per case, id = case id), ``stress_run`` (run protocol
phases, get a :class:`~stress.pytest.runner.StressResult`; fails the test with a readable message
unless every phase passed).

Processes. CANN state is process-wide, so every test of a process shares one runtime. By
default ``stress_run`` runs the phases *in this process* (fast: no interpreter start, inputs and
the loaded libraries are reused); an operator that crashes or deadlocks then takes the pytest
process (or xdist worker) with it. ``--stress-isolate`` (or ``stress_run(..., isolate=True)``)
runs each phase in a supervised child instead, so a crash or hang becomes a ``CRASH``/``HANG``
verdict and the session continues, at ~0.3 s per phase.

pytest-xdist. With ``-n K`` worker ``gwI`` binds device ``(--stress-device + I) mod device
count``; the binding is printed in the header (planned) and the terminal summary (actual), and
every report carries ``stress_worker``/``stress_device`` user properties (JUnit ``<property>``).
Each worker writes its runs under ``<--stress-out>/<worker>/``; the controller merges them into
``<--stress-out>/summary.json`` and ``summary.md``. Baselines are shared: one file per backend,
recorded on first use and merged under a file lock with an atomic rename.
"""

from __future__ import annotations

import datetime as _dt
import glob
import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from stress.config import DEFAULT_DURATION, DEFAULTS, PYTEST_DURATION, RunConfig
from stress.model import Diagnosis, Verdict

if TYPE_CHECKING:
    from stress.corpus.parse import Case
    from stress.pytest.runner import StressResult, StressRunner

__all__ = ["StressRun"]

BACKENDS = ("auto", "sim", "cann")
STRESS_FIXTURES = frozenset(
    {"stress_runtime", "stress_device", "stress_run", "stress_case_item", "stress_cases"}
)

MARKERS = (
    "stress: a concurrency stress test of an operator (select with -m stress; runs for "
    "--stress-duration seconds per concurrent phase, short by default)",
    "npu: needs a real Ascend NPU; skipped with a reason when the stress backend is the "
    "CANN simulator",
    "stress_case(*ids, **case): cases for the test's stress_cases/stress_case_item/stress_run: "
    "corpus case ids, e.g. stress_case('base-a'), or one case as keywords, e.g. "
    "stress_case(op='add', shape=[2, 3], seed=1) (also id=, expect={'status': 161002})",
)

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
class _State:
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
    summary: dict[str, Any] | None = None

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
        from stress.baseline.store import backend_tag
        from stress.errors import ConfigError
        from stress.pytest.runner import BaselineStore, StressRunner

        try:
            if self.isolate:
                from stress.engine.session import Session

                info = Session(self.run_config, [], backend=self.backend).backend_info()
                fingerprint, count = info["fingerprint"], int(info["info"]["device_count"])
            else:
                from stress import acl
                from stress.baseline.record import backend_fingerprint

                rt = acl.runtime(self.backend)
                fingerprint, count = backend_fingerprint(rt), rt.device_count
        except ConfigError as exc:
            pytest.fail(f"stress: cannot load the backend: {exc}", pytrace=False)
        if count < 1:
            pytest.fail("stress: the backend reports no devices", pytrace=False)
        device = (self.device_base + self.worker_index) % count
        kind = "sim" if fingerprint.get("simulator") else fingerprint.get("kind", "cann")
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


_STATE = pytest.StashKey[_State]()


def _state(config: pytest.Config) -> _State:
    return config.stash[_STATE]


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


# -- options and markers ---------------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("stress", "aclnn-stress: stress-test CANN aclnn operators")
    g.addoption(
        "--stress-backend",
        choices=BACKENDS,
        default=None,
        help="CANN backend: sim (the bundled simulator), cann (a real install) or auto (real "
        "CANN when an NPU is present); default $STRESS_BACKEND, else auto",
    )
    g.addoption(
        "--stress-threads",
        type=int,
        default=None,
        metavar="T",
        help=f"worker threads of the concurrent phases (default {DEFAULTS['threads']})",
    )
    g.addoption(
        "--stress-duration",
        type=float,
        default=None,
        metavar="S",
        help=f"seconds per concurrent phase (default {PYTEST_DURATION:g}: a short run; use e.g. "
        f"{DEFAULT_DURATION:g}, the CLI's default, for a real stress run)",
    )
    g.addoption(
        "--stress-call-timeout",
        type=float,
        default=None,
        metavar="S",
        help=f"a call still running after S seconds is a HANG (default "
        f"{DEFAULTS['call_timeout']:g})",
    )
    g.addoption(
        "--stress-corpus",
        action="append",
        default=[],
        metavar="PATH",
        help="corpus TOML file or directory of them (repeatable); default: ini stress_corpus, "
        "else <rootdir>/corpus/*.toml without control.toml",
    )
    g.addoption(
        "--stress-control",
        default=None,
        metavar="PATH",
        help="control corpus (aclnnAdd) for the control phase, or 'none'; default: ini "
        "stress_control, else <rootdir>/corpus/control.toml, else a built-in aclnnAdd set",
    )
    g.addoption(
        "--stress-out",
        default=None,
        metavar="DIR",
        help="where runs write results (per worker: DIR/<worker>/...) and the merged "
        "summary.json/summary.md; default stress-out/pytest-<time>",
    )
    g.addoption(
        "--stress-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed of every random choice of the runs (default: random, shown in the header)",
    )
    g.addoption(
        "--stress-device",
        type=int,
        default=0,
        metavar="D",
        help="first device: xdist worker gwI uses device (D + I) mod device count (default 0)",
    )
    g.addoption(
        "--stress-isolate",
        action="store_true",
        default=False,
        help="run each phase in a supervised child process (a crash or hang becomes a verdict "
        "instead of ending pytest; slower); default: in this process",
    )
    g.addoption(
        "--stress-baseline-dir",
        default=None,
        metavar="DIR",
        help="where baselines are recorded and reused (default: the pytest cache, "
        ".pytest_cache/d/stress-baselines)",
    )
    g.addoption(
        "--stress-shrink",
        type=float,
        default=0.0,
        metavar="S",
        help="seconds to shrink a failing mix to a minimal reproducer (default 0: off)",
    )
    parser.addini(
        "stress_corpus", "default corpus files/directories for the stress plugin", "paths"
    )
    parser.addini("stress_control", "default control corpus for the stress plugin", "paths")


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


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    opt = config.option
    from stress.errors import ConfigError

    try:
        run_config = RunConfig.from_pytest(opt)
    except ConfigError as exc:
        raise pytest.UsageError(str(exc).replace("--", "--stress-", 1)) from None
    if opt.stress_device < 0:
        raise pytest.UsageError(f"--stress-device must be >= 0, got {opt.stress_device}")
    if opt.stress_shrink < 0:
        raise pytest.UsageError(f"--stress-shrink must be >= 0 seconds, got {opt.stress_shrink}")
    if opt.stress_seed is not None and opt.stress_seed < 0:
        raise pytest.UsageError(f"--stress-seed must be >= 0, got {opt.stress_seed}")
    backend = opt.stress_backend or os.environ.get("STRESS_BACKEND") or None
    if backend is not None and backend.strip().lower() not in BACKENDS:
        raise pytest.UsageError(
            f"STRESS_BACKEND={backend!r} is not a backend: use one of {', '.join(BACKENDS)} "
            "(or --stress-backend)"
        )
    invocation = Path(config.invocation_params.dir)
    rootdir = Path(config.rootpath)
    ini_base = Path(config.inipath).parent if config.inipath else rootdir

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
    explicit = bool(opt.stress_corpus)
    if explicit:
        corpus_paths = _expand(opt.stress_corpus, invocation, "--stress-corpus")
    elif config.getini("stress_corpus"):
        corpus_paths = _expand(config.getini("stress_corpus"), ini_base, "stress_corpus (ini)")
    else:
        corpus_paths = sorted((rootdir / "corpus").glob("*.toml"))
    skip = {p.resolve() for p in (control_paths or [])}
    corpus_paths = [p for p in corpus_paths if p.resolve() not in skip]

    wid, index, controller = _worker(config)
    workerinput = getattr(config, "workerinput", None) or {}
    seed = workerinput.get("stress_seed", opt.stress_seed)
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    if workerinput.get("stress_out"):
        out_root = Path(workerinput["stress_out"])
    elif opt.stress_out:
        out_root = Path(opt.stress_out)
        out_root = out_root if out_root.is_absolute() else invocation / out_root
    else:
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        base = invocation / "stress-out" / f"pytest-{stamp}-{os.getpid()}"
        out_root, n = base, 1
        while out_root.exists():  # another session of this process, this second
            n += 1
            out_root = base.with_name(f"{base.name}-{n}")
    session = workerinput.get("stress_session") or f"{os.getpid()}-{random.getrandbits(32):08x}"
    baseline_dir = workerinput.get("stress_baseline_dir") or opt.stress_baseline_dir
    if baseline_dir is not None:
        baseline_dir = Path(baseline_dir)
        baseline_dir = baseline_dir if baseline_dir.is_absolute() else invocation / baseline_dir
    state = _State(
        config=config,
        backend=backend.strip().lower() if backend else None,
        run_config=run_config,
        seed=int(seed),
        device_base=opt.stress_device,
        isolate=opt.stress_isolate,
        shrink=opt.stress_shrink,
        corpus_paths=corpus_paths,
        control_paths=control_paths,
        out_root=out_root,
        baseline_dir=baseline_dir,
        session=session,
        worker=wid,
        worker_index=index,
        controller=controller,
    )
    config.stash[_STATE] = state
    if explicit:
        state.corpus()  # a bad --stress-corpus is a usage error now, not at the first test
    if control_opt is not None:
        state.control()
    if controller and hasattr(config.hook, "pytest_configure_node"):
        config.pluginmanager.register(_XdistController(state), "stress-xdist-controller")


class _XdistController:
    """Controller-side xdist hooks: hand the workers the session's out dir and seed, and
    collect the device each worker bound."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["stress_out"] = str(self.state.out_root)
        node.workerinput["stress_seed"] = self.state.seed
        node.workerinput["stress_session"] = self.state.session
        if self.state.baseline_dir is not None:
            node.workerinput["stress_baseline_dir"] = str(self.state.baseline_dir)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        binding = output.get("stress_binding")
        if binding:
            self.state.bindings[binding["worker"]] = binding


def _sim_device_count() -> int | None:
    raw = os.environ.get("ACLSIM_DEVICES", "8")
    try:
        return int(raw) if int(raw) > 0 else None
    except ValueError:
        return None


def _resolved_kind(backend: str | None) -> str:
    """``sim`` or ``cann`` without loading anything (None: not decidable cheaply)."""
    from stress.acl.runtime import loaded_runtime

    rt = loaded_runtime()
    if rt is not None:
        return "sim" if rt.is_simulator else "cann"
    kind = backend or "auto"
    if kind == "auto" and not glob.glob("/dev/davinci[0-9]*"):
        return "sim"
    if kind == "auto":
        from stress.acl.backend import discover

        try:
            return discover("auto").kind
        except Exception:
            return "sim"
    return kind


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = _state(config)
    backend = state.backend or "auto"
    cfg = state.run_config
    lines = [
        f"stress: backend {backend}, {cfg.threads} threads, {cfg.duration:g} s per "
        f"concurrent phase, seed {state.seed} (replay: --stress-seed {state.seed}), "
        f"{'isolated child per phase' if state.isolate else 'phases in-process'}",
    ]
    corpus = ", ".join(_rel(p, config) for p in state.corpus_paths) or "none"
    control = (
        "built-in aclnnAdd set"
        if state.control_paths is None
        else (", ".join(_rel(p, config) for p in state.control_paths) or "none")
    )
    lines.append(
        f"stress: corpus {corpus}; control {control}; results {_rel(state.out_root, config)}"
    )
    workers = getattr(config.option, "numprocesses", None)
    if isinstance(workers, int) and workers > 0 and getattr(config.option, "dist", "no") != "no":
        count = _sim_device_count() if _resolved_kind(state.backend) == "sim" else None
        if count:
            plan = " ".join(
                f"gw{i}->{(state.device_base + i) % count}" for i in range(min(workers, 16))
            )
            lines.append(
                f"stress: xdist -n {workers}: worker gwI binds device ({state.device_base} + I) "
                f"mod {count}: {plan}"
            )
        else:
            lines.append(
                f"stress: xdist -n {workers}: worker gwI binds device ({state.device_base} + I) "
                "mod the device count"
            )
    else:
        lines.append(f"stress: device {state.device_base} (no xdist)")
    return lines


def _rel(path: Path, config: pytest.Config) -> str:
    try:
        return str(path.relative_to(config.invocation_params.dir))
    except ValueError:
        return str(path)


# -- collection: cases -----------------------------------------------------------------------
def _marker_cases(node: Any, state: _State, where: str) -> list[Case]:
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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "stress_case_item" not in metafunc.fixturenames:
        return
    state = _state(metafunc.config)
    where = metafunc.definition.nodeid
    cases = _marker_cases(metafunc.definition, state, where) or state.corpus()
    metafunc.parametrize("stress_case_item", cases, ids=[c.id for c in cases])


# -- running ---------------------------------------------------------------------------------
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    npu = [item for item in items if item.get_closest_marker("npu") is not None]
    if not npu or _resolved_kind(_state(config).backend) != "sim":
        return
    skip = pytest.mark.skip(
        reason="npu: needs a real Ascend NPU, but the stress backend is the CANN simulator "
        "(run on a machine with /dev/davinci* and CANN, with --stress-backend cann or auto)"
    )
    for item in npu:
        item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    state = item.config.stash.get(_STATE, None)
    if (
        state is not None
        and state.binding is not None
        and call.when == "call"
        and (STRESS_FIXTURES & set(getattr(item, "fixturenames", ())))
    ):
        props = dict(item.user_properties)
        for key, value in (
            ("stress_worker", state.binding["worker"]),
            ("stress_device", state.binding["device"]),
            ("stress_backend", state.binding["backend"]),
        ):
            if key not in props:
                item.user_properties.append((key, value))
    return (yield)


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        if state.binding is not None:
            workeroutput["stress_binding"] = state.binding
        return
    if state.controller:
        bindings = dict(state.bindings)
        if state.binding is not None:
            bindings.setdefault(state.worker, state.binding)
        if not bindings and not state.out_root.is_dir():
            return  # no stress fixture was used: nothing to merge (and nothing imported)
        from stress.report.pytest_summary import merge_runs

        try:
            state.summary = merge_runs(state.out_root, bindings, state.session)
        except OSError as exc:  # never fail the session over the summary
            state.summary = {"error": f"cannot write the stress summary: {exc}"}


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None or not state.controller or not state.summary:
        return
    summary = state.summary
    tr = terminalreporter
    tr.section("aclnn-stress")
    if "error" in summary:
        tr.write_line(summary["error"])
        return
    runs = summary["runs"]
    backends = ", ".join(summary["backends"]) or "?"
    tr.write_line(
        f"{len(runs)} stress runs (backend {backends}, seed {state.seed}): "
        f"{summary['clean']} clean, {summary['findings']} with findings"
    )
    workers = summary["workers"]
    if workers:
        tr.write_line(
            f"devices in use: {len(set(workers.values()))} ("
            + ", ".join(f"{w} -> device {d}" for w, d in workers.items())
            + ")"
        )
    for r in runs:
        if r.get("diagnosis") != Diagnosis.CLEAN:
            tr.write_line(
                f"FINDING {r.get('nodeid')} [{r['worker']}, device {r['device']}]: "
                f"{r['diagnosis']} — {r.get('explanation', '')}"
            )
    if runs:
        tr.write_line(f"summary: {_rel(state.out_root / 'summary.md', config)}")


# -- fixtures --------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def stress_runtime(pytestconfig: pytest.Config):
    """The process's CANN runtime (``stress.acl.Runtime``) for ``--stress-backend``, with this
    process's device set (xdist worker gwI: device (--stress-device + I) mod device count)."""
    from stress import acl

    state = _state(pytestconfig)
    state.bind()
    rt = acl.runtime(state.backend)
    rt.device(state.binding["device"])
    return rt


@pytest.fixture(scope="session")
def stress_device(stress_runtime, pytestconfig: pytest.Config):
    """The ``stress.acl.Device`` this process is bound to (its default context bound on the
    calling thread; bind it again in threads you start: ``device.default_context.bind()``)."""
    return stress_runtime.device(_state(pytestconfig).binding["device"])


@pytest.fixture(scope="session")
def stress_corpus(pytestconfig: pytest.Config) -> list[Case]:
    """The corpus cases (``--stress-corpus`` / ini ``stress_corpus`` / ``corpus/*.toml``)."""
    return list(_state(pytestconfig).corpus())


@pytest.fixture(scope="session")
def stress_control(pytestconfig: pytest.Config) -> list[Case]:
    """The control cases of the control phase (empty with ``--stress-control none``)."""
    return list(_state(pytestconfig).control())


@pytest.fixture
def stress_cases(request: pytest.FixtureRequest) -> list[Case]:
    """The test's cases: its ``stress_case`` markers, else the whole corpus."""
    state = _state(request.config)
    return _marker_cases(request.node, state, request.node.nodeid) or list(state.corpus())


@pytest.fixture
def stress_case_item() -> Case:
    """One case per test item (parametrised at collection: ids are the case ids): the test's
    ``stress_case`` markers, else every corpus case."""
    raise pytest.UsageError("stress_case_item is parametrised by the stress plugin")


class StressRun:
    """The ``stress_run`` fixture: ``stress_run(cases=None, *, phases=None, ...)``.

    ``cases``: Case objects, corpus ids, or dicts (``{"op": "add", "shape": [2, 3]}``); default
    the test's ``stress_case`` markers, else the corpus. ``phases``: names or a comma string
    (default: every phase; ``control`` only with control cases). ``control``: None (the
    session's control cases), False (none) or cases. Other keywords: ``threads``, ``duration``,
    ``iterations``, ``seed``, ``stream`` (shared | per-thread | both), ``context``, ``repeats``,
    ``isolate``. With ``check=True`` (default) a run that is not clean fails the test with the
    run's message (phase, case, verdict, digests, results, replay command); otherwise inspect
    the returned :class:`~stress.pytest.runner.StressResult`.
    """

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request
        self._state = _state(request.config)
        self.results: list[StressResult] = []

    @property
    def runner(self) -> StressRunner:
        return self._state.bind()

    @property
    def device(self) -> int:
        self._state.bind()
        return self._state.binding["device"]

    def resolve(self, cases: Any) -> list[Case]:
        from stress.corpus.generate import case_from_fields
        from stress.corpus.parse import Case
        from stress.errors import ConfigError

        node = self._request.node
        if cases is None:
            return _marker_cases(node, self._state, node.nodeid) or list(self._state.corpus())
        if isinstance(cases, Case | str | dict):
            cases = [cases]
        out: list[Case] = []
        for c in cases:
            if isinstance(c, Case):
                out.append(c)
            elif isinstance(c, str):
                out.append(self._state.lookup(c, node.nodeid))
            elif isinstance(c, dict):
                try:
                    out.append(case_from_fields(c, source=node.nodeid))
                except ConfigError as exc:
                    pytest.fail(f"stress_run: {exc}", pytrace=False)
            else:
                pytest.fail(f"stress_run: {c!r} is not a case, a case id or a dict", pytrace=False)
        return out

    def __call__(
        self,
        cases: Any = None,
        *,
        phases: Sequence[str] | str | None = None,
        control: Any = None,
        check: bool = True,
        **options: Any,
    ) -> StressResult:
        __tracebackhide__ = True
        from stress.errors import ConfigError
        from stress.pytest.runner import StressFailure

        chosen = self.resolve(cases)
        if control is None:
            ctl = list(self._state.control())
        elif control is False:
            ctl = []
        else:
            ctl = self.resolve(control)
        node = self._request.node
        try:
            result = self.runner.run(chosen, ctl, nodeid=node.nodeid, phases=phases, **options)
        except ConfigError as exc:
            pytest.fail(f"stress_run: {exc}", pytrace=False)
        self.results.append(result)
        node.user_properties.append(("stress_results", str(result.out_dir)))
        node.user_properties.append(("stress_diagnosis", result.diagnosis))
        node.add_report_section(
            "call",
            f"stress run {len(self.results)}",
            "\n".join(
                [
                    result.message().splitlines()[0],
                    *result.summary_lines(),
                    f"  results: {result.out_dir}",
                ]
            ),
        )
        if check and not result.ok:
            raise StressFailure(result.message())
        return result

    def shrink(
        self,
        cases: Any = None,
        *,
        phase: str = "mixed",
        victim: str | None = None,
        max_examples: int = 30,
        max_trials: int = 60,
        **options: Any,
    ) -> list[Case]:
        """The smallest mix of ``cases`` whose ``phase`` still fails (for ``victim`` when
        given), found with :func:`stress.corpus.strategies.shrink_mix` by re-running the phase."""
        from stress.corpus.strategies import shrink_mix

        chosen = self.resolve(cases)
        keep = [c for c in chosen if c.id == victim]
        others = [c for c in chosen if c.id != victim]

        def fails(mix: list[Case]) -> bool:
            if not mix:
                return False
            result = self.runner.run(
                mix,
                (),
                nodeid=f"{self._request.node.nodeid}::shrink",
                phases=(phase,),
                log=False,
                **options,
            )
            if victim is None:
                return not result.ok
            return any(
                c["id"] == victim and c["verdict"] != Verdict.PASS
                for p in result.phases
                for c in p["cases"]
            )

        return shrink_mix(
            others, fails, keep=keep, max_examples=max_examples, max_trials=max_trials
        )


@pytest.fixture
def stress_run(request: pytest.FixtureRequest) -> StressRun:
    """Run protocol phases over cases on this process's device; see :class:`StressRun`."""
    run = StressRun(request)
    run._state.bind()
    return run
