"""``aclnn-stress gradcheck`` on the mHC pair prints what main printed before the gradcheck spec
became declaration data: console output byte for byte and the JSON document, key order
included (the elapsed time and the JSON path masked). The expected files in
tests/data/gradcheck/ were written by main's code (ef1d2c1) with these very arguments."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._cli import REPO
from tests._sim_available import sim_api

DATA = Path(__file__).resolve().parent / "data" / "gradcheck"
CASES: dict = json.loads((DATA / "cases.json").read_text())


def _mask(text: str) -> str:
    text = re.sub(r"\(exit (\d)\), \d+\.\d s\n", r"(exit \1), <elapsed> s\n", text)
    return re.sub(r"JSON written to .*\n", "JSON written to <path>\n", text)


@pytest.fixture(scope="module")
def sim() -> None:
    sim_api("aclnnMhcPreSinkhornBackward")  # skips without the simulator; fails under CI=true


@pytest.mark.parametrize("name", sorted(CASES))
def test_console_and_json_are_unchanged(name: str, tmp_path: Path, sim: None) -> None:
    case = CASES[name]
    out = tmp_path / "gc.json"
    env = {**os.environ, "STRESS_BACKEND": "sim", "ACLSIM_FAULTS": case["faults"]}
    proc = subprocess.run(
        [sys.executable, "-m", "stress", "gradcheck", *case["args"], "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=REPO, env=env,
    )  # fmt: skip
    assert proc.returncode == case["exit"], proc.stderr[-2000:]
    assert _mask(proc.stdout) == (DATA / f"{name}.out").read_text()
    doc = json.loads(out.read_text())
    doc["elapsed_s"] = None
    _same(doc, json.loads((DATA / f"{name}.json").read_text()), name)


def _same(got: object, want: object, at: str) -> None:
    """Equal documents, keys in the same order; floats to 1e-9 relative (the simulator's
    multi-threaded reductions move a block scale's last digits from run to run)."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), at
        for k in want:
            _same(got[k], want[k], f"{at}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), at
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _same(g, w, f"{at}[{i}]")
    elif isinstance(want, float) and isinstance(got, float):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-300), at
    else:
        assert got == want and type(got) is type(want), at
