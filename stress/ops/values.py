"""Value distributions of declared input tensors, drawn from a seeded generator.

A distribution is named in a declaration as ``values = "..."``:

- ``"normal"`` (the default), ``"normal(mean, std)"``: float32 normal samples cast to the dtype;
  for integer dtypes the default is ``integers``;
- ``"uniform(low, high)"``: float32 uniform samples in [low, high) cast to the dtype;
- ``"integers"``, ``"integers(low, high)"``: integers in [low, high) (default [-1000, 1000));
- ``"positive"``: |normal| + 1e-3 (floats) or integers in [1, 1000);
- ``"zeros"``.

The text is parsed with :mod:`ast` (a name or a call with numeric literal arguments), never
evaluated. Booleans draw 0/1 whatever the distribution except ``zeros``. The float path
(``standard_normal(dtype=float32)`` then ``astype``) and the integer path
(``integers(-1000, 1000, dtype=int32)``) are fixed, so a declared op draws the same bytes
from the same seed.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

import numpy as np

__all__ = ["DISTRIBUTIONS", "Distribution", "parse_distribution"]

# name -> (min args, max args)
DISTRIBUTIONS: dict[str, tuple[int, int]] = {
    "normal": (0, 2),
    "uniform": (2, 2),
    "integers": (0, 2),
    "positive": (0, 0),
    "zeros": (0, 0),
}


@dataclass(frozen=True)
class Distribution:
    """A named distribution with its numeric arguments."""

    name: str = "normal"
    args: tuple[float, ...] = ()

    def draw(self, rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """Samples of ``shape`` and ``dtype`` from ``rng`` (advancing it)."""
        dtype = np.dtype(dtype)
        if self.name == "zeros":
            return np.zeros(shape, dtype)
        if dtype == np.bool_:
            return rng.integers(0, 2, size=shape, dtype=np.int8).astype(np.bool_)
        integral = dtype.kind in "iu"
        if self.name == "integers" or (integral and self.name in ("normal", "positive")):
            low, high = (1, 1000) if self.name == "positive" else (-1000, 1000)
            if self.name == "integers" and self.args:
                low, high = int(self.args[0]), int(self.args[1])
            if dtype.kind == "u":
                low = max(low, 0)
            sample_dtype = dtype if integral else np.dtype(np.int64)
            return rng.integers(low, high, size=shape, dtype=sample_dtype).astype(dtype)
        if self.name == "uniform":
            low, high = self.args
            out = rng.uniform(low, high, size=shape).astype(np.float32)
        else:
            out = rng.standard_normal(shape, dtype=np.float32)
            if self.name == "normal" and self.args:
                mean, std = (*self.args, 1.0)[:2]
                out = (out * np.float32(std) + np.float32(mean)).astype(np.float32)
            elif self.name == "positive":
                out = np.abs(out) + np.float32(1e-3)
        if integral:
            return np.rint(out).astype(dtype)
        if dtype.kind == "c":
            return (out + 1j * rng.standard_normal(shape, dtype=np.float32)).astype(dtype)
        return out.astype(dtype)


def parse_distribution(text: str) -> Distribution:
    """The distribution ``text`` names (``ValueError`` saying what is allowed otherwise)."""
    allowed = "normal, normal(mean, std), uniform(low, high), integers, integers(low, high), "
    allowed += "positive, zeros"
    if not isinstance(text, str):
        raise ValueError(f"expected a distribution name ({allowed}), got {text!r}")
    return _parse_distribution(text, allowed)


@functools.lru_cache(maxsize=256)
def _parse_distribution(text: str, allowed: str) -> Distribution:
    """The parsed ``text`` (a case's tensors are resolved for every size variant: each text
    is parsed once; a :class:`Distribution` is immutable)."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise ValueError(f"{text!r} is not a distribution; one of {allowed}") from None
    args: list[float] = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        for arg in node.args:
            sign = 1
            if isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.USub):
                sign, arg = -1, arg.operand
            if not isinstance(arg, ast.Constant) or type(arg.value) not in (int, float):
                raise ValueError(f"{text!r}: arguments must be numbers; one of {allowed}")
            args.append(sign * arg.value)
        node = node.func
    if not isinstance(node, ast.Name) or node.id not in DISTRIBUTIONS:
        raise ValueError(f"{text!r} is not a distribution; one of {allowed}")
    lo, hi = DISTRIBUTIONS[node.id]
    if not lo <= len(args) <= hi or (len(args) == 1 and node.id == "integers"):
        raise ValueError(f"{text!r}: wrong number of arguments; one of {allowed}")
    if node.id in ("uniform", "integers") and args and args[0] >= args[1]:
        raise ValueError(f"{text!r}: low must be < high")
    return Distribution(node.id, tuple(args))
