"""Variants derived from every case: the same call with its input tensors laid out as views.

A real caller hands an operator what its framework holds: a transposed tensor, a slice with a
padded row stride, a view starting part-way into its storage. A *view variant* of a case is the
same call (same operator, parameters, seed, so the same logical input values) with every input
tensor created through ``aclCreateTensor``'s strides / storage offset / storage shape as a
non-contiguous view of a larger storage (the memory geometry is :mod:`stress.engine.call.views`).
An operator that handles views right gives the same output digests as for the contiguous case,
so a variant is graded against its contiguous *twin*'s baseline (view invariance).

Kinds (:data:`VIEWS`):

``transpose`` the last two dims of every input of rank >= 2 (both > 1) strided as a transpose:
              the storage holds the transposed data, the view's strides read it back in order.
``pad``       every input's rows padded (row stride = last dim + :data:`PAD`; a rank-1 input
              reads every :data:`PAD` + 1-th element); the padding holds a fill pattern.
``offset``    every input starts :data:`OFFSET` elements into its storage (the elements before
              it hold the fill pattern).
``broadcast`` every input expanded along its first dim past 1 (:func:`broadcast_dim`), as
              ``torch.expand`` makes it: that dim's stride 0 over a storage of one slice. Its
              values are then that slice repeated, not the twin's, so its contiguous twin is
              the same call with those values in a dense tensor: a case with a baseline of its
              own, recorded under the variant's id (:func:`recorded_cases`; its inputs:
              :func:`stress.engine.call.views.broadcast_values`), which grades the variant.
              An operator documented to reject expanded inputs opts out as for any view.

A declaration may opt its operator out of a kind with the reason (``[variants]``,
:mod:`stress.ops.variant_rules`): none derived, or for a view kind with ``expect`` a negative
variant that must fail with that status (an operator documented to reject non-contiguous
inputs). Otherwise cases are derived automatically: each positive case gets one variant
per kind that changes at least one of its input tensors (under ``--budget`` one per case, its
kind drawn from the case's id and the seed: :func:`run_variants`); negative cases get none (their
expected status belongs to the layout they were written for). A variant's id is
``<twin id>@<kind>`` (``@`` is not allowed in a corpus id, so the two never collide); a corpus
file states one with ``view = "<kind>"`` beside the twin's id (how a minimal reproducer keeps
its variant).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stress.vocabulary import VIEW_SEPARATOR, VIEWS, split_view, variant_id

if TYPE_CHECKING:
    from stress.config import RunConfig
    from stress.corpus.parse import Case

__all__ = [
    "BROADCAST",
    "OFFSET",
    "PAD",
    "SEPARATOR",
    "VIEWS",
    "all_variants",
    "applies",
    "broadcast_dim",
    "opted_out",
    "recorded_cases",
    "run_variants",
    "split_view",
    "variant_id",
    "with_variants",
]

#: The view whose contiguous twin is a case of its own (its values are the expanded slice's).
BROADCAST = "broadcast"
#: Elements of padding after each row of a ``pad`` view (odd: rows start unaligned).
PAD = 3
#: Elements before the first one of an ``offset`` view (odd: the view starts unaligned).
OFFSET = 5
#: Between a twin's id and the view kind in a variant's id (:func:`stress.vocabulary.split_view`).
SEPARATOR = VIEW_SEPARATOR


def applies(view: str, shape: Sequence[int]) -> bool:
    """Whether a ``view`` layout of a tensor of ``shape`` differs from the contiguous one."""
    if any(d == 0 for d in shape):
        return False  # no elements: nothing to lay out
    if view == "transpose":
        return len(shape) >= 2 and shape[-1] > 1 and shape[-2] > 1
    if view == "pad":
        return len(shape) >= 1
    if view == "broadcast":
        return broadcast_dim(shape) is not None
    return view == "offset"


def broadcast_dim(shape: Sequence[int]) -> int | None:
    """The dim a ``broadcast`` view expands: the first one past 1 (None: nothing to expand)."""
    return next((k for k, d in enumerate(shape) if d > 1), None)


def _view_inputs(case: Case) -> Iterator[tuple[int, ...]]:
    """The shapes of the tensors a view variant lays out: inputs, not outputs or in-out ones
    (an in-out tensor is downloaded and graded as it is laid out)."""
    from stress.ops.spec import TensorArg, TensorListArg

    p = case.params
    for a in case.spec.args:
        if isinstance(a, TensorArg) and not a.output and not a.inout and a.present(p):
            yield tuple(a.shape(p))
        elif isinstance(a, TensorListArg) and not a.output and not a.inout and a.present(p):
            yield from (tuple(s) for s in a.shapes(p))


def with_variants(
    cases: Sequence[Case], views: Sequence[str], *, seed: int = 0, one_each: bool = False
) -> list[Case]:
    """``cases`` followed by their view variants (each kind in ``views`` that changes one of
    a positive case's inputs), in case order. ``one_each`` (a run under ``--budget``) derives
    one variant per case instead, its kind drawn from the case's id and ``seed``, so
    the corpus doubles instead of quadrupling and every seed meets other kinds."""
    from stress.corpus.parse import Expect

    derived = []
    for case in cases:
        if case.negative or case.view:
            continue
        shapes = list(_view_inputs(case))
        rules = opted_out(case)
        kinds = [v for v in views if v in VIEWS and any(applies(v, s) for s in shapes)]
        kinds = [v for v in kinds if v not in rules or rules[v].expect is not None]
        if one_each and kinds:  # by the id, not the position: any subset derives the same
            kinds = [kinds[(seed + zlib.crc32(case.id.encode())) % len(kinds)]]
        for v in kinds:  # an opted-out view with a status: a negative case expecting it
            expect = Expect(status=rules[v].expect) if v in rules else case.expect
            derived.append(replace(case, id=variant_id(case.id, v), view=v, expect=expect))
    return [*cases, *derived]


def opted_out(case: Case) -> Mapping[str, Any]:
    """The variant kinds ``case``'s operator opts out of (its declaration's ``[variants]``:
    kind -> :class:`stress.ops.variant_rules.VariantRule`)."""
    return getattr(case.spec, "variant_rules", None) or {}


def run_variants(cases: Sequence[Case], config: RunConfig) -> list[Case]:
    """The cases a run with ``config`` replays: the corpus, its view variants, its size
    variants (:mod:`stress.corpus.size_variants`) and its twins (:mod:`stress.corpus.twins`;
    one of each per case under ``--budget``). The session and every phase child derive the
    same list."""
    from stress.corpus.size_variants import sampled, size_variants

    budget = config.budget_s is not None
    views = with_variants(cases, config.variants, seed=config.seed, one_each=budget)
    from stress.corpus.twins import sampled_twins

    views = [c for c in views if c.id not in set(config.unrecorded)]  # broadcast's, as sizes'
    sizes = size_variants(cases, config.variants, config.max_case_bytes)
    sizes = [c for c in sizes if c.id not in set(config.unrecorded)]  # the baseline lacks them
    pairs = [c for c in _twins(cases, config) if c.id not in set(config.unrecorded)]
    if budget:
        sizes, pairs = sampled(sizes, config.seed), sampled_twins(pairs, config.seed)
    return [*views, *sizes, *pairs]


def all_variants(
    cases: Sequence[Case], kinds: Sequence[str], max_case_bytes: int | None = None
) -> list[Case]:
    """``cases`` followed by every variant of ``kinds`` they derive (views, sizes, twins), none
    sampled: what ``corpus generate --variants`` writes and the strategies draw with."""
    from stress.corpus.size_variants import size_variants
    from stress.corpus.twins import TWIN, twins

    views = with_variants(cases, kinds)
    pairs = twins(cases) if TWIN in kinds else []
    return [*views, *size_variants(cases, kinds, max_case_bytes), *pairs]


def recorded_cases(cases: Sequence[Case], config: RunConfig) -> list[Case]:
    """The cases a baseline recorded for ``config`` holds: the corpus and every size variant
    (not the budget's sample: a run with another seed draws others). View variants have none:
    their contiguous twin's grades them; but a ``broadcast`` variant's twin is its own
    contiguous copy (its values differ from the case's), recorded under its id."""
    from stress.corpus.size_variants import size_variants

    sizes = size_variants(cases, config.variants, config.max_case_bytes)
    derived = with_variants(cases, [BROADCAST] if BROADCAST in config.variants else [])
    dense = [replace(c, view="") for c in derived if c.view == BROADCAST and not c.negative]
    plain = [c for c in cases if c.view != BROADCAST]
    return [*plain, *dense, *sizes, *_twins(cases, config)]


def _twins(cases: Sequence[Case], config: RunConfig) -> list[Case]:
    """The one-field twins (:mod:`stress.corpus.twins`) when ``--variants`` names them: cases
    with baselines of their own, like the size variants (and sampled with them under
    ``--budget``)."""
    from stress.corpus.twins import TWIN, twins

    return twins(cases) if TWIN in config.variants else []
