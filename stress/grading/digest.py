"""Output fingerprints: sha256 per output and per call, and the canary check.

Before a call every output's memory is filled with a canary byte (default 0xAB). After it, an
element whose bytes are all still the canary was most likely never written. A computed value
can equal the canary pattern by chance (fp16 0xABAB is -0.0583), so the count is compared with
the count of the same pattern in the numpy reference or baseline rather than with zero (the
baseline's ``canary_chance``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import numpy as np

from stress.config import CANARY

__all__ = ["DEFAULT_CANARY", "call_digest", "canary_count", "digest"]

DEFAULT_CANARY = CANARY  # defined once, in stress.config


def digest(array: np.ndarray) -> str:
    """sha256 hex of the array's bytes in C order (dtype and shape are the caller's business)."""
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def call_digest(output_digests: Mapping[str, str]) -> str:
    """One sha256 over a call's per-output digests, in output order."""
    h = hashlib.sha256()
    for name, d in output_digests.items():
        h.update(f"{name}={d};".encode())
    return h.hexdigest()


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def canary_count(array: np.ndarray, canary: int = DEFAULT_CANARY) -> int:
    """How many elements of ``array`` consist of the canary byte only."""
    if array.size == 0:
        return 0
    flat = np.ascontiguousarray(array).reshape(-1)
    uint = _UINT.get(flat.dtype.itemsize)
    if uint is not None:  # one vectorised comparison with the element-sized pattern
        pattern = int.from_bytes(bytes([canary & 0xFF]) * flat.dtype.itemsize, "little")
        return int(np.count_nonzero(flat.view(uint) == pattern))
    raw = flat.view(np.uint8).reshape(flat.size, -1)
    return int(np.count_nonzero((raw == (canary & 0xFF)).all(axis=1)))
