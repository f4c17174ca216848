"""The calls in flight a concurrent phase may hold (stress/engine/run/in_flight.py): what the
cases take against the memory free, fewer threads for a big case, a refusal where not one fits."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _cli import REPO, stress_cli

from stress.config import RunConfig
from stress.corpus.parse import load_corpus
from stress.engine.call.case_size import case_bytes
from stress.engine.run.in_flight import (
    SHARE,
    host_available_bytes,
    in_flight,
    input_bytes,
    limit_threads,
    output_bytes,
)
from stress.errors import ConfigError

CONTROL = REPO / "corpus" / "control.toml"


@pytest.fixture(scope="module")
def cases():
    return load_corpus([CONTROL])


def _big(cases):
    return max(cases, key=case_bytes)


def test_inputs_and_outputs_add_up_to_the_case(cases) -> None:
    big = _big(cases)
    assert input_bytes(big) > 0 and output_bytes(big) > 0
    assert input_bytes(big) + output_bytes(big) == case_bytes(big)


def test_plenty_of_memory_keeps_the_threads(cases) -> None:
    got = in_flight(cases, 8, simulator=True, host_available=1 << 40, device_free=1 << 40)
    assert got.threads == 8 and not got.limited


def test_a_device_that_fits_two_calls_runs_two_threads(cases) -> None:
    big = _big(cases)
    device = SHARE * case_bytes(big) * 2 + 1  # its share holds two calls of the biggest case
    got = in_flight(cases, 8, simulator=False, host_available=None, device_free=device)
    assert (got.threads, got.case, got.limited) == (2, big.id, True)
    note = got.note()
    assert f"case '{big.id}'" in note and "run 2 threads instead of 8" in note


def test_on_the_simulator_the_device_tensors_count_against_the_host(cases) -> None:
    big = _big(cases)
    inputs = sum(input_bytes(c) for c in cases)
    host = SHARE * (inputs + 3 * (output_bytes(big) + case_bytes(big)))
    sim = in_flight(cases, 8, simulator=True, host_available=host, device_free=None)
    real = in_flight(cases, 8, simulator=False, host_available=host, device_free=None)
    assert sim.threads == 3 and real.threads > sim.threads


def test_not_one_call_fits_is_one_line_naming_the_case(cases) -> None:
    big = _big(cases)
    with pytest.raises(ConfigError) as err:
        in_flight(cases, 8, simulator=False, host_available=None, device_free=case_bytes(big))
    text = str(err.value)
    assert "\n" not in text and f"case '{big.id}'" in text and str(CONTROL) in text
    assert "--max-case-bytes" in text
    # given --max-case-bytes, the user says the machine holds it: one thread
    got = in_flight(cases, 8, simulator=False, host_available=None, device_free=0, given_limit=True)
    assert got.threads == 1


def test_limit_threads_replaces_the_config_only_when_limited(cases) -> None:
    config = RunConfig(threads=8)
    same, limit = limit_threads(config, cases, {"simulator": False})
    assert same is config or same.threads == limit.threads
    device = SHARE * case_bytes(_big(cases)) * 3
    fewer, limit = limit_threads(config, cases, {"simulator": False, "device_memory_free": device})
    assert fewer.threads == limit.threads == 3 and config.threads == 8


def test_host_available_reads_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 100 kB\nMemAvailable:    2048 kB\n", encoding="ascii")
    assert host_available_bytes(meminfo) == 2048 * 1024
    meminfo.write_text("MemTotal: 100 kB\n", encoding="ascii")
    assert host_available_bytes(meminfo) is None
    assert host_available_bytes(tmp_path / "absent") is None


def test_a_run_on_a_small_device_says_it_ran_fewer_threads(tmp_path: Path) -> None:
    """The simulator's device reports ACLSIM_DEVICE_MEMORY: a share that fits two calls of
    add-large gives two threads, in the console and the report's notes."""
    big = _big(load_corpus([CONTROL]))
    memory = SHARE * case_bytes(big) * 2 + SHARE * (1 << 20)  # two calls and some room
    env = {**os.environ, "STRESS_BACKEND": "sim", "ACLSIM_DEVICE_MEMORY": str(memory)}
    out = tmp_path / "o"
    base = ["run", "--corpus", str(CONTROL), "--control", "none", "--seed", "1"]
    base += ["--baseline", str(tmp_path / "b.json"), "--record-baseline"]
    proc = stress_cli(*base, "--phases", "serial,isolated", "--duration", "0.3",
                      "--max-case-bytes", "1G", "--out", str(out), env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "instead of 8" in proc.stdout + proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert any("run 2 threads instead of 8" in n for n in report["notes"]), report["notes"]
    header = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert header["config"]["threads"] == 2
