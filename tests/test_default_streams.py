"""A plain run makes kernels overlap: both stream policies by default, the burst per-thread first.

Under one shared stream no two kernels execute at once, so a kernel-level race (the simulator's
``shared-scratch``: overlapping kernels share one reduction buffer) was invisible to a plain
``aclnn-stress run``; ``--stream shared`` keeps that run available.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import stress_cli

from stress.cli.parser import build_parser
from stress.config import DEFAULTS, RunConfig
from stress.engine.run.schedule import plan
from stress.engine.run.session import Session
from stress.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
CORPUS = [str(REPO / "corpus/mhc.toml")]


def _cli(*argv: str) -> RunConfig:
    return RunConfig.from_cli(build_parser().parse_args(["run", "--seed", "1", *argv]))


def test_a_plain_run_uses_both_stream_policies_and_the_burst_starts_per_thread():
    config = _cli()
    assert config.streams == DEFAULTS["streams"] == ("shared", "per-thread")
    steps = [(s.phase, s.stream) for s in plan(config)]
    assert steps[:2] == [("burst", "per-thread"), ("burst", "shared")]
    for phase in ("control", "isolated", "mixed"):
        assert {s for p, s in steps if p == phase} == {"shared", "per-thread"}, phase
    assert "--stream both" in config.to_cli_args()


def test_one_policy_stays_available_and_per_thread_contexts_imply_per_thread_streams():
    assert _cli("--stream", "shared").streams == ("shared",)
    assert _cli("--context", "per-thread").streams == ("per-thread",)
    with pytest.raises(ConfigError, match="needs --stream per-thread"):
        _cli("--context", "per-thread", "--stream", "both")


def test_a_plain_run_finds_a_race_of_overlapping_kernels(tmp_path):
    """shared-scratch: isolated on a shared stream passes (kernels never overlap there), on
    per-thread streams fails; the default run has both, so it says self-race."""
    baseline = tmp_path / "b.json"
    env = {"ACLSIM_FAULTS": "shared-scratch"}
    # the corpus without its variants: its cases hold the race, the variants only repeat it
    Session(RunConfig(seed=0, variants=()), CORPUS, [], env=env).record_baseline(baseline)
    config = RunConfig(
        seed=1, phases=("serial", "isolated"), duration=1.0, fail_fast=False, variants=()
    )
    report = Session(
        config, CORPUS, [], baseline_path=baseline, out_dir=tmp_path / "run", env=env,
        shrink_budget=0,  # no shrinking: nothing here reads a reproducer
    ).run()  # fmt: skip
    by_variant = {p.variant: p.verdict for p in report.phases if p.name == "isolated"}
    assert by_variant["stream=shared"] == "PASS", by_variant
    assert by_variant["stream=per-thread"] != "PASS", by_variant
    assert report.diagnosis == "self-race", report.explanation


def test_the_help_says_the_default():
    out = stress_cli("run", "--help").stdout
    assert "both in turn (the default" in " ".join(out.split())
