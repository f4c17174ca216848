"""A baseline that does not match the run (stress/engine/run/baseline_step.py): refused in one
line without ``--record-baseline``, recorded again with it (the run says why), never compared."""

from __future__ import annotations

import json

from _cli import REPO, stress_cli

CORPUS = str(REPO / "corpus" / "pool" / "mul.toml")


def _run(tmp_path, out: str, *extra: str):
    return stress_cli(
        "run",
        "--corpus",
        CORPUS,
        "--control",
        "none",
        "--phases",
        "serial",
        "--baseline",
        str(tmp_path / "b.json"),
        "--out",
        str(tmp_path / out),
        "--budget",
        "1",
        *extra,
        faults="",
    )


def test_a_stale_baseline_is_refused_then_recorded_again(tmp_path) -> None:
    first = _run(tmp_path, "first", "--record-baseline")
    assert first.returncode == 0, first.stderr
    recorded = json.loads((tmp_path / "b.json").read_text())["canary"]

    refused = _run(tmp_path, "refused", "--canary", "17")
    assert refused.returncode == 2
    errors = [x for x in refused.stderr.splitlines() if x.startswith("aclnn-stress: error:")]
    assert len(errors) == 1 and "does not match this run" in errors[0], refused.stderr
    assert "canary" in errors[0] and "Traceback" not in refused.stderr

    again = _run(tmp_path, "again", "--canary", "17", "--record-baseline")
    assert again.returncode == 0, again.stderr
    assert "recording it again" in again.stdout + again.stderr
    assert json.loads((tmp_path / "b.json").read_text())["canary"] != recorded


def test_baseline_record_writes_where_baseline_points(tmp_path) -> None:
    """``baseline record --baseline P`` writes P, the file ``run --baseline P`` reads."""
    target = tmp_path / "here.json"
    done = stress_cli(
        "baseline",
        "record",
        "--corpus",
        CORPUS,
        "--control",
        "none",
        "--baseline",
        str(target),
        faults="",
    )
    assert done.returncode == 0, done.stderr
    assert target.exists() and json.loads(target.read_text())["cases"]
