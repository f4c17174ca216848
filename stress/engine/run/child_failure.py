"""A failed child's error as one line for the user: its detail, and the last line of its
stderr only where that says something the detail does not (a traceback's last line repeats
the exception the detail already names)."""

from __future__ import annotations

from stress.engine.isolation.supervise import ChildResult

__all__ = ["failure_text"]


def failure_text(result: ChildResult) -> str:
    """``result``'s error: a :class:`~stress.engine.replay.case_error.CaseError`'s message as
    is (it names the case), else the detail; plus the stderr tail's last line when new."""
    error = result.error
    text = result.detail
    if error is not None and error.name == "CaseError" and error.message:
        text = error.message
    tail = result.stderr_tail.splitlines()[-1:] if result.stderr_tail else []
    if not tail or not tail[0].strip():
        return text
    last = tail[0].strip()
    said = last in text or last.partition(": ")[2] in text or text in last
    return text if said else f"{text} ({last})"
