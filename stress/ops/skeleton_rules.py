"""The shapes ``op new`` derives from what a header's doc comment says relates its tensors, where
a guess of ``[B, H]`` or a copy of the first input's shape would be illegal:

- a matrix product written as a formula, ``out = self @ mat2``: ``self`` is ``[M, K]``,
  ``mat2`` ``[K, N]`` (K shared: the contraction), ``out`` ``[M, N]``;
- a reduction, an operator with a keep-dims flag (``keepDims``, ``keepdim``: torch's and
  CANN's name) and a dims attribute: the output is the input's shape with the reduced dims
  (the skeleton's guess: the last) dropped, or kept as 1 when the flag is true;
- "x's leading dims followed by ones" (``then ones``): x's shape with its trailing dim (the
  per-channel one of the skeleton's guesses) as 1;
- a bool attribute an output's doc comment names (``may be NULL without needBackward``) is set
  true, so that every output is written and none reports its canary as unwritten.

Each rule reads the header's words, never an operator's name; :mod:`stress.ops.skeleton` asks
them before it falls back to its guesses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from stress.ops.doc_comment import OpDoc
from stress.ops.signature import CParam, OpSignature

__all__ = ["Relation", "bool_value", "derived_shape", "flag_attrs", "is_dims_attr", "relations"]

_NAME = r"[A-Za-z_]\w*"
_PRODUCT = re.compile(rf"\b({_NAME})\s*=\s*({_NAME})\s*@\s*({_NAME})\b")
_LEADING = re.compile(rf"\b({_NAME})'s\s+leading\s+dims\s+(?:followed\s+by|then)\s+ones\b")
_KEEP = re.compile(r"^keep_?dims?$", re.I)
_CONTRACTION_DIMS = (("M", 4), ("K", 8), ("N", 2))  # case values differ: a swap shows


@dataclass(frozen=True)
class Relation:
    """One tensor's shape by a rule: ``shape`` over dims (a name of ``source`` or new ones,
    ``new_dims`` with their case values), and the check line saying why."""

    tensor: str
    shape: tuple[int | str, ...] | None  # None: derived from ``source``'s shape by ``kind``
    kind: str  # "contraction", "reduction", "leading"
    source: str | None
    check: str
    new_dims: tuple[tuple[str, int], ...] = ()


def is_dims_attr(p: CParam) -> bool:
    """An attribute naming dims (``dim``, ``axis``, ``axes``) by its name."""
    return p.role == "attr" and any(w in p.name.lower() for w in ("dim", "axis", "axes"))


def flag_attrs(sig: OpSignature, doc: OpDoc) -> dict[str, str]:
    """The bool attributes an output's doc comment names, each with the outputs naming it."""
    out: dict[str, str] = {}
    for flag in (p for p in sig.params if p.kind == "bool" and not _KEEP.match(p.name)):
        naming = [
            p.name
            for p in sig.params
            if p.role == "output" and re.search(rf"\b{flag.name}\b", doc.params.get(p.name, ""))
        ]
        if naming:
            out[flag.name] = ", ".join(naming)
    return out


def relations(sig: OpSignature, doc: OpDoc, taken: set[str]) -> dict[str, Relation]:
    """The tensors whose shapes a rule derives, by name; ``taken`` are dim names in use (the
    contraction's M, K, N get a suffix where one is)."""
    names = set(sig.names)
    tensors = {p.name for p in sig.params if p.kind == "tensor"}
    out: dict[str, Relation] = {}
    product = _PRODUCT.search(doc.brief)
    if product and {product.group(1), product.group(2), product.group(3)} <= tensors:
        out.update(_contraction(*product.groups(), product.group(0), taken | names))
    keep = next((p for p in sig.params if p.kind == "bool" and _KEEP.match(p.name)), None)
    dims = next((p for p in sig.params if is_dims_attr(p) and p.kind != "bool"), None)
    source = next((p.name for p in sig.params if p.name in tensors and p.role != "output"), None)
    if keep is not None and dims is not None and source is not None:
        for p in sig.params:
            if p.role == "output" and p.kind == "tensor" and p.name not in out:
                out[p.name] = Relation(
                    p.name, None, "reduction", source,
                    f"{p.name} is {source}'s shape without the dims {dims.name} reduces "
                    f"(its guess: the last), as {keep.name} = false drops them; CHECK both",
                )  # fmt: skip
    for p in sig.params:
        found = _LEADING.search(doc.params.get(p.name, ""))
        if p.kind == "tensor" and found and found.group(1) in tensors and p.name not in out:
            out[p.name] = Relation(
                p.name, None, "leading", found.group(1),
                f"{p.name} is {found.group(1)}'s leading dims followed by ones (its doc "
                "comment): CHECK how many trailing dims are ones",
            )  # fmt: skip
    return out


def _contraction(
    out: str, left: str, right: str, formula: str, taken: set[str]
) -> dict[str, Relation]:
    fresh = {}
    for name, value in _CONTRACTION_DIMS:
        new = name
        while new in taken:
            new += "_"
        fresh[name] = (new, value)
    m, k, n = (fresh[d][0] for d in ("M", "K", "N"))
    check = (
        f"{left} [{m}, {k}] and {right} [{k}, {n}] share {k}, the contraction of "
        f"`{formula}`; {out} is [{m}, {n}]: CHECK the batch dims the operator takes"
    )
    dims = tuple(fresh.values())
    return {
        left: Relation(left, (m, k), "contraction", None, check, dims),
        right: Relation(right, (k, n), "contraction", None, ""),
        out: Relation(out, (m, n), "contraction", None, ""),
    }


def derived_shape(rel: Relation, source: list[int | str]) -> list[int | str]:
    """``rel``'s shape from its source tensor's: the last dim dropped for a reduction (its
    keep-dims flag is false in a skeleton), made 1 for leading dims followed by ones."""
    if rel.kind == "reduction":
        return list(source[:-1])
    return [*source[:-1], 1] if source else [1]


def bool_value(name: str, flags: Mapping[str, str]) -> tuple[bool, str]:
    """A bool attribute's value: true where an output's doc comment names it."""
    if name in flags:
        return True, f"true: the doc comments of {flags[name]} depend on it"
    return False, "guessed"
