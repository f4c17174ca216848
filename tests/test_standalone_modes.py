"""The standalone reproducer replays the API mode or memory a failure was found in.

Each fault below is invisible to a plain call (phase 1, launch, synchronize the launch stream,
prefilled with the run's canary), so a script that only made plain calls passes on the faulty
simulator. The run finds each in the serial phase under every mode; the script written for it
sets up what the failing calls had — a repeatable executor rebound to fresh buffers
(``executor-reuse``), the launch on another thread (``thread-plan``), the outputs read on a
second stream after an event (``side-stream``), outputs and workspace prefilled with the
second byte (``dirty-accumulator``) — with the real CANN calls, fails on the faulty simulator
naming the mode, and passes on the clean one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stress import sim
from stress.config import MODES, RunConfig
from stress.engine.run.session import Session
from stress.standalone import write_script
from stress.standalone.replay import replay_modes

REPO = Path(__file__).resolve().parents[1]

# fault, corpus, MODES line of the script, what its finding names
FAULTS = [
    ("executor-reuse", "corpus/pool/mul.toml", "['repeat']", "(repeat mode, launch 2, rebound)"),
    ("thread-plan", "corpus/ops/reduce_sum.toml", "['pipeline']", "(pipeline mode,"),
    ("side-stream", "corpus/ops/cat.toml", "['event']", "(event mode, read on a second stream)"),
    ("dirty-accumulator", "corpus/ops/layer_norm.toml", None, "prefilled with 0x5a"),
]


def _run(tmp: Path, corpus: str, fault: str) -> dict:
    """The corpus as written (the serial run and its baseline: no variants to replay)."""
    env, corpora = {"ACLSIM_FAULTS": fault}, [str(REPO / corpus)]
    baseline = tmp / "baseline.json"
    Session(RunConfig(seed=0, variants=()), corpora, [], env=env).record_baseline(baseline)
    config = RunConfig(
        seed=1, phases=("serial",), duration=0.5, fail_fast=False, modes=MODES, variants=()
    )
    session = Session(config, corpora, [], baseline_path=baseline, out_dir=tmp / "run", env=env)
    return session.run().to_json()


def _script(path: Path, faults: str, rounds: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("ACLSIM_FAULTS", "PYTHONPATH")}
    env.update(ASCEND_HOME_PATH=str(sim.root()), ACLSIM_FAULTS=faults)
    return subprocess.run([sys.executable, str(path), rounds], capture_output=True, text=True,
                          timeout=120, env=env, cwd=path.parent)  # fmt: skip


@pytest.mark.parametrize(("fault", "corpus", "modes", "names"), FAULTS, ids=[f[0] for f in FAULTS])
def test_the_script_replays_the_failure_s_mode(tmp_path, fault, corpus, modes, names):
    report = _run(tmp_path, corpus, fault)
    assert report["diagnosis"] != "clean", report["explanation"]
    repro = write_script(tmp_path / "run", tmp_path / "reproduce.py")
    text = repro.path.read_text()
    if modes is not None:
        assert f"MODES = {modes}" in text, text[:3000]
        assert f"in the {modes[2:-2]} mode" in text  # the docstring says where the run saw it
        assert repro.replaying() == f"replaying the {modes[2:-2]} mode"  # the CLI's line
    # the race rounds take turns through the modes: a few, for the event mode's timing
    faulty = _script(repro.path, fault, "6")
    assert faulty.returncode == 1, faulty.stdout + faulty.stderr
    assert names in faulty.stdout, faulty.stdout
    clean = _script(repro.path, "", "2")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    # one call per case the script replays (which cases failed depends on the modes the run
    # drew for them: one or two of the corpus)
    n = len(repro.cases)
    assert n >= 1 and clean.stdout.startswith(f"OK: {n} call(s) match the baseline"), clean.stdout


def _clean_script(tmp: Path, corpus: str, case: str) -> Path:
    """The script of ``case`` named with --case after a clean run: every mode the run drew."""
    report = _run(tmp, corpus, "")
    assert report["diagnosis"] == "clean", report["explanation"]
    path = write_script(tmp / "run", tmp / "reproduce.py", [case]).path
    assert "MODES = ['repeat', 'event', 'pipeline']" in path.read_text()
    return path


def _declared(path: Path, reason: str) -> Path:
    """A copy of the script whose call declares ``reason`` as [op] not_repeatable."""
    text = path.read_text()
    start = text.index("'not_repeatable': ") + len("'not_repeatable': ")
    end = text.rindex(",", start, text.index("'args':", start))  # the value may span lines
    copy = path.with_name("declared.py")
    copy.write_text(text[:start] + repr(reason) + text[end:])
    return copy


def test_without_failing_calls_every_mode_the_run_drew_is_replayed(tmp_path):
    """A case named with --case that did not fail: the run's --modes, nothing recycled; its
    repeat mode marks the executor, which contradicts a not-repeatable declaration."""
    script = _clean_script(tmp_path, "corpus/ops/reduce_sum.toml", "rsum-f32")
    journal = tmp_path / "run" / "results.jsonl"
    config = RunConfig(modes=("plain", "event"), allocator="both")
    replay = replay_modes(journal, ["rsum-f32"], config, "clean")
    assert replay.modes == ("event",) and not replay.recycle and replay.seen == ()
    assert replay_modes(journal, ["rsum-f32"], RunConfig(allocator="recycle"), "").recycle
    wrong = _script(_declared(script, "said so"), "", "1")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert "succeeded, but the operator is declared not repeatable (said so)" in wrong.stdout


def test_a_declared_not_repeatable_operator_must_refuse_the_mark(tmp_path):
    """aclnnCat is declared not repeatable (corpus/ops/cat.toml): the script's repeat mode
    expects nnopbase's refusal and launches it once; undeclared, the refusal is a finding."""
    script = _clean_script(tmp_path, "corpus/ops/cat.toml", "cat-f32")
    clean = _script(script, "", "2")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    undeclared = _script(_declared(script, ""), "", "1")
    assert undeclared.returncode == 1, undeclared.stdout + undeclared.stderr
    assert "aclSetAclOpExecutorRepeatable returned 561000" in undeclared.stdout
