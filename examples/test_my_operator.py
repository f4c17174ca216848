"""Stress tests of an aclnn operator with the aclnn-stress pytest plugin — copy into your repo.

Runs against the bundled CANN simulator out of the box (``pip install aclnn-stress``; a C
compiler builds the simulator on first use) and against real CANN on an Ascend machine
(``--stress-backend cann``, or ``auto`` when /dev/davinci* exists)::

    pytest examples/test_my_operator.py                 # short runs (0.5 s per concurrent phase)
    pytest examples/test_my_operator.py -m stress -n 4 --stress-duration 6   # 4 devices
    pytest examples/test_my_operator.py --junitxml=stress.xml                # for CI

Replace the cases with your operator's (``aclnn-stress ops`` lists the operators and their
parameters), or point ``--stress-corpus`` at your corpus files and use ``stress_case_item``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import stress
from stress import strategies as sst

# Every test in this module is a stress test: `pytest -m stress` selects them.
pytestmark = pytest.mark.stress

BWD = "mhc_pre_sinkhorn_backward"


class TestMhcMix:
    """Cases attached with ``stress_case`` markers (the same fields as a corpus [[case]]); on
    the class, they apply to every test in it."""

    pytestmark = [  # noqa: RUF012 - pytest reads a list
        pytest.mark.stress_case(id="bwd-base", op=BWD, B=2, S=32, C=256, seed=1),
        pytest.mark.stress_case(id="bwd-fp16", op=BWD, B=1, S=64, C=128, dtype="fp16", seed=2),
        pytest.mark.stress_case(id="bwd-empty", op=BWD, B=0, S=8, C=128, seed=3),
        pytest.mark.stress_case(id="fwd-base", op="mhc_pre_sinkhorn", B=2, S=32, C=256, seed=4),
    ]

    def test_each_case_alone(self, stress_case_item, stress_run):
        """One test item per case (ids: bwd-base, bwd-fp16, ...): the baseline holds serially,
        and the case alone on many threads does not race with itself."""
        stress_run([stress_case_item], phases=("serial", "isolated"), control=False)

    def test_cases_in_flight_together(self, stress_run):
        """All cases together: interleaved two-stage calls and mixed concurrent replay must
        match the single-thread baseline (no cross-call contamination); aclnnAdd is the
        control. A failure names the phase, case, verdict and digests, and how to replay."""
        result = stress_run(phases=("serial", "interleaved", "mixed", "control"))
        assert result.verdict("mixed", "bwd-base") == "PASS"


@pytest.mark.stress_case(id="reject-n3", op=BWD, B=1, S=8, N=3, C=128, expect={"status": 161002})
@pytest.mark.stress_case(id="reject-c100", op=BWD, B=1, S=8, C=100, expect={"status": 161002})
def test_constraints_are_rejected_under_load(stress_run):
    """Negative cases must fail with their documented status every time, even concurrently."""
    stress_run(phases=("serial", "mixed"), control=False)


FAST = settings(
    max_examples=5,
    deadline=None,
    derandomize=True,  # the same examples on every run: deterministic CI
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@FAST
@given(case=sst.valid_cases(BWD, limits={"B*S": 64}, dims={"C": (128, 256)}))
def test_generated_cases_match_numpy(stress_device, case):
    """Property: on generated valid cases the operator agrees with the numpy reference."""
    call = stress.call_once(case, stress_device)
    for name, (ok, ratio) in stress.check_reference(call).items():
        assert ok, f"{case.id}: {name} differs from the reference ({ratio:.2f} x tolerance)"


@FAST
@given(case=sst.invalid_cases(BWD))
def test_generated_violations_are_rejected(stress_device, case):
    """Property: every constraint violation fails with its documented status and a message."""
    with pytest.raises(stress.AclError) as err:
        stress.call_once(case, stress_device)
    assert err.value.code == case.expect.status, f"{case.id} ({case.description})"
    assert err.value.message


@pytest.mark.npu
def test_real_hardware_reports_a_soc(stress_runtime):
    """Runs only on a real NPU (skipped with a reason on the simulator)."""
    assert not stress_runtime.is_simulator
    assert stress_runtime.soc_name
