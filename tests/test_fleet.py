"""A fleet through pytest-xdist's execnet gateways (``--tx``), not a home-made engine.

``--tx 2*popen`` starts two local gateways, as ``--tx ssh=host//python=...`` would start one per
NPU host: each worker binds its own device (worker index -> device) and the controller merges
both workers' runs into one summary. The recipe for several hosts is in docs/scaling.md.
"""

from __future__ import annotations

import hypothesis  # noqa: F401 - keep one import across inner sessions (see test_plugin.py)
from test_plugin import FAST, XDIST_TESTS, assert_two_workers_merged

import stress.acl.runtime
import stress.engine.run.session  # noqa: F401

pytest_plugins = ["pytester"]


def test_two_popen_gateways_bind_two_devices_and_merge_their_runs(pytester):
    pytester.makepyfile(test_inner_fan=XDIST_TESTS)
    base = pytester.path / "baselines"
    result = pytester.runpytest(
        "--tx", "2*popen", "--dist", "load", "--stress-baseline-dir", str(base), *FAST
    )
    out = assert_two_workers_merged(result, pytester)
    per_worker = {p.parent.name: p.read_text().count("\n") for p in out.glob("*/runs.jsonl")}
    assert set(per_worker) == {"gw0", "gw1"} and sum(per_worker.values()) == 8
