"""The hostile sweep's table: each row a CLI call and what it must end in (issue #19)."""

from __future__ import annotations

import resource
import signal
from pathlib import Path

from _hostile_kills import (
    banner_after_error,
    disk_full,
    kill_9_then_report,
    signal_run,
    two_recordings_one_path,
    two_runs_one_out,
)
from _hostile_proc import ADD, Files, Row, run_args, shell

#: run's options and the values each must refuse (one line naming the option, exit 2)
BAD_RUN_VALUES = {
    "--threads": ("abc", "0", "2000", "500", "100000", "-3"),
    "--device": ("99", "-1", "2147483648"),
    "--seed": ("-1", "1e400"),
    "--call-timeout": ("nan", "0", "inf", "-1"),
    "--hang-floor": ("nan", "0", "inf", "-1"),
    "--hang-factor": ("nan", "0.5", "inf", "x"),
    "--duration": ("nan", "inf", "0", "-0.5"),
    "--budget": ("nan", "inf", "0"),
    "--iterations": ("0", "-1"),
    "--repeats": ("0", "-1", "x"),
    "--canary": ("256", "-1", "x"),
    "--max-case-bytes": ("0", "12Q", "nan"),
    "--shrink-budget": ("nan", "-1", "inf"),
    "--phases": ("bogus", ""),
}
#: the other subcommands' bad numbers: name -> argv
BAD_OTHER_VALUES = {
    "gradcheck --C 0": ("gradcheck", "--C", "0"),
    "gradcheck 10^10 tokens": ("gradcheck", "--B", "100000", "--S", "100000"),
    "gradcheck --C -128": ("gradcheck", "--C", "-128"),
    "gradcheck --sample -1": ("gradcheck", "--sample", "-1"),
    "gradcheck --eps nan": ("gradcheck", "--eps", "nan"),
    "gradcheck --element bogus": ("gradcheck", "--element", "bogus[1]"),
    "gradcheck --num-iters 0": ("gradcheck", "--num-iters", "0"),
    "corpus generate --count -1": ("corpus", "generate", "--op", "add", "--count", "-1"),
    "corpus generate --max-side 0": ("corpus", "generate", "--op", "add", "--max-side", "0"),
}
#: baseline files (made by Files) a run must refuse with one line naming file and field
BAD_BASELINES = (
    "fifo", "adir", "deep.json", "b-truncated.json", "b-nonutf8.json", "b-array.json",
    "b-repeats-abc.json", "b-repeats-neg.json", "b-canary-x.json", "b-backend-str.json",
    "b-cases-list.json", "b-digest-int.json", "b-code-str.json", "b-outputs-null.json",
)  # fmt: skip
#: run directories (made by Files) whose journal report must refuse -> a word of the line
BAD_JOURNALS = {
    "j-nonutf8": "not UTF-8",
    "j-deep": "results.jsonl: line 1 nests more than",  # not "no results": not a journal
    "j-header-only": "",  # a run killed before its first phase: incomplete, exit 3
    "j-garbage": "results.jsonl: line 1 is not a JSON record",
    "j-fifo": "not a regular file",
    "j-dir": "is a directory",
    "j-zero": "not a regular file",
}


def _argument_rows(f: Files) -> list[Row]:
    """Numbers out of range, NaN, infinite or not numbers, for every subcommand taking them."""
    p = f.path
    record = ("baseline", "record", "--corpus", ADD, "--control", "none", "--out", p("nb.json"))
    table = [
        Row(f"run {option} {v}", run_args(f.baseline, f.out(), option, v), needle=option[2:])
        for option, values in BAD_RUN_VALUES.items()
        for v in values
    ]
    table += [Row(name, argv) for name, argv in BAD_OTHER_VALUES.items()]
    return [
        *table,
        Row("run --threads 2000 --duration 0.2",
            run_args(f.baseline, f.out(), "--threads", "2000", "--duration", "0.2")),
        Row("baseline record --device 99", (*record, "--device", "99"),
            needle="the backend has"),
        Row("baseline record --repeats 0", (*record, "--repeats", "0"), needle="--repeats"),
        Row("baseline record --call-timeout nan", (*record, "--call-timeout", "nan"),
            needle="--call-timeout"),
        Row("reproduce --iterations -1",
            ("reproduce", str(f.run), "--case", "dadd-f32", "--iterations", "-1")),
        Row("sanitize --timeout nan", ("sanitize", str(f.run), "--timeout", "nan")),
    ]  # fmt: skip


def _input_rows(f: Files) -> list[Row]:
    """Corpus, baseline and journal files that are not what they claim to be."""
    b, p = f.baseline, f.path
    corpora = {
        "FIFO": p("fifo"),
        "/dev/zero": "/dev/zero",
        "a directory": p("adir"),
        "missing": p("nothing.toml"),
        "non-UTF-8": p("nonutf8.toml"),
        "TOML nested 1000 deep": p("deep.toml"),
    }
    run = ("run", "--baseline", str(b), "--quiet", "--control", "none", "--phases", "serial")
    table = [
        Row(f"corpus is {what}", (*run, "--corpus", path, "--out", str(f.out())))
        for what, path in corpora.items()
    ]
    table += [Row(f"baseline {name}", run_args(Path(p(name)), f.out())) for name in BAD_BASELINES]
    table += [
        Row(f"report on {name}", ("report", p(name)), needle=needle,
            expect=frozenset({2, 3} if name == "j-header-only" else {2}))
        for name, needle in BAD_JOURNALS.items()
    ]  # fmt: skip
    return [
        *table,
        Row("corpus with a 4 TB case", (*run, "--corpus", p("huge.toml"), "--out", str(f.out())),
            needle="bytes"),
        *(Row(f"corpus with {what}", (*run, "--corpus", p(name), "--out", str(f.out())),
              needle=needle)
          for what, name, needle in (("C = 0", "c0.toml", "field 'C': 0 is outside"),
                                     ("N = 0", "n0.toml", "field 'N': 0 is outside"),
                                     ("a rank-100 shape", "rank100.toml", "rank 100 is over 8"))),
        Row("baseline /dev/zero", run_args(Path("/dev/zero"), f.out())),
        Row("baseline show /dev/zero", ("baseline", "show", "/dev/zero")),
        Row("baseline show deep JSON", ("baseline", "show", p("deep.json"))),
        Row("report on an empty journal", ("report", p("j-empty")), needle="no results"),
        Row("report on a file", ("report", p("afile")), needle="not a directory"),
        Row("report on a missing dir", ("report", p("nowhere"))),
        Row("run --resume on a garbage journal", ("run", "--resume", p("j-garbage"))),
        Row("run --resume on a file", ("run", "--resume", p("afile"))),
    ]  # fmt: skip


def _environment_rows(f: Files) -> list[Row]:
    """Broken CANN roots, bad simulator settings, a host memory limit."""
    p = f.path
    info = ("info", "--backend", "cann")
    small = ("gradcheck", "--B", "1", "--S", "8", "--C", "128", "--sample", "1")
    run = lambda *extra: run_args(f.baseline, f.out(), *extra)  # noqa: E731
    home = "ASCEND_HOME_PATH"
    return [
        Row("ASCEND_HOME_PATH junk libascendcl.so", info, env={home: p("cann-junk")},
            needle="lib"),
        Row("ASCEND_HOME_PATH junk ELF files", info, env={home: p("cann-junk2")}, needle="lib"),
        Row("ASCEND_HOME_PATH empty dir", info, env={home: p("cann-empty")}),
        Row("ASCEND_HOME_PATH nonexistent (run)", run("--backend", "cann"),
            env={home: p("nowhere")}),
        Row("ACLSIM_DEVICE_MEMORY=4K", run("--max-case-bytes", "1G"),
            env={"ACLSIM_DEVICE_MEMORY": "4096"}, expect=frozenset({1, 2}),
            needle="out-of-memory"),
        Row("ACLSIM_DEVICE_MEMORY=junk", run(), env={"ACLSIM_DEVICE_MEMORY": "lots"},
            needle="ACLSIM_DEVICE_MEMORY"),
        Row("info, ACLSIM_DEVICE_MEMORY=junk", ("info",), env={"ACLSIM_DEVICE_MEMORY": "lots"},
            needle="ACLSIM_DEVICE_MEMORY"),
        Row("sim faults, ACLSIM_FAULTS=bogus", ("sim", "faults"),
            env={"ACLSIM_FAULTS": "bogus"}, needle="unknown fault"),
        Row("gradcheck, ACLSIM_FAULTS=bogus", small, env={"ACLSIM_FAULTS": "bogus"},
            needle="unknown fault"),
        Row("ulimit -v 1 GB", run("--phases", "serial,isolated", "--duration", "1"),
            limits=((resource.RLIMIT_AS, 1 << 30),), expect=frozenset({0, 1, 2}), timeout=180),
    ]  # fmt: skip


def _output_rows(f: Files, drop_root: list[str] | None) -> list[Row]:
    """Out dirs and files that are files, or lie under a file or a read-only dir."""
    b, p = f.baseline, f.path
    record = ("baseline", "record", "--corpus", ADD, "--control", "none")
    table = [
        Row("--out names a file", run_args(b, Path(p("afile"))), needle="is a file"),
        Row("--out under a file", run_args(b, Path(p("afile/run"))), needle="Not a directory"),
        Row("--junit under a file", run_args(b, f.out(), "--junit", p("afile/j.xml")),
            needle="--junit"),
        Row("baseline record --out under a file", (*record, "--out", p("afile/b.json")),
            needle="baseline's folder"),
        Row("corpus generate --out under a file",
            ("corpus", "generate", "--op", "add", "--out", p("afile/x.toml")), needle="--out"),
        Row("reproduce -o under a file",
            ("reproduce", str(f.run), "--case", "dadd-f32", "-o", p("afile/r.py")),
            needle="choose another -o"),
        Row("report --merge --out under a file",
            ("report", "--merge", str(f.run), str(f.run), "--out", p("afile/m"))),
        Row("run banner after a bad --out", custom=banner_after_error),
    ]  # fmt: skip
    if drop_root is None:
        return table
    return [
        *table,
        Row("--out under a read-only dir", run_args(b, Path(p("ro/run"))), unprivileged=True,
            needle="Permission denied"),
        Row("report on a read-only run dir", ("report", p("j-readonly")), unprivileged=True,
            needle="not writable"),
    ]  # fmt: skip


def _process_rows(f: Files) -> list[Row]:
    """Pipes closed early, a full disk, kills, signals, two runs at once."""
    clean = " ".join(run_args(f.baseline, Path("OUT")))

    def piped(tail: str) -> Row:
        return Row(f"run {tail}", expect=frozenset({0}), custom=lambda f: shell(
            f"STRESS {clean.replace('OUT', str(f.out()))} {tail}", f.root))  # fmt: skip

    return [
        piped("| head -n 2"),
        piped("--json | head -n 1"),
        Row("report --json | head -n 1", expect=frozenset({0}),
            custom=lambda f: shell(f"STRESS report {f.run} --json | head -n 1", f.root)),
        Row("disk full (ulimit -f 64K)", custom=disk_full, needle="File too large"),
        Row("kill -9 mid-phase, then report", custom=kill_9_then_report,
            expect=frozenset({1, 3})),
        Row("SIGTERM mid-run", custom=signal_run(signal.SIGTERM, False),
            expect=frozenset({143})),
        Row("SIGINT mid-run", custom=signal_run(signal.SIGINT, False), expect=frozenset({130})),
        Row("SIGTERM during --record-baseline", custom=signal_run(signal.SIGTERM, True),
            expect=frozenset({143})),
        Row("SIGINT during --record-baseline", custom=signal_run(signal.SIGINT, True),
            expect=frozenset({130})),
        Row("two runs on one --out", custom=two_runs_one_out, needle="in use by pid"),
        Row("two --record-baseline on one path", custom=two_recordings_one_path,
            expect=frozenset({0})),
    ]  # fmt: skip


def rows(f: Files, drop_root: list[str] | None) -> list[Row]:
    """Every row of the sweep (``drop_root``: the prefix that runs a row unprivileged; None
    where that is impossible here, and the read-only rows are left out)."""
    return [
        *_argument_rows(f),
        *_input_rows(f),
        *_environment_rows(f),
        *_output_rows(f, drop_root),
        *_process_rows(f),
    ]
