"""The size budget of a case, checked from shapes and dtypes before anything is allocated.

A case's size is the bytes of every tensor argument it passes (inputs, in-out tensors, outputs,
tensor-list members), computed with Python integers from the parameters alone: a case of
``shape = [1000000, 1000000]`` is refused at corpus load, in well under a second, instead of
reaching numpy's ``MemoryError`` or the device's out-of-memory status minutes later.

The limit is ``--max-case-bytes`` (:attr:`stress.config.RunConfig.max_case_bytes`); unset, it is
:func:`default_max_case_bytes`: a quarter of the host's physical memory (the host keeps the
inputs, the device copies on the simulator and the downloaded outputs of several calls at once)
and, once the backend is known, a quarter of the device memory ``aclrtGetMemInfo`` reports.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence

import numpy as np

from stress.corpus.parse import Case
from stress.errors import ConfigError
from stress.ops.spec import TensorArg, TensorListArg

__all__ = ["FRACTION", "case_bytes", "check_case_sizes", "default_max_case_bytes", "human"]

#: The share of host (and device) memory one case may take by default.
FRACTION = 4


def _tensor_bytes(shape: Iterable[int], dtype: np.dtype) -> int:
    return math.prod(int(d) for d in shape) * np.dtype(dtype).itemsize


def case_bytes(case: Case) -> int:
    """Bytes of every tensor the case's call passes (exact integers: no overflow)."""
    spec, params = case.spec, case.params
    total = 0
    for a in spec.args:
        if isinstance(a, TensorArg) and a.present(params):
            total += _tensor_bytes(a.shape(params), a.dtype(params))
        elif isinstance(a, TensorListArg) and a.present(params):
            for shape, dtype in zip(a.shapes(params), a.dtypes(params), strict=True):
                total += _tensor_bytes(shape, dtype)
    return total


def host_memory_bytes() -> int | None:
    """The host's physical memory, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def default_max_case_bytes(device_bytes: int | None = None) -> int | None:
    """A quarter of host memory and of ``device_bytes`` (the smaller); None if neither known."""
    known = [b for b in (host_memory_bytes(), device_bytes) if b]
    return min(known) // FRACTION if known else None


def human(n: int) -> str:
    """``n`` bytes in decimal units (``4.0 TB``)."""
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if value < 1000 or unit == "PB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{n} B"  # pragma: no cover


def check_case_sizes(
    cases: Sequence[Case], limit: int | None, *, given: bool, device_bytes: int | None = None
) -> None:
    """Refuse the first case over ``limit`` with a one-line :class:`ConfigError` naming its file,
    its size and the fix; ``given``: the limit came from ``--max-case-bytes``."""
    if limit is None:
        return
    for case in cases:
        size = case_bytes(case)
        if size <= limit:
            continue
        of_device = bool(device_bytes) and limit * FRACTION >= (device_bytes or 0)
        origin = (
            "--max-case-bytes"
            if given
            else f"the default limit, 1/{FRACTION} of {'device' if of_device else 'host'} memory"
        )
        raise ConfigError(
            f"{case.source}: case '{case.id}': its tensors take {human(size)} ({size} bytes), "
            f"over {origin} ({human(limit)}); make the case's shapes smaller, or raise "
            "--max-case-bytes if the host and device really hold it"
        )
