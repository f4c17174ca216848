"""Shared fixtures: one simulator runtime per test process (CANN state is process-wide)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("STRESS_BACKEND", "sim")
# the simulator's sources must compile warning-free here (users' builds do not use -Werror)
os.environ.setdefault("ACLSIM_WERROR", "1")


def _one_simulator_cache() -> None:
    """Every process of the run builds into, and loads from, one simulator cache: pytester
    points HOME at each test's temporary folder, so without this every process an inner session
    starts (xdist workers, runpytest_subprocess, a CLI replay) compiled the simulator afresh in a
    ~/.cache of its own (~11 s of CPU each). tests/test_sim_build.py sets its own cache dirs."""
    from stress.sim._build import cache_dir

    os.environ.setdefault("ACLSIM_CACHE_DIR", str(cache_dir()))


_one_simulator_cache()


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
