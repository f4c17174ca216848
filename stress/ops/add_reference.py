"""The numpy reference of the declared ``add`` (stress/ops/declarations/add.toml):
out = self + alpha * other, computed as the device does (float32 for floating types, wrapping
int32 arithmetic when both inputs are int32), then cast to out's dtype."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["add"]


def add(values: Mapping[str, Any], inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``values``: the case's resolved C parameters; ``inputs``: self and other."""
    a, b = inputs["self"], inputs["other"]
    alpha = values["alpha"][0]
    if a.dtype == np.int32 and b.dtype == np.int32:
        total = a.astype(np.int64) + int(alpha) * b.astype(np.int64)
        out = total.astype(np.int32)  # wraps like the device's int32 arithmetic
    else:
        out = a.astype(np.float32) + np.float32(alpha) * b.astype(np.float32)
    return {"out": out.astype(values["out"].dtype)}
