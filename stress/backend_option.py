"""The ``--backend`` option of every command that loads CANN (``run``, ``baseline record``,
``report``, ``reproduce``, ``gradcheck``): its choices, :data:`BACKEND_KINDS`, are the ones
:func:`stress.acl.backend.discover` takes; unset (``None``), the command uses
``$STRESS_BACKEND``, else ``auto``. Here, below the CLI and the gradcheck, so that both take it
without importing the binding."""

from __future__ import annotations

import argparse

__all__ = ["BACKEND_KINDS", "add_backend_option"]

BACKEND_KINDS = ("auto", "sim", "cann")


def add_backend_option(parser: argparse._ActionsContainer, help: str) -> None:
    """Add ``--backend`` to ``parser``; ``help`` says what the command loads it for."""
    parser.add_argument("--backend", choices=BACKEND_KINDS, default=None, help=help)
