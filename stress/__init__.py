"""aclnn-stress: stress-test CANN aclnn operators for concurrency bugs, unwritten outputs and
wrong gradients, on a real NPU or on the bundled CANN simulator.

The public API (what ``examples/`` and user code import; everything else may move):

* :func:`run_corpus` — the whole stress protocol over corpus files; returns ``report.json``.
* :func:`record_baseline` — record a corpus's baseline file.
* :func:`call_once` — one call of a case on a device: its inputs and outputs.
* :func:`compare` / :func:`check_reference` — outputs against expected arrays or the case's
  numpy reference, within the operator's tolerances.
* ``stress.strategies`` — hypothesis strategies of valid and invalid cases.
* :class:`RunConfig`, :class:`Case`, :func:`load_corpus`, the verdict vocabulary
  (:class:`Verdict`, :class:`Status`, :class:`Diagnosis`, :func:`is_failure`) and
  :class:`ConfigError`; :class:`AclError` (an ACL/aclnn status: ``code``, ``api``, ``message``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stress.config import RunConfig
from stress.errors import ConfigError
from stress.records import CallRecord, RunReport
from stress.vocabulary import VERSION as __version__
from stress.vocabulary import Diagnosis, Status, Verdict, is_failure

if TYPE_CHECKING:
    import numpy as np

    from stress import acl
    from stress.corpus import Case, load_corpus

__all__ = [
    "AclError",
    "Call",
    "CallRecord",
    "Case",
    "ConfigError",
    "Diagnosis",
    "RunConfig",
    "RunReport",
    "Status",
    "Verdict",
    "__version__",
    "call_once",
    "check_reference",
    "compare",
    "is_failure",
    "load_corpus",
    "record_baseline",
    "run_corpus",
    "strategies",
]


def __getattr__(name: str) -> Any:
    if name == "strategies":  # imported on demand: it imports hypothesis
        from stress.corpus import strategies

        return strategies
    if name in ("Case", "load_corpus"):  # on demand: the corpus parser needs numpy and the
        import stress.corpus  # operator catalogue, which `aclnn-stress --version` does not

        return getattr(stress.corpus, name)
    if name == "AclError":  # imported on demand: the binding is not loaded by `import stress`
        from stress.acl import AclError

        return AclError
    raise AttributeError(f"module 'stress' has no attribute {name!r}")


def run_corpus(
    corpus: Sequence[str | Path],
    *,
    control: Sequence[str | Path] = (),
    config: RunConfig | None = None,
    baseline: str | Path | None = None,
    out: str | Path | None = None,
    backend: str | None = None,
    record_missing: bool = True,
    isolate: bool = True,
) -> RunReport:
    """Run the protocol over ``corpus`` (``control`` for the control phase, else no control
    phase); returns the report (a :class:`~stress.records.RunReport`; its ``to_json()`` is what
    ``out/report.json`` holds). The baseline is recorded first when
    missing and ``record_missing``."""
    from dataclasses import replace

    from stress.engine.run.session import Session

    config = config or RunConfig()
    if not control:
        config = replace(config, phases=tuple(p for p in config.phases if p != "control"))
    session = Session(
        config.validate(),
        [str(p) for p in corpus],
        [str(p) for p in control],
        baseline_path=Path(baseline) if baseline else None,
        out_dir=Path(out) if out else None,
        backend=backend,
        isolate=isolate,
        record_missing=record_missing,
    )
    return session.run()


def record_baseline(
    corpus: Sequence[str | Path],
    path: str | Path,
    *,
    config: RunConfig | None = None,
    backend: str | None = None,
) -> Path:
    """Record the baseline of ``corpus`` (every case K times serially) into ``path``."""
    from stress.engine.run.session import Session

    session = Session((config or RunConfig()).validate(), [str(p) for p in corpus], backend=backend)
    return session.record_baseline(Path(path))


@dataclass(frozen=True)
class Call:
    """What :func:`call_once` gives: the host inputs and the downloaded outputs."""

    case: Case
    inputs: Mapping[str, np.ndarray]
    outputs: Mapping[str, np.ndarray]


def call_once(case: Case, device: acl.Device | None = None, *, backend: str | None = None) -> Call:
    """One call of ``case`` on ``device`` (default: device 0 of ``backend``'s runtime), on a
    fresh stream of its default context. An error status raises :class:`stress.acl.AclError`."""
    from stress import acl
    from stress.engine.call.inputs import generate_inputs
    from stress.engine.call.prepared import run_once

    device = device or acl.runtime(backend).device(0)
    ctx = device.default_context
    ctx.bind()
    stream = ctx.create_stream()
    try:
        inputs = generate_inputs(case, ctx, stream)
        outputs = run_once(ctx, stream, case.spec, case.params, inputs)
    finally:
        stream.close()
    return Call(case, inputs, outputs)


def compare(
    actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float
) -> tuple[bool, float]:
    """``|a - e| <= atol * max|e| + rtol * |e|`` elementwise: (ok, worst error / allowance)."""
    from stress.grading.judge import close_enough

    return close_enough(actual, expected, rtol, atol)


def check_reference(call: Call) -> dict[str, tuple[bool, float]]:
    """Each output of ``call`` against the case's numpy reference, within its tolerances."""
    import numpy as np

    case = call.case
    expected = case.spec.reference(case.params, call.inputs)
    return {
        name: compare(actual, np.asarray(expected[name]), *case.spec.tolerances(case.params, name))
        for name, actual in call.outputs.items()
        if name in expected
    }
