"""msOpST case-definition files (``msopst create``'s ``*.json``) read as flat sub-cases.

msOpST, CANN's operator system-test tool, describes an operator's test cases as a JSON list of
cases, each ``{"case_name", "op", "input_desc": [...], "output_desc": [...], "attr": [...],
"expect"}``; a tensor description has ``format``, ``type``, ``shape``, ``data_distribute``,
``value_range``, optionally ``value`` and ``name``; an attribute ``{"name", "type", "value"}``.
A description's ``format``, ``type``, ``shape`` (a list of shapes), ``data_distribute`` and
``value_range`` may each list alternatives: every description of a case lists the same number
of them (or one), and the case stands for the product of the alternatives over those fields,
as msOpST expands it: :func:`read_msopst` returns one :class:`MsCase` per sub-case.

What aclnn-stress cannot run is a line each (:attr:`MsImport.warnings`) naming the case and
the field, and that sub-case or case is left out: a format other than ND, a fuzz case
(``fuzz_impl``/``fuzz_case_num``), a ``value`` read from a ``.bin`` file, a type it has no
dtype for. A file that is not msOpST JSON at all is a :class:`~stress.errors.ConfigError`.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stress.errors import ConfigError

__all__ = ["MsAttr", "MsCase", "MsImport", "MsTensor", "read_msopst"]

_DTYPES = {
    "float16": "float16",
    "float": "float32",
    "float32": "float32",
    "double": "float64",
    "float64": "float64",
    "bfloat16": "bf16",
    "bf16": "bf16",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "bool": "bool",
}
_AXES = ("format", "type", "shape", "data_distribute", "value_range")
_FUZZ = ("fuzz_impl", "fuzz_case_num")
_EXPECT_FAILURE = "failed"  # msOpST's "expect" of a case that must fail (not a status of ours)


@dataclass(frozen=True)
class MsTensor:
    """One tensor of a sub-case: its msOpST name (if given), dtype, shape and distribution."""

    name: str | None
    dtype: str
    shape: tuple[int, ...]
    values: str | None  # a declaration's values = "..." (uniform(lo, hi), integers(...), ...)


@dataclass(frozen=True)
class MsAttr:
    """One attribute of a case as msOpST gives it."""

    name: str
    type: str
    value: Any

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> MsAttr:
        """An entry of a case's ``attr`` list (``name`` required, ``type`` and ``value`` not)."""
        return cls(str(raw["name"]), str(raw.get("type", "")), raw.get("value"))


@dataclass(frozen=True)
class MsCase:
    """One sub-case: its id (the case name, plus the alternatives it picked), the case it
    comes from, inputs and outputs in order, attributes, and whether it must fail."""

    id: str
    case: str
    inputs: tuple[MsTensor, ...]
    outputs: tuple[MsTensor, ...]
    attrs: tuple[MsAttr, ...]
    expect_fail: bool


@dataclass(frozen=True)
class MsImport:
    """The sub-cases read from one file and a line for everything left out."""

    cases: tuple[MsCase, ...]
    warnings: tuple[str, ...]


class _Skip(Exception):
    """A case or sub-case that cannot be mapped (the message is the warning)."""


def read_msopst(path: Path) -> MsImport:
    """The sub-cases of the msOpST case file at ``path``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not JSON ({exc}); expected an msOpST case file") from None
    if isinstance(data, dict) and "case_name" in data:
        data = [data]
    if not isinstance(data, list) or not data or not all(_looks_like_case(c) for c in data):
        raise ConfigError(
            f"{path}: not an msOpST case file; expected a JSON list of cases, each with "
            '"case_name", "op" and "input_desc" (msopst create writes them)'
        )
    cases: list[MsCase] = []
    warnings: list[str] = []
    for raw in data:
        where = f"{path}: case {raw['case_name']!r}"
        try:
            _check_case(raw, where)
            subs, skipped = _expand(raw, where)
        except _Skip as exc:
            warnings.append(f"{exc}; the case is skipped")
            continue
        cases += subs
        warnings += skipped
    return MsImport(tuple(cases), tuple(warnings))


def _looks_like_case(raw: Any) -> bool:
    return (
        isinstance(raw, dict)
        and isinstance(raw.get("case_name"), str)
        and (isinstance(raw.get("input_desc"), list))
    )


def _check_case(raw: dict, where: str) -> None:
    for key in _FUZZ:
        if key in raw:
            raise _Skip(f"{where}, field '{key}': fuzz cases are not mapped")
    for side in ("input_desc", "output_desc"):
        descs = raw.get(side, [])
        if not isinstance(descs, list) or not all(isinstance(d, dict) for d in descs):
            raise _Skip(f"{where}, field '{side}': expected a list of tensor descriptions")
        for i, desc in enumerate(descs):
            value = desc.get("value")
            if isinstance(value, str):
                raise _Skip(
                    f"{where}, field '{side}[{i}].value': data from a file ({value}) is not mapped"
                )
    attrs = raw.get("attr", [])
    if not isinstance(attrs, list) or not all(isinstance(a, dict) and "name" in a for a in attrs):
        raise _Skip(f"{where}, field 'attr': expected a list of {{name, type, value}}")


def _alternatives(desc: dict, axis: str) -> list[Any]:
    """A description's alternatives for one field (one value stands alone)."""
    value = desc.get(axis)
    if value is None:
        return [None]
    if axis == "shape":
        return value if value and all(isinstance(v, list) for v in value) else [value]
    if axis == "value_range":
        return value if value and all(isinstance(v, list) for v in value) else [value]
    return value if isinstance(value, list) else [value]


def _expand(raw: dict, where: str) -> tuple[list[MsCase], list[str]]:
    descs = [("input_desc", i, d) for i, d in enumerate(raw["input_desc"])]
    descs += [("output_desc", i, d) for i, d in enumerate(raw.get("output_desc", []))]
    counts = {}
    for axis in _AXES:
        lengths = {len(_alternatives(d, axis)) for _, _, d in descs} - {1}
        if len(lengths) > 1:
            raise _Skip(
                f"{where}, field '{axis}': the descriptions list {sorted(lengths)} "
                "alternatives; msOpST needs the same number (or one) in each"
            )
        counts[axis] = lengths.pop() if lengths else 1
    cases, warnings = [], []
    for side, i, d in descs:
        if isinstance(d.get("value"), list):
            warnings.append(
                f"{where}, field '{side}[{i}].value': inline data is not mapped; "
                "the values are drawn from data_distribute and value_range"
            )
    varying = [a for a in _AXES if counts[a] > 1]
    attrs = tuple(MsAttr.of(a) for a in raw.get("attr", []))  # the same in every sub-case
    first = descs[0][2] if descs else {}
    for pick in itertools.product(*(range(counts[a]) for a in _AXES)):
        chosen = dict(zip(_AXES, pick, strict=True))
        sub = _case_id(
            "-".join([raw["case_name"], *(str(_pick(first, a, chosen[a])) for a in varying)])
        )
        at = where if sub == raw["case_name"] else f"{where} (sub-case {sub!r})"
        try:
            tensors = {
                (side, i): _tensor(d, chosen, f"{at}, field '{side}[{i}]") for side, i, d in descs
            }
        except _Skip as exc:
            warnings.append(f"{exc}; the sub-case is skipped")
            continue
        cases.append(
            MsCase(
                sub,
                raw["case_name"],
                tuple(t for (side, _), t in tensors.items() if side == "input_desc"),
                tuple(t for (side, _), t in tensors.items() if side == "output_desc"),
                attrs,
                str(raw.get("expect", "success")).lower() == _EXPECT_FAILURE,
            )
        )
    return cases, warnings


def _pick(desc: dict, axis: str, index: int) -> Any:
    alts = _alternatives(desc, axis)
    value = alts[index if len(alts) > 1 else 0]
    if axis == "shape" and isinstance(value, list):
        return "x".join(map(str, value))
    return value


def _tensor(desc: dict, chosen: dict[str, int], where: str) -> MsTensor:
    fmt = _pick(desc, "format", chosen["format"])
    if fmt not in (None, "ND"):
        raise _Skip(f"{where}.format': {fmt!r} is not ND (aclnn-stress passes ND tensors)")
    mstype = _pick(desc, "type", chosen["type"])
    if mstype not in _DTYPES:
        raise _Skip(
            f"{where}.type': {mstype!r} has no aclnn-stress dtype (mapped: {', '.join(_DTYPES)})"
        )
    shape = _alternatives(desc, "shape")
    shape = shape[chosen["shape"] if len(shape) > 1 else 0]
    if not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
        raise _Skip(f"{where}.shape': {shape!r} is not a list of ints >= 0")
    dist = _pick(desc, "data_distribute", chosen["data_distribute"])
    bounds = _pick(desc, "value_range", chosen["value_range"])
    name = desc.get("name") if isinstance(desc.get("name"), str) else None
    return MsTensor(name, _DTYPES[mstype], tuple(shape), _values(dist, bounds, _DTYPES[mstype]))


def _values(dist: Any, bounds: Any, dtype: str) -> str | None:
    """The declaration's distribution for msOpST's data_distribute and value_range."""
    if dtype == "bool" or dist is None:
        return None
    ok = isinstance(bounds, list) and len(bounds) == 2
    ok = ok and all(isinstance(b, int | float) for b in bounds) and bounds[0] < bounds[1]
    if dist == "uniform" and ok:
        if dtype.startswith(("int", "uint")):
            return f"integers({int(bounds[0])}, {int(bounds[1])})"
        return f"uniform({float(bounds[0])!r}, {float(bounds[1])!r})"
    return "normal" if dist == "normal" else None


def _case_id(text: str) -> str:
    out = re.sub(r"[^A-Za-z0-9_.\-]", "_", text)
    return out if re.match(r"^[A-Za-z0-9]", out) else "c" + out
