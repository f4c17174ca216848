"""The plugin's command-line options (group ``stress``) and ini values; their defaults come from
:mod:`stress.config`."""

from __future__ import annotations

import pytest

from stress.cli.values import byte_count, variants
from stress.config import DEFAULT_DURATION, DEFAULTS, PYTEST_DURATION, VARIANTS
from stress.pytest.state import BACKENDS

__all__ = ["add_options"]


def add_options(parser: pytest.Parser) -> None:
    g = parser.getgroup("stress", "aclnn-stress: stress-test CANN aclnn operators")
    g.addoption(
        "--stress-backend",
        choices=BACKENDS,
        default=None,
        help="CANN backend: sim (the bundled simulator), cann (a real install) or auto (real "
        "CANN when an NPU is present); default $STRESS_BACKEND, else auto",
    )
    g.addoption(
        "--stress-threads",
        type=int,
        default=None,
        metavar="T",
        help=f"worker threads of the concurrent phases (default {DEFAULTS['threads']})",
    )
    g.addoption(
        "--stress-duration",
        type=float,
        default=None,
        metavar="S",
        help=f"seconds per concurrent phase (default {PYTEST_DURATION:g}: a short run; use e.g. "
        f"{DEFAULT_DURATION:g}, the CLI's default, for a real stress run)",
    )
    g.addoption(
        "--stress-call-timeout",
        type=float,
        default=None,
        metavar="S",
        help=f"a call still running after S seconds is a HANG (default "
        f"{DEFAULTS['call_timeout']:g})",
    )
    g.addoption(
        "--stress-hang-floor",
        type=float,
        default=None,
        metavar="S",
        help=f"the adaptive hang limit's floor, as the CLI's --hang-floor (default "
        f"{DEFAULTS['hang_floor']:g})",
    )
    g.addoption(
        "--stress-hang-factor",
        type=float,
        default=None,
        metavar="K",
        help=f"the multiple of a case's recorded p99, as the CLI's --hang-factor (default "
        f"{DEFAULTS['hang_factor']:g})",
    )
    g.addoption(
        "--stress-variants",
        type=variants,
        default=None,
        metavar="LIST",
        help=f"variants derived from every case ({','.join(VARIANTS)}, all or none; default "
        "none, which keeps a plain pytest fast; the CLI's default is all), graded against the "
        "contiguous twin",
    )
    g.addoption(
        "--stress-max-case-bytes",
        type=byte_count,
        default=None,
        metavar="BYTES",
        help="refuse a case whose tensors take more (checked from shapes and dtypes before "
        "anything is allocated; K/M/G/T suffixes); default: ini stress_max_case_bytes, else a "
        "quarter of host memory and of the device memory the runtime reports",
    )
    _input_options(g)
    parser.addini(
        "stress_max_case_bytes",
        "largest case (tensor bytes, K/M/G/T suffixes) the stress plugin runs",
        "string",
        default="",
    )
    parser.addini(
        "stress_corpus", "default corpus files/directories for the stress plugin", "paths"
    )
    parser.addini("stress_control", "default control corpus for the stress plugin", "paths")


def _input_options(g: pytest.OptionGroup) -> None:
    """Where cases come from and where results, baselines and devices go."""
    g.addoption(
        "--stress-corpus",
        action="append",
        default=[],
        metavar="PATH",
        help="corpus TOML file or directory of them (repeatable); default: ini stress_corpus, "
        "else <rootdir>/corpus/*.toml without control.toml, else (no corpus/ folder there) "
        "the shipped corpora",
    )
    g.addoption(
        "--stress-control",
        default=None,
        metavar="PATH",
        help="control corpus (aclnnAdd) for the control phase, or 'none'; default: ini "
        "stress_control, else <rootdir>/corpus/control.toml, else a built-in aclnnAdd set",
    )
    g.addoption(
        "--stress-out",
        default=None,
        metavar="DIR",
        help="where runs write results (per worker: DIR/<worker>/...) and the merged "
        "summary.json/summary.md; default stress-out/pytest-<time>",
    )
    g.addoption(
        "--stress-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed of every random choice of the runs (default: random, shown in the header)",
    )
    g.addoption(
        "--stress-device",
        type=int,
        default=0,
        metavar="D",
        help="first device: xdist worker gwI uses device (D + I) mod device count (default 0)",
    )
    g.addoption(
        "--stress-isolate",
        action="store_true",
        default=False,
        help="run each phase in a supervised child process (a crash or hang becomes a verdict "
        "instead of ending pytest; slower); default: in this process",
    )
    g.addoption(
        "--stress-baseline-dir",
        default=None,
        metavar="DIR",
        help="where baselines are recorded and reused (default: the pytest cache, "
        ".pytest_cache/d/stress-baselines)",
    )
    g.addoption(
        "--stress-shrink",
        type=float,
        default=0.0,
        metavar="S",
        help="seconds to shrink a failing mix to a minimal reproducer (default 0: off)",
    )
