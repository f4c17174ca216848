"""A run's baseline (loaded, or recorded when missing under --record-baseline) and the
journal's run header, without a backend: recording is replaced by writing a known baseline."""

from __future__ import annotations

import pytest
from test_baseline import BACKEND, _baseline, _corpus

from stress.config import RunConfig
from stress.engine.isolation.messages import BackendInfo
from stress.engine.run.baseline_step import read_once, record_missing, run_baseline
from stress.engine.run.header import run_header
from stress.engine.run.rundir import claim_baseline
from stress.engine.run.session import Session, SessionUI
from stress.errors import ConfigError
from stress.journal.results import RESULTS_SCHEMA
from stress.records import RecordedCase
from stress.vocabulary import Status


class _Said(SessionUI):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)


def _session(tmp_path, **kw) -> Session:
    s = Session(RunConfig(), [str(tmp_path / "c.toml")], ui=_Said(), **kw)
    s.cases = list(_corpus(tmp_path))
    return s


def _recorder(session, cases, seen):
    """Stands in for the recording child: writes the baseline, reports one case."""

    def record(path, on_case):
        seen.append(session.recording)  # named while it records (an interrupt says so)
        _baseline(cases).save(path)
        on_case(RecordedCase("b", Status.OK, 0, "digest", True))
        return path

    return record


def test_missing_baseline_is_refused_with_the_fix(tmp_path):
    with pytest.raises(ConfigError, match=r"none\.json: no baseline.*--record-baseline"):
        s = _session(tmp_path)
        run_baseline(tmp_path / "none.json", BACKEND, s.cases, s.config)


def test_missing_baseline_is_recorded_then_loaded(tmp_path):
    s = _session(tmp_path, record_missing=True)
    seen: list = []
    s.record_baseline = _recorder(s, s.cases, seen)
    path = tmp_path / "b" / "base.json"
    baseline, warnings = run_baseline(
        path, BACKEND, s.cases, s.config, record=s.record_missing_baseline
    )
    assert set(baseline.cases) == {"a", "b"} and warnings == []
    assert seen == [path] and s.recording is None
    assert s.ui.lines[0] == f"no baseline at {path}: recording it now"
    assert s.ui.lines[-1].startswith(f"baseline recorded: {path} (1 cases: 1 succeed")
    claim_baseline(path).release()  # the claim was released


def test_baseline_recorded_meanwhile_is_used(tmp_path):
    s = _session(tmp_path, record_missing=True)
    path = _baseline(s.cases).save(tmp_path / "base.json")
    record_missing(path, s.ui.message, lambda *a: pytest.fail("recorded twice"))
    assert s.ui.lines == [f"{path}: recorded meanwhile by another run; using it"]


def test_incompatible_baseline_passes_only_forced(tmp_path):
    path = _baseline(_corpus(tmp_path)).save(tmp_path / "base.json")
    other = {**BACKEND, "soc": "other"}
    cases = _session(tmp_path).cases
    with pytest.raises(ConfigError):
        run_baseline(path, other, cases, RunConfig())
    _, warnings = run_baseline(path, other, cases, RunConfig(), force=True)
    assert warnings and any("soc" in w for w in warnings)


def test_run_header_holds_what_rerendering_needs(tmp_path, monkeypatch):
    monkeypatch.delenv("ACLSIM_FAULTS", raising=False)
    s = _session(tmp_path, env={"ACLSIM_FAULTS": "tiling-race"})
    path = tmp_path / "base.json"
    baseline = _baseline(s.cases)
    info = BackendInfo(BACKEND, {"device_count": 2})
    typed = run_header(s.config, (s.corpus, s.control), (s.cases, []), s.env, info, path, baseline)
    header = typed.to_json()  # the journal's first line
    assert header["type"] == "run" and header["schema"] == RESULTS_SCHEMA
    assert typed.case_ids == ["a", "b"] and typed.baseline_path == str(path)
    assert header["backend"] == {**BACKEND, "device_count": 2}
    assert [c["id"] for c in header["cases"]] == ["a", "b"] and header["control_cases"] == []
    assert header["baseline"] == {"path": str(path), "cases": baseline.summary()}
    assert header["config"] == s.config.to_json() and header["faults"] == "tiling-race"


def test_a_run_reads_its_baseline_file_once_while_it_is_unchanged(tmp_path, monkeypatch):
    from stress.baseline.store import Baseline

    cases = list(_corpus(tmp_path))
    path = _baseline(cases).save(tmp_path / "base.json")
    loads: list = []
    load = Baseline.load
    monkeypatch.setattr(Baseline, "load", lambda p: loads.append(p) or load(p))
    read = read_once()
    first = read(path)
    baseline, _ = run_baseline(path, BACKEND, cases, RunConfig(), read=read)
    assert baseline is first and len(loads) == 1
    _baseline(cases).save(path)  # recorded again: a new file, read again
    assert read(path) is not first and len(loads) == 2
    with pytest.raises(ConfigError, match="no baseline"):  # a missing file: refused as before
        run_baseline(tmp_path / "none.json", BACKEND, cases, RunConfig(), read=read)
