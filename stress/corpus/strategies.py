"""Hypothesis strategies for operator cases, and a hypothesis-driven mix shrinker.

Strategies (keyword-only bounds, validated when the strategy is *created*: a bad bound raises
:class:`hypothesis.errors.InvalidArgument` at call time, as in ``hypothesis.extra.numpy``)::

    from stress.corpus import strategies as sst

    @given(sst.valid_cases("add", max_elements=1024))
    def test_add_matches_numpy(case): ...

    @given(sst.valid_cases("mhc_pre_sinkhorn_backward", dims={"C": (128, 256)},
                           limits={"B*S": 64}))
    def test_small_mhc(case): ...

    @given(sst.invalid_cases("mhc_pre_sinkhorn_backward", violations=["n", "c-align"]))
    def test_rejected(case):           # case.expect.status == 161002, case.description says why
        ...

* :func:`valid_cases` — cases the operator must accept, drawn from its declaration (``[dims]``,
  ``[shapes]``, ``[dtypes]`` and ``[generate]``: limits such as B*S <= 512, broadcast shapes,
  mixed dtypes, drawn values); bounds: ``dims`` ({name: (low, high)}, within ``[dims]`` or up
  to ``[generate] legal``), ``dtypes`` ({var: [names]}), ``max_elements`` (per tensor),
  ``limits`` ({"B*S": 64}); ``variants`` (kinds of ``--variants``: a case or one of the views,
  size variants and twins it derives, as a run derives them) and ``max_case_bytes`` (their
  edge and large cases);
* :func:`invalid_cases` — cases violating exactly one documented constraint (the op's
  ``[[generate.violation]]`` tables, :func:`stress.corpus.generate.violations_of`), each with
  the status the operator must return;
* :func:`case_lists` — lists of distinct cases (a mix to run together).

The strategies and ``aclnn-stress corpus generate`` share one case builder
(:mod:`stress.ops.declared_draw`); hypothesis shrinks towards the low end of every range (fewer
and smaller dimensions), the first dtype, and seed 0.

:func:`shrink_mix` shrinks a failing *mix* of cases (the cases in flight together) to a minimal
failing one with hypothesis's shrinker (:func:`hypothesis.find` over unique sublists), falling
back to delta debugging (:func:`stress.corpus.shrink.ddmin`) when random sublists never fail.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument, NoSuchExample

from stress.corpus import generate as gen
from stress.corpus.parse import Case
from stress.ops.declared_strategies import declared_cases, declared_violations

__all__ = ["case_lists", "invalid_cases", "shrink_mix", "valid_cases"]

T = TypeVar("T")


def _declaration(op: str) -> Any:
    try:
        return gen.declaration(op)
    except gen.BoundsError as exc:
        raise InvalidArgument(str(exc)) from None


def _check_bounds(op: str, bounds: dict[str, Any]) -> None:
    try:
        gen.make_bounds(op, **bounds)
    except gen.BoundsError as exc:
        raise InvalidArgument(str(exc)) from None


def _check_variants(variants: Sequence[str], max_case_bytes: int | None) -> tuple[str, ...]:
    from stress.corpus.twins import TWIN
    from stress.vocabulary import SIZE_VARIANTS, VIEWS

    known = (*VIEWS, *SIZE_VARIANTS, TWIN)
    if isinstance(variants, str) or not isinstance(variants, Sequence):
        raise InvalidArgument(f"variants={variants!r}: expected a sequence of variant kinds")
    bad = [v for v in variants if v not in known]
    if bad:
        raise InvalidArgument(
            f"variants={list(variants)!r}: unknown kind {bad[0]!r}; choose from {', '.join(known)}"
        )
    if max_case_bytes is not None and (
        not isinstance(max_case_bytes, int)
        or isinstance(max_case_bytes, bool)
        or max_case_bytes < 1
    ):
        raise InvalidArgument(f"max_case_bytes={max_case_bytes!r}: expected an integer >= 1")
    return tuple(variants)


def valid_cases(
    op: str,
    *,
    variants: Sequence[str] = (),
    max_case_bytes: int | None = None,
    **bounds: Any,
) -> st.SearchStrategy[Case]:
    """Valid cases of catalogue operator ``op`` (see the module's bounds). With ``variants``
    (kinds of ``--variants``: transpose, pad, offset, empty, edge, twins) each drawn case or
    one of the variants it derives (:func:`stress.corpus.variants.all_variants`, the edge and
    large cases within ``max_case_bytes``), shrinking towards the case itself."""
    decl = _declaration(op)
    _check_bounds(op, bounds)
    kinds = _check_variants(variants, max_case_bytes)
    cases = declared_cases(decl, **bounds).map(lambda c: gen.to_case(op, c))
    if not kinds:
        return cases
    from stress.corpus.variants import all_variants

    def derived(case: Case, kind: str) -> st.SearchStrategy[Case]:
        found = all_variants([case], (kind,), max_case_bytes)[1:] if kind else []
        return st.sampled_from([case, *found])

    # the kind first (the case itself first, so it shrinks there), then only that kind derived
    return st.tuples(cases, st.sampled_from(("", *kinds))).flatmap(lambda ck: derived(*ck))


def invalid_cases(
    op: str, *, violations: Sequence[str] | None = None, **bounds: Any
) -> st.SearchStrategy[Case]:
    """Cases of ``op`` that break one documented constraint (from ``violations``, default all
    of the op's; see :func:`stress.corpus.generate.violations_of`). Each case's
    ``expect.status`` is the status the operator must fail with and its ``description`` names
    the constraint."""
    decl = _declaration(op)
    _check_bounds(op, bounds)
    strategy = declared_violations(decl, violations=violations, **bounds)
    return strategy.map(lambda c: gen.to_case(op, c))


def case_lists(
    elements: st.SearchStrategy[Case], *, min_size: int = 1, max_size: int = 8
) -> st.SearchStrategy[list[Case]]:
    """Lists of cases with distinct ids (a mix to run together)."""
    if not isinstance(elements, st.SearchStrategy):
        raise InvalidArgument(f"elements={elements!r}: expected a strategy of cases")
    if not isinstance(min_size, int) or min_size < 0:
        raise InvalidArgument(f"min_size={min_size!r}: expected an integer >= 0")
    if not isinstance(max_size, int) or max_size < min_size:
        raise InvalidArgument(f"max_size={max_size!r}: expected an integer >= min_size")
    return st.lists(elements, min_size=min_size, max_size=max_size, unique_by=lambda c: c.id)


# -- shrinking a failing mix -----------------------------------------------------------------
def shrink_mix(
    cases: Sequence[T],
    fails: Callable[[list[T]], bool],
    *,
    keep: Sequence[T] = (),
    max_examples: int = 100,
    max_trials: int | None = 400,
) -> list[T]:
    """The smallest sub-mix of ``cases`` (plus ``keep``) for which ``fails`` still holds.

    ``fails(mix)`` runs the mix (e.g. a ``mixed`` phase over those cases) and says whether it
    still fails; ``fails(keep + cases)`` must hold. Hypothesis searches unique sublists
    (``st.lists(st.sampled_from(indices), unique=True)``) and shrinks the first failing one
    (fewer cases, earlier cases); if no random sublist fails within ``max_examples``, delta
    debugging (:func:`stress.corpus.shrink.ddmin`) takes over from the whole mix. A last pass drops
    single cases, so the result is 1-minimal: removing any one case makes it pass.

    Results are memoised per set of cases, so a flaky predicate cannot make hypothesis report
    a flaky test, and at most ``max_trials`` distinct mixes are run (None: no bound); after
    that, untried mixes count as passing. The mix keeps the order of ``cases`` (``keep`` first).
    """
    items = list(cases)
    kept = list(keep)
    if not isinstance(max_examples, int) or max_examples < 1:
        raise InvalidArgument(f"max_examples={max_examples!r}: expected an integer >= 1")
    if max_trials is not None and (not isinstance(max_trials, int) or max_trials < 1):
        raise InvalidArgument(f"max_trials={max_trials!r}: expected an integer >= 1 or None")
    memo: dict[frozenset[int], bool] = {}

    def mix(indices: Sequence[int]) -> list[T]:
        return [*kept, *(items[i] for i in sorted(set(indices)))]

    def check(indices: Sequence[int]) -> bool:
        key = frozenset(indices)
        if key not in memo:
            if max_trials is not None and len(memo) >= max_trials:
                return False
            memo[key] = bool(fails(mix(sorted(key))))
        return memo[key]

    everything = list(range(len(items)))
    if not check(everything):
        raise ValueError("shrink_mix: the whole mix does not fail, so there is nothing to shrink")
    best = everything
    if items:
        strategy = st.lists(st.sampled_from(everything), unique=True, max_size=len(items))
        try:
            best = sorted(
                find(
                    strategy,
                    check,
                    settings=settings(
                        max_examples=max_examples,
                        database=None,
                        derandomize=True,
                        deadline=None,
                        phases=(Phase.generate, Phase.shrink),
                        suppress_health_check=list(HealthCheck),
                    ),
                )
            )
        except NoSuchExample:
            from stress.corpus.shrink import ddmin

            by_item = {id(items[i]): i for i in everything}
            found = ddmin(
                [items[i] for i in everything],
                lambda m: check([by_item[id(x)] for x in m[len(kept) :]]),
                keep=kept,
            )
            best = sorted(by_item[id(x)] for x in found[len(kept) :])
    changed = True
    while changed:  # 1-minimal: no single case can be dropped
        changed = False
        for i in list(best):
            trial = [j for j in best if j != i]
            if check(trial):
                best, changed = trial, True
                break
    return mix(best)
