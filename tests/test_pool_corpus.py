"""corpus/pool: the shipped corpus meets the shared-layer fault ``scratch-pool``.

The mHC operators do not stage through nnopbase's pool, and no two control cases share a pool
key, so before corpus/pool the benchmark's and ``make stress``'s corpus could not meet the
fault. Its cases (two operators, one key) are clean without the fault and contaminate each other
with it; the control (add) stays clean, so the diagnosis is cross-call contamination.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import stress_cli

from stress.corpus.parse import load_corpus
from stress.engine.call.case_size import case_bytes

ROOT = Path(__file__).resolve().parents[1]
POOL = [str(ROOT / "corpus/pool/mul.toml"), str(ROOT / "corpus/pool/softmax.toml")]
CONTROL = str(ROOT / "corpus/control.toml")


def _key(case) -> tuple[str, int]:
    out = next(a for a in case.spec.args if a.name == "out")
    shape = out.shape(case.params)
    count = 1
    for d in shape:
        count *= d
    return str(out.dtype(case.params)), count


def test_pool_cases_share_one_key_that_no_control_case_has():
    pool = load_corpus(POOL)
    assert {c.spec.function for c in pool} == {"aclnnMul", "aclnnSoftmax"}
    assert len({_key(c) for c in pool}) == 1
    control = load_corpus([CONTROL])
    assert not {_key(c) for c in control} & {_key(pool[0])}
    assert all(case_bytes(c) < 4 << 20 for c in pool)  # small enough for every benchmark run


@pytest.mark.parametrize("faults, diagnosis", [("scratch-pool", "cross-call-contamination"),
                                               ("", "clean")])  # fmt: skip
def test_pool_corpus_meets_scratch_pool(tmp_path, faults, diagnosis):
    args = ["run", *(a for c in POOL for a in ("--corpus", c)), "--control", CONTROL,
            "--phases", "serial,control,mixed", "--stream", "per-thread", "--threads", "4",
            "--duration", "1", "--record-baseline", "--baseline", str(tmp_path / "b.json"),
            "--no-fail-fast", "--shrink-budget", "0", "--seed", "3", "--out",
            str(tmp_path / "out"), "--quiet"]  # fmt: skip
    proc = stress_cli(*args, faults=faults, timeout=180)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["diagnosis"] == diagnosis, (report["explanation"], proc.stderr[-1000:])
    verdicts = {p["name"]: p["verdict"] for p in report["phases"]}
    assert verdicts["control"] == "PASS" and verdicts["serial"] == "PASS", verdicts
