"""The baseline a run grades against: loaded and checked against the backend and the corpus,
or recorded first when it is missing and ``--record-baseline`` asked for that.

Recording takes the baseline's claim (:func:`stress.engine.rundir.claim_baseline`): a second run
that would record the same file is told in one line (exit 2), and one that waited uses the
baseline the other recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from stress.baseline.record import recording_summary
from stress.baseline.store import Baseline
from stress.engine.rundir import claim_baseline
from stress.errors import ConfigError
from stress.records import RECORDED, RecordedCase

if TYPE_CHECKING:
    from stress.engine.session import Session

__all__ = ["record_missing", "run_baseline"]


def run_baseline(
    session: Session, path: Path, fingerprint: dict[str, Any]
) -> tuple[Baseline, list[str]]:
    """The run's baseline (recorded first with ``--record-baseline`` when missing) and the
    incompatibilities that ``--force`` lets pass."""
    if not path.exists():
        if not session.record_missing:
            raise ConfigError(
                f"{path}: no baseline; record one with `aclnn-stress baseline record` "
                "(or pass --record-baseline)"
            )
        record_missing(session, path)
    baseline = Baseline.load(path)
    warnings = baseline.check_compatible(
        fingerprint,
        # a view variant is graded against its twin's baseline: it has none of its own
        [*(c for c in session.cases if not c.view), *session.control_cases],
        deterministic=session.config.deterministic,
        canary=session.config.canary,
        force=session.force,
    )
    return baseline, warnings


def record_missing(session: Session, path: Path) -> None:
    """Record the missing baseline ``path``, unless another run records it now (one line,
    exit 2) or did while this one waited. ``session.recording`` names it meanwhile (an
    interrupt then says the baseline was not written)."""
    say = session.ui.message
    claim = claim_baseline(path, say)
    try:
        if path.exists():
            say(f"{path}: recorded meanwhile by another run; using it")
            return
        say(f"no baseline at {path}: recording it now")
        recorded: list[RecordedCase] = []
        session.recording = path
        session.record_baseline(
            path,
            lambda r: (
                recorded.append(RecordedCase.from_json(r)) if r.get("type") == RECORDED else None
            ),
        )
        session.recording = None
        say(recording_summary(path, recorded))
    finally:
        claim.release()
