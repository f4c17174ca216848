"""What an aclnn header's doc comment says about one operator's parameters, as plain text.

The header reader (:mod:`stress.ops.header`) keeps only the ``@param [in]/[out]`` directions;
``aclnn-stress op new`` (:mod:`stress.ops.skeleton`) also wants the words: the dtypes a
parameter takes (``FLOAT, FLOAT16, BF16``), a shape written as a tuple of dimension names
(``(B, S, N*N+2N)``), a value in parentheses (``Sinkhorn iterations (20)``), "in x's dtype",
"with input's shape". :func:`op_doc` finds the comment block right above the operator's
``GetWorkspaceSize`` declaration and returns its ``@brief`` text and each ``@param``'s text.
Nothing here is a rule of the framework: these are hints a skeleton starts from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from stress.ops.shape_expr import ShapeExprError, parse_dim

__all__ = ["OpDoc", "doc_dtypes", "doc_number", "doc_same_as", "doc_shape", "op_doc"]

_BLOCK = re.compile(r"/\*\*?(.*?)\*/", re.S)
_PARAM = re.compile(r"@param\s*\[[^\]]*\]\s*([A-Za-z_]\w*)\s*:?\s*(.*)")
_DTYPES = {
    "FLOAT16": "float16",
    "FLOAT32": "float32",
    "FLOAT": "float32",
    "BFLOAT16": "bf16",
    "BF16": "bf16",
    "DOUBLE": "float64",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "UINT8": "uint8",
    "BOOL": "bool",
}
_DTYPE_WORD = re.compile(r"\b(" + "|".join(sorted(_DTYPES, key=len, reverse=True)) + r")\b")
_TUPLE = re.compile(r"\(([^()]*)\)")


@dataclass(frozen=True)
class OpDoc:
    """The doc comment of one operator: its brief text and each documented parameter's text;
    ``notes``, the header's other comments (no ``@param``: a file comment's constraints)."""

    brief: str = ""
    params: dict[str, str] = field(default_factory=dict)
    notes: str = ""


def op_doc(text: str, line: int, names: tuple[str, ...]) -> OpDoc:
    """The doc comment that ends last before ``line`` of ``text`` (the operator's declaration)
    and documents one of ``names`` (its parameters); an empty :class:`OpDoc` if none does."""
    best: OpDoc = OpDoc()
    notes: list[str] = []
    for m in _BLOCK.finditer(text):
        if text.count("\n", 0, m.end()) + 1 > line:
            break
        doc = _parse(m.group(1))
        if set(doc.params) & set(names):
            best = doc
        elif not doc.params:
            notes.append(doc.brief)
    return OpDoc(best.brief, best.params, " ".join(n for n in notes if n))


def _parse(body: str) -> OpDoc:
    lines = [re.sub(r"^\s*\*?\s?", "", raw).rstrip() for raw in body.splitlines()]
    brief: list[str] = []
    params: dict[str, list[str]] = {}
    current: list[str] | None = brief
    for ln in lines:
        found = _PARAM.match(ln.strip())
        if found:
            current = params.setdefault(found.group(1), [])
            current.append(found.group(2))
        elif ln.strip().startswith("@"):
            tag = ln.strip()
            current = brief if tag.startswith("@brief") else None
            if current is not None:
                current.append(tag.removeprefix("@brief").strip())
        elif current is not None and ln.strip():
            current.append(ln.strip())
    return OpDoc(" ".join(brief).strip(), {k: " ".join(v).strip() for k, v in params.items()})


def doc_dtypes(text: str) -> list[str]:
    """The dtypes ``text`` names in CANN's spelling (``FLOAT16``, ``BF16``), in order, once."""
    out: list[str] = []
    for word in _DTYPE_WORD.findall(text):
        if _DTYPES[word] not in out:
            out.append(_DTYPES[word])
    return out


def doc_shape(text: str) -> list[int | str] | None:
    """The first parenthesised tuple of ``text`` that reads as dimension expressions:
    ``(B, S, N*N+2N)`` -> ``["B", "S", "N*N+2*N"]``, ``(3)`` -> ``[3]``; else None."""
    for m in _TUPLE.finditer(text):
        if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"):
            continue  # a call, sqrt(Var + eps), not a shape
        items = [re.sub(r"(\d)([A-Za-z_])", r"\1*\2", s.strip()) for s in m.group(1).split(",")]
        if not items or not all(items):
            continue
        try:
            for s in items:
                parse_dim(s)
        except ShapeExprError:
            continue
        return [int(s) if s.isdigit() else s for s in items]
    return None


def doc_number(text: str) -> int | None:
    """An integer given alone in parentheses (``Sinkhorn iterations (20)``), else None."""
    found = re.search(r"\((-?\d+)\)", text)
    return int(found.group(1)) if found else None


def doc_same_as(text: str, what: str, names: tuple[str, ...]) -> str | None:
    """The parameter of ``names`` whose ``what`` (shape / dtype) ``text`` says this one has:
    "with x's shape", "in gradHin's dtype", "of input's shape"; else None."""
    for m in re.finditer(r"([A-Za-z_]\w*)'s\s+" + what, text):
        if m.group(1) in names:
            return m.group(1)
    return None
