"""Soak: back-to-back clean runs with distinct seeds give no finding, and after every phase the
process's open file descriptors and the simulator's live objects (tensors, executors, streams,
device allocations and bytes: ``aclsimLiveObjects``) are back where they started.

Phases run in this process (``isolate=False``) so that what they leave behind is visible here.
The default run does one short pass; the ``slow`` soak does many seeds over every phase.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from _cli import REPO

from stress import RunConfig, run_corpus
from stress.vocabulary import Diagnosis

CORPUS = [REPO / "corpus/control.toml"]
PHASES = ("serial", "shuffled", "isolated", "interleaved", "mixed")


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _soak(rt, tmp_path: Path, seeds: range, phases: tuple[str, ...], duration: float) -> int:
    """Run each phase alone for every seed; returns the number of runs."""
    baseline = tmp_path / "baseline.json"
    config = RunConfig(threads=4, duration=duration, repeats=2, phases=("serial",))
    run_corpus(CORPUS, config=config, baseline=baseline, out=tmp_path / "record", isolate=False)
    gc.collect()
    start = (_fds(), rt.live_objects())
    runs = 0
    for seed in seeds:
        for phase in phases:
            cfg = config.with_(seed=seed, phases=(phase,))
            report = run_corpus(
                CORPUS,
                config=cfg,
                baseline=baseline,
                out=tmp_path / f"{seed}-{phase}",
                isolate=False,
                record_missing=False,
            )
            runs += 1
            assert report.diagnosis == Diagnosis.CLEAN, (seed, phase, report.explanation)
            gc.collect()
            assert (_fds(), rt.live_objects()) == start, (seed, phase)
    return runs


def test_soak_short(rt, tmp_path: Path):
    assert _soak(rt, tmp_path, range(1, 2), ("serial", "mixed"), 0.2) == 2


@pytest.mark.slow
def test_soak_many_seeds(rt, tmp_path: Path):
    """40 seeds x 5 phases = 200 back-to-back clean runs."""
    assert _soak(rt, tmp_path, range(1, 41), PHASES, 0.3) == 200
