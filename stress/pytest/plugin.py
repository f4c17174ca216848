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

import glob
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from stress.pytest.fixtures import (  # noqa: F401 - pytest finds the fixtures in this module
    StressRun,
    stress_case_item,
    stress_cases,
    stress_control,
    stress_corpus,
    stress_device,
    stress_run,
    stress_runtime,
)
from stress.pytest.options import add_options
from stress.pytest.state import STATE as _STATE
from stress.pytest.state import State as _State
from stress.pytest.state import build_state, marker_cases
from stress.pytest.state import state as _state

if TYPE_CHECKING:
    pass

__all__ = ["StressRun"]

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


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    state, explicit, control_opt = build_state(config)
    config.stash[_STATE] = state
    if explicit:
        state.corpus()  # a bad --stress-corpus is a usage error now, not at the first test
    if control_opt is not None:
        state.control()
    if state.controller and hasattr(config.hook, "pytest_configure_node"):
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
    corpus += f" ({state.corpus_note})" if state.corpus_note else ""
    control = (
        "built-in aclnnAdd set"
        if state.control_paths is None
        else (", ".join(_rel(p, config) for p in state.control_paths) or "none")
    )
    lines.append(
        f"stress: corpus {corpus}; control {control}; results {_rel(state.out_root, config)}"
    )
    workers = _xdist_workers(config)
    if workers > 0 and getattr(config.option, "dist", "no") != "no":
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
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "stress_case_item" not in metafunc.fixturenames:
        return
    state = _state(metafunc.config)
    where = metafunc.definition.nodeid
    cases = marker_cases(metafunc.definition, state, where) or state.corpus()
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
            state.summary_error = f"cannot write the stress summary: {exc}"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None or not state.controller or not (state.summary or state.summary_error):
        return
    summary = state.summary
    tr = terminalreporter
    tr.section("aclnn-stress")
    if summary is None:
        tr.write_line(state.summary_error)
        return
    runs = summary.runs
    backends = ", ".join(summary.backends) or "?"
    tr.write_line(
        f"{len(runs)} stress runs (backend {backends}, seed {state.seed}): "
        f"{summary.clean} clean, {summary.findings} with findings"
    )
    workers = summary.workers
    if workers:
        tr.write_line(
            f"devices in use: {len(set(workers.values()))} ("
            + ", ".join(f"{w} -> device {d}" for w, d in workers.items())
            + ")"
        )
    for r in runs:
        if not r.clean:
            tr.write_line(
                f"FINDING {r.nodeid} [{r.worker}, device {r.device}]: "
                f"{r.diagnosis} — {r.explanation}"
            )
    if runs:
        tr.write_line(f"summary: {_rel(state.out_root / 'summary.md', config)}")


def _xdist_workers(config: pytest.Config) -> int:
    """Workers xdist will start: ``-n K``, else the gateways of ``--tx`` (``2*popen`` is two,
    ``ssh=host//python=...`` one each)."""
    workers = getattr(config.option, "numprocesses", None)
    if isinstance(workers, int) and workers > 0:
        return workers
    total = 0
    for spec in getattr(config.option, "tx", None) or []:
        count, star, _ = str(spec).partition("*")
        total += int(count) if star and count.isdigit() else 1
    return total
