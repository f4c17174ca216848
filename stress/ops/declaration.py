"""Declared operators: a TOML file naming an aclnn function by header, and its cases.

::

    [op]
    header = "aclnnop/aclnn_rms_norm.h"  # a path (relative to this file), or found with -I,
    function = "aclnnRmsNorm"            # $ASCEND_HOME_PATH/include or the simulator
    name = "rms_norm"                    # the op's name in corpora (default: snake case)
    reference = "mypkg.refs:rms_norm"    # optional numpy reference, kept as a string
    roles = { sumOut = "input" }         # optional role overrides
    optional = ["hPre"]                  # parameters that may be NULL besides *Optional ones
    not_repeatable = "..."               # why its executor cannot be repeatable (documented)
    atol = 1e-3                          # optional tolerances (or ulp = 2) for every output,
    tolerance = { rstdOut = { rtol = 1e-4, atol = 1e-5 } }  # or per output
    [dims]                               # named dimensions: a range [low, high] or a fixed int
    B = [0, 8]                           # or { range = [128, 1024], multiple = 128, default = 256 }
    H = [1, 4096]
    [dtypes]                             # dtype variables: the allowed names (first = default),
    T = ["float32", "float16", "bf16"]   # or derived: { of = "T", map = { int32 = "int32" },
                                         #               else = "float32" }
    [params]                             # every header parameter by its C name
    x = { shape = ["B", "H"], dtype = "T" }          # a tensor (values = "positive", ...)
    gamma = { shape = ["H"], dtype = "T", values = "positive" }
    epsilon = 1e-6                                   # by-value attributes
    yOut = { shape = "x", dtype = "T" }              # shape = another tensor's name: same shape
    [variants]                           # derived variants the operator opts out of, and why
    pad = { reason = "x must be contiguous (its docs)", expect = 161002 }  # a negative case
    edge = { reason = "..." }            # none derived (stress/ops/variant_rules.py)
    [[case]]
    id = "rms-f16"
    B = 4                                # dims and dtype variables by name
    T = "float16"
    seed = 7
    epsilon = 1e-5                       # any parameter may be overridden (tables merge)
    expect = { status = 161002 }         # a negative case

Parameter values by kind: tensors ``{ shape, dtype, values }``; tensor lists a list of tensor
tables; ``aclScalar`` ``{ value = 1.5, dtype = "float32" }`` or a bare number; int arrays a
list of ints or dimension expressions; float and bool arrays lists; scalar lists a list of
scalar tables; ``aclDataType`` a dtype name or variable; ``const char*`` a string; integer
attributes an int or a dimension expression; ``"null"`` for a parameter whose name ends in
``Optional`` (an optional parameter not given is NULL). Every error is one line naming the file,
the field and the fix (:class:`~stress.errors.ConfigError`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stress.errors import ConfigError
from stress.ops.declaration_types import DeclaredCase, OpDeclaration, Tolerance
from stress.ops.dims import (
    DTYPE_NAMES,
    DimSpec,
    DtypeVar,
    is_int,
    parse_dims,
    parse_dtype_vars,
    parse_scalar_vars,
    parse_shape_vars,
)
from stress.ops.generation import parse_generation
from stress.ops.gradspec import parse_gradspec
from stress.ops.header_cache import read_header
from stress.ops.header_find import find_header
from stress.ops.resolve import check_params, resolve
from stress.ops.signature import ROLES, OpSignature
from stress.ops.table_keys import reject_unknown_keys
from stress.ops.variant_rules import parse_variant_rules

__all__ = [
    "DTYPE_NAMES",
    "DeclaredCase",
    "DimSpec",
    "DtypeVar",
    "OpDeclaration",
    "Tolerance",
    "load_declaration",
    "parse_declaration",
]

_OP_KEYS = {
    "generate",
    "tolerance_function",
    "depends_on",
    "optional",
    "header",
    "function",
    "name",
    "reference",
    "roles",
    "include",
    "atol",
    "rtol",
    "ulp",
    "tolerance",
    "description",
    "not_repeatable",
}
_TOP_KEYS = {
    "op",
    "dims",
    "shapes",
    "vars",
    "dtypes",
    "params",
    "case",
    "generate",
    "gradcheck",
    "variants",
}
_CASE_KEYS = {"id", "seed", "expect", "description"}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def _snake(function: str) -> str:
    base = function.removeprefix("aclnn")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", base).lower()


def _tolerance(raw: Mapping[str, Any], at: str) -> Tolerance | None:
    keys = {k: raw[k] for k in ("atol", "rtol", "ulp") if k in raw}
    if not keys:
        return None
    for k, v in keys.items():
        ok = is_int(v) and v >= 0 if k == "ulp" else isinstance(v, int | float) and v >= 0
        if not ok or isinstance(v, bool):
            raise ConfigError(f"{at}, field '{k}': expected a number >= 0, got {v!r}")
    ulp = keys.get("ulp")
    return Tolerance(float(keys.get("rtol", 0.0)), float(keys.get("atol", 0.0)), ulp)


def _op_table(raw: Any, source: str, include_dirs: Sequence[str | Path]):
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: missing [op] table with header = ... and function = ...")
    reject_unknown_keys(raw, _OP_KEYS, f"{source} [op]")
    for key in ("header", "function"):
        if not isinstance(raw.get(key), str):
            raise ConfigError(f"{source} [op], field '{key}': required (a string)")
    base = Path(source).parent
    extra = raw.get("include", [])
    if not isinstance(extra, list) or not all(isinstance(d, str) for d in extra):
        raise ConfigError(f"{source} [op], field 'include': expected a list of folders")
    dirs = [*(base / d for d in extra), *map(Path, include_dirs)]
    header = raw["header"]
    path = base / header if (base / header).is_file() else find_header(header, dirs)
    info = read_header(path, dirs)
    try:
        sig = info.op(raw["function"])
    except KeyError:
        names = ", ".join(op.name for op in info.ops)
        raise ConfigError(
            f"{source} [op], field 'function': {raw['function']!r} is not declared in {path} "
            f"(it declares {names})"
        ) from None
    return sig, str(path)


def _override_roles(sig: OpSignature, roles: Any, optional: Any, source: str) -> OpSignature:
    if not isinstance(roles, dict):
        raise ConfigError(f"{source} [op], field 'roles': expected {{ name = \"input\", ... }}")
    if not isinstance(optional, list) or set(optional) - set(sig.names):
        raise ConfigError(
            f"{source} [op], field 'optional': expected a list of parameters of "
            f"{sig.name} ({', '.join(sig.names)})"
        )
    params = []
    for p in sig.params:
        if p.name in optional and not p.optional:
            p = type(p)(**{**p.__dict__, "optional": True})
        role = roles.get(p.name, p.role)
        if role not in ROLES or (role == "attr") != (p.kind not in ("tensor", "tensor_list")):
            allowed = "attr" if p.kind not in ("tensor", "tensor_list") else "input/output/inout"
            raise ConfigError(f"{source} [op], field 'roles.{p.name}': {role!r}; use {allowed}")
        params.append(p if role == p.role else type(p)(**{**p.__dict__, "role": role}))
    unknown = sorted(set(roles) - set(sig.names))
    if unknown:
        raise ConfigError(
            f"{source} [op], field 'roles.{unknown[0]}': {sig.name} has no such "
            f"parameter (it has {', '.join(sig.names)})"
        )
    return OpSignature(sig.name, tuple(params), sig.header, sig.line)


def _case(raw: Any, index: int, decl: OpDeclaration) -> DeclaredCase:
    at = f"{decl.source}: case #{index + 1}"
    if not isinstance(raw, dict) or not _ID.match(str(raw.get("id", ""))):
        raise ConfigError(f"{at}, field 'id': required; letters, digits, '_', '-', '.'")
    where = f"{decl.source}: case '{raw['id']}'"
    dims, dtypes, overrides, shapes = {}, {}, {}, {}
    dim_names = {d.name for d in decl.dims}
    shape_names = {v.name for v in decl.shapes}
    var_names = {v.name for v in decl.dtypes}
    for key, value in raw.items():
        if key in _CASE_KEYS:
            continue
        if key in dim_names:
            if not is_int(value) or value < 0:
                raise ConfigError(f"{where}, field '{key}': a dimension is an int >= 0")
            dims[key] = value
        elif key in shape_names:
            if not isinstance(value, list) or not all(is_int(v) and v >= 0 for v in value):
                raise ConfigError(f"{where}, field '{key}': a shape is a list of ints >= 0")
            shapes[key] = tuple(value)
        elif key in var_names:
            var = decl.dtype_var(key)
            if var.derived or value not in var.choices:
                allowed = ", ".join(var.choices) if not var.derived else "none (derived)"
                raise ConfigError(f"{where}, field '{key}': dtype {value!r} not allowed; {allowed}")
            dtypes[key] = value
        elif key in decl.signature.names or key in {v.name for v in decl.vars}:
            overrides[key] = value
        else:
            raise ConfigError(
                f"{where}, field '{key}': not a parameter of {decl.function} nor a dimension or "
                f"dtype variable (parameters: {', '.join(decl.signature.names)})"
            )
    for d in decl.dims:
        if d.name not in dims:
            if d.default is None:
                raise ConfigError(
                    f"{where}, field '{d.name}': required (dimension in [{d.low}, {d.high}])"
                )
            dims[d.name] = d.default
    seed = raw.get("seed")
    if seed is not None and (not is_int(seed) or seed < 0):
        raise ConfigError(f"{where}, field 'seed': expected an integer >= 0")
    expect = raw.get("expect")
    if expect is not None:
        status = expect.get("status") if isinstance(expect, dict) else None
        if not is_int(status) or status == 0 or set(expect) != {"status"}:
            raise ConfigError(f"{where}, field 'expect': expected {{ status = 161002 }}")
        expect = status
    case = DeclaredCase(
        raw["id"], dims, dtypes, overrides, seed, expect, str(raw.get("description", "")), shapes
    )

    resolve(decl, case.params(), where)  # every shape, dtype and value must resolve
    return case


def _check_pointers(op: Mapping[str, Any], source: str) -> None:
    """[op]'s "module:function" fields and depends_on (an operator name)."""
    for key in ("reference", "generate", "tolerance_function"):
        value = op.get(key)
        if value is not None and (not isinstance(value, str) or ":" not in value):
            raise ConfigError(f"{source} [op], field '{key}': expected \"module:function\"")
    if not isinstance(op.get("depends_on", ""), str):
        raise ConfigError(f"{source} [op], field 'depends_on': expected an operator name")


def parse_declaration(
    data: Mapping[str, Any], source: str, include_dirs: Sequence[str | Path] = ()
) -> OpDeclaration:
    """The declaration in ``data`` (a parsed TOML document from file ``source``)."""
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ConfigError(
            f"{source}: unknown top-level key '{unknown[0]}'; a declaration has "
            "[op], [dims], [shapes], [vars], [dtypes], [params], [generate], [gradcheck], "
            "[variants] and [[case]]"
        )
    op = data.get("op")
    sig, header = _op_table(op, source, include_dirs)
    sig = _override_roles(sig, op.get("roles", {}), op.get("optional", []), source)
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise ConfigError(f"{source} [params]: expected a table of header parameter = value")
    tol_raw = op.get("tolerance", {})
    if not isinstance(tol_raw, dict) or not all(isinstance(v, dict) for v in tol_raw.values()):
        raise ConfigError(
            f"{source} [op], field 'tolerance': expected {{ out = {{ atol = ... }} }}"
        )
    _check_pointers(op, source)
    not_repeatable = op.get("not_repeatable", "")
    if not isinstance(not_repeatable, str) or ("not_repeatable" in op and not not_repeatable):
        raise ConfigError(
            f"{source} [op], field 'not_repeatable': expected a non-empty string saying why its "
            "executor cannot be repeatable (as its documentation states)"
        )
    grad = parse_gradspec(data["gradcheck"], source, sig) if "gradcheck" in data else None
    dims = parse_dims(data.get("dims", {}), source)
    decl = OpDeclaration(
        name=str(op.get("name") or _snake(sig.name)),
        function=sig.name,
        source=source,
        header=header,
        signature=sig,
        dims=dims,
        vars=parse_scalar_vars(data.get("vars", {}), dims, source),
        generate=op.get("generate"),
        tolerance_function=op.get("tolerance_function"),
        depends_on=op.get("depends_on") or (grad.forward if grad else None),
        gradcheck=grad,
        dtypes=parse_dtype_vars(data.get("dtypes", {}), source),
        shapes=parse_shape_vars(data.get("shapes", {}), source),
        params=params,
        reference=op.get("reference"),
        tolerance=_tolerance(op, f"{source} [op]"),
        tolerances={
            k: _tolerance(v, f"{source} [op] tolerance.{k}") or Tolerance()
            for k, v in tol_raw.items()
        },
        description=str(op.get("description", "")),
        not_repeatable=not_repeatable,
        variant_rules=parse_variant_rules(data.get("variants", {}), source),
    )

    check_params(decl)
    generation = parse_generation(data.get("generate", {}), decl)  # [generate]: generation.py
    decl = OpDeclaration(**{**decl.__dict__, "generation": generation})
    raw_cases = data.get("case", [])
    if not isinstance(raw_cases, list):
        raise ConfigError(f"{source}: 'case' must be an array of tables ([[case]])")
    cases = tuple(_case(raw, i, decl) for i, raw in enumerate(raw_cases))
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise ConfigError(f"{source}: case '{c.id}', field 'id': duplicate; ids are unique")
        seen.add(c.id)
    return OpDeclaration(**{**decl.__dict__, "cases": cases})


def load_declaration(path: str | Path, include_dirs: Sequence[str | Path] = ()) -> OpDeclaration:
    """Read and validate the declaration file at ``path``."""
    path = Path(path)
    from stress.files import load_toml

    data = load_toml(path, "declaration file")
    return parse_declaration(data, str(path), include_dirs)
