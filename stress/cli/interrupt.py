"""What an interrupted ``run`` kept: the one line the CLI prints after SIGINT / SIGTERM."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stress.journal.results import RESULTS_FILE

if TYPE_CHECKING:
    from stress.engine.run.session import Session

__all__ = ["what_was_kept"]


def what_was_kept(session: Session, exc: BaseException) -> str:
    """Say exactly what the stopped run left on disk (and what it did not)."""
    how = f"interrupted ({exc or 'SIGINT'})"
    if session.recording is not None:
        return (
            f"{how} while recording the baseline {session.recording}: it was not written "
            "(a baseline is saved only once every case is recorded) and no run directory was "
            "made; nothing was kept"
        )
    out = session.out_dir
    if out is None or not (out / RESULTS_FILE).is_file():
        return f"{how} before the first phase: nothing was written"
    done = session.finished_phases
    return (
        f"{how}; partial report (diagnosis incomplete unless a finding stands) in {out}/"
        f"report.json, report.md, report.html; phases finished: {', '.join(done) or 'none'} "
        f"(re-render with `aclnn-stress report {out}`)"
    )
