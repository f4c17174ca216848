"""An exception raised while one case is handled, as the user reads it: naming the case."""

from __future__ import annotations

__all__ = ["CaseError"]


class CaseError(Exception):
    """``case 'ID' (SOURCE): Type: message`` -- what went wrong while recording case ``ID``
    (its inputs, its calls), said once, with the file it comes from."""

    def __init__(self, case_id: str, source: str, exc: BaseException) -> None:
        super().__init__(f"case '{case_id}' ({source}): {type(exc).__name__}: {exc}")
        self.case_id = case_id
