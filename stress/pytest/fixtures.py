"""The plugin's fixtures: the runtime and device of this process, the corpus, the test's cases,
and ``stress_run`` (:class:`StressRun`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from stress.pytest.state import marker_cases
from stress.pytest.state import state as _state
from stress.vocabulary import Verdict

if TYPE_CHECKING:
    from stress.corpus.parse import Case
    from stress.pytest.result import StressResult
    from stress.pytest.runner import StressRunner

__all__ = [
    "StressRun",
    "stress_case_item",
    "stress_cases",
    "stress_control",
    "stress_corpus",
    "stress_device",
    "stress_run",
    "stress_runtime",
]


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
    return marker_cases(request.node, state, request.node.nodeid) or list(state.corpus())


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
            return marker_cases(node, self._state, node.nodeid) or list(self._state.corpus())
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
                    raise pytest.fail.Exception(f"stress_run: {exc}", pytrace=False) from None
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
        from stress.pytest.result import StressFailure

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
            # from None: the failure is this one line, without the ConfigError chained above it
            raise pytest.fail.Exception(f"stress_run: {exc}", pytrace=False) from None
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
                c.id == victim and c.verdict != Verdict.PASS for p in result.phases for c in p.cases
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
