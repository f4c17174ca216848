"""Baselines recorded once per test process: many tests run the same small corpus on the same
(faulty or clean) simulator against the same serial baseline, and recording it is a supervised
child's run of every case three times. The first caller's ``tmp`` holds the file (pytest keeps a
test's temporary folder until the session ends); the tests only read it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from stress.config import RunConfig
from stress.engine.run.session import Session

_RECORDED: dict[tuple[object, ...], Path] = {}


def recorded_baseline(
    tmp: Path,
    corpus: Sequence[str],
    env: Mapping[str, str],
    config: RunConfig,
    control: Sequence[str] = (),
) -> Path:
    """The serial baseline of ``corpus`` (+ ``control``) recorded with ``config`` on the
    simulator with ``env`` (e.g. ``ACLSIM_FAULTS``), recorded on the first call."""
    key = (tuple(corpus), tuple(control), tuple(sorted(env.items())), repr(config))
    path = _RECORDED.get(key)
    if path is None or not path.exists():
        tmp.mkdir(parents=True, exist_ok=True)
        path = tmp / f"baseline-{len(_RECORDED)}.json"
        Session(config, list(corpus), list(control), env=dict(env)).record_baseline(path)
        _RECORDED[key] = path
    return path
