"""RunConfig: one set of defaults reaches the CLI, the pytest plugin and the phase children;
hostile values are refused with one line naming the option."""

import argparse
import math

import pytest

from stress.cli import build_parser
from stress.config import (
    CANARY,
    DEFAULT_DURATION,
    DEFAULTS,
    MAX_THREADS,
    PYTEST_DURATION,
    RunConfig,
)
from stress.engine.replay.phase_budget import phase_budget
from stress.errors import ConfigError

SHARED = ("threads", "context", "streams", "repeats", "canary", "call_timeout", "deterministic")


def _cli_config(*argv: str) -> RunConfig:
    args = build_parser().parse_args(["run", *argv])
    return RunConfig.from_cli(args)


def _pytest_config(**opts) -> RunConfig:
    option = argparse.Namespace(
        stress_threads=None, stress_duration=None, stress_call_timeout=None, stress_seed=None,
        stress_device=0,
    )  # fmt: skip
    vars(option).update(opts)
    return RunConfig.from_pytest(option)


def test_the_same_defaults_reach_the_cli_the_plugin_and_the_jobs():
    cli = _cli_config("--seed", "5")
    plugin = _pytest_config()
    job = RunConfig.from_json(cli.to_json())  # what a phase child rebuilds from its job
    for name in SHARED:
        assert getattr(cli, name) == getattr(plugin, name) == getattr(job, name) == DEFAULTS[name]
    assert cli.canary == CANARY
    # the one documented difference: pytest's short budget per concurrent phase
    assert cli.duration is None and phase_budget(cli).seconds == DEFAULT_DURATION
    assert plugin.duration == PYTEST_DURATION
    assert job == cli


def test_the_plugin_runner_starts_from_the_plugins_config(tmp_path):
    from stress.baseline.shared import BaselineStore
    from stress.pytest.runner import StressRunner

    runner = StressRunner(None, 0, "main", tmp_path, BaselineStore(tmp_path / "b.json"))
    for name in SHARED:
        assert getattr(runner.config, name) == DEFAULTS[name]
    assert runner.config.duration == PYTEST_DURATION
    assert runner.baseline_store.canary == CANARY


def test_options_given_on_the_command_line_win():
    c = _cli_config("--seed", "1", "--threads", "3", "--stream", "both", "--call-timeout", "2")
    assert (c.threads, c.streams, c.call_timeout) == (3, ("shared", "per-thread"), 2.0)
    p = _pytest_config(stress_threads=3, stress_duration=1.5, stress_call_timeout=2.0)
    assert (p.threads, p.duration, p.call_timeout) == (3, 1.5, 2.0)


def test_to_cli_args_replays_the_configuration():
    c = RunConfig(
        seed=7, threads=3, streams=("shared", "per-thread"), duration=1.5, repeats=4, canary=0x11,
        call_timeout=2.5, deterministic=False, phases=("serial", "mixed"),
    )  # fmt: skip
    argv = " ".join(c.to_cli_args()).split()
    assert _cli_config(*argv) == c


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"threads": 0}, "--threads must be >= 1"),
        ({"threads": MAX_THREADS + 1}, f"--threads must be <= {MAX_THREADS}"),
        ({"duration": math.nan}, "--duration must be a finite number"),
        ({"duration": math.inf}, "--duration must be a finite number"),
        ({"duration": -1.0}, "--duration must be > 0 seconds"),
        ({"call_timeout": math.nan}, "--call-timeout must be a finite number"),
        ({"call_timeout": 0.0}, "--call-timeout must be > 0 seconds"),
        ({"seed": -1}, "--seed must be >= 0"),
        ({"device": -1}, "--device must be >= 0"),
        ({"canary": 256}, "--canary must be a byte"),
        ({"repeats": 0}, "--repeats must be >= 1"),
        ({"iterations": 0}, "--iterations must be >= 1"),
        ({"phases": ("serial", "bogus")}, "unknown phase 'bogus'"),
        ({"context": "per-thread"}, "needs --stream per-thread"),
    ],
)
def test_hostile_values_are_refused_in_one_line(changes, message):
    with pytest.raises(ConfigError, match=message) as info:
        RunConfig(**changes).validate()
    assert "\n" not in str(info.value)


def test_a_device_the_backend_lacks_is_refused():
    RunConfig(device=7).check_device(8)
    with pytest.raises(ConfigError, match="--device 8: the backend has 8 device"):
        RunConfig(device=8).check_device(8)
