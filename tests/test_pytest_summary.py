"""The pytest session's summary: each worker's runs.jsonl read back typed and merged."""

from __future__ import annotations

import json

from stress.report.pytest_summary import FailureLine, PhaseLine, RunLine, merge_runs


def _line(worker: str, device: int, diagnosis: str, session: str = "s1") -> RunLine:
    failing = diagnosis != "clean"
    return RunLine(
        nodeid=f"test_x.py::test_{worker}",
        worker=worker,
        device=device,
        backend="sim",
        seed=3,
        out_dir=f"/runs/{worker}",
        diagnosis=diagnosis,
        explanation="the interleaved phase failed" if failing else "",
        verdict="findings" if failing else "clean",
        cases=["a", "b"],
        phases=(PhaseLine("serial", "PASS", 4), PhaseLine("interleaved[x]", "MISMATCH", 8)),
        failures=(FailureLine("interleaved[x]", "a", "MISMATCH", "2 of 8"),) if failing else (),
        seconds=1.25,
        session=session,
    )


def test_runs_of_every_worker_merge_into_one_typed_summary(tmp_path):
    lines = {
        "gw0": [_line("gw0", 0, "clean"), _line("gw0", 0, "clean", session="other")],
        "gw1": [_line("gw1", 1, "cross-call-contamination")],
    }
    for worker, runs in lines.items():
        (tmp_path / worker).mkdir()
        text = "".join(json.dumps(r.to_json()) + "\n" for r in runs)
        (tmp_path / worker / "runs.jsonl").write_text(text + '{"nodeid": "cut mid-wr')
    assert RunLine.from_json(lines["gw1"][0].to_json()) == lines["gw1"][0]
    summary = merge_runs(tmp_path, session="s1")
    assert summary is not None and [r.worker for r in summary.runs] == ["gw0", "gw1"]
    assert (summary.clean, summary.findings, summary.verdict) == (1, 1, "findings")
    assert summary.workers == {"gw0": 0, "gw1": 1} and summary.devices_used == [0, 1]
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written == summary.to_json() and written["runs"][1]["failures"][0]["case"] == "a"
    md = (tmp_path / "summary.md").read_text()
    assert "- interleaved[x]: a MISMATCH — 2 of 8" in md
    assert "| `test_x.py::test_gw1` | gw1 | 1 | cross-call-contamination |" in md
