"""Gradcheck constants and elements: which entries of which inputs are checked, and the FD
steps."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from stress.errors import ConfigError
from stress.ops.spec import Params

DEFAULT_EPS: tuple[float, ...] = (0.2, 0.1, 0.05, 0.02, 0.01, 0.005)

K_SIGMA = 3.0
RTOL_FP32 = 1e-3
SETTLE_RTOL = 1e-2
DRIFT_REL = 2e-2  # the drift of DESIGN item 3; a row that cannot resolve it is noise-limited
NOISE_FACTOR = 0.5  # n(h) = NOISE_FACTOR * q / h

AGREES, BIASED, UNCONVERGED = "agrees", "biased", "unconverged"
VERDICTS = (AGREES, BIASED, UNCONVERGED)

_SAMPLE_SPAWN_KEY = 2  # make_inputs uses default_rng(seed), make_grads spawn_key (1,)
_F8 = np.float64
_BF16 = np.dtype(ml_dtypes.bfloat16)
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
# unit roundoff of an output as the backend forward produces it (fp32: 32 ulp, see the docstring)
_UNIT = {_BF16: 2.0**-8, _F16: 2.0**-11, _F32: 2.0**-19}
_U64 = 2.0**-53

ProgressFn = Callable[[int, int, str], None]
BackwardFn = Callable[[Params, Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]


# --------------------------------------------------------------------------------------------
# elements


@dataclass(frozen=True, order=True)
class Element:
    """One scalar input of the forward: ``tensor`` a differentiable input, ``index`` into it."""

    tensor: str
    index: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.tensor}[{','.join(map(str, self.index))}]"


_ELEMENT_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s*\[\s*([^\]]*)\]\s*$")


def parse_element(text: str, shapes: Mapping[str, tuple[int, ...]]) -> Element:
    """Parse ``"phi[12,2048]"`` against ``shapes``; ConfigError naming ``--element`` if bad."""
    where = f"--element {text!r}"
    m = _ELEMENT_RE.match(text)
    names = ", ".join(shapes)
    if not m:
        example = " or ".join(f"{t}[{','.join('0' * len(s))}]" for t, s in list(shapes.items())[:2])
        raise ConfigError(
            f"{where}: expected TENSOR[i,j,...] with TENSOR one of {names}, e.g. {example}"
        )
    name, body = m.group(1), m.group(2)
    if name not in shapes:
        raise ConfigError(f"{where}: unknown tensor {name!r} (one of {names})")
    shape = shapes[name]
    parts = [p.strip() for p in body.split(",")] if body.strip() else []
    if not all(re.fullmatch(r"\d+", p) for p in parts):
        raise ConfigError(f"{where}: indices must be non-negative integers, got [{body}]")
    index = tuple(int(p) for p in parts)
    if len(index) != len(shape):
        raise ConfigError(
            f"{where}: {name} has rank {len(shape)} (shape {shape}), got {len(index)} "
            f"{'index' if len(index) == 1 else 'indices'}"
        )
    for axis, (i, dim) in enumerate(zip(index, shape, strict=True)):
        if i >= dim:
            raise ConfigError(
                f"{where}: index {i} out of range for axis {axis} of {name} (shape {shape})"
            )
    return Element(name, index)


def sample_elements(shapes: Mapping[str, tuple[int, ...]], k: int, seed: int) -> list[Element]:
    """``k`` distinct seeded random elements per tensor (fewer when a tensor is smaller).

    Drawn from ``SeedSequence(seed, spawn_key=(2,))``: independent of the inputs and gradients.
    """
    if k < 0:
        raise ConfigError(f"--sample must be >= 0, got {k}")
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_SAMPLE_SPAWN_KEY,)))
    out: list[Element] = []
    for name, shape in shapes.items():
        size = math.prod(shape)
        picks = np.sort(rng.choice(size, size=min(k, size), replace=False)) if size else []
        out.extend(
            Element(name, tuple(int(i) for i in np.unravel_index(int(f), shape))) for f in picks
        )
    return out


def parse_eps(text: str | Sequence[float]) -> tuple[float, ...]:
    """``"0.2,0.1,0.05"`` (or numbers) -> distinct positive steps, largest first."""
    items = text.split(",") if isinstance(text, str) else list(text)
    try:
        values = [float(v) for v in items if not (isinstance(v, str) and not v.strip())]
    except ValueError:
        raise ConfigError(f"--eps {text!r}: expected comma-separated numbers") from None
    if len(values) < 2 or not all(math.isfinite(v) and v > 0 for v in values):
        raise ConfigError(f"--eps {text!r}: give at least two finite steps > 0")
    steps = tuple(sorted(set(values), reverse=True))
    if len(steps) < 2:
        raise ConfigError(f"--eps {text!r}: give at least two different steps")
    return steps


# --------------------------------------------------------------------------------------------
# classification (pure)
