"""The legal ranges a declaration states, checked when a corpus loads (issue 31 item 4).

A case that means to succeed (no ``expect``) must keep what its operator's declaration
constrains, or it would fail late, while the baseline is recorded:

- a dimension stays inside its ``[generate] legal`` range (``C = [1, 99999]``, ``N = [4, 4]``)
  and, where a ``[[generate.violation]]`` documents it (``not_multiple = 128``), is a multiple
  of its ``[dims]`` ``multiple``;
- it matches no ``[[generate.violation]]`` (every entry of the violation's ``set``: ``dtype =
  "float32"``, ``hc_mult = [3, 2, 5, 8]``): the operator rejects that with the violation's status;
- no tensor has more than :data:`MAX_RANK` dims, the most an aclnn operator takes.

A negative case (``expect = { status = ... }``) may break any of these on purpose; only its
tensors' rank is bounded, by :data:`HOST_MAX_RANK` (its inputs are numpy arrays). ``[dims]``
ranges themselves are where *generated* cases draw from, not limits on a written case.

Each refusal is one :class:`~stress.errors.ConfigError` line naming the file, the case, the
field, the value and the legal range, and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stress import ops
from stress.errors import ConfigError
from stress.ops.declaration_types import OpDeclaration
from stress.ops.dims import DTYPE_NAMES
from stress.ops.generation import ValueRule, Violation

__all__ = ["HOST_MAX_RANK", "MAX_RANK", "check_legal"]

MAX_RANK = 8  # aclnn operators take at most 8 dims (op_api's MAX_SUPPORT_DIMS_NUMS)
HOST_MAX_RANK = 64  # numpy's limit: a negative case's inputs are still host arrays
_PARAM_INVALID = 161002  # ACLNN_ERR_PARAM_INVALID: a case that tests a rejection expects it


def _fix(status: int) -> str:
    return f"a case that tests the rejection sets expect = {{ status = {status} }}"


def _matches(rule: ValueRule, value: Any) -> bool:
    if rule.of is not None:  # a dtype-dependent list: generated values only
        return False
    if rule.span is not None:
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        lo, hi = rule.span
        multiple = rule.not_multiple > 1 and value % rule.not_multiple == 0
        return lo <= value <= hi and not multiple and value not in rule.excluded
    return any(_same(value, o) for o in rule.options)


def _same(value: Any, option: Any) -> bool:
    """Equal, with dtype names compared as dtypes (``fp32`` is ``float32``)."""
    if isinstance(value, str) and value in DTYPE_NAMES and option in DTYPE_NAMES:
        return DTYPE_NAMES[value] == DTYPE_NAMES[option]
    return value == option and type(value) is type(option)


def _broken(decl: OpDeclaration, params: Mapping[str, Any]) -> Violation | None:
    """The first declared violation whose every ``set`` entry the case's parameters match."""
    for v in decl.generation.violations:
        if (
            v.set
            and not v.unbroadcastable
            and all(name in params and _matches(rule, params[name]) for name, rule in v.set)
        ):
            return v
    return None


def _documented_multiple(decl: OpDeclaration, dim: str, multiple: int) -> Violation | None:
    for v in decl.generation.violations:
        if any(n == dim and r.not_multiple == multiple for n, r in v.set):
            return v
    return None


def _check_dims(decl: OpDeclaration, params: Mapping[str, Any], where: str) -> None:
    broken = _broken(decl, params)
    for d in decl.dims:
        value = params.get(d.name, d.default)
        if not isinstance(value, int):
            continue
        legal = decl.generation.legal_range(d.name)
        if legal is not None and not legal[0] <= value <= legal[1]:
            about = broken if broken is not None and d.name in dict(broken.set) else None
            why = f"{about.what}; " if about is not None else ""
            status = about.status if about is not None else _PARAM_INVALID
            raise ConfigError(
                f"{where}, field '{d.name}': {value} is outside its legal range "
                f"[{legal[0]}, {legal[1]}] ({why}{decl.source} [generate] legal); {_fix(status)}"
            )
        documented = d.multiple > 1 and _documented_multiple(decl, d.name, d.multiple)
        if documented and value % d.multiple:
            raise ConfigError(
                f"{where}, field '{d.name}': {value} is not a multiple of {d.multiple} "
                f"({documented.what}; {decl.source} [dims]); {_fix(documented.status)}"
            )
    if broken is not None:
        name = broken.set[0][0]
        raise ConfigError(
            f"{where}, field '{name}': {params[name]!r} breaks a documented constraint: "
            f"{broken.what} ({decl.source} [[generate.violation]] '{broken.name}'); "
            f"{_fix(broken.status)}"
        )


def _ranks(decl: OpDeclaration, params: Mapping[str, Any], where: str):
    """(field, rank) of each shape variable the case gives and of each resolved tensor."""
    from stress.ops.resolve import TensorValue, resolve

    for s in decl.shapes:
        if isinstance(params.get(s.name), list | tuple):
            yield s.name, len(params[s.name])
    for name, value in resolve(decl, params, where).items():
        members = value if isinstance(value, tuple) else (value,)
        for t in members:
            if isinstance(t, TensorValue):
                yield name, len(t.shape)


def check_legal(
    op: str | OpDeclaration, params: Mapping[str, Any], where: str, *, negative: bool
) -> None:
    """Refuse (ConfigError) a case of ``op`` (a catalogue name, or the declaration itself)
    outside what its declaration makes legal; ``negative``: the case expects a failure status
    (only the host's rank limit applies)."""
    decl = ops.declaration_of(op) if isinstance(op, str) else op
    if decl is None:
        return
    most = HOST_MAX_RANK if negative else MAX_RANK
    for name, rank in _ranks(decl, params, where):
        if rank > most:
            what = "the host arrays (numpy) hold" if negative else "an aclnn operator takes"
            tail = "" if negative else f"; {_fix(_PARAM_INVALID)}"
            raise ConfigError(
                f"{where}, field '{name}': rank {rank} is over {most}, the most dims {what} "
                f"(legal: rank <= {most}){tail}"
            )
    if not negative:
        _check_dims(decl, params, where)
