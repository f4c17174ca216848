"""The named dimensions and dtype variables of a declaration (``[dims]``, ``[dtypes]``).

``[dims]`` maps a name to a range ``[low, high]`` (generated cases draw from it; a case must set
it), ``{ range = [low, high], default = n, multiple = m }``, or a fixed int. ``[dtypes]`` maps a
name to its allowed dtype names (the first is the default) or derives it from another variable:
``{ of = "T", map = { int32 = "int32" }, else = "float32" }``. :data:`DTYPE_NAMES` are the dtype
names a declaration may use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from stress.errors import ConfigError

__all__ = ["DTYPE_NAMES", "DimSpec", "DtypeVar", "is_int", "parse_dims", "parse_dtype_vars"]

DTYPE_NAMES: dict[str, np.dtype] = {
    "float32": np.dtype(np.float32),
    "fp32": np.dtype(np.float32),
    "float": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "fp16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "double": np.dtype(np.float64),
    "float64": np.dtype(np.float64),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "bool": np.dtype(np.bool_),
    "complex64": np.dtype(np.complex64),
    "complex128": np.dtype(np.complex128),
}


@dataclass(frozen=True)
class DimSpec:
    """A named dimension: generated cases draw it from [low, high]; ``default`` if fixed."""

    name: str
    low: int
    high: int
    default: int | None = None
    multiple: int = 1  # generated values are multiples of this (C % 128 == 0)


@dataclass(frozen=True)
class DtypeVar:
    """A dtype variable: chosen from ``choices``, or derived from another through ``mapping``."""

    name: str
    choices: tuple[str, ...] = ()
    of: str | None = None
    mapping: tuple[tuple[str, str], ...] = ()
    otherwise: str | None = None

    def derive(self, bound: Mapping[str, str]) -> str:
        source = bound[self.of]  # type: ignore[index]
        return dict(self.mapping).get(source, self.otherwise or source)


def is_int(value: Any) -> bool:
    """An int that is not a bool (TOML integers)."""
    return isinstance(value, int) and not isinstance(value, bool)


def parse_dims(raw: Any, where: str) -> tuple[DimSpec, ...]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} [dims]: expected a table of NAME = [low, high] or NAME = int")
    out = []
    for name, value in raw.items():
        at = f"{where} [dims], field '{name}'"
        if not name.isidentifier():
            raise ConfigError(f"{at}: a dimension name is an identifier (letters, digits, _)")
        if is_int(value) and value >= 0:
            out.append(DimSpec(name, value, value, value))
        elif isinstance(value, list | dict):
            rng = value.get("range") if isinstance(value, dict) else value
            default = value.get("default") if isinstance(value, dict) else None
            multiple = value.get("multiple", 1) if isinstance(value, dict) else 1
            extra = set(value) - {"range", "default", "multiple"} if isinstance(value, dict) else ()
            if not is_int(multiple) or multiple < 1 or extra:
                raise ConfigError(
                    f"{at}: expected {{ range = [low, high], default = n, "
                    f"multiple = m }} with m >= 1, got {value!r}"
                )
            if not isinstance(rng, list) or len(rng) != 2 or not all(map(is_int, rng)):
                raise ConfigError(
                    f"{at}: expected [low, high] or {{ range = [low, high], "
                    f"default = n }}, got {value!r}"
                )
            if not 0 <= rng[0] <= rng[1] or (default is not None and not is_int(default)):
                raise ConfigError(f"{at}: expected 0 <= low <= high and an int default")
            if multiple > 1 and rng[0] // -multiple * -multiple > rng[1]:
                raise ConfigError(f"{at}: no multiple of {multiple} in [{rng[0]}, {rng[1]}]")
            out.append(DimSpec(name, rng[0], rng[1], default, multiple))
        else:
            raise ConfigError(f"{at}: expected [low, high] (a range) or an int >= 0, got {value!r}")
    return tuple(out)


def _dtype_name(value: Any, at: str) -> str:
    if not isinstance(value, str) or value not in DTYPE_NAMES:
        raise ConfigError(f"{at}: unknown dtype {value!r}; known: {', '.join(DTYPE_NAMES)}")
    return value


def parse_dtype_vars(raw: Any, where: str) -> tuple[DtypeVar, ...]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} [dtypes]: expected a table of NAME = [dtype names]")
    out: list[DtypeVar] = []
    for name, value in raw.items():
        at = f"{where} [dtypes], field '{name}'"
        if isinstance(value, list) and value:
            out.append(DtypeVar(name, tuple(_dtype_name(v, at) for v in value)))
        elif isinstance(value, dict) and isinstance(value.get("of"), str):
            if value["of"] not in raw or value["of"] == name:
                raise ConfigError(f"{at}: 'of' must name another dtype variable of [dtypes]")
            mapping = value.get("map", {})
            if not isinstance(mapping, dict) or set(value) - {"of", "map", "else"}:
                raise ConfigError(f"{at}: expected {{ of = VAR, map = {{...}}, else = dtype }}")
            pairs = tuple((_dtype_name(k, at), _dtype_name(v, at)) for k, v in mapping.items())
            other = _dtype_name(value["else"], at) if "else" in value else None
            out.append(DtypeVar(name, (), value["of"], pairs, other))
        else:
            raise ConfigError(
                f"{at}: expected a list of dtype names or {{ of = VAR, map = {{...}} }}"
            )
    return tuple(out)
