"""Shared fixtures: one simulator runtime per test process (CANN state is process-wide)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("STRESS_BACKEND", "sim")


@pytest.fixture(scope="session")
def rt():
    from stress import acl

    return acl.runtime("sim")


@pytest.fixture(scope="session")
def device(rt):
    return rt.device(0)


@pytest.fixture()
def ctx(device):
    """The device's default context, bound on the test's thread."""
    device.default_context.bind()
    return device.default_context


@pytest.fixture(scope="session")
def stream(device):
    device.default_context.bind()
    s = device.default_context.create_stream()
    yield s
    device.default_context.bind()
    s.close()
