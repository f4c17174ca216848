"""The named dimensions and dtype variables of a declaration (``[dims]``, ``[dtypes]``).

``[dims]`` maps a name to a range ``[low, high]`` (generated cases draw from it; a case must set
it), ``{ range = [low, high], default = n, multiple = m }``, or a fixed int. ``[dtypes]`` maps a
name to its allowed dtype names (the first is the default) or derives it from another variable:
``{ of = "T", map = { int32 = "int32" }, else = "float32" }``. :data:`DTYPE_NAMES` are the dtype
names a declaration may use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from stress.errors import ConfigError

__all__ = [
    "DTYPE_NAMES",
    "DimSpec",
    "DtypeVar",
    "ScalarVar",
    "ShapeVar",
    "dtype_name",
    "is_int",
    "parse_dims",
    "parse_dtype_vars",
    "parse_scalar_vars",
    "parse_shape_vars",
    "promote",
]

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
    """A dtype variable: chosen from ``choices`` (defaulting to the first, or to the variable
    named by ``default``), derived from another through ``mapping``, or the promoted type of
    the variables in ``promote``."""

    name: str
    choices: tuple[str, ...] = ()
    of: str | None = None
    mapping: tuple[tuple[str, str], ...] = ()
    otherwise: str | None = None
    default: str | None = None  # a case that does not set it takes this variable's value
    promote: tuple[str, ...] = ()
    drawn: tuple[str, ...] = ()  # what generated cases choose from (default: choices)

    @property
    def derived(self) -> bool:
        """Not a case parameter: computed from other variables."""
        return self.of is not None or bool(self.promote)

    def derive(self, bound: Mapping[str, str]) -> str:
        if self.promote:
            return promote(*(bound[v] for v in self.promote))
        source = bound[self.of]  # type: ignore[index]
        return dict(self.mapping).get(source, self.otherwise or source)


@dataclass(frozen=True)
class ShapeVar:
    """A named whole shape a case gives (``shape = [4, 64]``): generated cases draw its rank
    and sides from the ranges; ``default`` names another shape variable it copies when a case
    does not set it (None: the case must)."""

    name: str
    rank: tuple[int, int] = (1, 4)
    side: tuple[int, int] = (0, 64)
    default: str | None = None


_CANONICAL = {}
for _name, _dt in DTYPE_NAMES.items():
    _CANONICAL.setdefault(_dt, _name)


def dtype_name(dtype: np.dtype) -> str:
    """The canonical declaration name of a numpy dtype (``bf16``, ``float16``, ...)."""
    return _CANONICAL[np.dtype(dtype)]


def _promote2(a: np.dtype, b: np.dtype) -> np.dtype:
    if a == b:
        return a
    if a.kind == "b" or (a.kind in "iu" and b.kind not in "biu"):
        return b
    if b.kind == "b" or (b.kind in "iu" and a.kind not in "biu"):
        return a
    bf16 = DTYPE_NAMES["bf16"]
    if bf16 in (a, b):  # bf16 with fp16 -> float32; with a wider float -> that float
        other = b if a == bf16 else a
        return other if other.itemsize > 2 else np.dtype(np.float32)
    return np.promote_types(a, b)


def promote(*names: str) -> str:
    """torch's type promotion of dtype names (int with float -> the float; fp16 with bf16 ->
    float32; otherwise the wider type), as the aclnn elementwise operators apply it."""
    result = DTYPE_NAMES[names[0]]
    for n in names[1:]:
        result = _promote2(result, DTYPE_NAMES[n])
    return dtype_name(result)


def is_int(value: Any) -> bool:
    """An int that is not a bool (TOML integers)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _entries(raw: Any, where: str, table: str, expected: str) -> Iterator[tuple[str, Any, str]]:
    """The ``(name, value, at)`` of a TOML table of ``NAME = ...`` entries (``[dims]``,
    ``[vars]``, ``[dtypes]``, ``[shapes]``); ``at`` names the file, table and field for errors."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} [{table}]: expected a table of {expected}")
    for name, value in raw.items():
        yield name, value, f"{where} [{table}], field '{name}'"


def _identifier(name: str, at: str, noun: str) -> None:
    if not name.isidentifier():
        raise ConfigError(f"{at}: a {noun} name is an identifier (letters, digits, _)")


def parse_dims(raw: Any, where: str) -> tuple[DimSpec, ...]:
    out = []
    for name, value, at in _entries(raw, where, "dims", "NAME = [low, high] or NAME = int"):
        _identifier(name, at, "dimension")
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


def _earlier(names: Any, seen: list[DtypeVar], at: str, key: str) -> tuple[str, ...]:
    names = [names] if isinstance(names, str) else names
    known = {v.name for v in seen}
    if not isinstance(names, list) or not names or not all(n in known for n in names):
        raise ConfigError(f"{at}: '{key}' must name dtype variables declared before it")
    return tuple(names)


def _choice_var(name: str, value: dict, seen: list[DtypeVar], at: str) -> DtypeVar:
    if set(value) - {"default", "choices", "promote"}:
        raise ConfigError(
            f'{at}: expected {{ default = "VAR", choices = [...] }} or {{ promote = [VARS] }}'
        )
    choices = value.get("choices", [])
    if not isinstance(choices, list):
        raise ConfigError(f"{at}, 'choices': expected a list of dtype names")
    choices = tuple(_dtype_name(v, at) for v in choices)
    if "promote" in value:
        return DtypeVar(name, choices, promote=_earlier(value["promote"], seen, at, "promote"))
    if "default" not in value or not choices:
        raise ConfigError(f'{at}: expected {{ default = "VAR", choices = [dtype names] }}')
    return DtypeVar(name, choices, default=_earlier(value["default"], seen, at, "default")[0])


def parse_dtype_vars(raw: Any, where: str) -> tuple[DtypeVar, ...]:
    out: list[DtypeVar] = []
    for name, value, at in _entries(raw, where, "dtypes", "NAME = [dtype names]"):
        if isinstance(value, list) and value:
            out.append(DtypeVar(name, tuple(_dtype_name(v, at) for v in value)))
        elif isinstance(value, dict) and ("default" in value or "promote" in value):
            out.append(_choice_var(name, value, out, at))
        elif isinstance(value, dict) and set(value) == {"choices", "generate"}:
            choices, drawn = value["choices"], value["generate"]
            if not isinstance(choices, list) or not isinstance(drawn, list) or not drawn:
                raise ConfigError(f"{at}: expected {{ choices = [...], generate = [...] }}")
            choices = tuple(_dtype_name(v, at) for v in choices)
            if not set(drawn) <= set(choices):
                raise ConfigError(f"{at}, 'generate': must be some of its choices")
            out.append(DtypeVar(name, choices, drawn=tuple(drawn)))
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


def _range(value: Any, at: str, key: str, low: int) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2 or not all(map(is_int, value)):
        raise ConfigError(f"{at}, '{key}': expected [low, high], got {value!r}")
    if not low <= value[0] <= value[1]:
        raise ConfigError(f"{at}, '{key}': expected {low} <= low <= high, got {value!r}")
    return value[0], value[1]


def parse_shape_vars(raw: Any, where: str) -> tuple[ShapeVar, ...]:
    """``[shapes]``: NAME = { rank = [lo, hi], side = [lo, hi] } or { default = "OTHER" }."""
    out: list[ShapeVar] = []
    for name, value, at in _entries(raw, where, "shapes", "NAME = { rank, side }"):
        if not name.isidentifier() or not isinstance(value, dict):
            raise ConfigError(f"{at}: expected {{ rank = [1, 4], side = [0, 64] }}")
        if set(value) - {"rank", "side", "default"}:
            raise ConfigError(f'{at}: allowed keys are rank, side and default = "OTHER"')
        default = value.get("default")
        if default is not None and default not in {v.name for v in out}:
            raise ConfigError(f"{at}, 'default': must name a shape variable declared before it")
        rank = _range(value.get("rank", [1, 4]), at, "rank", 0)
        side = _range(value.get("side", [0, 64]), at, "side", 0)
        out.append(ShapeVar(name, rank, side, default))
    return tuple(out)


@dataclass(frozen=True)
class ScalarVar:
    """A named scalar case parameter (``[vars]``): a float, int or bool with a default, which
    attribute parameters name (``hcEps = "hc_eps"``) and tensors may depend on
    (``when = "need_backward"``). ``default_dim``: an int defaulting to a dimension's value."""

    name: str
    kind: type
    default: Any = None
    default_dim: str | None = None


_SCALAR_TYPES = {"float": float, "int": int, "bool": bool}


def parse_scalar_vars(raw: Any, dims: tuple[DimSpec, ...], where: str) -> tuple[ScalarVar, ...]:
    """``[vars]``: NAME = 1e-6 | true | 3, or { type = "int", default = "DIM" }."""
    out = []
    for name, value, at in _entries(raw, where, "vars", "NAME = default value"):
        _identifier(name, at, "variable")
        if isinstance(value, bool | int | float):
            out.append(ScalarVar(name, type(value), value))
        elif (
            isinstance(value, dict)
            and set(value) == {"type", "default"}
            and value["type"] in _SCALAR_TYPES
            and value["default"] in {d.name for d in dims}
        ):
            out.append(ScalarVar(name, _SCALAR_TYPES[value["type"]], None, value["default"]))
        else:
            raise ConfigError(
                f'{at}: expected a default (1e-6, true, 3) or {{ type = "int", default = "DIM" }}'
            )
    return tuple(out)
