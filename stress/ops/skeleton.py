"""``aclnn-stress op new``: a declaration skeleton for one operator, written from its header.

Every parameter is written by its header name with its role (the header reader's rule); the
values are guesses meant to run as written on a typical operator and to be checked:

- a tensor's shape is the tuple its doc comment gives (``(B, S, N, C)``), else another
  tensor's shape where the comment says so ("with x's shape"), else, for an output, the first
  input's shape, for a per-channel parameter (``gamma``, ``beta``, ``weight``, ``bias``,
  ``scale``) ``[H]``, and otherwise ``[B, H]``; dims get small ranges and the one case small
  equal sizes (B = H = 4: square and per-channel operands fit);
- a tensor's dtype is what its doc comment names (one dtype: that one; "in x's dtype": x's),
  else the dtype variable ``T``, whose choices are the dtypes the operator's brief (or its
  parameters' comments) name, else float32, float16;
- an optional (``...Optional``) tensor is NULL; a tensor list holds one tensor;
- attributes get typed defaults: an integer its comment's ``(n)`` or a dim it names, -1 for a
  ``dim``/``axis``, else 0; ``eps``-like floats 1e-5, other floats 1.0; bools false; an
  ``aclDataType`` ``T``; scalars ``{ value = 1.0, dtype = "T" }``; int arrays ``[-1]`` for dims
  and axes, else ``["H"]``.

What the header says relates tensors comes before those guesses
(:mod:`stress.ops.skeleton_rules`: a matrix-product formula, a keep-dims reduction, "leading
dims followed by ones", a bool an output's doc names), and the header's constraints
(:mod:`stress.ops.doc_constraints`: ``C % 128 == 0``, ``0 < C < 100000``, ``N == 4``, a
tensor's two shapes) set the dims' ranges after them.

The file's comments say what to check: which tensors share guessed dims (shapes that must
agree), each parameter's documented text (legal ranges), and one ``FIX`` line naming the dims
and guessed shapes to change when the case fails with the operator's status.
"""

from __future__ import annotations

import re
from typing import Any

from stress.ops.doc_comment import (
    OpDoc,
    doc_dtypes,
    doc_number,
    doc_same_as,
    doc_shape,
)
from stress.ops.doc_constraints import doc_bounds, doc_restated_shapes, small_range, solve_shapes
from stress.ops.shape_expr import parse_dim
from stress.ops.signature import CParam, OpSignature
from stress.ops.skeleton_rules import (
    Relation,
    bool_value,
    derived_shape,
    flag_attrs,
    is_dims_attr,
    relations,
)
from stress.ops.skeleton_toml import Entry, Skeleton, render_skeleton, toml_value

__all__ = ["Entry", "Skeleton", "guess_skeleton", "render_skeleton", "snake_name"]

_GENERIC = {"B": (1, 8, 4), "H": (1, 64, 4)}  # name -> (low, high, case value)
_DOC_DIM = (1, 16, 4)
_PER_CHANNEL = ("gamma", "beta", "weight", "bias", "scale")
_DEFAULT_DTYPES = ("float32", "float16")
_UNSIGNED = ("uint8", "uint32", "uint64")
_INT_KINDS = ("int64", "int32", "int16", "int8", "uint64", "uint32", "uint8")


def dim_name(param: str) -> str:
    """The dim named after an integer parameter: ``numIters`` -> ``NUM_ITERS``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", param).upper()


def _rename(item: int | str, params: set[str]) -> int | str:
    if isinstance(item, int):
        return item
    for name in params:
        item = re.sub(rf"\b{name}\b", dim_name(name), item)
    return item


def snake_name(function: str) -> str:
    """``aclnnSoftmaxBackward`` -> ``softmax_backward`` (a declaration's default name)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", function.removeprefix("aclnn")).lower()


class _Guesser:
    """The state of one skeleton's guesses: dims in use, the dtype variable, the checks."""

    def __init__(self, sig: OpSignature, doc: OpDoc) -> None:
        self.sig, self.doc = sig, doc
        self.dims: dict[str, tuple[int, int, int]] = {}
        self.generic: list[str] = []  # tensors given [B, H] / [H] by guess
        self.copied: list[tuple[str, str]] = []  # (tensor, whose shape it copies by guess)
        self.documented: list[str] = []  # tensors whose shape comes from the doc comment
        self.dtype: dict[str, Any] = {}  # tensor -> its dtype value ("T" or a literal)
        self.doc_dims = self._doc_dims()
        self.choices = self._choices()
        self.uses_t = False
        self.shapes: dict[str, list[int | str]] = {}  # tensor -> its shape, references resolved
        self.related: list[str] = []  # the check lines of the shape rules used
        self.from_header: dict[str, str] = {}  # dim -> the header's words that set its range
        self.multiples: dict[str, int] = {}  # dim -> the number its values are multiples of
        self.flags = flag_attrs(sig, doc)
        self.bounds = doc_bounds([doc.notes, doc.brief, *doc.params.values()])
        used = {n for shape in self.doc_dims.values() for i in shape for n in parse_dim(i).names}
        self.rules = relations(sig, doc, used)

    def text(self, p: CParam) -> str:
        return self.doc.params.get(p.name, "")

    def _doc_dims(self) -> dict[str, list[int | str]]:
        """Tensors' documented shapes; a name that is a parameter's too (``numIters``) is
        renamed (``NUM_ITERS``: a dim and a parameter cannot share a name); a shape naming
        a non-integer parameter (``sqrt(Var + eps)``) is not a shape."""
        ints = {p.name for p in self.sig.params if p.kind in _INT_KINDS}
        shapes = {}
        for p in self.sig.params:
            shape = doc_shape(self.text(p)) if p.kind == "tensor" else None
            if shape is None:
                continue
            used = {n for item in shape for n in parse_dim(item).names}
            if used & (set(self.sig.names) - ints):
                continue
            shapes[p.name] = [_rename(item, used & ints) for item in shape]
        return shapes

    def _choices(self) -> tuple[tuple[str, ...], str]:
        brief = doc_dtypes(self.doc.brief)
        if brief:
            return tuple(brief), "the operator's doc comment"
        many = [
            d
            for p in self.sig.params
            for d in doc_dtypes(self.text(p))
            if len(doc_dtypes(self.text(p))) > 1
        ]
        if many:
            return tuple(dict.fromkeys(many)), "its parameters' doc comments"
        return _DEFAULT_DTYPES, "none documented: the usual float32, float16"

    def dim(self, name: str, spec: tuple[int, int, int]) -> None:
        self.dims.setdefault(name, spec)

    def first_input(self) -> str | None:
        return next(
            (
                p.name
                for p in self.sig.params
                if p.kind == "tensor" and p.role in ("input", "inout") and not p.optional
            ),
            None,
        )

    def tensor_dtype(self, p: CParam) -> Any:
        named = doc_dtypes(self.text(p))
        same = doc_same_as(self.text(p), "dtype", self.sig.names)
        if len(named) == 1:
            return named[0]
        if same is not None and same in self.dtype:
            return self.dtype[same]
        self.uses_t = True
        return "T"

    def tensor_shape(self, p: CParam) -> Any:
        if p.name in self.doc_dims:
            for item in self.doc_dims[p.name]:
                for n in sorted(parse_dim(item).names):
                    self.dim(n, _DOC_DIM)
            self.documented.append(p.name)
            return list(self.doc_dims[p.name])
        rel = self.rules.get(p.name)
        if rel is not None and (ruled := self.ruled_shape(rel)) is not None:
            return ruled
        same = doc_same_as(self.text(p), "shape", self.sig.names)
        if same is None and p.role == "output":
            same = self.first_input()
        if same is not None and same != p.name and same in self.dtype:
            if not doc_same_as(self.text(p), "shape", self.sig.names):
                self.copied.append((p.name, same))
            return same
        self.generic.append(p.name)
        if p.name.removesuffix("Optional").lower() in _PER_CHANNEL:
            self.dim("H", _GENERIC["H"])
            return ["H"]
        self.dim("B", _GENERIC["B"])
        self.dim("H", _GENERIC["H"])
        return ["B", "H"]

    def ruled_shape(self, rel: Relation) -> list[int | str] | None:
        """``rel``'s shape (:mod:`stress.ops.skeleton_rules`), None if its source has none."""
        if rel.shape is None and rel.source not in self.shapes:
            return None
        for name, value in rel.new_dims:
            self.dim(name, (_DOC_DIM[0], _DOC_DIM[1], value))
        if rel.check:
            self.related.append(rel.check)
        if rel.shape is not None:
            return list(rel.shape)
        return derived_shape(rel, self.shapes[str(rel.source)])

    def tensor(self, p: CParam) -> Entry:
        dtype = self.tensor_dtype(p)
        shape = self.tensor_shape(p)
        self.dtype[p.name] = dtype
        self.shapes[p.name] = self.shapes[shape] if isinstance(shape, str) else shape
        table = {"shape": shape, "dtype": dtype}
        if p.optional:
            return Entry(
                p.name, '"null"', f"{p.role}, may be NULL; to pass one: {toml_value(table)}"
            )
        return Entry(p.name, toml_value(table), p.role)

    def tensor_list(self, p: CParam) -> Entry:
        self.dim("B", _GENERIC["B"])
        self.dim("H", _GENERIC["H"])
        self.generic.append(p.name)
        self.uses_t = True
        return Entry(
            p.name,
            toml_value([{"shape": ["B", "H"], "dtype": "T"}]),
            f"{p.role}, a list of one tensor",
        )

    def attr(self, p: CParam) -> Entry:
        value, why = self.attr_value(p)
        return Entry(p.name, toml_value(value), f"attr {p.type}, {why}")

    def attr_value(self, p: CParam) -> tuple[Any, str]:
        text = self.text(p)
        dims_like = is_dims_attr(p)
        if p.kind in _INT_KINDS:
            return self.int_attr(p, dims_like)
        if p.kind in ("double", "float"):
            return (1e-5, "guessed (eps-like)") if "eps" in p.name.lower() else (1.0, "guessed")
        if p.kind == "bool":
            return bool_value(p.name, self.flags)
        if p.kind == "dtype":
            self.uses_t = True
            return "T", "the tensors' dtype variable"
        if p.kind == "scalar":
            self.uses_t = True
            ints = all(c.startswith(("int", "uint")) for c in self.choices[0])
            return {"value": 1 if ints else 1.0, "dtype": "T"}, "guessed"
        if p.kind == "int_array":
            if p.optional:
                return "null", "may be NULL"
            if dims_like:
                return [-1], "guessed (the last dim)"
            self.dim("H", _GENERIC["H"])
            return ["H"], "guessed (the last dim's size)"
        if p.kind == "string":
            return "", "guessed: CHECK a legal value" + (f" ({text})" if text else "")
        return self.list_attr(p)

    def int_attr(self, p: CParam, dims_like: bool) -> tuple[Any, str]:
        text = self.text(p)
        number = doc_number(text)
        first = re.match(r"\s*([A-Za-z_]\w*)\b", text)
        linked = dim_name(p.name) if dim_name(p.name) in self.dims else None
        if linked is None and first and first.group(1) in self.dims:
            linked = first.group(1)
        if linked is not None:
            if number is not None:
                self.dims[linked] = (number, number, number)
            return linked, f"the dim {linked} its doc comment names"
        if number is not None:
            return number, "from its doc comment"
        bound = self.bounds.get(p.name)
        if bound is not None and bound.fixed is not None:
            return bound.fixed, f"from the header's {bound.said[0]!r}"
        if dims_like:
            return (0, "guessed") if p.kind in _UNSIGNED else (-1, "guessed (the last dim)")
        return 0, "guessed"

    def list_attr(self, p: CParam) -> tuple[Any, str]:
        if p.kind == "float_array":
            return [1.0], "guessed"
        if p.kind == "bool_array":
            return [True], "guessed"
        self.uses_t = True
        return [{"value": 1.0, "dtype": "T"}], "guessed (one per tensor of the lists)"


def _order(sig: OpSignature) -> list[CParam]:
    """Tensors before attributes, inputs before outputs, so that every "same shape as" and
    integer attribute linked to a documented dim can see what it refers to."""
    rank = {"input": 0, "inout": 0, "output": 1, "attr": 2}
    return sorted(sig.params, key=lambda p: (rank[p.role], sig.params.index(p)))


def guess_skeleton(
    sig: OpSignature, doc: OpDoc, header: str, taken: frozenset[str] = frozenset()
) -> Skeleton:
    """The skeleton of ``sig`` (documented by ``doc``) whose ``[op] header`` is ``header``;
    its name is ``snake_name(function)``, ``my_`` before it when ``taken`` (built-in) has it."""
    g = _Guesser(sig, doc)
    entries: dict[str, Entry] = {}
    for p in _order(sig):
        if p.kind == "tensor":
            entries[p.name] = g.tensor(p)
        elif p.kind == "tensor_list":
            entries[p.name] = g.tensor_list(p)
        else:
            entries[p.name] = g.attr(p)
    for p in sig.params:
        if p.name in doc.params and p.kind in ("tensor", "tensor_list"):
            e = entries[p.name]
            entries[p.name] = Entry(e.name, e.value, f"{e.comment}: {doc.params[p.name]}")
        elif p.name in doc.params:
            e = entries[p.name]
            entries[p.name] = Entry(e.name, e.value, f"{e.comment}; doc: {doc.params[p.name]}")
    _bound_dims(g, doc)
    dims = tuple((n, *g.dims[n]) for n in sorted(g.dims, key=_dim_order))
    checks, fix = _checks(g, dims)
    choices, note = g.choices
    name = snake_name(sig.name)
    name = f"my_{name}" if name in taken else name
    return Skeleton(
        sig.name,
        name,
        header,
        dims,
        choices if g.uses_t else (),
        note,
        tuple(entries[p.name] for p in sig.params),
        checks,
        fix,
        tuple(sorted(g.multiples.items())),
    )


def _bound_dims(g: _Guesser, doc: OpDoc) -> None:
    """Move each dim into the range the header's comments state for it (or for the integer
    parameter it is named after), then fix the dims a tensor's restated shape pins down."""
    ints = {p.name for p in g.sig.params if p.kind in _INT_KINDS}
    by_dim = {dim_name(n) if n in ints else n: b for n, b in g.bounds.items()}
    for name, spec in list(g.dims.items()):
        if name in by_dim:
            g.dims[name] = small_range(by_dim[name], spec)
            g.from_header[name] = ", ".join(by_dim[name].said)
            if by_dim[name].multiple > 1 and g.dims[name][0] != g.dims[name][1]:
                g.multiples[name] = by_dim[name].multiple
    restated = doc_restated_shapes(doc.notes, g.doc_dims)
    pairs = [(g.doc_dims[t], [_rename(i, ints) for i in s]) for t, s in restated.items()]
    fixed = {n: lo for n, (lo, hi, _) in g.dims.items() if lo == hi}
    for name, value in solve_shapes(pairs, fixed).items():
        if name in g.dims:
            g.dims[name] = (value, value, value)
            g.from_header[name] = f"{name} = {value} from a tensor's two documented shapes"


def _dim_order(name: str) -> tuple[int, str]:
    return (0 if name in _GENERIC else 1, name)


def _checks(g: _Guesser, dims: tuple[tuple[str, int, int, int], ...]) -> tuple[tuple, str]:
    checks = []
    if len(g.generic) > 1:
        checks.append(
            f"{', '.join(g.generic)} are guessed over the same dims (B, H): CHECK the "
            "shapes the operator needs them to agree on (broadcast, contraction, "
            "per-channel)"
        )
    elif g.generic:
        checks.append(f"{g.generic[0]}'s shape is guessed: CHECK it")
    for out, src in g.copied:
        checks.append(
            f"{out} is guessed to have {src}'s shape: CHECK the output shape the "
            "operator computes (a reduction, concatenation or broadcast differs)"
        )
    if g.documented:
        names = ", ".join(n for n, *_ in dims if n not in _GENERIC and n not in g.from_header)
        checks.append(
            f"{', '.join(g.documented)}: shapes from the doc comment"
            + (f"; CHECK the legal ranges of {names} (fixed sizes, multiples)" if names else "")
        )
    checks += g.related
    if g.from_header:
        said = "; ".join(f"{n}: {w}" for n, w in sorted(g.from_header.items()))
        checks.append(f"dims set by the header's comments ({said}): CHECK they still hold")
    checks.append("each parameter's comment quotes its doc text: legal ranges and dtypes")
    fixable = ", ".join(n for n, *_ in dims if n not in g.from_header) or "none"
    guessed = ", ".join([*g.generic, *(o for o, _ in g.copied)])
    fix = (
        f"FIX: if the case fails with the operator's status (161002: an invalid argument), "
        f"set the dims {fixable} in [dims] and [[case]] to legal sizes"
        + (f" and the guessed shapes of {guessed} to legal ones" if guessed else "")
        + (f" ({', '.join(sorted(g.from_header))}: from the header)" if g.from_header else "")
    )
    return tuple(checks), fix
