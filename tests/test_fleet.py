"""A fleet through pytest-xdist's execnet gateways (``--tx``), not a home-made engine.

``--tx 2*popen`` starts two local gateways, as ``--tx ssh=host//python=...`` would start one per
NPU host (and as ``-n 2`` does: xdist's ``-n N`` is ``--tx N*popen``): each worker binds its own
device (worker index -> device) and the controller merges both workers' runs into one summary.
The recipe for several hosts is in docs/scaling.md.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import hypothesis  # noqa: F401 - keep one import across inner sessions (see test_plugin.py)
from test_plugin import FAST, XDIST_TESTS, assert_two_workers_merged

import stress.acl.runtime
import stress.engine.run.session  # noqa: F401
from stress.baseline.store import Baseline

pytest_plugins = ["pytester"]


def test_two_popen_gateways_bind_two_devices_and_merge_their_runs(pytester):
    """One two-worker session (each worker a process that loads the simulator: the costly part)
    proves the device binding, the merged summary and junit, and the one shared baseline."""
    pytester.makepyfile(test_inner_fan=XDIST_TESTS)
    base = pytester.path / "baselines"
    result = pytester.runpytest(
        "--tx", "2*popen", "--dist", "load", "--stress-baseline-dir", str(base),
        "--junitxml=junit.xml", *FAST,
    )  # fmt: skip
    out = assert_two_workers_merged(result, pytester)
    per_worker = {p.parent.name: p.read_text().count("\n") for p in out.glob("*/runs.jsonl")}
    assert set(per_worker) == {"gw0", "gw1"} and sum(per_worker.values()) == 8
    devices = {
        p.get("value")
        for p in ET.parse(pytester.path / "junit.xml").iter("property")
        if p.get("name") == "stress_device"
    }
    assert devices == {"0", "1"}
    # both workers recorded into one baseline file; neither lost the other's cases
    recorded = Baseline.load(base / "pytest.sim.json")
    assert len([c for c in recorded.cases if c.startswith("add-")]) == 8
