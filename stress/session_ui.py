"""The hooks a running session reports its progress through (the CLI's rich console
implements them; tests and the pytest plugin use them silent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from stress.records import CallRecord

__all__ = ["SessionUI"]


class SessionUI:
    """Progress reporting hooks (the CLI subclasses this with rich; tests use it silent)."""

    def message(self, text: str) -> None:
        pass

    def run_start(self, out: Path) -> None:
        """The run directory ``out`` is claimed (every check that can refuse the run before
        the backend starts has passed)."""

    def phase_start(self, name: str, variant: str, cases: int) -> None:
        pass

    def record(self, rec: CallRecord) -> None:
        pass

    def phase_end(self, name: str, variant: str, status: str, calls: int, seconds: float) -> None:
        pass
