"""Twins derived from every case: the same call with exactly one field changed.

Tiling and plan caches keyed on a subset of a call's fields (the shape but not the dtype, the
shape but not an attribute) are a recurring real bug; they show only when two calls in flight
differ in *just* that field. A *twin* of a case is the case with one field set to another value
its declaration allows, everything else (operator, sizes, seed) kept, so the pair meets such a
cache with the same key and different contents. The interleaved phase runs every case with each
of its twins in flight (:mod:`stress.engine.replay.twins`), and a contamination found between a
case and its twin is diagnosed with the field named (:mod:`stress.grading.twin_field`).

Fields (the id names the field and its new value):

``dtype``  each other dtype a root dtype variable of the declaration allows (its ``[dtypes]``
           choices as generated cases draw them, aliases folded): ``<id>@dtype-<var>=<dtype>``.
           A variable that defaults to another (``other_dtype = { default = "dtype" }``) or is
           derived from one follows its root, so dtype groups that must agree stay agreed.
``attr``   each other value of a by-value attribute (``int64_t dim``, ``double eps``, ...) the
           declaration states as legal (its ``[generate] values`` list), else the values the
           operator's other positive cases pass (their authors wrote them as legal):
           ``<id>@attr-<name>=<value>``.
``view``   the layout twin is the view variant (:mod:`stress.corpus.variants`), not derived
           again here.

A twin computes something else, so it is a case of its own with its own baseline entry (as a
size variant: :func:`stress.corpus.variants.recorded_cases`). A twin the declaration's checks
refuse is not derived. At most :data:`CAP` twins per case (dtypes first, then attributes, each
in declaration order); :func:`twin_count` says how many a cap left out. Twins are opt-in
(``--variants twins``): with every case's two or three twins the corpus and the ``make stress``
time would grow by half again past its 30 s (README "Variants").
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from stress.errors import ConfigError
from stress.vocabulary import VIEW_SEPARATOR

if TYPE_CHECKING:
    from stress.corpus.parse import Case

__all__ = [
    "CAP",
    "TWIN",
    "Twin",
    "parse_twin",
    "sampled_twins",
    "twin_count",
    "twin_of",
    "twins",
]

#: The variant name of twins (``--variants twins``).
TWIN = "twins"
#: The most twins one case derives.
CAP = 4
#: The fields a twin's id names.
FIELDS = ("dtype", "attr")


@dataclass(frozen=True)
class Twin:
    """What a twin's id says: the case it is a twin of, the field kind, its name and value."""

    case: str
    field: str  # "dtype" or "attr"
    name: str
    value: str


def parse_twin(case_id: str) -> Twin | None:
    """The twin a case id names (``<case>@dtype-<var>=<v>``, ``<case>@attr-<name>=<v>``), or
    None for a case that is not a twin."""
    base, sep, tail = case_id.rpartition(VIEW_SEPARATOR)
    kind, dash, rest = tail.partition("-")
    name, eq, value = rest.partition("=")
    if not sep or not dash or not eq or kind not in FIELDS or not name:
        return None
    return Twin(base, kind, name, value)


def twin_of(case_id: str) -> str:
    """The id of the case a twin is a twin of ("" for a case that is not a twin)."""
    t = parse_twin(case_id)
    return t.case if t else ""


def _declaration(op: str) -> Any:
    from stress import ops

    try:
        return ops.declaration_of(op)
    except (KeyError, ConfigError):
        return None  # an operator built in Python: no declared dtypes or attributes


def _dtype_values(decl: Any, case: Case) -> Iterator[tuple[str, str]]:
    from stress.ops.spec import dtype_of

    for var in decl.dtypes:
        if var.derived or var.default or var.name not in case.params:
            continue  # derived or defaulted: follows its root
        current = case.params[var.name]
        seen = {str(dtype_of(current))} if current is not None else set()
        for name in var.drawn or var.choices:
            key = str(dtype_of(name))
            if key not in seen:
                seen.add(key)
                yield var.name, name


def _attr_names(decl: Any) -> list[str]:
    from stress.ops.signature import KINDS

    scalar = {k for (_, depth), k in KINDS.items() if depth == 0 and k != "dtype"}
    return [p.name for p in decl.signature.params if p.role == "attr" and p.kind in scalar]


def _attr_values(decl: Any, case: Case, others: Sequence[Case]) -> Iterator[tuple[str, Any]]:
    rules = dict(decl.generation.values)
    for name in _attr_names(decl):
        if name not in case.params:
            continue
        rule = rules.get(name)
        dtypes = {k: v for k, v in case.params.items() if isinstance(v, str)}
        try:
            legal = list(rule.choices_for(dtypes)) if rule is not None else []
        except KeyError:
            legal = []
        if not legal:  # the values the operator's other cases pass, in case order
            legal = [c.params.get(name) for c in others if c.params.get(name) is not None]
        current = case.params[name]
        for value in dict.fromkeys(legal):
            if value is None or value == current:
                continue
            if current is None or type(value) is type(current):
                yield name, value


def _derive(case: Case, field: str, name: str, value: Any) -> Case | None:
    params = {**case.params, name: value}
    new = replace(case, id=f"{case.id}{VIEW_SEPARATOR}{field}-{name}={value}", params=params)
    try:
        new = replace(new, params=case.spec.parse_params(params, f"{case.source}: {new.id}"))
    except (ConfigError, ValueError, KeyError, TypeError):
        return None
    return new


def _pins_outputs(case: Case) -> bool:
    """Whether the case states an output's shape itself (``out = { shape = [...] }``): then a
    changed attribute (keepDims, dim) may change that shape and the declaration cannot re-derive
    it, so no attribute twin is made (it would be a false finding, not a bug)."""
    return any(o.name in case.params for o in case.spec.outputs)


def _candidates(case: Case, others: Sequence[Case]) -> Iterator[Case]:
    decl = _declaration(case.op)
    if decl is None:
        return
    for name, value in _dtype_values(decl, case):
        new = _derive(case, "dtype", name, value)
        if new is not None:
            yield new
    if _pins_outputs(case):
        return  # its outputs are stated by the case, not derived: an attribute twin would keep them
    for name, value in _attr_values(decl, case, others):
        new = _derive(case, "attr", name, value)
        if new is not None:
            yield new


def _base(cases: Sequence[Case]) -> list[Case]:
    return [c for c in cases if not c.negative and not c.view and VIEW_SEPARATOR not in c.id]


def twins(cases: Sequence[Case], cap: int = CAP) -> list[Case]:
    """The twins of the positive corpus cases in ``cases`` (at most ``cap`` each), in case
    order."""
    base = _base(cases)
    out: list[Case] = []
    for case in base:
        if "twins" in (getattr(case.spec, "variant_rules", None) or {}):
            continue  # the declaration opts out ([variants])
        others = [c for c in base if c.op == case.op and c.id != case.id]
        out += list(_candidates(case, others))[:cap]
    return out


def twin_count(cases: Sequence[Case], cap: int = CAP) -> tuple[int, int]:
    """(twins derived, twins the cap left out) of ``cases``."""
    base = _base(cases)
    derived = skipped = 0
    for case in base:
        others = [c for c in base if c.op == case.op and c.id != case.id]
        n = len(list(_candidates(case, others)))
        derived += min(n, cap)
        skipped += max(0, n - cap)
    return derived, skipped


def sampled_twins(derived: Sequence[Case], seed: int) -> list[Case]:
    """The twins a run under ``--budget`` replays: one per case, drawn from the case's id and
    ``seed`` (as a size variant is), so the budget is shared and over seeds each comes round."""
    by_case: dict[str, list[Case]] = {}
    for t in sorted(derived, key=lambda t: t.id):  # by id: the order given does not matter
        by_case.setdefault(twin_of(t.id), []).append(t)
    drawn = {g[(seed + zlib.crc32(c.encode())) % len(g)].id for c, g in by_case.items()}
    return [t for t in derived if t.id in drawn]
