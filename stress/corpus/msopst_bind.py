"""``corpus import-msopst``: msOpST sub-cases (:mod:`stress.corpus.msopst`) bound to an aclnn
function's header parameters, written as a declared corpus.

The declaration part is the operator's ``op new`` skeleton (:mod:`stress.ops.skeleton`: every
parameter by its header name, typed defaults for what the case file does not give); each
sub-case is a ``[[case]]`` that sets the parameters msOpST describes. An ``input_desc`` binds
to the tensor input (or in-out) parameter of its ``name``, else to the next unbound one in C
order; ``output_desc`` likewise to the outputs; ``attr`` entries to the attributes by name,
else in order. A case msOpST expects to fail (``"expect": "failed"``) expects status 161002
(ACLNN_ERR_PARAM_INVALID), said in a comment above it. Whatever does not bind is a warning
line naming the case and the field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stress.corpus.msopst import MsAttr, MsCase, MsTensor, read_msopst
from stress.errors import ConfigError
from stress.ops.doc_comment import op_doc
from stress.ops.header import find_header, read_header
from stress.ops.new_declaration import default_function, header_ref
from stress.ops.signature import CParam, OpSignature
from stress.ops.skeleton import Skeleton, guess_skeleton, render_skeleton

__all__ = ["bind_case", "import_msopst"]

_PARAM_INVALID = 161002
_INTS = ("int64", "int32", "int16", "int8", "uint64", "uint32", "uint8")
_DTYPE_NAMES = {
    "float": "float32",
    "float16": "float16",
    "float32": "float32",
    "bfloat16": "bf16",
    "int32": "int32",
    "int64": "int64",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
    "double": "float64",
}


class _Unbound(Exception):
    """A sub-case field with no parameter to take it (the message is the warning)."""


def _assign(items: Sequence[Any], params: list[CParam]):
    """{param name: item} by name, then in order; the indices of items left over."""
    bound: dict[str, Any] = {}
    free = [p.name for p in params]
    later = []
    for i, item in enumerate(items):
        if item.name in free:
            bound[item.name] = item
            free.remove(item.name)
        else:
            later.append(i)
    left = []
    for i in later:
        if free:
            bound[free.pop(0)] = items[i]
        else:
            left.append(i)
    return bound, left


def _tensor_value(t: MsTensor) -> dict[str, Any]:
    table: dict[str, Any] = {"shape": list(t.shape), "dtype": t.dtype}
    if t.values:
        table["values"] = t.values
    return table


def _attr_value(p: CParam, a: MsAttr, dtype: str, where: str) -> Any:
    v = a.value
    number = isinstance(v, int | float) and not isinstance(v, bool)
    if p.kind == "scalar" and number:
        return {"value": v, "dtype": dtype}
    if p.kind in _INTS and isinstance(v, int) and not isinstance(v, bool):
        return v
    if p.kind in ("double", "float") and number:
        return float(v)
    if p.kind == "bool" and isinstance(v, bool):
        return v
    if p.kind in ("int_array", "float_array", "bool_array") and isinstance(v, list):
        return v
    if p.kind == "string" and isinstance(v, str):
        return v
    if p.kind == "dtype" and isinstance(v, str) and v in _DTYPE_NAMES:
        return _DTYPE_NAMES[v]
    raise _Unbound(f"{where}: value {v!r} does not fit {p.name} ({p.type}, {p.kind})")


def bind_case(
    case: MsCase, sig: OpSignature, sk: Skeleton, source: str
) -> tuple[dict[str, Any], list[str], str]:
    """The ``[[case]]`` table of ``case`` for ``sig`` (dims and ``T`` from the skeleton ``sk``),
    the warnings for what it leaves out and the bindings ("x1 -> self, ..."); ``_Unbound`` if
    an input or attribute does not bind."""
    where = f"{source}: case {case.id!r}"
    whole = f"{source}: case {case.case!r}"  # for what every sub-case of the case shares
    tensors = [p for p in sig.params if p.kind == "tensor"]
    inputs = [p for p in tensors if p.role in ("input", "inout")]
    outputs = [p for p in tensors if p.role == "output"]
    warnings = []
    ins, left = _assign(case.inputs, inputs)
    if left:
        raise _Unbound(
            f"{where}, field 'input_desc[{left[0]}]': {sig.name} has no tensor "
            f"input left for it (inputs: {', '.join(p.name for p in inputs)})"
        )
    outs, left = _assign(case.outputs, outputs)
    for i in left:
        warnings.append(
            f"{whole}, field 'output_desc[{i}]': {sig.name} has no tensor output "
            "left for it; ignored"
        )
    table: dict[str, Any] = {"id": case.id, **{n: v for n, _, _, v in sk.dims}}
    dtype = next((t.dtype for t in case.inputs), None)
    if sk.dtypes and dtype is not None:
        table["T"] = dtype
    for name, t in {**ins, **outs}.items():
        table[name] = _tensor_value(t)
    attrs = [p for p in sig.params if p.role == "attr"]
    bound, left = _assign(case.attrs, attrs)
    for i in left:
        warnings.append(
            f"{whole}, field 'attr[{i}]' ({case.attrs[i].name}): {sig.name} has no "
            "attribute left for it; ignored"
        )
    for name, a in bound.items():
        p = sig.param(name)
        table[name] = _attr_value(p, a, dtype or "float32", f"{where}, field 'attr' {a.name!r}")
    if case.expect_fail:
        table["expect"] = {"status": _PARAM_INVALID}
    labels = [
        *(_label(case.inputs, t, "input_desc") + f" -> {k}" for k, t in ins.items()),
        *(_label(case.outputs, t, "output_desc") + f" -> {k}" for k, t in outs.items()),
        *(f"{a.name} -> {k}" for k, a in bound.items()),
    ]
    return table, warnings, ", ".join(labels)


def _label(items: Sequence[MsTensor], t: MsTensor, side: str) -> str:
    index = next(i for i, x in enumerate(items) if x is t)
    return f"{side}[{index}]" + (f" {t.name}" if t.name else "")


def import_msopst(
    cases: Path,
    header: str,
    function: str | None,
    out: Path | None,
    include_dirs: Sequence[str] = (),
    defines: Sequence[str] = (),
) -> tuple[str, int, list[str]]:
    """(the declared corpus's text, how many cases it has, the warnings); ``out`` is where it
    will be written (the ``[op] header`` path is relative to it)."""
    imported = read_msopst(cases)
    found = find_header(header, include_dirs)
    sig = default_function(read_header(found, include_dirs, defines), function)
    doc = op_doc(found.read_text(encoding="utf-8", errors="replace"), sig.line, sig.names)
    from stress.ops import names as known_ops

    sk = guess_skeleton(sig, doc, header_ref(header, found, out), frozenset(known_ops()))
    warnings = list(imported.warnings)
    rows = []
    for case in imported.cases:
        try:
            table, more, bindings = bind_case(case, sig, sk, str(cases))
        except _Unbound as exc:
            warnings.append(f"{exc}; the sub-case is skipped")
            continue
        warnings += more
        note = f"msOpST {case.case}: {bindings}" + (
            "\nexpect failed: status 161002 (ACLNN_ERR_PARAM_INVALID) assumed"
            if case.expect_fail
            else ""
        )
        rows.append((note, table))
    if not rows:
        raise ConfigError(
            f"{cases}: no case could be imported for {sig.name}"
            + (f" ({warnings[0]})" if warnings else "")
        )
    extra = [r["T"] for _, r in rows if "T" in r and r["T"] not in sk.dtypes]
    sk = dataclasses.replace(sk, dtypes=tuple(dict.fromkeys([*sk.dtypes, *extra])))
    head = [
        f"# {sig.name}: the msOpST cases of {cases.name}, imported by `aclnn-stress corpus "
        "import-msopst`",
        "# onto the operator's `op new` skeleton, which gives what the case file does not; check:",
    ]
    return render_skeleton(sk, rows, head), len(rows), list(dict.fromkeys(warnings))
