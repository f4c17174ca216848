"""The run's first step started ahead (stress.engine.run.early): its child sets itself up and
holds before its first call; taken as the same job it goes and its records pass on as they
arrive; any other job cancels it unheard."""

from __future__ import annotations

import sys
import time

import pytest

from stress.engine.isolation.supervise import run_child
from stress.engine.run.early import Ahead, EarlyStart, first_job
from stress.records import CallRecord
from stress.vocabulary import PhaseStatus

#: A stand-in phase child: it holds as a phase child does (jobs._hold), then sends one call
#: record stamped with the moment it went.
_CHILD = """
import sys, time
from stress.engine.isolation.child import child_main
from stress.engine.isolation.jobs import _hold
from stress.engine.isolation.messages import ChildEnd
from stress.vocabulary import ChildStatus

def run(job, send):
    send({"type": "ready"})
    _hold(send)
    for case in job.extra.get("cases", ["c"]):
        send({"type": "call", "phase": "burst", "case": case, "status": "ok", "went": time.time()})
        time.sleep(0.2)
    return ChildEnd(ChildStatus.DONE)

child_main(sys.argv[1], int(sys.argv[2]), run)
"""
JOB = {"kind": "phase", "phase": "burst", "stream": "per-thread"}


def _ahead(job: dict | None = None) -> Ahead:
    def run(job, on_record, cancel):
        assert job["hold"] is True
        command = [sys.executable, "-c", _CHILD]
        return run_child(job, on_record, silence_timeout=30, command=command, cancel=cancel)

    return Ahead(run, job or JOB, grace=5.0)


class _Server:
    def close(self) -> None:
        pass


def test_the_step_taken_as_its_own_job_goes_then_and_passes_its_records_on():
    early = EarlyStart(_Server(), {})  # type: ignore[arg-type]
    early.ahead = _ahead()
    time.sleep(1.0)  # set up and held meanwhile: no call yet
    ahead = early.take_ahead(dict(JOB))
    assert ahead is not None and early.ahead is None
    took = time.time()
    records: list[tuple[CallRecord, float]] = []
    result = ahead.drain(lambda rec, at: records.append((rec, at)))
    assert result.status == PhaseStatus.DONE
    assert [r.case for r, _ in records] == ["c"]
    assert records[0][0].extra["went"] >= took  # it made its call only once taken


def test_another_job_cancels_the_step_started_ahead():
    early = EarlyStart(_Server(), {})  # type: ignore[arg-type]
    ahead = early.ahead = _ahead()
    time.sleep(0.5)
    assert early.take_ahead({**JOB, "stream": "shared"}) is None
    assert early.ahead is None
    assert not ahead._thread.is_alive()  # its child killed, its supervisor ended


def test_close_cancels_a_step_never_taken():
    early = EarlyStart(_Server(), {})  # type: ignore[arg-type]
    ahead = early.ahead = _ahead()
    early.close()
    assert early.ahead is None and not ahead._thread.is_alive()


def test_an_interrupt_while_taking_it_lets_the_calls_in_flight_end_and_be_recorded():
    """Ctrl-C while the step's records pass on: as run_child does, the child is asked to stop
    (SIGTERM: its round ends) and what it still sends within the grace is passed on."""
    job = {**JOB, "cases": ["a", "b"]}
    ahead = _ahead(job)
    seen: list[str] = []

    def on_record(rec, at):
        seen.append(rec.case)
        if len(seen) == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ahead.drain(on_record)
    assert seen == ["a", "b"]
    assert not ahead._thread.is_alive()


def test_the_first_job_is_the_burst_as_the_session_makes_it():
    from stress.config import RunConfig

    config = RunConfig(streams=("per-thread", "shared"), budget_s=20.0)
    job = first_job(config, ["corpus/mhc.toml"], ["corpus/control.toml"], "b.json")
    assert job is not None
    assert (job["phase"], job["stream"], job["baseline"]) == ("burst", "per-thread", "b.json")
    assert job["control"] == ["corpus/control.toml"]  # the burst runs the control among it
    assert job["config"]["duration"] == 1.0  # a tenth of the budget, per stream policy
    serial = RunConfig(phases=("serial",), budget_s=20.0)  # its share depends on the start
    assert first_job(serial, ["corpus/mhc.toml"], [], "b.json") is None


def test_a_forked_child_finds_the_parsed_corpus_and_its_size_variants():
    """The session loads through preload before it forks the fork server: a child loading the
    same files gets the same case objects, and their size variants derived once."""
    import os

    from stress.corpus import preload
    from stress.corpus.parse import load_corpus
    from stress.corpus.size_variants import size_variants

    paths = ["corpus/mhc.toml", "corpus/pool/mul.toml"]
    cases = preload.load(paths)
    variants = size_variants(cases, ("empty", "edge"))
    assert variants
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: nothing parsed or derived again
        again = preload.load(paths)
        same = all(a is b for a, b in zip(again, cases, strict=True))
        derived = size_variants(again, ("empty", "edge"))
        kept = all(a is b for a, b in zip(derived, variants, strict=True))
        os.write(write, b"1" if same and kept else b"0")
        os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.waitpid(pid, 0)
    assert answer == b"1"
    # other case objects (parsed anew) are derived anew, and the same
    fresh = load_corpus(paths)
    redone = size_variants(fresh, ("empty", "edge"))
    assert [v.id for v in redone] == [v.id for v in variants]
    assert all(a is not b for a, b in zip(redone, variants, strict=True))


def test_a_baseline_path_it_may_not_look_at_starts_nothing_ahead():
    """A path whose stat fails (here: too long; for an unprivileged user, a folder it may not
    enter) is not looked at ahead: the run says what is wrong with it where it always did."""
    from pathlib import Path

    from stress.engine.run.early import is_file

    too_long = Path("b" * 5000 + ".json")
    with pytest.raises(OSError):
        too_long.is_file()
    assert is_file(too_long) is False
    assert is_file(Path(__file__)) is True
