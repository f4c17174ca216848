"""The baseline a run grades against: loaded and checked against the backend and the corpus,
or recorded first when it is missing and ``--record-baseline`` asked for that. Under
``--record-baseline`` a stale baseline (recorded on other backend libraries, for another corpus,
canary or deterministic mode) is recorded again, and the run says why; without it, a stale
baseline is refused in one line (``--force`` compares anyway).

Recording takes the baseline's claim (:func:`stress.engine.run.rundir.claim_baseline`): a second run
that would record the same file is told in one line (exit 2), and one that waited uses the
baseline the other recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stress.baseline.store import Baseline
from stress.config import RunConfig
from stress.corpus.parse import Case
from stress.engine.isolation.messages import Line
from stress.engine.replay.baseline import recording_summary
from stress.engine.run.rundir import claim_baseline
from stress.errors import ConfigError
from stress.records import RecordedCase
from stress.vocabulary import size_kind, variant_kind

__all__ = [
    "Read",
    "read_once",
    "record_missing",
    "run_baseline",
    "skip_unrecorded",
    "unrecorded_variants",
]

#: How a baseline file is read (``Baseline.load``, or :func:`read_once`'s reader).
Read = Callable[[Path], Baseline]


def read_once() -> Read:
    """A ``Baseline.load`` that reads a file once while it is unchanged (same inode, size and
    modification time; a recording replaces the file, so it is read again): a run reads its
    baseline for the size variants it lacks and again to check and grade against it, before
    its first step is let go."""
    memo: dict[tuple[str, int, int, int], Baseline] = {}

    def read(path: Path) -> Baseline:
        try:
            st = path.stat()
        except OSError:
            return Baseline.load(path)  # says what is wrong with it, as it always did
        key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
        if key not in memo:
            memo.clear()
            memo[key] = Baseline.load(path)
        return memo[key]

    return read


def run_baseline(
    path: Path,
    fingerprint: dict[str, Any],
    cases: Sequence[Case],
    config: RunConfig,
    force: bool = False,
    record: Callable[[Path, str | None], None] | None = None,
    read: Read = Baseline.load,
) -> tuple[Baseline, list[str]]:
    """The baseline at ``path`` for ``cases`` under ``config``, and the incompatibilities that
    ``force`` lets pass. A missing one is recorded first by ``record(path, None)``, a stale one
    (``--record-baseline`` without ``--force``) again by ``record(path, why)``; without a
    ``record`` (no ``--record-baseline``) either is refused in one line naming the fix;
    ``read`` reads the file."""

    def check(baseline: Baseline, forced: bool) -> list[str]:
        return baseline.check_compatible(
            fingerprint,
            list(cases),
            deterministic=config.deterministic,
            canary=config.canary,
            force=forced,
        )

    if not path.exists():
        if record is None:
            raise ConfigError(
                f"{path}: no baseline; record one with `aclnn-stress baseline record` "
                "(or pass --record-baseline)"
            )
        record(path, None)
    elif record is not None and not force:
        stale = check(read(path), True)
        if stale:
            record(path, stale[0])
    baseline = read(path)
    return baseline, check(baseline, force)


def unrecorded_variants(path: Path, cases: Sequence[Case], read: Read = Baseline.load) -> list[str]:
    """The ids of the size variants, twins and broadcast views in ``cases``
    (stress.corpus.size_variants, .twins, .variants) that the
    baseline at ``path`` lacks: it was recorded before they were derived (or with another
    ``--max-case-bytes``). The run skips them and says so; a corpus case the baseline lacks is
    still refused (:meth:`Baseline.check_compatible`)."""
    own = ("twins", "broadcast")  # cases with baselines of their own, as the size variants
    derived = [c.id for c in cases if size_kind(c.id) or variant_kind(c.id) in own]
    if not path.exists() or not derived:
        return []
    recorded = read(path).cases
    return [i for i in derived if i not in recorded]


def skip_unrecorded(
    path: Path, cases: list[Case], config: RunConfig, read: Read = Baseline.load
) -> tuple[list[Case], RunConfig, str]:
    """``cases`` without the size variants the baseline at ``path`` lacks, ``config`` naming
    them (so every phase child skips them too), and the note saying so ("" when none)."""
    missing = unrecorded_variants(path, cases, read)
    if not missing:
        return cases, config, ""
    gone = set(missing)
    note = (
        f"{len(missing)} size variants (first '{missing[0]}') are not in the baseline {path} "
        "(recorded before they were derived): skipped; re-record it with `aclnn-stress "
        "baseline record` to run them"
    )
    return [c for c in cases if c.id not in gone], config.with_(unrecorded=tuple(missing)), note


def record_missing(
    path: Path,
    say: Callable[[str], None],
    record: Callable[[Path, Callable[[Line], None]], Any],
    stale: str | None = None,
) -> None:
    """Record the missing baseline ``path`` with ``record(path, on_case)``, unless another run
    records it now (one line, exit 2) or did while this one waited; ``say`` tells the user.
    With ``stale`` (why the existing one does not fit this run) it is recorded again."""
    claim = claim_baseline(path, say)
    try:
        if stale is None and path.exists():
            say(f"{path}: recorded meanwhile by another run; using it")
            return
        if stale is None:
            say(f"no baseline at {path}: recording it now")
        else:
            say(f"baseline {path} does not match this run ({stale}): recording it again")
        recorded: list[RecordedCase] = []
        record(
            path,
            lambda r: recorded.append(r) if isinstance(r, RecordedCase) else None,
        )
        say(recording_summary(path, recorded))
    finally:
        claim.release()
