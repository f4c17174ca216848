"""What the view and size variants of a run did (report.json ``variants``, a line in every
report): the kinds the run derived, how many variant cases of each ran, and which of them failed
where.

Read from the graded phases alone (a variant's id names its kind: :func:`stress.vocabulary.
variant_kind`), so a re-rendered journal reports the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stress.records import PhaseVerdict
from stress.vocabulary import Verdict, variant_kind

__all__ = ["describe_variants", "variants_summary"]


def variants_summary(phases: Sequence[PhaseVerdict], config: Mapping[str, Any]) -> dict[str, Any]:
    """``{"derived": [kinds], "kinds": {kind: {"cases": n, "failing": {case: [phases]}}}}``."""
    kinds: dict[str, dict[str, Any]] = {}
    for p in phases:
        for c in p.cases:
            view = variant_kind(c.id)
            if not view:
                continue
            entry = kinds.setdefault(view, {"cases": set(), "failing": {}})
            entry["cases"].add(c.id)
            if c.verdict not in (Verdict.PASS, Verdict.INCOMPLETE):
                where = entry["failing"].setdefault(c.id, [])
                if p.title not in where:
                    where.append(p.title)
    return {
        "derived": list(config.get("variants", [])),
        "kinds": {
            k: {"cases": len(v["cases"]), "failing": v["failing"]} for k, v in sorted(kinds.items())
        },
    }


def describe_variants(summary: Mapping[str, Any] | None) -> list[str]:
    """One line per report: the variants run and which found what ([] when none was derived)."""
    if not summary:
        return []
    parts = []
    for kind, entry in (summary.get("kinds") or {}).items():
        failing = entry.get("failing") or {}
        found = ""
        if failing:
            shown = [f"{case} in {', '.join(where)}" for case, where in list(failing.items())[:3]]
            more = " ..." if len(failing) > 3 else ""
            found = f", {len(failing)} failing: {'; '.join(shown)}{more}"
        parts.append(f"{kind} {entry.get('cases', 0)} cases{found}")
    derived = ", ".join(summary.get("derived") or []) or "none"
    return [f"variants ({derived}): " + ("; ".join(parts) or "no case ran one")]
