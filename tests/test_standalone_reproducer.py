"""The generated standalone reproducer (``aclnn-stress reproduce``; written automatically to
``<run>/repro/reproduce.py`` when a run has findings): a ctypes + numpy script that loads CANN
from ``ASCEND_HOME_PATH``, replays the case(s) with their seeded input bytes and compares the
outputs with the run's baseline. The same script fails on the faulty simulator and passes on
the clean one."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import stress_cli

from stress import sim
from stress.corpus import load_corpus
from stress.corpus.parse import corpus_text

ROOT = Path(__file__).resolve().parent.parent


def _corpus(tmp: Path, source: str, ids: list[str]) -> Path:
    cases = [c for c in load_corpus([ROOT / source]) if c.id in ids]
    path = tmp / "corpus.toml"
    path.write_text(corpus_text(cases))
    return path


def _run(tmp: Path, corpus: Path, faults: str | None = None):
    """A serial run recording its baseline. A clean run is the source of reproducers of the
    cases the test names, not of their variants: it derives none (large-c's size variants alone
    took most of the time); the faulty run keeps them (a view variant fails beside its case)."""
    args = ["run", "--corpus", str(corpus), "--control", "none", "--phases", "serial",
            "--repeats", "1", "--record-baseline", "--baseline", str(tmp / "baseline.json"),
            "--out", str(tmp / "out"), "--quiet",
            *(["--variants", "none"] if faults is None else [])]  # fmt: skip
    env = {"env": {**os.environ, "STRESS_BACKEND": "sim"}} if faults is None else {}
    return stress_cli(*args, faults=faults, timeout=180, cwd=tmp, **env)


def _script(path: Path, faults: str | None = None, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("ACLSIM_FAULTS", "PYTHONPATH")}
    env["ASCEND_HOME_PATH"] = str(sim.root())
    if faults:
        env["ACLSIM_FAULTS"] = faults
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=path.parent)  # fmt: skip


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
             for a in n.names}  # fmt: skip
    names |= {n.module.split(".")[0] for n in ast.walk(tree)
              if isinstance(n, ast.ImportFrom) and n.module}  # fmt: skip
    return names


def test_failing_run_writes_a_script_that_names_the_unwritten_bytes(tmp_path):
    corpus = _corpus(tmp_path, "corpus/mhc.toml", ["empty-batch"])
    proc = _run(tmp_path, corpus, faults="empty-skip")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    script = tmp_path / "out" / "repro" / "reproduce.py"
    assert script.is_file(), proc.stdout + proc.stderr
    assert "stress" not in _imports(script) and "numpy" in _imports(script)
    faulty = _script(script, "empty-skip", "2")
    assert faulty.returncode == 1, faulty.stdout + faulty.stderr
    assert "empty-batch: gradPhi: 49152 byte(s)" in faulty.stdout
    assert "left unwritten" in faulty.stdout
    clean = _script(script, None, "2")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    # the first two failing cases of the serial phase (empty-batch and a view variant of it)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    failing = [c["id"] for c in report["phases"][0]["cases"] if c["verdict"] != "PASS"]
    assert failing[0] == "empty-batch"
    assert clean.stdout.startswith(f"OK: {min(len(failing), 2)} call(s)"), (failing, clean.stdout)


def test_a_race_pair_fails_on_the_tiling_race_and_passes_clean(tmp_path):
    corpus = _corpus(tmp_path, "corpus/mhc.toml", ["base-a", "base-b"])
    assert _run(tmp_path, corpus).returncode == 0
    out = tmp_path / "pair.py"
    proc = stress_cli("reproduce", str(tmp_path / "out"), "--case", "base-a", "--case",
                      "base-b", "-o", str(out), cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    faulty = _script(out, "tiling-race", "3")
    assert faulty.returncode == 1 and "digest differs from the baseline's" in faulty.stdout
    clean = _script(out, None, "3")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "2 call(s) match the baseline" in clean.stdout


def test_a_declared_op_reproduces_clean(tmp_path):
    corpus = ROOT / "corpus" / "ops" / "rms_norm.toml"
    assert _run(tmp_path, corpus).returncode == 0
    out = tmp_path / "rms.py"
    proc = stress_cli("reproduce", str(tmp_path / "out"), "--case", "rms-f16", "-o", str(out),
                      cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "aclnnRmsNorm" in out.read_text()
    result = _script(out, None, "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 call(s) match the baseline" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--case", "rms-f16"], "not a finished run"),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, message):
    proc = stress_cli("reproduce", str(tmp_path), *args)
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_clean_run_needs_a_case(tmp_path):
    assert _run(tmp_path, ROOT / "corpus" / "ops" / "rms_norm.toml").returncode == 0
    proc = stress_cli("reproduce", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 2 and "no failing case to reproduce" in proc.stderr
    proc = stress_cli("reproduce", str(tmp_path / "out"), "--case", "nope", cwd=tmp_path)
    assert proc.returncode == 2 and "--case nope: not a case of the run" in proc.stderr


def test_large_inputs_go_to_a_side_file_and_still_reproduce(tmp_path):
    """The large-C mHC case (~11 MB of inputs) writes a small script plus ``pair.npz``; the
    script checks each side input's sha256, and fails naming the file when it is missing."""
    corpus = _corpus(tmp_path, "corpus/mhc.toml", ["large-c", "empty-batch"])
    assert _run(tmp_path, corpus).returncode == 0
    out = tmp_path / "large.py"
    proc = stress_cli("reproduce", str(tmp_path / "out"), "--case", "large-c", "--case",
                      "empty-batch", "-o", str(out), cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    side = tmp_path / "large.npz"
    assert "in " + str(side) in proc.stdout
    assert out.stat().st_size < 400_000, out.stat().st_size  # all embedded: ~11 MB
    assert side.stat().st_size > 4_000_000
    text = out.read_text()
    assert "'empty-batch/x'" in text and "'large-c/x'" not in text.split("SIDE_FILE")[0]
    result = _script(out, None, "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 call(s) match the baseline" in result.stdout
    side.rename(tmp_path / "elsewhere.npz")
    missing = _script(out, None, "1")
    assert missing.returncode == 1 and "large.npz: missing" in missing.stderr


def test_small_inputs_stay_embedded(tmp_path):
    corpus = _corpus(tmp_path, "corpus/mhc.toml", ["empty-batch"])
    assert _run(tmp_path, corpus).returncode == 0
    out = tmp_path / "small.py"
    proc = stress_cli("reproduce", str(tmp_path / "out"), "--case", "empty-batch", "-o",
                      str(out), cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "small.npz").exists() and "SIDE_INPUTS = []" in out.read_text()
