"""Shared fixtures: one simulator runtime per test process (CANN state is process-wide)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("STRESS_BACKEND", "sim")
# the simulator's sources must compile warning-free here (users' builds do not use -Werror)
os.environ.setdefault("ACLSIM_WERROR", "1")


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


@pytest.fixture(autouse=True)
def _restore_process_options():
    """Process-level runtime options (ACL_OPT_DETERMINISTIC) are global: reset after each test
    so that tests do not depend on their order."""
    yield
    from stress.acl.runtime import loaded_runtime

    rt = loaded_runtime()
    if rt is not None and rt.api.has("aclrtSetSysParamOpt"):
        rt.set_deterministic(False)
