"""benchmarks/bench_make_test.py reads pytest's own summary line and its ``--durations`` rows."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_make_test import entry, read_output  # noqa: E402

OUTPUT = """\
........s.. [100%]
============================= slowest durations ==============================
12.50s call     tests/test_a.py::test_slow[1]
2.25s setup    tests/test_b.py::test_fixture
0.50s teardown tests/test_b.py::test_fixture
=========================== short test summary info ===========================
SKIPPED [1] tests/test_c.py:9: no chromium
1522 passed, 6 skipped in 1377.13s (0:22:57)
"""


def test_the_summary_line_and_the_durations_are_read():
    got = read_output(OUTPUT, top=2)
    assert (got["tests"], got["skipped"], got["pytest_s"]) == (1522, 6, 1377.13)
    assert got["durations_sum_s"] == 15.2
    assert got["slowest"] == [
        "12.50s call tests/test_a.py::test_slow[1]",
        "2.25s setup tests/test_b.py::test_fixture",
    ]


def test_the_idle_wall_is_estimated_from_the_cpu_over_the_cores():
    got = entry(OUTPUT.replace(", 6 skipped", ""), wall=1378.8, cpu=707.0, cores=2)
    assert got["skipped"] == 0 and got["cpu_s"] == 707.0 and got["idle_wall_estimate_s"] == 354


def test_an_output_without_a_summary_line_is_refused():
    with pytest.raises(ValueError, match="no 'N passed"):
        read_output("collected 0 items\n")
