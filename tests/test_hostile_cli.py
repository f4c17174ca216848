"""Hostile use of the CLI with real processes and real signals (issue #19, docs/reliability.md):
killed runs lose nothing, two runs never corrupt each other, every CLI or file error is one line
with exit 2, a closed stdout breaks nothing.

Each test runs the small add corpus for a few seconds on the simulator.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from stress.grading.assemble import build_report as _build_report
from stress.journal.results import read_results
from tests._cli import REPO, stress_cli
from tests._runs import (
    ADD,
    alive,
    children,
    every_line_parses,
    journal_lines,
    start,
    stress_args,
    wait_for,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux /proc and prctl")


def _one_line_error(proc: subprocess.CompletedProcess) -> str:
    """Exit 2, exactly one line on stderr, no traceback; the line."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "usage:" not in proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("baseline") / "add.json"
    done = stress_cli(
        "baseline", "record", "--corpus", ADD, "--control", "none", "--out", str(path), cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def clean_run(baseline, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("clean") / "run"
    done = stress_cli(*stress_args(baseline, out, "--phases", "serial", "--quiet"), cwd=REPO)
    assert done.returncode == 0, done.stderr
    return out


# -- one-line errors ----------------------------------------------------------------------------
# One style for every argument error: the option, what it must be, the value given (as
# RunConfig's own checks say it); errors about no one value end with the --help to read.
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["run", "--threads", "abc"],
            "aclnn-stress: error: --threads must be an integer, got 'abc'",
        ),
        (["run", "--threads", "0"], "aclnn-stress: error: --threads must be >= 1, got 0"),
        (
            ["run", "--duration", "x"],
            "aclnn-stress: error: --duration must be a number > 0, got 'x'",
        ),
        (["run", "--duration", "0"], "aclnn-stress: error: --duration must be > 0, got 0"),
        (
            ["run", "--stream", "x"],
            "aclnn-stress: error: --stream must be one of shared, per-thread, both, got 'x'",
        ),
        (["run", "--canary", "300"], "aclnn-stress: error: --canary must be a byte 0..255"),
        (["run", "--phases", "nope"], "aclnn-stress: error: --phases must be a comma-separated"),
        (
            ["baseline", "record", "--repeats", "x"],
            "aclnn-stress: error: --repeats must be an integer, got 'x'",
        ),
        (["gradcheck", "--C", "x"], "aclnn-stress: error: --C must be an integer, got 'x'"),
        (["bogus"], "aclnn-stress: error: COMMAND must be one of info, sim, ops, run,"),
    ],
)
def test_argument_errors_are_one_line_in_one_style(argv, expected):
    line = _one_line_error(stress_cli(*argv))
    assert line.startswith(expected) and line.endswith(argv[-1] if argv[-1] == "0" else "'")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["report"], "aclnn-stress: error: the following arguments are required: dir"),
        (["corpus"], "aclnn-stress: error: the following arguments are required"),
        (["run", "--bogus"], "aclnn-stress: error: unrecognized arguments: --bogus"),
    ],
)
def test_structural_argument_errors_name_the_help_to_read(argv, expected):
    line = _one_line_error(stress_cli(*argv))
    assert line.startswith(expected) and line.endswith("--help)")


def test_help_states_the_exit_codes():
    for argv in (["--help"], ["run", "--help"], ["report", "--help"]):
        text = " ".join(stress_cli(*argv).stdout.split())
        assert "3 incomplete" in text and "130/143" in text, argv


def test_out_that_cannot_be_a_run_dir_is_one_line_before_any_phase(baseline, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, why in ((afile, "is a file"), (afile / "sub", "Not a directory")):
        started = time.monotonic()
        args = stress_args(baseline, out, "--phases", "serial", "--quiet")
        line = _one_line_error(stress_cli(*args, cwd=REPO))
        assert str(out) in line and why in line
        assert time.monotonic() - started < 30  # before the backend or a phase started


def test_a_bad_out_is_the_only_line_and_no_latest_link_is_left_beside_an_own_out(
    baseline, clean_run, tmp_path
):
    afile = tmp_path / "afile"
    afile.write_text("x")
    args = [a for a in stress_args(baseline, afile, "--phases", "serial") if a != "--quiet"]
    done = stress_cli(*args, cwd=REPO)
    assert done.stdout == ""  # no banner before the error
    assert "is a file" in _one_line_error(done)
    assert not (clean_run.parent / "latest").exists()  # only stress-out/ gets a latest link


@pytest.mark.parametrize(
    ("argv", "env", "needle"),
    [
        (["info"], {"ACLSIM_DEVICE_MEMORY": "lots"}, "ACLSIM_DEVICE_MEMORY must be"),
        (["sim", "faults"], {"ACLSIM_FAULTS": "bogus"}, "unknown fault 'bogus'"),
    ],
)
def test_a_bad_simulator_setting_is_one_line_in_process(argv, env, needle):
    """aclInit refusing the environment is the environment's error (exit 2), not a traceback."""
    done = stress_cli(*argv, env={**os.environ, "STRESS_BACKEND": "sim", **env})
    line = _one_line_error(done)
    assert "cannot initialise CANN at" in line and needle in line


def test_an_unwritable_junit_is_refused_before_the_run(baseline, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    out = tmp_path / "run"
    args = stress_args(baseline, out, "--phases", "serial", "--junit", str(afile / "j.xml"))
    line = _one_line_error(stress_cli(*args, cwd=REPO))
    assert f"{afile / 'j.xml'}: its folder {afile} is a file; choose another --junit" in line
    assert not out.exists()  # refused before the run dir was made


@pytest.fixture()
def shared_dir():
    """A directory outside pytest's 0700 tree, so that an unprivileged user can reach it."""
    path = Path(tempfile.mkdtemp(prefix="aclnn-stress-ro-"))
    path.chmod(0o755)
    yield path
    for sub in path.rglob("*"):
        if sub.is_dir():
            sub.chmod(0o755)
    shutil.rmtree(path)


def _unprivileged(*argv: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """The CLI as an unprivileged user (root writes through a read-only mode)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: a read-only dir stops nobody")
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        probe = subprocess.run(
            [*prefix, sys.executable, "-c", "import stress"], cwd=cwd, capture_output=True
        )
        if probe.returncode != 0:  # e.g. a checkout under a 0700 mktemp folder
            pytest.skip("the checkout is not readable by an unprivileged user (uid 65534)")
    return subprocess.run(
        [*prefix, sys.executable, "-m", "stress", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_read_only_dirs_are_one_line(baseline, clean_run, shared_dir):
    locked = shared_dir / "ro"
    locked.mkdir()
    locked.chmod(0o555)
    line = _one_line_error(
        _unprivileged(*stress_args(baseline, locked / "run", "--phases", "serial", "--quiet"))
    )
    assert f"{locked / 'run'}: cannot make the run directory: Permission denied" in line
    ro_run = shared_dir / "ro-run"
    ro_run.mkdir()
    (ro_run / "results.jsonl").write_bytes((clean_run / "results.jsonl").read_bytes())
    ro_run.chmod(0o555)
    line = _one_line_error(_unprivileged("report", str(ro_run)))
    assert f"{ro_run}: the run directory is not writable" in line


def test_report_on_a_file_or_an_empty_journal_is_one_line(tmp_path):
    afile = tmp_path / "results.jsonl"
    afile.write_text("")
    assert "not a directory" in _one_line_error(stress_cli("report", str(afile)))
    line = _one_line_error(stress_cli("report", str(tmp_path)))
    assert "no results" in line and "clean" not in line


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_corpus_that_is_no_regular_file_is_one_line_at_once(kind, tmp_path):
    """A FIFO or /dev/zero as the corpus: the corpus pre-load (read once before the fork
    server) read it with Path.read_bytes, which blocked on the FIFO and read /dev/zero until the
    memory ran out; the sweep (make hostile) found both. Now refused as the parser refuses it."""
    corpus = Path("/dev/zero")
    if kind == "fifo":
        corpus = tmp_path / "corpus.toml"
        os.mkfifo(corpus)
    proc = stress_cli("run", "--corpus", str(corpus), "--budget", "2", cwd=REPO, timeout=60)
    line = _one_line_error(proc)
    assert str(corpus) in line and "not a regular file" in line, line


def test_disk_full_names_the_journal_and_keeps_it(baseline, tmp_path):
    def small_disk() -> None:  # a 64 KiB file-size limit, as a full disk would stop writes
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))

    out = tmp_path / "run"
    args = stress_args(baseline, out, "--phases", "serial,isolated", "--duration", "1", "--quiet")
    done = stress_cli(*args, cwd=REPO, preexec_fn=small_disk)
    line = _one_line_error(done)
    assert f"{out / 'results.jsonl'}: File too large" in line
    again = stress_cli("report", str(out))
    assert again.returncode in (1, 3), again.stderr
    assert json.loads((out / "report.json").read_text())["complete"] is False


# -- a closed stdout ----------------------------------------------------------------------------
def _piped(command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {sys.executable} -m stress {command}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_stdout_closed_early_keeps_the_verdict_and_the_files(baseline, clean_run, tmp_path):
    out = tmp_path / "run"
    args = " ".join(stress_args(baseline, out, "--phases", "serial", "--quiet"))
    for tail in ("| head -n 2", "--json | head -n 1"):
        done = _piped(f"{args} {tail}")
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert (out / "report.json").is_file() and (out / "report.html").is_file()
        shutil.rmtree(out)
    done = _piped(f"report {clean_run} --json | head -n 1")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


# -- killed and interrupted runs ----------------------------------------------------------------
def test_kill_9_loses_nothing_and_reports_incomplete(baseline, tmp_path):
    out = tmp_path / "run"
    proc = start(
        stress_args(baseline, out, "--phases", "isolated,mixed", "--duration", "6"), tmp_path, "a"
    )
    wait_for(out / "results.jsonl", '"phase-start"')
    time.sleep(3)
    kids = children(proc.pid)
    before = journal_lines(out)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert len(kids) >= 2, "the fork server and the phase child it forked were running"
    deadline = time.monotonic() + 5
    while any(alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(k) for k in kids), "phase children outlived their parent"
    assert list((tmp_path / "tmpdir").iterdir()) == [], "temp files left behind"
    after = journal_lines(out)
    complete = before if before[-1].endswith("}") else before[:-1]
    assert after[: len(complete)] == complete  # every line written before the kill is there
    done = stress_cli("report", str(out))
    assert done.returncode in (1, 3), done.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["complete"] is False
    assert (report["diagnosis"] == "incomplete") == (done.returncode == 3)
    assert "incomplete" in done.stdout or report["diagnosis"] != "incomplete"


def test_sigterm_writes_the_partial_report_and_exits_143(baseline, tmp_path):
    out = tmp_path / "run"
    args = stress_args(baseline, out, "--phases", "serial,isolated", "--duration", "30")
    proc = start(args, tmp_path, "t")
    wait_for(out / "results.jsonl", '"type":"call","phase":"isolated"')  # isolated calls flow
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    assert proc.wait(timeout=30) == 143
    # the child ended its round (not killed after the 10 s grace, not run out its 30 s phase)
    assert time.monotonic() - sent < 8
    ends = [r for r in every_line_parses(out / "results.jsonl") if r["type"] == "phase-end"]
    assert [(e["phase"], e["status"]) for e in ends] == [
        ("serial", "done"),
        ("isolated", "interrupted"),
    ]
    assert ends[1]["calls"] > 0
    err = (tmp_path / "t.err").read_text()
    assert "Traceback" not in err and "phases finished: serial" in err
    report = json.loads((out / "report.json").read_text())
    assert report["diagnosis"] == "incomplete" and report["status"] == "interrupted"
    assert [p["name"] for p in report["phases"]][:1] == ["serial"]
    assert not (out / ".lock").exists()


def test_sigterm_while_recording_the_baseline_says_nothing_was_kept(tmp_path):
    new = tmp_path / "new.json"
    out = tmp_path / "run"
    # 2000 repeats: a recording of seconds (with 20, a child forked from the fork server
    # sometimes finished recording before the signal arrived)
    proc = start(
        stress_args(new, out, "--record-baseline", "--phases", "serial", "--repeats", "2000"),
        tmp_path,
        "r",
    )
    wait_for(tmp_path / "r.err", "recording it now")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 143
    err = (tmp_path / "r.err").read_text()
    assert f"recording the baseline {new}: it was not written" in err
    assert "partial results" not in err and "Traceback" not in err
    assert not new.exists() and not out.exists()


def build_report(*args, **kwargs) -> dict:
    """report.json's document of the records (what the file on disk holds)."""
    return _build_report(*args, **kwargs).to_json()


# -- concurrent runs ----------------------------------------------------------------------------
def _matches_its_journal(out: Path) -> None:
    every_line_parses(out / "results.jsonl")
    on_disk = json.loads((out / "report.json").read_text())
    again = build_report(list(read_results(out)))
    for key in ("diagnosis", "calls", "complete", "verdict"):
        assert on_disk[key] == again[key], key


def test_two_runs_on_one_out_dir(baseline, tmp_path):
    out = tmp_path / "run"
    args = stress_args(baseline, out, "--phases", "serial", "--duration", "0.5", "--quiet")
    procs = [start(args, tmp_path, f"p{i}") for i in range(2)]
    codes = sorted(p.wait(timeout=120) for p in procs)
    assert codes == [0, 2]
    errs = [(tmp_path / f"p{i}.err").read_text() for i in range(2)]
    loser = next(e for e in errs if "in use by pid" in e)
    assert len(loser.strip().splitlines()) == 1 and f"{out} is in use by pid" in loser
    _matches_its_journal(out)
    assert not (out / ".lock").exists()


def test_a_stale_lock_is_taken_over_with_a_line(baseline, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    (out / ".lock").write_text(f"{dead.pid}\n")
    done = stress_cli(*stress_args(baseline, out, "--phases", "serial"), cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert f"stale lock of pid {dead.pid}" in done.stdout + done.stderr
    _matches_its_journal(out)


def test_two_baseline_recordings_on_one_path(tmp_path):
    new = tmp_path / "b.json"
    procs = [
        start(
            stress_args(new, tmp_path / f"run{i}", "--record-baseline", "--phases", "serial"),
            tmp_path,
            f"b{i}",
        )
        for i in range(2)
    ]
    codes = [p.wait(timeout=180) for p in procs]
    errs = [
        (tmp_path / f"b{i}.err").read_text() + (tmp_path / f"b{i}.out").read_text()
        for i in range(2)
    ]
    assert 0 in codes and set(codes) <= {0, 2}, (codes, errs)
    for code, err in zip(codes, errs, strict=True):
        assert "Traceback" not in err
        if code == 2:
            assert f"{new}: the baseline is being recorded by pid" in err
        else:
            _matches_its_journal(tmp_path / f"run{codes.index(code)}")
    json.loads(new.read_text())  # whole, valid JSON
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_resume_continues_after_the_last_finished_phase(baseline, tmp_path):
    out = tmp_path / "run"
    args = stress_args(
        baseline, out, "--phases", "serial,isolated", "--stream", "shared", "--duration", "2",
        "--quiet",
    )  # fmt: skip
    proc = start(args, tmp_path, "k")
    wait_for(out / "results.jsonl", '"phase":"isolated"')
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = stress_cli("run", "--resume", str(out), "--quiet", "--json", cwd=REPO)
    assert done.returncode == 0, done.stderr
    records = every_line_parses(out / "results.jsonl")  # appended after a torn line: all parse
    ends = [(r["phase"], r["status"]) for r in records if r["type"] == "phase-end"]
    assert ends == [("serial", "done"), ("isolated", "done")]  # serial was not run again
    assert sum(r["type"] == "run" for r in records) == 1
    report = json.loads(done.stdout)
    assert report["complete"] and [p["name"] for p in report["phases"]] == ["serial", "isolated"]
    _matches_its_journal(out)
    again = stress_cli("run", "--resume", str(out), cwd=REPO)
    assert "nothing to resume" in _one_line_error(again)


def test_an_unfinished_journal_is_incomplete_and_findings_outrank_it(clean_run):
    records = list(read_results(clean_run))
    assert build_report(records)["diagnosis"] == "clean"
    cut = [r for r in records if r["type"] != "run-end"]  # as a kill -9 leaves it
    report = build_report(cut)
    assert (report["diagnosis"], report["verdict"]) == ("incomplete", "incomplete")
    assert "did not finish" in report["explanation"] and not report["complete"]
    assert build_report(cut, final=False)["diagnosis"] == "clean"  # the live run's own view
    first = next(
        i
        for i, r in enumerate(cut)
        if r["type"] == "call" and r["status"] == "ok" and not r.get("warmup")
    )
    cut[first] = {**cut[first], "status": "error", "code": 161001, "match": False}
    assert build_report(cut)["diagnosis"] not in ("incomplete", "clean")


def test_two_reports_at_once_leave_whole_files(clean_run, tmp_path):
    procs = [start(["report", str(clean_run)], tmp_path, f"r{i}") for i in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    _matches_its_journal(clean_run)
    html = (clean_run / "report.html").read_text()
    assert html.rstrip().endswith("</html>")
    assert [p.name for p in clean_run.iterdir() if p.name.startswith(".")] == []
