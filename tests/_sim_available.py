"""Skipping a test for want of the simulator, except in CI.

A developer's machine without a C compiler skips the simulator's tests and says why; in CI
(``CI=true``, as GitHub Actions, GitLab and most runners set it) a simulator that does not
build, or lacks a kernel the test needs, is a broken build: the test fails instead, so a
green CI run cannot hide it. tests/test_tests_can_fail.py checks that the tests skip for a
missing simulator only through here.
"""

from __future__ import annotations

import os
from typing import Any, NoReturn

import pytest


def in_ci() -> bool:
    """Whether ``$CI`` says this is a CI run (``true``, ``1`` or ``yes``, any case)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def skip_or_fail(reason: str) -> NoReturn:
    """``pytest.skip(reason)``, or ``pytest.fail`` under ``CI=true``."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a simulator that does not build fails the run)")
    pytest.skip(reason)


def sim_api(*functions: str) -> Any:
    """The built simulator's bound API, with ``functions`` exported; else skip (fail in CI)."""
    try:
        from stress import acl

        api = acl.runtime("sim").api
    except Exception as exc:  # the simulator cannot be built here
        skip_or_fail(f"simulator unavailable: {exc}")
    missing = [f for f in functions if not api.has(f)]
    if missing:
        skip_or_fail(f"the simulator does not export {', '.join(missing)}")
    return api
