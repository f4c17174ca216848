"""The run directory: its default name, and the claim on it (one run writes into one
directory at a time).

A run creates ``DIR/.lock`` with ``O_CREAT | O_EXCL`` (or opens the one a killed run left),
takes an exclusive ``flock`` on it (the kernel decides the race: exactly one of two runs gets
it, and drops it when its holder dies, however it dies) and writes its pid into it. A second
run that cannot take the flock stops with "DIR is in use by pid N" (exit 2). A lock file whose
flock is free was left by a run that was killed: it is taken over, with a line saying whose it
was. The lock is removed when the run ends; a ``kill -9`` leaves the file behind, stale.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import fcntl
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stress.errors import ConfigError

__all__ = [
    "LOCK_FILE",
    "RUNS_ROOT",
    "Claim",
    "claim_baseline",
    "claim_lock",
    "claim_run_dir",
    "new_out_dir",
]

LOCK_FILE = ".lock"
RUNS_ROOT = Path("stress-out")  # the default runs folder (relative to the working directory)


def new_out_dir(root: str | Path = RUNS_ROOT, seed: int | None = None) -> Path:
    """A fresh ``<root>/<UTC time>-s<seed>`` directory name (not an existing one; two runs that
    pick the same name in the same second are told apart by :func:`claim_run_dir`)."""
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    base = Path(root) / f"{stamp}-s{seed}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = Path(f"{base}-{n}")
    return path


@dataclass(frozen=True)
class Claim:
    """A held lock file: open and ``flock``-ed (the kernel drops the flock when the process
    dies, however it dies, so a stale lock is told from a live one without trusting pids)."""

    path: Path
    pid: int
    fd: int
    made: Path | None = None  # the directory the claim created (removed again if left empty)

    def release(self) -> None:
        """Remove the lock file and drop the claim (best effort: a vanished dir is fine)."""
        try:
            self.path.unlink(missing_ok=True)
            if self.made is not None and not any(self.made.iterdir()):
                self.made.rmdir()  # stopped before writing anything: no empty dir left
        except OSError:
            pass
        try:
            os.close(self.fd)
        except OSError:
            pass


def _holder(path: Path) -> int | None:
    """The pid in a lock file; None when it is gone or unreadable (half written)."""
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def _usable_dir(directory: Path) -> None:
    """Make ``directory`` (and parents), or one line saying why it cannot be a run dir."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ConfigError(
            f"{directory}: is a file, not a directory; choose another --out"
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"{directory}: cannot make the run directory: {exc.strerror}; choose another --out"
        ) from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ConfigError(f"{directory}: the run directory is not writable; choose another --out")


def _open_lock(path: Path) -> tuple[int, bool]:
    """The lock file's fd, and whether this call created it (``O_EXCL``)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644), True
    except FileExistsError:
        return os.open(path, os.O_RDWR), False


def claim_lock(path: Path, busy: str, say: Callable[[str], None] = lambda _: None) -> Claim:
    """Take the lock file ``path``; ``busy`` (with ``{who}``) is the error when another live
    process holds it; ``say`` hears about a stale lock taken over."""
    try:
        fd, created = _open_lock(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot create the lock: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        holder = _holder(path)
        raise ConfigError(busy.format(who=f"pid {holder}" if holder else "another run")) from None
    holder = None if created else _holder(path)
    if holder is not None and holder != os.getpid():
        state = "no such process" if not _alive(holder) else "pid reused, holds no lock"
        say(f"{path}: stale lock of pid {holder} ({state}) taken over")
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError as exc:
        os.close(fd)
        raise ConfigError(f"{path}: cannot write the lock: {exc.strerror}") from None
    return Claim(path, os.getpid(), fd)


def claim_run_dir(directory: Path, say: Callable[[str], None] = lambda _: None) -> Claim:
    """Create ``directory`` if needed and claim it. Raises :class:`ConfigError` when it is in
    use or unusable."""
    made = None if directory.exists() else directory
    _usable_dir(directory)
    busy = f"{directory} is in use by {{who}}; wait for it or choose another --out"
    return dataclasses.replace(claim_lock(directory / LOCK_FILE, busy, say), made=made)


def claim_baseline(path: Path, say: Callable[[str], None] = lambda _: None) -> Claim:
    """Claim the recording of the baseline ``path`` (lock ``.<name>.lock`` beside it): a second
    run that would record the same file is told who records it, instead of racing."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = "it is a file" if isinstance(exc, FileExistsError) else exc.strerror
        raise ConfigError(
            f"{path}: cannot make the baseline's folder {path.parent} ({why}); choose another "
            "baseline path (--baseline, or --out of baseline record)"
        ) from None
    busy = (
        f"{path}: the baseline is being recorded by {{who}}; wait for it to finish, then rerun "
        "(the run will use it)"
    )
    return claim_lock(path.parent / f".{path.name}.lock", busy, say)
