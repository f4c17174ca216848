"""Variants derived from every case that change its sizes: empties and edge sizes.

Kernels change path at sizes: a dimension of 0 (the seed's bug lived at B = 0), a dimension past
a tile or a buffer, a multiple of 16/32/128 and one past it, a tail block. Generated cases draw
sizes uniformly from small ranges and hit those only by chance, so each case derives, with no
declaration change, cases at them. Unlike a view variant they change what the call computes, so
each is a case of its own with its own baseline entry (``--record-baseline`` and ``baseline
record`` record every one of them: :func:`recorded_cases`).

Kinds (:data:`SIZE_VARIANTS`):

``empty``  each dimension of the case set to 0 on its own, where the dimension's *legal* range
           (``[generate] legal``, else ``[dims]``) admits 0: the declaration states where its
           operator documents empty tensors as legal, and an operator that rejects them is not
           sent one as a positive case. Id ``<id>@empty-<dim>``. A tensor list whose members'
           shapes use such a dimension gets an empty member this way.
``edge``   for each ranged dimension of the operator (its legal range, as above): the range's
           ends, the powers of two, the multiples 16, 32 and 128 and the largest multiples
           under the top, each of them and one past it, within the range and the dimension's
           ``multiple``. Each value goes to one of the operator's non-empty positive cases
           (chosen by the value and the case ids: every case carries some, and any order of
           the corpus derives the same), id ``<id>@edge-<dim>-<value>``; a value whose case
           would be over :data:`EDGE_BYTES` (or ``--max-case-bytes``) is not derived. And one
           *large* case per operator, ``<id>@large-<dim>-<value>``: its non-empty positive case
           first by id with one dimension raised as far as its legal range and the run's
           memory limit allow (``--max-case-bytes``, else :data:`LARGE_BYTES`).

A derived case must pass the declaration's checks (its shape rules, ``multiple``); one that does
not is not derived. Under ``--budget`` each case replays one of the size variants it carries,
empty or edge, drawn from its id and the seed (:func:`sampled`), the way a view variant is drawn
(a case with both kinds meets each on half the seeds); the journal's header lists the cases
run, so coverage says which ran.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from stress.errors import ConfigError
from stress.vocabulary import SIZE_VARIANTS, VIEW_SEPARATOR, size_kind

if TYPE_CHECKING:
    from stress.corpus.parse import Case

__all__ = [
    "EDGE_BYTES",
    "LARGE_BYTES",
    "SIZE_VARIANTS",
    "edge_values",
    "sampled",
    "size_variants",
    "tops",
]

#: The most bytes an edge case's tensors take (the large case excepted): edges stay cheap.
EDGE_BYTES = 2 << 20
#: The large case's size without ``--max-case-bytes`` (the default limit, a quarter of memory,
#: would make every run slow; ``--max-case-bytes`` raises it to what the host really holds).
LARGE_BYTES = 16 << 20
#: The multiples kernels tile by: each, the largest under the range's top, and one past them.
MULTIPLES = (16, 32, 128)


def edge_values(low: int, high: int, multiple: int = 1) -> list[int]:
    """The edge sizes of a dimension legal in ``[low, high]`` (values a multiple of
    ``multiple``), ascending; 0 is an empty's, not an edge."""
    points = {low, high}
    k = 1
    while k <= high:
        points |= {k, k + 1}
        k *= 2
    for m in MULTIPLES:
        top = high // m * m
        points |= {m, m + 1, top, top + 1}
    return sorted(v for v in points if max(low, 1) <= v <= high and v % multiple == 0)


def _bytes(case: Case) -> int:
    """Bytes of every tensor the case passes (as :func:`stress.engine.call.case_size.case_bytes`,
    which the corpus layer does not import)."""
    from stress.ops.spec import TensorArg, TensorListArg

    total, p = 0, case.params
    for a in case.spec.args:
        if isinstance(a, TensorArg) and a.present(p):
            total += math.prod(a.shape(p)) * np.dtype(a.dtype(p)).itemsize
        elif isinstance(a, TensorListArg) and a.present(p):
            for s, d in zip(a.shapes(p), a.dtypes(p), strict=True):
                total += math.prod(s) * np.dtype(d).itemsize
    return total


def _legal_dims(op: str) -> list[tuple[str, int, int, int]]:
    """(name, low, high, multiple) of each dimension of a declared ``op`` a case may vary."""
    from stress import ops

    try:
        decl = ops.declaration_of(op)
    except (KeyError, ConfigError):
        return []  # an operator built in Python: no declared ranges
    out = []
    for d in decl.dims:
        low, high = decl.generation.legal_range(d.name) or (d.low, d.high)
        if d.default is None and low < high:
            out.append((d.name, low, high, d.multiple))
    return out


def _derive(case: Case, dim: str, value: int, kind: str, limit: int | None) -> Case | None:
    """``case`` with ``dim`` = ``value`` as a ``kind`` variant, or None where the declaration's
    checks refuse it or it is over ``limit`` bytes."""
    params: dict[str, Any] = {**case.params, dim: value}
    tag = f"{kind}-{dim}" if kind == "empty" else f"{kind}-{dim}-{value}"
    new = replace(case, id=f"{case.id}{VIEW_SEPARATOR}{tag}", params=params)
    try:
        if case.spec.check is not None:
            case.spec.check(params, f"{case.source}: case '{new.id}'")
        if limit is not None and _bytes(new) > limit:
            return None
    except (ConfigError, ValueError, KeyError):
        return None
    return new


def _empties(case: Case, dims: Sequence[tuple[str, int, int, int]]) -> Iterator[Case]:
    for name, low, _, _ in dims:
        if low == 0 and case.params.get(name):
            new = _derive(case, name, 0, "empty", None)
            if new is not None:
                yield new


def _largest(case: Case, name: str, low: int, high: int, multiple: int, limit: int) -> Case | None:
    """``case`` with ``name`` as large as its range and ``limit`` bytes allow (a bisection:
    bytes grow with a dimension), or None where that is no larger than the case."""
    lo, hi = max(low, 1, case.params.get(name, 0)) // multiple, high // multiple
    if _derive(case, name, lo * multiple, "large", limit) is None:
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if _derive(case, name, mid * multiple, "large", limit) else (lo, mid - 1)
    value = lo * multiple
    return None if value <= case.params.get(name, 0) else _derive(case, name, value, "large", limit)


def _sized(case: Case) -> bool:
    """Whether every tensor of ``case`` has elements (an empty case's edges stay empty)."""
    from stress.ops.spec import TensorArg

    p = case.params
    return all(
        math.prod(a.shape(p)) > 0
        for a in case.spec.args
        if isinstance(a, TensorArg) and a.present(p)
    )


def _edges(cases: Sequence[Case], dims, limit: int | None) -> Iterator[Case]:
    """The edge cases of one operator's positive ``cases`` and its large case."""
    edge_limit = min(EDGE_BYTES, limit) if limit is not None else EDGE_BYTES
    for name, low, high, multiple in dims:
        carriers = sorted((c for c in cases if name in c.params and _sized(c)), key=lambda c: c.id)
        for value in edge_values(low, high, multiple) if carriers else ():
            case = carriers[zlib.crc32(f"{name}={value}".encode()) % len(carriers)]
            if case.params[name] != value:
                new = _derive(case, name, value, "edge", edge_limit)
                if new is not None:
                    yield new
    large_limit = limit if limit is not None else LARGE_BYTES
    sized = [c for c in cases if _sized(c)]
    if not sized:
        return
    first = min(sized, key=lambda c: c.id)  # by id: the corpus's order does not matter
    large = [_largest(first, *d, large_limit) for d in dims if d[0] in first.params]
    found = [c for c in large if c is not None]
    if found:
        yield max(found, key=_bytes)


#: The last derivation, by the identity of its cases (which it holds, so no other list can
#: take their ids): the session derives the variants before it forks the fork server, and a
#: phase child, given the same parsed cases (:mod:`stress.corpus.preload`), finds them here.
_LAST: dict[tuple[Any, ...], tuple[tuple[Case, ...], list[Case]]] = {}


def size_variants(
    cases: Sequence[Case], kinds: Sequence[str], max_case_bytes: int | None = None
) -> list[Case]:
    """Every ``empty`` and ``edge`` variant (those in ``kinds``) of the positive corpus cases in
    ``cases``, in case order per operator; ``max_case_bytes``: the run's limit
    (``--max-case-bytes``). Case objects are never changed: the same ``cases`` get the
    variants derived last time."""
    key = (tuple(map(id, cases)), tuple(kinds), max_case_bytes)
    hit = _LAST.get(key)
    if hit is None:
        _LAST.clear()
        hit = _LAST[key] = (tuple(cases), _derive_all(cases, kinds, max_case_bytes))
    return list(hit[1])


def _derive_all(
    cases: Sequence[Case], kinds: Sequence[str], max_case_bytes: int | None
) -> list[Case]:
    base = [c for c in cases if not c.negative and not c.view and VIEW_SEPARATOR not in c.id]
    out: list[Case] = []
    by_op: dict[str, list[Case]] = {}
    for c in base:
        by_op.setdefault(c.op, []).append(c)
    for op, op_cases in by_op.items():
        dims = _legal_dims(op)
        rules = getattr(op_cases[0].spec, "variant_rules", None) or {}  # [variants] opt-outs
        if "empty" in kinds and "empty" not in rules:
            out += [v for c in op_cases for v in _empties(c, dims)]
        if "edge" in kinds and "edge" not in rules:
            out += list(_edges(op_cases, dims, max_case_bytes))
    return out


def tops(variants: Sequence[Case]) -> list[Case]:
    """The largest edge variant of each dimension of each operator (by value, then id): past
    every threshold a kernel has in that dimension, within :data:`EDGE_BYTES`."""
    best: dict[tuple[str, str], tuple[int, str, Case]] = {}
    for v in variants:
        tail = v.id.rpartition(VIEW_SEPARATOR)[2]
        if not tail.startswith("edge-"):
            continue
        dim, _, value = tail.removeprefix("edge-").rpartition("-")
        entry = (int(value), v.id, v)
        if (v.op, dim) not in best or entry[:2] > best[v.op, dim][:2]:
            best[v.op, dim] = entry
    ids = {e[1] for e in best.values()}
    return [v for v in variants if v.id in ids]


def sampled(variants: Sequence[Case], seed: int) -> list[Case]:
    """The size variants a run under ``--budget`` replays: one per case that carries any, as
    for the view variants, so the budget is shared, and the :func:`tops` (a few per operator,
    so every seed passes each dimension's thresholds). A case's kind (empty or edge, where it
    has both) and then its variant are drawn from the case's id and ``seed``, so any subset of
    the corpus draws the same and over seeds every variant comes round."""
    by_case: dict[str, list[Case]] = {}
    for v in sorted(variants, key=lambda v: v.id):  # by id: the order given does not matter
        by_case.setdefault(v.id.rpartition(VIEW_SEPARATOR)[0], []).append(v)
    drawn = set()
    for twin, group in by_case.items():
        draw = seed + zlib.crc32(twin.encode())
        empties = [v for v in group if size_kind(v.id) == "empty"]
        edges = [v for v in group if size_kind(v.id) == "edge"]
        pool = (empties if draw % 2 == 0 else edges) or empties or edges
        drawn.add(pool[(draw // 2) % len(pool)].id)
    drawn |= {v.id for v in tops(variants)}
    return [v for v in variants if v.id in drawn]
