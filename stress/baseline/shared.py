"""A baseline file shared by many processes (the pytest plugin's xdist workers), grown case by
case: missing cases are recorded and merged in under an exclusive lock with an atomic rename."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stress.baseline.store import Baseline
from stress.config import CANARY, RunConfig
from stress.corpus.parse import Case
from stress.errors import ConfigError

__all__ = ["BaselineStore"]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


@dataclass
class BaselineStore:
    """A baseline file grown case by case, safe for concurrent writers (processes).

    ``ensure(cases)`` returns a :class:`Baseline` holding every requested case: cases missing
    from the file (or changed since: another key) are recorded with ``record(cases)`` and merged
    in, under an exclusive lock on ``<path>.lock``, then the file is replaced atomically. A file
    recorded on another backend, or with other settings, is started afresh.
    """

    path: Path
    deterministic: bool = True
    canary: int = CANARY
    repeats: int = RunConfig.repeats

    def _usable(self, fingerprint: dict[str, Any]) -> Baseline | None:
        if not self.path.exists():
            return None
        try:
            baseline = Baseline.load(self.path)
            baseline.check_compatible(
                fingerprint, [], deterministic=self.deterministic, canary=self.canary
            )
        except ConfigError:
            return None  # corrupt, or from another backend / settings: record afresh
        return baseline

    def ensure(self, cases: Sequence[Case], fingerprint: dict[str, Any], record) -> Baseline:
        """The baseline of ``cases``; ``record(cases) -> Baseline`` records the missing ones."""
        with _locked(self.path.with_name(self.path.name + ".lock")):
            baseline = self._usable(fingerprint)
            have = baseline.cases if baseline else {}
            missing = [c for c in cases if c.id not in have or have[c.id].key != c.key]
            if not missing and baseline is not None:
                return baseline
            fresh: Baseline = record(missing)
            merged = dict(have)
            merged.update(fresh.cases)
            files = sorted(
                {
                    *((baseline.corpus.get("files") or []) if baseline else []),
                    *fresh.corpus["files"],
                }
            )
            result = Baseline(
                backend=fresh.backend,
                corpus={"cases": {cid: cb.key for cid, cb in merged.items()}, "files": files},
                deterministic=self.deterministic,
                repeats=self.repeats,
                cases=merged,
                canary=self.canary,
            )
            result.save(self.path)
            return result

    @staticmethod
    def subset(baseline: Baseline, cases: Sequence[Case]) -> Baseline:
        """The part of ``baseline`` that ``cases`` need (a run's own snapshot)."""
        return Baseline(
            backend=baseline.backend,
            corpus={
                "cases": {c.id: c.key for c in cases},
                "files": sorted({c.source for c in cases}),
            },
            deterministic=baseline.deterministic,
            repeats=baseline.repeats,
            cases={c.id: baseline.cases[c.id] for c in cases},
            canary=baseline.canary,
            created=baseline.created,
        )
