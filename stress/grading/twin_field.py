"""The field a case and its twin differ in, for a cross-call-contamination finding.

A twin (:mod:`stress.corpus.twins`) differs from its case in exactly one field; when the cases
that fail in flight are a case and its twin, that field is what the operator's shared state
(a plan or tiling cache) leaves out of its key, so the diagnosis names it: "same shape, dtype
T float16 vs float32 in flight". Read from the case ids and the journal header's cases (their
parameters), so a re-rendered journal says the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stress.corpus.twins import parse_twin
from stress.report_sections import TwinPair

__all__ = ["describe", "differing_field", "twin_findings"]


def differing_field(a: str, b: str, params: Mapping[str, Mapping[str, Any]]) -> str:
    """What case ids ``a`` and ``b`` differ in when one is the other's twin ("" otherwise):
    "dtype T float16 vs float32"; ``params``: each case id's parameters (the header's)."""
    for case, twin in ((a, b), (b, a)):
        t = parse_twin(twin)
        if t is not None and t.case == case:
            own = (params.get(case) or {}).get(t.name)
            other = (params.get(twin) or {}).get(t.name, t.value)
            was = "its default" if own is None else str(own)
            return f"{t.field} {t.name} {other} vs {was}"
    return ""


def twin_findings(
    failing: Iterable[str], header_cases: Sequence[Mapping[str, Any]]
) -> list[TwinPair]:
    """Each (case, twin) pair among the ``failing`` case ids of the concurrent phases — a
    failing twin whose case ran — with the field they differ in."""
    params = {str(c.get("id")): c.get("params") or {} for c in header_cases}
    failing = list(dict.fromkeys(failing))
    out = []
    for twin in failing:
        t = parse_twin(twin)
        if t is None or t.case not in params:
            continue
        field = differing_field(t.case, twin, params)
        both = t.case in failing
        out.append(TwinPair(t.case, twin, field, both))
    return out


def describe(findings: Sequence[TwinPair]) -> str:
    """The diagnosis's clause: "same shape, dtype T float16 vs float32 in flight (softmax-f32
    and softmax-f32@dtype-T=float16)"; "" for none."""
    if not findings:
        return ""
    shown = [f"same shape, {f.field} in flight ({f.case} and {f.twin})" for f in findings]
    more = f" and {len(shown) - 3} more pairs" if len(shown) > 3 else ""
    return "a case and its twin fail: " + "; ".join(shown[:3]) + more
