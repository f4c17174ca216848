"""The hostile sweep's plumbing: a row, its outcome, running the CLI, the scratch files."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
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
    timeout: float = 120.0  # only a hang (a FIFO read forever) should reach it
    limits: tuple[tuple[int, int], ...] = ()  # (RLIMIT_*, bytes) set in the child
    unprivileged: bool = False  # run as uid 65534 (root writes through read-only modes)
    custom: Callable[[Path], Outcome] | None = None

    def one_line(self, code: int) -> bool:
        return code == 2


# -- running the CLI ------------------------------------------------------------------------------
def env_of(extra: dict[str, str], tmp: Path) -> dict[str, str]:
    return {**os.environ, "STRESS_BACKEND": "sim", "TMPDIR": str(tmp), **extra}


def limited(limits: tuple[tuple[int, int], ...]) -> Callable[[], None] | None:
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
    timeout = kw.pop("timeout", 120.0)
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "stress", *argv],
            cwd=REPO,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=env_of(kw.pop("env", {}), tmp),
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
        env=env_of({}, tmp),
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
    # the probe's own failure (a checkout uid 65534 cannot read) is the answer, not output
    probe = subprocess.run(
        [*prefix, sys.executable, "-c", "import stress"], cwd=REPO, capture_output=True
    )
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
        mhc, first = (REPO / "corpus/mhc.toml").read_text(), "C = 256\nseed = 101"
        for name, dims in (("c0", "C = 0"), ("n0", "N = 0\nC = 256")):  # issue 31 item 4
            (self.root / f"{name}.toml").write_text(mhc.replace(first, f"{dims}\nseed = 101", 1))
        rank100 = f'[[case]]\nid = "r100"\nop = "add"\nshape = {[1] * 100}\n'
        (self.root / "rank100.toml").write_text(rank100)
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
