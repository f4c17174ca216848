"""How generated cases of a declared operator are drawn: the declaration's ``[generate]`` table.

``[dims]``, ``[shapes]`` and ``[dtypes]`` give the ranges a generated case draws from; this table
adds what ranges cannot say, and the operator's documented constraints to violate::

    [generate]
    max_elements = 4096                  # at most this many elements over all tensors of a case
    limits = { "B*S" = 512 }             # dimension expressions kept at or under a maximum
    legal = { C = [1, 99999] }           # a dimension's legal range: callers may widen [dims] to
                                         # it; cases without expect keep it (stress.corpus.legal)
    broadcast = ["other_shape"]          # shape variables drawn broadcastable against their
                                         # default: the same, a suffix with some sides 1, or [1]
    dtypes = { other_dtype = ["float32", "bf16"] }   # a defaulted dtype variable drawn too
                                         # (its default, or one of these: mixed dtypes)
    values = { alpha = { of = "alpha_dtype", map = { int32 = [1, 2] }, else = [1.0, 0.5] } }
                                         # a parameter or [vars] value drawn from a list (or a
                                         # list chosen by a dtype variable's value)
    violation_dims = { B = [1, 2], C = [128, 256] }  # narrower ranges for violation cases

    [[generate.violation]]               # one documented constraint; an invalid case breaks it
    name = "c-align"                     # and expects `status` (``corpus generate --invalid``)
    what = "C must be a multiple of 128"
    status = 161002
    set = { C = { range = [1, 1023], not_multiple = 128 } }
    # set: NAME = value | [one, of, these] | { range = [lo, hi], not_multiple = m,
    #      except = [..] } for dims, dtype/shape variables, [vars] and parameters;
    # unbroadcastable = ["other_shape"]: that shape differs from its default's on one side

Expressions go through :mod:`stress.ops.shape_expr` (never ``eval``). Every error is one line
naming the file, the field and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stress.errors import ConfigError
from stress.ops.dims import is_int
from stress.ops.shape_expr import DimExpr, ShapeExprError, parse_dim
from stress.ops.table_keys import reject_unknown_keys

__all__ = ["GenerationSpec", "Limit", "ValueRule", "Violation", "parse_generation"]

_KEYS = {
    "max_elements",
    "limits",
    "legal",
    "broadcast",
    "dtypes",
    "values",
    "violation_dims",
    "violation",
}
_VIOLATION_KEYS = {"name", "what", "status", "set", "unbroadcastable"}


@dataclass(frozen=True)
class Limit:
    """A dimension expression a generated case keeps at or under ``most``."""

    expr: DimExpr
    most: int

    def holds(self, dims: Mapping[str, int]) -> bool:
        """Whether ``dims`` keep the expression at or under ``most`` (one that does not evaluate
        over ``dims`` limits nothing)."""
        try:
            return self.expr(dims) <= self.most
        except ShapeExprError:
            return True


@dataclass(frozen=True)
class ValueRule:
    """A drawn value: one of ``options``; or one of the list ``by`` gives for the value of the
    dtype variable ``of`` (``otherwise`` when it lists none); or an int of ``span`` that is
    neither a multiple of ``not_multiple`` (when > 1) nor in ``excluded``."""

    options: tuple[Any, ...] = ()
    of: str | None = None
    by: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    otherwise: tuple[Any, ...] = ()
    span: tuple[int, int] | None = None
    not_multiple: int = 1
    excluded: tuple[int, ...] = ()

    def choices_for(self, dtypes: Mapping[str, str]) -> tuple[Any, ...]:
        """The list to choose from, given the case's dtype variables."""
        if self.of is None:
            return self.options
        return dict(self.by).get(dtypes[self.of], self.otherwise)


@dataclass(frozen=True)
class Violation:
    """One documented constraint of the operator and the status breaking it returns."""

    name: str
    what: str
    status: int
    set: tuple[tuple[str, ValueRule], ...] = ()
    unbroadcastable: tuple[str, ...] = ()


@dataclass(frozen=True)
class GenerationSpec:
    """The parsed ``[generate]`` table (empty: draw from the declared ranges only)."""

    max_elements: int | None = None
    limits: tuple[Limit, ...] = ()
    legal: tuple[tuple[str, int, int], ...] = ()
    broadcast: tuple[str, ...] = ()
    dtypes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    values: tuple[tuple[str, ValueRule], ...] = ()
    violation_dims: tuple[tuple[str, int, int], ...] = ()
    violations: tuple[Violation, ...] = ()

    def legal_range(self, dim: str) -> tuple[int, int] | None:
        return next(((lo, hi) for n, lo, hi in self.legal if n == dim), None)

    def violation(self, name: str) -> Violation:
        return next(v for v in self.violations if v.name == name)


def _pair(value: Any, at: str) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2 or not all(map(is_int, value)):
        raise ConfigError(f"{at}: expected [low, high] (ints), got {value!r}")
    if not 0 <= value[0] <= value[1]:
        raise ConfigError(f"{at}: expected 0 <= low <= high, got {value!r}")
    return value[0], value[1]


def _ranges(raw: Any, dims: set[str], at: str) -> tuple[tuple[str, int, int], ...]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{at}: expected {{ DIM = [low, high], ... }}")
    for name in raw:
        if name not in dims:
            raise ConfigError(f"{at}.{name}: not a dimension of [dims] ({', '.join(dims)})")
    return tuple((n, *_pair(v, f"{at}.{n}")) for n, v in raw.items())


def _limits(raw: Any, dims: set[str], at: str) -> tuple[Limit, ...]:
    if not isinstance(raw, dict):
        raise ConfigError(f'{at}: expected {{ "B*S" = 512, ... }}')
    out = []
    for text, most in raw.items():
        try:
            expr = parse_dim(text)
        except ShapeExprError as exc:
            raise ConfigError(f"{at}.{text}: {exc}") from None
        if not expr.names or not expr.names <= dims:
            raise ConfigError(f"{at}.{text}: must name dimensions of [dims] only")
        if not is_int(most) or most < 0:
            raise ConfigError(f"{at}.{text}: the maximum is an int >= 0, got {most!r}")
        out.append(Limit(expr, most))
    return tuple(out)


def _list(value: Any, at: str) -> tuple[Any, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{at}: expected a non-empty list of values")
    return tuple(value)


def _rule(value: Any, at: str, dtype_vars: set[str]) -> ValueRule:
    """A value, a list, { of, map, else } or { range, not_multiple, except }."""
    if isinstance(value, list):
        return ValueRule(options=_list(value, at))
    if not isinstance(value, dict):
        return ValueRule(options=(value,))
    if "of" in value:
        if (
            set(value) - {"of", "map", "else"}
            or not isinstance(value["of"], str)
            or (value["of"] not in dtype_vars)
        ):
            raise ConfigError(
                f"{at}: expected {{ of = DTYPE_VAR, map = {{ dtype = [values] }}, else = [...] }}"
            )
        mapping = value.get("map", {})
        if not isinstance(mapping, dict):
            raise ConfigError(f"{at}.map: expected {{ dtype = [values], ... }}")
        by = tuple((k, _list(v, f"{at}.map.{k}")) for k, v in mapping.items())
        return ValueRule(of=value["of"], by=by, otherwise=_list(value.get("else"), f"{at}.else"))
    if "range" not in value or set(value) - {"range", "not_multiple", "except"}:
        raise ConfigError(f"{at}: expected {{ range = [lo, hi], not_multiple = m, except = [..] }}")
    span = _pair(value["range"], f"{at}.range")
    m, excluded = value.get("not_multiple", 1), value.get("except", [])
    if not is_int(m) or m < 1 or not isinstance(excluded, list) or not all(map(is_int, excluded)):
        raise ConfigError(f"{at}: not_multiple is an int >= 1 and except a list of ints")
    if span[1] - span[0] > 65536:
        raise ConfigError(f"{at}.range: at most 65536 values (a list of choices is drawn)")
    if not any((m == 1 or k % m) and k not in excluded for k in range(span[0], span[1] + 1)):
        raise ConfigError(f"{at}: no value of {span} satisfies not_multiple and except")
    return ValueRule(span=span, not_multiple=m, excluded=tuple(excluded))


def _names(decl: Any) -> dict[str, set[str]]:
    return {
        "dims": {d.name for d in decl.dims},
        "shapes": {v.name for v in decl.shapes},
        "dtypes": {v.name for v in decl.dtypes},
        "settable": {d.name for d in decl.dims} | {v.name for v in decl.shapes}
        | {v.name for v in decl.dtypes if not v.derived} | {v.name for v in decl.vars}
        | set(decl.signature.names),
    }  # fmt: skip


def _shape_list(raw: Any, decl: Any, at: str) -> tuple[str, ...]:
    defaults = {v.name: v.default for v in decl.shapes}
    if not isinstance(raw, list) or not all(isinstance(n, str) and defaults.get(n) for n in raw):
        raise ConfigError(f"{at}: expected a list of [shapes] variables that have a default")
    return tuple(raw)


def _violation(raw: Any, i: int, decl: Any, names: dict[str, set[str]], at: str) -> Violation:
    at = f"{at}.violation[{i}]"
    if not isinstance(raw, dict) or set(raw) - _VIOLATION_KEYS:
        raise ConfigError(f"{at}: allowed keys are {', '.join(sorted(_VIOLATION_KEYS))}")
    name, what, status = raw.get("name"), raw.get("what"), raw.get("status")
    if not isinstance(name, str) or not name or not isinstance(what, str):
        raise ConfigError(f'{at}: name = "..." and what = "..." are required strings')
    if not is_int(status) or status == 0:
        raise ConfigError(f"{at}.status: the non-zero status it must fail with, e.g. 161002")
    sets = raw.get("set", {})
    if not isinstance(sets, dict):
        raise ConfigError(f"{at}.set: expected {{ NAME = value, ... }}")
    for key in sets:
        if key not in names["settable"]:
            raise ConfigError(f"{at}.set.{key}: not a dimension, variable or parameter")
    unb = _shape_list(raw.get("unbroadcastable", []), decl, f"{at}.unbroadcastable")
    if not sets and not unb:
        raise ConfigError(f"{at}: give set = {{ ... }} or unbroadcastable = [...]")
    rules = tuple((k, _rule(v, f"{at}.set.{k}", names["dtypes"])) for k, v in sets.items())
    for key, rule in rules:
        _check_set(key, rule, decl, f"{at}.set.{key}")
    return Violation(name, what, status, rules, unb)


def _check_set(key: str, rule: ValueRule, decl: Any, at: str) -> None:
    """A dimension takes ints >= 0, a shape variable shapes (a list of them: [[3, 4]]), a
    dtype variable its dtype names; anything else (a parameter, a [vars] value) any value."""
    options = (*rule.options, *(o for _, opts in rule.by for o in opts), *rule.otherwise)
    if key in {d.name for d in decl.dims}:
        ok = rule.of is None and all(is_int(o) and o >= 0 for o in options)
        fix = "ints >= 0 or { range = [lo, hi] }"
    elif key in {v.name for v in decl.shapes}:
        ok = rule.span is None and all(
            isinstance(o, list) and all(is_int(d) and d >= 0 for d in o) for o in options
        )
        fix = "a list of shapes, e.g. [[3, 4], [5]]"
    elif key in {v.name for v in decl.dtypes}:
        choices = decl.dtype_var(key).choices
        ok = rule.span is None and all(isinstance(o, str) and o in choices for o in options)
        fix = f"dtype names among {', '.join(choices)}"
    else:
        return
    if not ok:
        raise ConfigError(f"{at}: expected {fix}")


def parse_generation(raw: Any, decl: Any) -> GenerationSpec:
    """The ``[generate]`` table of declaration ``decl`` (names checked against it)."""
    at = f"{decl.source} [generate]"
    reject_unknown_keys(raw if isinstance(raw, dict) else {"generate": raw}, _KEYS, at)
    names = _names(decl)
    most = raw.get("max_elements")
    if most is not None and (not is_int(most) or most < 1):
        raise ConfigError(f"{at}, field 'max_elements': expected an int >= 1")
    dtypes = raw.get("dtypes", {})
    defaulted = {v.name for v in decl.dtypes if v.default is not None}
    if not isinstance(dtypes, dict) or not set(dtypes) <= defaulted:
        raise ConfigError(f"{at}, field 'dtypes': {{ VAR = [dtypes] }} for [dtypes] variables "
                          f"with a default ({', '.join(sorted(defaulted)) or 'none'})")  # fmt: skip
    for name, options in dtypes.items():
        choices = decl.dtype_var(name).choices
        if not isinstance(options, list) or not options or not all(o in choices for o in options):
            raise ConfigError(f"{at}, field 'dtypes.{name}': a list of its choices")
    values = raw.get("values", {})
    if not isinstance(values, dict) or not set(values) <= names["settable"]:
        raise ConfigError(f"{at}, field 'values': {{ PARAM = [values] }} by parameter or var")
    violations = raw.get("violation", [])
    if not isinstance(violations, list):
        raise ConfigError(f"{at}, field 'violation': an array of tables ([[generate.violation]])")
    parsed = tuple(_violation(v, i, decl, names, at) for i, v in enumerate(violations))
    if len({v.name for v in parsed}) != len(parsed):
        raise ConfigError(f"{at}, field 'violation': names must be unique")
    drawn = tuple((k, _rule(v, f"{at}, field 'values.{k}'", names["dtypes"]))
                  for k, v in values.items())  # fmt: skip
    for key, rule in drawn:
        _check_set(key, rule, decl, f"{at}, field 'values.{key}'")
    return GenerationSpec(
        max_elements=most,
        limits=_limits(raw.get("limits", {}), names["dims"], f"{at}, field 'limits'"),
        legal=_ranges(raw.get("legal", {}), names["dims"], f"{at}, field 'legal'"),
        broadcast=_shape_list(raw.get("broadcast", []), decl, f"{at}, field 'broadcast'"),
        dtypes=tuple((k, tuple(v)) for k, v in dtypes.items()),
        values=drawn,
        violation_dims=_ranges(
            raw.get("violation_dims", {}), names["dims"], f"{at}, field 'violation_dims'"
        ),
        violations=parsed,
    )
