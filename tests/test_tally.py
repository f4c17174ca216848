"""The streaming grader: a journal folded record by record grades in memory that does not grow
with the number of calls, and reads the journal one line at a time."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from stress.errors import ConfigError
from stress.files import read_lines
from stress.grading.assemble import report_from
from stress.grading.tally import JournalTally
from stress.records import CallRecord, PhaseResult
from stress.vocabulary import PhaseStatus, Status

STRESS = Path(__file__).resolve().parents[1] / "stress"
CASES = [f"c{i}" for i in range(12)]
HEADER = {
    "type": "run",
    "config": {"phases": ["interleaved", "mixed"], "seed": 1},
    "cases": [{"id": c} for c in CASES],
}


def _records(calls: int) -> Iterator[object]:
    """A run's records, made one at a time: half the calls interleaved (every 7th wrong), half
    in mixed rounds of four."""
    yield HEADER
    half = calls // 2
    yield {"type": "phase-start", "phase": "interleaved", "variant": ""}
    for i in range(half):
        victim, aggressor = CASES[i % 12], CASES[(i // 12) % 12]
        wrong = i % 7 == 0
        yield CallRecord(
            "interleaved", victim, Status.OK, seq=i, worker=i % 4, round=i // 12,
            match=not wrong, digest=f"d{i % 3 if wrong else 0}", aggressor=aggressor,
            order="first", variant="", elapsed=i / 1000,
        )  # fmt: skip
    yield PhaseResult("interleaved", "", PhaseStatus.DONE, "", half, 1.0)
    yield {"type": "phase-start", "phase": "mixed", "variant": ""}
    for i in range(calls - half):
        yield CallRecord(
            "mixed", CASES[i % 12], Status.OK, seq=i, worker=i % 4, round=i // 4,
            match=True, digest="d0", variant="", elapsed=i / 1000,
        )  # fmt: skip
    yield PhaseResult("mixed", "", PhaseStatus.DONE, "", calls - half, 1.0)
    yield {"type": "run-end", "status": PhaseStatus.DONE}


def _held(calls: int, **keep: int) -> tuple[int, JournalTally]:
    """Bytes still held after folding ``calls`` calls (the records made here included; what
    pytest, hypothesis and other threads allocate meanwhile filtered out)."""
    tally = JournalTally(**keep)
    tracemalloc.start()
    try:
        tally.feed(_records(calls))
        snapshot = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # only what the project's own code allocated: another thread of the test process (pytest,
    # hypothesis, xdist's execnet channel) may allocate meanwhile
    ours = snapshot.filter_traces([tracemalloc.Filter(True, f"{STRESS}/*")])
    return sum(s.size for s in ours.statistics("filename")), tally


@pytest.mark.parametrize("keep", [{}, {"keep_calls": 200, "failing": 5}])
def test_the_tally_of_a_long_run_does_not_grow_with_its_calls(keep):
    small, _ = _held(3_000, **keep)
    big, tally = _held(30_000, **keep)
    # ten times the calls: what it holds does not follow them (counts, not records). The
    # margin (a quarter, plus 64 kB) is what the interpreter's own caches and a busy machine's
    # timing move it by (it failed at +10 % + 16 kB under load); keeping the 27 000 extra
    # records, or anything of ~6 bytes a call, is far over it (a record is hundreds of bytes)
    assert big < small * 1.25 + 64_000, (small, big)
    report = report_from(tally)
    assert report.calls == 30_000
    inter = next(p for p in report.phases if p.name == "interleaved")
    assert inter.verdict == "MISMATCH_RANDOM"
    assert sum(c.calls for c in report.interference.cells) == 15_000
    assert sum(c.failures for c in report.interference.cells) == len(range(0, 15_000, 7))
    # the mixed rounds repeat three groups of four cases: 3 x 6 pairs
    assert report.extra["coverage"]["mixed"]["pairs_run"] == 18
    if keep:
        sample = tally.sample(("interleaved", ""))
        assert sample.total == 15_000 and sample.wrong == len(range(0, 15_000, 7))
        failing = sample.failing
        assert failing and all(total > 5 and len(calls) == 5 for total, calls in failing.values())
        assert 200 <= len(sample.calls) <= 200 + 5 * 12


def test_a_resumed_phase_replaces_its_unfinished_attempt():
    tally = JournalTally()
    start = {"type": "phase-start", "phase": "serial", "variant": ""}
    bad = CallRecord("serial", "c0", Status.OK, match=False, digest="x", variant="")
    good = CallRecord("serial", "c0", Status.OK, match=True, digest="d", variant="")
    tally.feed([HEADER, start, bad, start, good, PhaseResult("serial", "", PhaseStatus.DONE)])
    (phase,) = tally.graded(final=False).phases
    assert phase.verdict == "PASS" and phase.calls == 1


def test_the_journal_is_read_a_line_at_a_time_with_a_cap_per_line(tmp_path: Path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"type": "note"}\n' + "x" * 100 + "\n{}")
    lines = read_lines(path, "result file", cap=50)
    assert next(lines) == (1, '{"type": "note"}', False)
    with pytest.raises(ConfigError, match=r"results.jsonl: line 2 of the result file is longer"):
        next(lines)
    assert list(read_lines(path, "result file"))[-1] == (3, "{}", True)
