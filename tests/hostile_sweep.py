"""The hostile-input sweep of issue #19, by hand, as one script (not a pytest module).

Every row starts the real CLI (``python -m stress``) the way a user or a CI job would — wrong
numbers, files that are FIFOs, /dev/zero, directories, non-UTF-8 or nested 100000 deep, broken
baselines and CANN installs, out dirs that cannot be made, a full disk, a closed stdout, kills
and two runs at once — and checks what issue #19 promises: the stated exit code, and for exit 2
exactly one line on stderr; never a traceback. It prints a table (row, exit code, first line of
stderr, pass/fail) and exits 1 when a row fails.

    .venv/bin/python tests/hostile_sweep.py            # from the repository root, < 3 min
    .venv/bin/python tests/hostile_sweep.py -k baseline -v

The single-purpose tests of the same promises are tests/test_hostile_cli.py and
tests/test_fuzz_inputs.py (docs/reliability.md); this sweep is the done-when check of #19.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ADD = "corpus/ops/add.toml"
HUNG = -1  # the exit code of a row killed at its timeout


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str
    problem: str = ""  # a check of the row that failed beyond the exit code and stderr shape


@dataclass(frozen=True)
class Row:
    name: str
    argv: tuple[str, ...] = ()
    expect: frozenset[int] = frozenset({2})
    needle: str = ""  # must appear in stdout + stderr
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    limits: tuple[tuple[int, int], ...] = ()  # (RLIMIT_*, bytes) set in the child
    unprivileged: bool = False  # run as uid 65534 (root writes through read-only modes)
    custom: Callable[[Path], Outcome] | None = None

    def one_line(self, code: int) -> bool:
        return code == 2


# -- running the CLI ------------------------------------------------------------------------------
def _env(extra: dict[str, str], tmp: Path) -> dict[str, str]:
    return {**os.environ, "STRESS_BACKEND": "sim", "TMPDIR": str(tmp), **extra}


def _limited(limits: tuple[tuple[int, int], ...]) -> Callable[[], None] | None:
    if not limits:
        return None

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        for which, value in limits:
            resource.setrlimit(which, (value, value))

    return apply


def cli(argv: tuple[str, ...] | list[str], tmp: Path, **kw) -> Outcome:
    """``python -m stress ARGV`` to completion (HUNG past its timeout)."""
    prefix = kw.pop("prefix", [])
    timeout = kw.pop("timeout", 60.0)
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "stress", *argv],
            cwd=REPO,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=_env(kw.pop("env", {}), tmp),
            **kw,
        )
    except subprocess.TimeoutExpired as hung:
        return Outcome(
            HUNG, _text(hung.stdout), _text(hung.stderr), f"still running at {timeout} s"
        )
    return Outcome(done.returncode, done.stdout, done.stderr)


def _text(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""


def shell(command: str, tmp: Path, timeout: float = 90.0) -> Outcome:
    """A bash pipeline (``set -o pipefail``: the CLI's exit code, not head's)."""
    py = f"{sys.executable} -m stress"
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command.replace('STRESS', py)}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env({}, tmp),
    )
    return Outcome(done.returncode, done.stdout, done.stderr)


def run_args(baseline: Path, out: Path, *extra: str) -> tuple[str, ...]:
    """``run`` over the add corpus: no control, no shrinking, serial unless --phases follows."""
    return (
        "run",
        "--corpus",
        ADD,
        "--control",
        "none",
        "--baseline",
        str(baseline),
        "--out",
        str(out),
        "--shrink-budget",
        "0",
        "--quiet",
        "--phases",
        "serial",
        *extra,  # a later --phases wins
    )


def unprivileged_prefix() -> list[str] | None:
    """The command prefix that drops root (None: not possible, or the checkout unreadable)."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        return None
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import stress"], cwd=REPO)
    return prefix if probe.returncode == 0 else None


# -- the fixtures the rows read -------------------------------------------------------------------
class Files:
    """A scratch folder of hostile files, plus a real baseline and a clean run to mutate."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.baseline = root / "add.json"
        self.run = root / "clean"
        self._n = 0

    def out(self) -> Path:
        """A fresh --out path."""
        self._n += 1
        return self.root / f"out{self._n}"

    def prepare(self) -> None:
        record = cli(
            (
                "baseline",
                "record",
                "--corpus",
                ADD,
                "--control",
                "none",
                "--out",
                str(self.baseline),
            ),
            self.root,
            timeout=180,
        )
        if record.code != 0:
            raise SystemExit(f"hostile sweep: recording the baseline failed:\n{record.stderr}")
        clean = cli(run_args(self.baseline, self.run, "--phases", "serial"), self.root, timeout=180)
        if clean.code != 0:
            raise SystemExit(f"hostile sweep: the clean run failed:\n{clean.stderr}")
        self._inputs()
        self._baselines()
        self._journals()
        self._installs()

    def path(self, name: str) -> str:
        return str(self.root / name)

    def _inputs(self) -> None:
        os.mkfifo(self.root / "fifo")
        (self.root / "adir").mkdir()
        (self.root / "afile").write_text("x")
        (self.root / "nonutf8.toml").write_bytes(b'[[case]]\nid = "\xff\xfe"\n')
        (self.root / "deep.toml").write_text("x = " + "[" * 1000 + "]" * 1000 + "\n")
        (self.root / "deep.json").write_text("[" * 100000 + "]" * 100000)
        big = (REPO / ADD).read_text().replace("B = 4\nH = 64", "B = 1000000\nH = 1000000", 1)
        (self.root / "huge.toml").write_text(big)
        ro = self.root / "ro"
        ro.mkdir()
        ro.chmod(0o555)

    def _baselines(self) -> None:
        good = json.loads(self.baseline.read_text())
        some = next(iter(good["cases"]))

        def edited(name: str, change: Callable[[dict], None]) -> None:
            doc = json.loads(json.dumps(good))
            change(doc)
            (self.root / name).write_text(json.dumps(doc))

        edited("b-repeats-abc.json", lambda d: d.update(repeats="abc"))
        edited("b-repeats-neg.json", lambda d: d.update(repeats=-1))
        edited("b-canary-x.json", lambda d: d.update(canary="x"))
        edited("b-backend-str.json", lambda d: d.update(backend="sim"))
        edited("b-cases-list.json", lambda d: d.update(cases=[]))
        edited("b-digest-int.json", lambda d: d["cases"][some].update(call_digest=7))
        edited("b-code-str.json", lambda d: d["cases"][some].update(code="zero"))
        edited("b-outputs-null.json", lambda d: d["cases"][some].update(outputs=None))
        (self.root / "b-truncated.json").write_text(self.baseline.read_text()[:500])
        (self.root / "b-nonutf8.json").write_bytes(b'{"cases": "\xff"}')
        (self.root / "b-array.json").write_text("[]")

    def _journals(self) -> None:
        journal = (self.run / "results.jsonl").read_text()
        for name, text in {
            "j-empty": b"",
            "j-nonutf8": b'{"type": "\xff"}\n',
            "j-deep": ("[" * 100000 + "]" * 100000 + "\n").encode(),
            "j-header-only": journal.splitlines()[0].encode() + b"\n",
            "j-garbage": b"not json at all\n",
        }.items():
            (self.root / name).mkdir()
            (self.root / name / "results.jsonl").write_bytes(text)
        (self.root / "j-fifo").mkdir()
        os.mkfifo(self.root / "j-fifo" / "results.jsonl")
        (self.root / "j-dir" / "results.jsonl").mkdir(parents=True)
        (self.root / "j-zero").mkdir()
        (self.root / "j-zero" / "results.jsonl").symlink_to("/dev/zero")
        ro_run = self.root / "j-readonly"
        shutil.copytree(self.run, ro_run, symlinks=True)
        ro_run.chmod(0o555)

    def _installs(self) -> None:
        junk = self.root / "cann-junk" / "lib64"
        junk.mkdir(parents=True)
        (junk / "libascendcl.so").write_text("not an ELF file")
        both = self.root / "cann-junk2" / "lib64"
        both.mkdir(parents=True)
        for lib in ("libascendcl.so", "libnnopbase.so", "libopapi.so"):
            (both / lib).write_bytes(b"\x7fELF junk")
        (self.root / "cann-empty").mkdir()


# -- rows with their own choreography (kills, concurrency, pipes) ---------------------------------
def _kill_9_then_report(f: Files) -> Outcome:
    out = f.out()
    tmp = f.root / "tmp-kill9"
    tmp.mkdir()
    args = run_args(f.baseline, out, "--phases", "isolated,mixed", "--duration", "6")
    proc = subprocess.Popen(
        [sys.executable, "-m", "stress", *args],
        cwd=REPO,
        env=_env({}, tmp),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if not _wait_for(out / "results.jsonl", '"phase-start"', 60):
        proc.kill()
        return Outcome(proc.wait(), "", "", "no phase started in 60 s")
    time.sleep(2)
    before = (out / "results.jsonl").read_text().splitlines()
    proc.kill()
    proc.wait()
    time.sleep(1.0)
    report = cli(("report", str(out)), f.root)
    problem = ""
    kept = before if before[-1].endswith("}") else before[:-1]
    if (out / "results.jsonl").read_text().splitlines()[: len(kept)] != kept:
        problem = "journal lines written before the kill are missing"
    elif list(tmp.iterdir()):
        problem = f"temp files left: {sorted(p.name for p in tmp.iterdir())}"
    elif "incomplete" not in report.stdout + report.stderr:
        problem = "the report does not say incomplete"
    return Outcome(report.code, report.stdout, report.stderr, problem)


def _wait_for(path: Path, needle: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and needle in path.read_text(errors="replace"):
            return True
        time.sleep(0.1)
    return False


def _signal_run(sig: signal.Signals, record: bool) -> Callable[[Files], Outcome]:
    def go(f: Files) -> Outcome:
        out = f.out()
        baseline = f.root / f"new-{sig.name}.json" if record else f.baseline
        extra = ("--record-baseline", "--repeats", "30") if record else ("--duration", "30")
        args = run_args(
            baseline, out, "--phases", "serial" if record else "serial,isolated", *extra
        )
        args = tuple(a for a in args if a != "--quiet")  # the "recording it now" line
        err = f.root / f"{sig.name}-{record}.err"
        proc = subprocess.Popen(
            [sys.executable, "-m", "stress", *args],
            cwd=REPO,
            env=_env({}, f.root),
            stdout=subprocess.DEVNULL,
            stderr=err.open("wb"),
        )
        needle, where = (
            ("recording it now", err) if record else ('"phase":"isolated"', out / "results.jsonl")
        )
        if not _wait_for(where, needle, 60):
            proc.kill()
            return Outcome(proc.wait(), "", err.read_text(), f"never saw {needle!r}")
        proc.send_signal(sig)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            return Outcome(HUNG, "", err.read_text(), "still running 30 s after the signal")
        text = err.read_text(errors="replace")
        problem = ""
        if record and (baseline.exists() or "not written" not in text):
            problem = "a baseline was half-kept or the line does not say so"
        if not record and not (out / "report.json").is_file():
            problem = "no partial report.json"
        return Outcome(code, "", text, problem)

    return go


def _two_runs_one_out(f: Files) -> Outcome:
    out = f.out()
    args = run_args(f.baseline, out, "--phases", "serial")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "stress", *args],
            cwd=REPO,
            env=_env({}, f.root),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    done = [(p.wait(timeout=120), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    codes = sorted(c for c, _ in done)
    loser = next((e for c, e in done if c == 2), "")
    problem = "" if codes == [0, 2] and "in use by pid" in loser else f"codes {codes}"
    problem = problem or _journal_parses(out / "results.jsonl")
    return Outcome(2 if codes == [0, 2] else max(codes), "", loser, problem)


def _two_recordings_one_path(f: Files) -> Outcome:
    path = f.root / "shared-baseline.json"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "stress", *run_args(path, f.out(), "--record-baseline")],
            cwd=REPO,
            env=_env({}, f.root),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    done = [(p.wait(timeout=180), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    codes = sorted(c for c, _ in done)
    problem = "" if 0 in codes and set(codes) <= {0, 2} else f"codes {codes}"
    try:
        json.loads(path.read_text())
    except (OSError, ValueError) as bad:
        problem = problem or f"the baseline is not whole JSON: {bad}"
    leftovers = [p.name for p in f.root.iterdir() if p.name.startswith(".shared-baseline")]
    problem = problem or (f"temp files left: {leftovers}" if leftovers else "")
    loser = next((e for c, e in done if c == 2), "")
    return Outcome(0 if not problem else max(codes), "", loser, problem)


def _journal_parses(path: Path) -> str:
    try:
        for line in path.read_text().splitlines():
            json.loads(line)
    except (OSError, ValueError) as bad:
        return f"{path}: {bad}"
    return ""


def _disk_full(f: Files) -> Outcome:
    out = f.out()
    small = ((resource.RLIMIT_FSIZE, 64 << 10),)
    args = run_args(f.baseline, out, "--phases", "serial,isolated", "--duration", "1")
    full = cli(args, f.root, preexec_fn=_limited(small), timeout=90)
    again = cli(("report", str(out)), f.root)
    problem = "" if again.code in (1, 3) else f"report DIR afterwards: exit {again.code}"
    if full.code == 2 and "results.jsonl" not in full.stderr:
        problem = "the line does not name the journal"
    return Outcome(full.code, full.stdout, full.stderr, problem)


def _banner_after_error(f: Files) -> Outcome:
    """Without --quiet, a bad --out is the only line: no banner printed before it."""
    args = [a for a in run_args(f.baseline, Path(f.path("afile"))) if a != "--quiet"]
    done = cli(tuple(args), f.root)
    return Outcome(done.code, done.stdout, done.stderr, "banner printed" if done.stdout else "")


# -- the table -------------------------------------------------------------------------------------
def rows(f: Files, drop_root: list[str] | None) -> list[Row]:
    b, p = f.baseline, f.path
    run = lambda *extra: run_args(b, f.out(), *extra)  # noqa: E731
    table = [Row("run --threads abc", run("--threads", "abc"), needle="--threads")]
    for option, values in {
        "--threads": ("0", "2000", "500", "100000", "-3"),
        "--device": ("99", "-1", "2147483648"),
        "--seed": ("-1", "1e400"),
        "--call-timeout": ("nan", "0", "inf", "-1"),
        "--duration": ("nan", "inf", "0", "-0.5"),
        "--budget": ("nan", "inf", "0"),
        "--iterations": ("0", "-1"),
        "--repeats": ("0", "-1", "x"),
        "--canary": ("256", "-1", "x"),
        "--max-case-bytes": ("0", "12Q", "nan"),
        "--shrink-budget": ("nan", "-1", "inf"),
        "--phases": ("bogus", ""),
    }.items():
        table += [
            Row(f"run {option} {v}", run(option, v), needle=option.lstrip("-")) for v in values
        ]
    table += [
        Row("run --threads 2000 --duration 0.2", run("--threads", "2000", "--duration", "0.2")),
        Row(
            "baseline record --device 99",
            (
                "baseline",
                "record",
                "--corpus",
                ADD,
                "--control",
                "none",
                "--out",
                p("nb.json"),
                "--device",
                "99",
            ),
            needle="the backend has",
        ),
        Row(
            "baseline record --repeats 0",
            ("baseline", "record", "--repeats", "0", "--out", p("nb.json")),
            needle="--repeats",
        ),
        Row(
            "baseline record --call-timeout nan",
            ("baseline", "record", "--call-timeout", "nan", "--out", p("nb.json")),
            needle="--call-timeout",
        ),
        Row("gradcheck --C 0", ("gradcheck", "--C", "0"), needle="C"),
        Row("gradcheck 10^10 tokens", ("gradcheck", "--B", "100000", "--S", "100000"), timeout=30),
        Row("gradcheck --C -128", ("gradcheck", "--C", "-128")),
        Row("gradcheck --sample -1", ("gradcheck", "--sample", "-1")),
        Row("gradcheck --eps nan", ("gradcheck", "--eps", "nan")),
        Row("gradcheck --element bogus", ("gradcheck", "--element", "bogus[1]")),
        Row("gradcheck --num-iters 0", ("gradcheck", "--num-iters", "0")),
        Row("corpus generate --count -1", ("corpus", "generate", "--op", "add", "--count", "-1")),
        Row(
            "corpus generate --max-side 0", ("corpus", "generate", "--op", "add", "--max-side", "0")
        ),
        Row(
            "corpus generate --out under a file",
            ("corpus", "generate", "--op", "add", "--out", p("afile/x.toml")),
        ),
        Row(
            "reproduce --iterations -1",
            ("reproduce", str(f.run), "--case", "dadd-f32", "--iterations", "-1"),
        ),
        Row("sanitize --timeout nan", ("sanitize", str(f.run), "--timeout", "nan")),
    ]
    # input files: corpus, baseline, journal
    for what, path in {
        "FIFO": p("fifo"),
        "/dev/zero": "/dev/zero",
        "a directory": p("adir"),
        "missing": p("nothing.toml"),
        "non-UTF-8": p("nonutf8.toml"),
        "TOML nested 1000 deep": p("deep.toml"),
    }.items():
        table.append(
            Row(
                f"corpus is {what}",
                ("run", "--corpus", path, "--baseline", str(b), "--out", str(f.out()), "--quiet"),
                timeout=20,
            )
        )
    huge = (
        "run",
        "--corpus",
        p("huge.toml"),
        "--control",
        "none",
        "--phases",
        "serial",
        "--baseline",
        str(b),
    )
    table.append(
        Row(
            "corpus with a 4 TB case",
            (*huge, "--out", str(f.out()), "--quiet"),
            needle="bytes",
            timeout=20,
        )
    )
    for name in (
        "fifo",
        "adir",
        "deep.json",
        "b-truncated.json",
        "b-nonutf8.json",
        "b-array.json",
        "b-repeats-abc.json",
        "b-repeats-neg.json",
        "b-canary-x.json",
        "b-backend-str.json",
        "b-cases-list.json",
        "b-digest-int.json",
        "b-code-str.json",
        "b-outputs-null.json",
    ):
        table.append(Row(f"baseline {name}", run_args(Path(p(name)), f.out()), timeout=30))
    table.append(Row("baseline /dev/zero", run_args(Path("/dev/zero"), f.out()), timeout=30))
    table.append(Row("baseline show /dev/zero", ("baseline", "show", "/dev/zero"), timeout=20))
    table.append(Row("baseline show deep JSON", ("baseline", "show", p("deep.json"))))
    for name, needle in {
        "j-nonutf8": "not UTF-8",
        "j-deep": "results.jsonl",
        "j-header-only": "",
        "j-garbage": "results.jsonl",
        "j-fifo": "not a regular file",
        "j-dir": "is a directory",
        "j-zero": "not a regular file",
    }.items():
        codes = frozenset({2, 3} if name == "j-header-only" else {2})  # killed before phase 1
        table.append(
            Row(f"report on {name}", ("report", p(name)), expect=codes, needle=needle, timeout=20)
        )
    table += [
        Row("report on an empty journal", ("report", p("j-empty")), needle="no results"),
        Row("report on a file", ("report", p("afile")), needle="not a directory"),
        Row("report on a missing dir", ("report", p("nowhere"))),
        Row("run --resume on a garbage journal", ("run", "--resume", p("j-garbage"))),
        Row("run --resume on a file", ("run", "--resume", p("afile"))),
    ]
    # environment
    table += [
        Row(
            "ASCEND_HOME_PATH junk libascendcl.so",
            ("info", "--backend", "cann"),
            env={"ASCEND_HOME_PATH": p("cann-junk")},
            needle="lib",
        ),
        Row(
            "ASCEND_HOME_PATH junk ELF files",
            ("info", "--backend", "cann"),
            env={"ASCEND_HOME_PATH": p("cann-junk2")},
            needle="lib",
        ),
        Row(
            "ASCEND_HOME_PATH empty dir",
            ("info", "--backend", "cann"),
            env={"ASCEND_HOME_PATH": p("cann-empty")},
        ),
        Row(
            "ASCEND_HOME_PATH nonexistent (run)",
            run("--backend", "cann"),
            env={"ASCEND_HOME_PATH": p("nowhere")},
        ),
        Row(
            "ACLSIM_DEVICE_MEMORY=4K",
            run("--max-case-bytes", "1G"),
            env={"ACLSIM_DEVICE_MEMORY": "4096"},
            expect=frozenset({1, 2}),
            needle="out-of-memory",
        ),
        Row(
            "ACLSIM_DEVICE_MEMORY=junk",
            run("--phases", "serial"),
            env={"ACLSIM_DEVICE_MEMORY": "lots"},
            needle="ACLSIM_DEVICE_MEMORY",
        ),
        Row(
            "info, ACLSIM_DEVICE_MEMORY=junk",
            ("info",),
            env={"ACLSIM_DEVICE_MEMORY": "lots"},
            needle="ACLSIM_DEVICE_MEMORY",
        ),
        Row(
            "sim faults, ACLSIM_FAULTS=bogus",
            ("sim", "faults"),
            env={"ACLSIM_FAULTS": "bogus"},
            needle="unknown fault",
        ),
        Row(
            "gradcheck, ACLSIM_FAULTS=bogus",
            ("gradcheck", "--B", "1", "--S", "8", "--C", "128", "--sample", "1"),
            env={"ACLSIM_FAULTS": "bogus"},
            needle="unknown fault",
        ),
        Row(
            "ulimit -v 1 GB",
            run("--phases", "serial,isolated", "--duration", "1"),
            limits=((resource.RLIMIT_AS, 1 << 30),),
            expect=frozenset({0, 1, 2}),
            timeout=90,
        ),
    ]
    # outputs
    table += [
        Row("--out names a file", run_args(b, Path(p("afile"))), needle="is a file"),
        Row("--out under a file", run_args(b, Path(p("afile/run"))), needle="Not a directory"),
        Row("--junit under a file", run("--junit", p("afile/j.xml")), needle="--junit"),
        Row(
            "baseline record --out under a file",
            (
                "baseline",
                "record",
                "--corpus",
                ADD,
                "--control",
                "none",
                "--out",
                p("afile/b.json"),
            ),
            needle="baseline's folder",
        ),
        Row(
            "reproduce -o under a file",
            ("reproduce", str(f.run), "--case", "dadd-f32", "-o", p("afile/r.py")),
            needle="choose another -o",
        ),
        Row(
            "report --merge --out under a file",
            ("report", "--merge", str(f.run), str(f.run), "--out", p("afile/m")),
        ),
        Row("run banner after a bad --out", custom=_banner_after_error),
    ]
    if drop_root is not None:
        table += [
            Row(
                "--out under a read-only dir",
                run_args(b, Path(p("ro/run"))),
                unprivileged=True,
                needle="Permission denied",
            ),
            Row(
                "report on a read-only run dir",
                ("report", p("j-readonly")),
                unprivileged=True,
                needle="not writable",
            ),
        ]
    # pipes, kills, concurrency
    clean = " ".join(run_args(b, Path("OUT")))
    table += [
        Row(
            "run | head -n 2",
            custom=lambda f: shell(
                f"STRESS {clean.replace('OUT', str(f.out()))} | head -n 2", f.root
            ),
            expect=frozenset({0}),
        ),
        Row(
            "run --json | head -n 1",
            custom=lambda f: shell(
                f"STRESS {clean.replace('OUT', str(f.out()))} --json | head -n 1", f.root
            ),
            expect=frozenset({0}),
        ),
        Row(
            "report --json | head -n 1",
            custom=lambda f: shell(f"STRESS report {f.run} --json | head -n 1", f.root),
            expect=frozenset({0}),
        ),
        Row("disk full (ulimit -f 64K)", custom=_disk_full, needle="File too large"),
        Row("kill -9 mid-phase, then report", custom=_kill_9_then_report, expect=frozenset({1, 3})),
        Row("SIGTERM mid-run", custom=_signal_run(signal.SIGTERM, False), expect=frozenset({143})),
        Row("SIGINT mid-run", custom=_signal_run(signal.SIGINT, False), expect=frozenset({130})),
        Row(
            "SIGTERM during --record-baseline",
            custom=_signal_run(signal.SIGTERM, True),
            expect=frozenset({143}),
        ),
        Row(
            "SIGINT during --record-baseline",
            custom=_signal_run(signal.SIGINT, True),
            expect=frozenset({130}),
        ),
        Row("two runs on one --out", custom=_two_runs_one_out, needle="in use by pid"),
        Row(
            "two --record-baseline on one path",
            custom=_two_recordings_one_path,
            expect=frozenset({0}),
        ),
    ]
    return table


# -- judging ---------------------------------------------------------------------------------------
def judge(row: Row, got: Outcome) -> str:
    """'' when the row holds, else why not."""
    text = got.stdout + got.stderr
    if "Traceback" in text:
        return "traceback"
    if got.code not in row.expect:
        return got.problem or f"exit {got.code}, wanted {sorted(row.expect)}"
    if got.problem:
        return got.problem
    lines = got.stderr.strip().splitlines()
    if row.one_line(got.code) and len(lines) != 1:
        return f"{len(lines)} lines on stderr"
    if row.needle and row.needle not in text:
        return f"does not mention {row.needle!r}"
    return ""


def attempt(row: Row, f: Files, drop_root: list[str] | None) -> tuple[Row, Outcome, float]:
    started = time.monotonic()
    if row.custom is not None:
        got = row.custom(f)
    else:
        prefix = drop_root if row.unprivileged and drop_root else []
        got = cli(
            row.argv,
            f.root,
            env=row.env,
            timeout=row.timeout,
            preexec_fn=_limited(row.limits),
            prefix=prefix,
        )
    return row, got, time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="", help="only rows whose name contains one of A,B,...")
    parser.add_argument("-j", "--jobs", type=int, default=3, help="rows at once (default 3)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print failing output")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    opts = parser.parse_args(argv)
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="aclnn-hostile-"))
    root.chmod(0o755)  # the unprivileged rows must reach it
    try:
        files = Files(root)
        files.prepare()
        drop_root = unprivileged_prefix()
        todo = [r for r in rows(files, drop_root) if any(k in r.name for k in opts.k.split(","))]
        with ThreadPoolExecutor(max(1, opts.jobs)) as pool:
            results = list(pool.map(lambda r: attempt(r, files, drop_root), todo))
    finally:
        if not opts.keep:
            for sub in root.rglob("*"):
                if sub.is_dir() and not sub.is_symlink():
                    sub.chmod(0o755)
            shutil.rmtree(root, ignore_errors=True)
    return report(results, time.monotonic() - started, opts.verbose, drop_root is None)


def report(
    results: list[tuple[Row, Outcome, float]], wall: float, verbose: bool, no_ro: bool
) -> int:
    failed = 0
    width = max(len(r.name) for r, _, _ in results)
    print(f"{'row':<{width}}  exit  {'s':>5}  result  first line of stderr")
    for row, got, seconds in results:
        why = judge(row, got)
        failed += bool(why)
        first = (got.stderr.strip().splitlines() or [""])[0][:110]
        verdict = "pass" if not why else f"FAIL ({why})"
        print(f"{row.name:<{width}}  {got.code:>4}  {seconds:5.1f}  {verdict}  {first}")
        if why and verbose:
            print("    stdout:", got.stdout[-1500:], "\n    stderr:", got.stderr[-3000:])
    if no_ro:
        print("(read-only rows skipped: root without setpriv, or a checkout uid 65534 cannot read)")
    print(f"{len(results) - failed}/{len(results)} rows pass in {wall:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
