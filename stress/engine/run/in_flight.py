"""How many calls the concurrent phases may keep in flight: what the cases take against the
memory the host and the device report free.

``--max-case-bytes`` judges one call (:mod:`stress.engine.call.case_size`); this module judges
a phase. A concurrent phase runs ``--threads`` calls at once, and each call in flight holds

* on the device: every tensor the case passes (:func:`~stress.engine.call.case_size.case_bytes`);
* on the host: the outputs it downloads, and, on the simulator, its device tensors too (the
  simulated device's memory is the host's);

while every case's host inputs are held once, for the whole phase (generated once per case and
reused by every call). Before the phases start, the run takes :data:`SHARE` of the memory the
host reports available (``MemAvailable``) and of the device's free memory
(``aclrtGetMemInfo``), subtracts the inputs, and puts no more calls in flight than the biggest
case fits: fewer threads for a big case, with a note in the console and the report. Where not
even one call fits, the run is refused before it starts, with one line naming the case (unless
``--max-case-bytes`` was given: the user then says the machine holds it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from stress.config import RunConfig
from stress.corpus.parse import Case
from stress.engine.call.case_size import case_bytes, human
from stress.errors import ConfigError

__all__ = [
    "SHARE",
    "InFlight",
    "host_available_bytes",
    "in_flight",
    "input_bytes",
    "limit_threads",
]

#: The share of the free host and device memory the calls in flight may take.
SHARE = 2


def _nbytes(shape: Sequence[int], dtype: np.dtype) -> int:
    return math.prod(int(d) for d in shape) * np.dtype(dtype).itemsize


def input_bytes(case: Case) -> int:
    """Bytes of the host inputs the case uploads (held once per case)."""
    return sum(_nbytes(s, d) for s, d in case.spec.uploaded(case.params).values())


def output_bytes(case: Case) -> int:
    """Bytes of the tensors one call downloads that it does not upload (its outputs)."""
    return max(case_bytes(case) - input_bytes(case), 0)


def host_available_bytes(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """``MemAvailable`` (bytes), or None where the system does not say."""
    try:
        for line in meminfo.read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass(frozen=True)
class InFlight:
    """The calls a concurrent phase may keep in flight, and why."""

    threads: int  # calls in flight at once (≤ the threads asked for)
    asked: int  # --threads
    case: str  # the biggest case (by what one call holds)
    host_per_call: int
    device_per_call: int
    host_inputs: int  # every case's host inputs, held once
    host_free: int | None  # the share of available host memory the calls may take
    device_free: int | None  # the share of free device memory

    @property
    def limited(self) -> bool:
        return self.threads < self.asked

    def note(self) -> str:
        """The console and report line of a run whose threads memory limits."""
        return (
            f"memory: one call of case '{self.case}' holds {human(self.host_per_call)} of host "
            f"and {human(self.device_per_call)} of device memory; "
            f"{self._budget()} fit {self.threads} calls in flight: the concurrent phases run "
            f"{self.threads} thread{'s' if self.threads != 1 else ''} instead of {self.asked}"
        )

    def _budget(self) -> str:
        parts = []
        if self.host_free is not None:
            parts.append(
                f"1/{SHARE} of the host's available memory ({human(self.host_free)}, "
                f"{human(self.host_inputs)} of it the inputs)"
            )
        if self.device_free is not None:
            parts.append(f"1/{SHARE} of the device's free memory ({human(self.device_free)})")
        return " and ".join(parts)


def _fit(budget: int | None, per_call: int) -> int | None:
    if budget is None or per_call <= 0:
        return None
    return max(budget, 0) // per_call


def in_flight(
    cases: Sequence[Case],
    threads: int,
    *,
    simulator: bool,
    host_available: int | None,
    device_free: int | None,
    given_limit: bool = False,
) -> InFlight:
    """The calls in flight the memory allows for ``cases`` on ``threads`` threads; a
    :class:`ConfigError` where not one call of the biggest case fits (and the user did not
    give ``--max-case-bytes``)."""
    host_share = None if host_available is None else host_available // SHARE
    device_share = None if device_free is None else device_free // SHARE
    # a view variant shares its twin's host inputs (laid out otherwise only at upload)
    inputs = sum(input_bytes(c) for c in {c.twin: c for c in cases}.values())
    host_calls = None if host_share is None else host_share - inputs
    best = InFlight(threads, threads, "", 0, 0, inputs, host_share, device_share)
    for case in cases:
        device = case_bytes(case)
        host = output_bytes(case) + (device if simulator else 0)
        fits = [n for n in (_fit(host_calls, host), _fit(device_share, device)) if n is not None]
        n = min([threads, *fits])
        bigger = host + device > best.host_per_call + best.device_per_call
        if n < best.threads or (n == best.threads and bigger):
            best = InFlight(n, threads, case.id, host, device, inputs, host_share, device_share)
    if best.threads < 1:
        if given_limit:
            return replace(best, threads=1)
        raise ConfigError(
            f"{_source(cases, best.case)}: case '{best.case}': one call holds "
            f"{human(best.host_per_call)} of host and {human(best.device_per_call)} of device "
            f"memory beside {human(inputs)} of inputs, more than {best._budget()} allow; make "
            "the case's shapes smaller, free memory, or give --max-case-bytes to run it anyway "
            "on one thread"
        )
    return best


def _source(cases: Sequence[Case], case_id: str) -> str:
    return next((str(c.source) for c in cases if c.id == case_id), "corpus")


def limit_threads(
    config: RunConfig, cases: Sequence[Case], info: dict[str, Any]
) -> tuple[RunConfig, InFlight]:
    """``config`` with no more threads than :func:`in_flight` allows on the backend ``info``
    describes (``aclnn-stress info``'s fields), and the limit."""
    limit = in_flight(
        cases,
        config.threads,
        simulator=bool(info.get("simulator")),
        host_available=host_available_bytes(),
        device_free=info.get("device_memory_free"),
        given_limit=config.max_case_bytes is not None,
    )
    return (replace(config, threads=limit.threads) if limit.limited else config), limit
