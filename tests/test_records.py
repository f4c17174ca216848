"""The typed records (stress/records.py) keep the journal and report formats exactly.

``tests/data/tiling_race_run`` is a short run written by the code *before* call records,
phase results and the run report became dataclasses (``ACLSIM_FAULTS=tiling-race aclnn-stress
run --threads 2 --iterations 2 --repeats 2 --seed 7 --no-fail-fast``): re-rendering its journal
with today's code must give the same ``report.json``, and every journal line must survive a
round trip through its record type unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stress.errors import ConfigError
from stress.grading.assemble import build_report
from stress.journal.lines import Note, PhaseStart, RunEnd, RunHeader
from stress.journal.results import read_results
from stress.records import CallRecord, PhaseResult, RunReport, load_report
from stress.vocabulary import Diagnosis, PhaseStatus

FIXTURE = Path(__file__).parent / "data" / "tiling_race_run"


def test_the_journal_of_an_old_run_renders_the_same_report_json() -> None:
    expected = json.loads((FIXTURE / "report.json").read_text(encoding="utf-8"))
    report = build_report(read_results(FIXTURE / "results.jsonl"))
    assert report.diagnosis == Diagnosis.CROSS_CALL_CONTAMINATION  # the fixture is a finding
    rendered = json.loads(json.dumps(report.to_json()))
    # keys added since the fixture was written come last (coverage: issue #15's pair coverage)
    added = rendered.pop("coverage")
    assert set(added) == {"interleaved", "mixed", "serial", "shuffled", "isolated"}
    assert rendered == expected
    assert list(rendered) == list(expected)  # the keys in the same order, too
    # report.json reads back into the same typed report
    assert RunReport.from_json({**expected, "coverage": added}) == report


def test_every_journal_line_round_trips_through_its_record_type() -> None:
    lines = (FIXTURE / "results.jsonl").read_text(encoding="utf-8").splitlines()
    typed = {"call": CallRecord, "phase-end": PhaseResult}
    seen = {kind: 0 for kind in typed}
    for line in lines:
        data = json.loads(line)
        kind = typed.get(data["type"])
        if kind is None:
            continue
        seen[data["type"]] += 1
        assert kind.from_json(data).to_json() == data
    assert seen["call"] > 100 and seen["phase-end"] == 7


def test_a_crashed_phase_end_keeps_its_crash_details() -> None:
    data = {
        "type": "phase-end",
        "phase": "mixed",
        "variant": "",
        "status": "crashed",
        "detail": "child died with SIGSEGV",
        "calls": 3,
        "seconds": 1.5,
        "signal": "SIGSEGV",
        "returncode": -11,
        "stderr_tail": "",
        "in_flight": [{"case": "a", "worker": 0, "round": 2}],
    }
    end = PhaseResult.from_json(data)
    assert end.status == PhaseStatus.CRASHED and end.to_json() == data
    done = {k: data[k] for k in ("type", "phase", "variant", "detail", "calls", "seconds")}
    assert PhaseResult.from_json({**done, "status": "done"}).to_json() == {**done, "status": "done"}


def test_a_damaged_call_record_is_one_line_naming_it(tmp_path: Path) -> None:
    lines = (FIXTURE / "results.jsonl").read_text(encoding="utf-8").splitlines()
    n = next(i for i, ln in enumerate(lines) if '"type":"call"' in ln)
    lines[n] = lines[n].replace('"status":"ok"', '"status":"fine"', 1)
    assert '"fine"' in lines[n]
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"results.jsonl: line {n + 1}\b.*status.*'fine'"):
        build_report(read_results(tmp_path / "results.jsonl"))


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("worker", True, "expected int, found True"),  # a bool is no int here
        ("elapsed", float("nan"), "must be a finite number"),
        ("unwritten", {"out": 1.5}, "values must be integers"),
        ("match", "yes", "expected bool or null"),
    ],
)
def test_each_bad_call_field_is_one_line_naming_it(tmp_path, field, value, said) -> None:
    lines = (FIXTURE / "results.jsonl").read_text(encoding="utf-8").splitlines()
    n = next(i for i, ln in enumerate(lines) if '"type":"call"' in ln)
    lines[n] = json.dumps({**json.loads(lines[n]), field: value})
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        build_report(read_results(tmp_path / "results.jsonl", typed=True))
    message = str(err.value)
    assert "\n" not in message and f"line {n + 1} (call record), field '{field}'" in message
    assert said in message


def test_the_typed_reader_checks_and_builds_each_record_once() -> None:
    """``read_results(typed=True)``: every line comes typed, equal to what
    ``from_json`` builds from the dict reader's records, and writes that line back."""
    typed = {
        "call": CallRecord,
        "phase-end": PhaseResult,
        "phase-start": PhaseStart,
        "note": Note,
        "run-end": RunEnd,
        "run": RunHeader,
    }
    plain = list(read_results(FIXTURE / "results.jsonl"))
    fast = list(read_results(FIXTURE / "results.jsonl", typed=True))
    assert len(plain) == len(fast)
    for data, rec in zip(plain, fast, strict=True):
        kind = typed.get(data["type"])
        assert kind is not None and rec == kind.from_json(data)
        if kind is not RunEnd:  # (run-end: see the next test)
            assert rec.to_json() == data
    assert sum(isinstance(r, CallRecord) for r in fast) > 100
    assert [type(r) for r in fast].count(RunEnd) == 1 and isinstance(fast[0], RunHeader)


def test_a_run_end_reads_back_typed_and_a_bad_one_names_its_line(tmp_path) -> None:
    end = {"type": "run-end", "status": "done", "ended": "2026-01-01T00:00:00+00:00",
           "reproducer": {"phase": "serial", "cases": ["a"], "verified": True},
           "timing": {"first_detection_s": 1.5, "diagnosis_s": 2.0}}  # fmt: skip
    rec = RunEnd.from_json(end)
    assert rec.status == "done" and rec.reproducer.cases == ["a"] and rec.timing.diagnosis_s == 2.0
    assert rec.to_json() == end
    lines = (FIXTURE / "results.jsonl").read_text().splitlines()
    bad = json.loads(lines[-1]) if '"run-end"' in lines[-1] else end
    bad["reproducer"] = {"phase": "serial", "cases": "not a list"}
    (tmp_path / "results.jsonl").write_text("\n".join([*lines[:-1], json.dumps(bad)]) + "\n")
    with pytest.raises(ConfigError) as err:
        build_report(read_results(tmp_path / "results.jsonl", typed=True))
    message = str(err.value)
    assert "\n" not in message and f"line {len(lines)}" in message and "'cases'" in message


@pytest.mark.parametrize(
    ("kind", "drop"), [("call", "phase"), ("call", "case"), ("phase-end", "phase")]
)
@pytest.mark.parametrize("typed", [False, True])
def test_a_record_without_a_field_it_needs_names_its_line(tmp_path, kind, drop, typed) -> None:
    lines = (FIXTURE / "results.jsonl").read_text(encoding="utf-8").splitlines()
    n = next(i for i, ln in enumerate(lines) if f'"type":"{kind}"' in ln)
    data = json.loads(lines[n])
    del data[drop]
    lines[n] = json.dumps(data)
    path = tmp_path / "results.jsonl"
    path.write_text("\n\n".join(lines) + "\n", encoding="utf-8")  # blank lines count too
    with pytest.raises(ConfigError, match=rf"line {2 * n + 1} \({kind} record\), field '{drop}'"):
        list(read_results(path, typed=typed))


def test_report_json_reads_back_typed_and_a_bad_one_is_one_line(tmp_path):
    report = load_report(FIXTURE / "rendered" / "report.json", fix="re-render it")
    assert report.interference.cells and report.interference.cells[0].victim
    assert report.timing.first_detection_s is not None
    document = json.loads((FIXTURE / "rendered" / "report.json").read_text())
    assert report.to_json() == document
    bad = tmp_path / "report.json"
    bad.write_text(json.dumps({**document, "diagnosis": "a-word-nobody-wrote"}))
    with pytest.raises(ConfigError) as err:
        load_report(bad, fix="re-render it")
    message = str(err.value)
    assert "\n" not in message and str(bad) in message and "diagnosis" in message
