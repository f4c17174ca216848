"""Heatmap and timeline geometry for the HTML report, drawn as inline SVG by the templates.

These two are drawn here, not by a plotting library (the gradcheck sweep is: see
:mod:`stress.htmlreport.gradplot`), because they are not numeric plots but clickable maps of calls:
every cell and bar must be one DOM element carrying its own ``<title>`` hover text, ``data-*``
attributes and, for bars, an ``id`` the failing-call table links to (``#call-<phase>-<seq>``),
and a 10 000-call run draws 10 000 bars. matplotlib can set a ``gid`` per artist but emits no
``<title>`` or ``data-*``, wraps each mark in a group of path commands and needs one artist per
bar, so its output would have to be post-processed to get the hover text and links back. The
geometry here is linear (cells on a grid, bars at time x scale) with no axes to choose.
Inline SVG keeps the report one offline file with no script at all.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from stress.htmlreport.load import Run
from stress.htmlreport.rerun_commands import pair_command
from stress.records import CallRecord

__all__ = [
    "Bar",
    "Cell",
    "Heatmap",
    "Lane",
    "Timeline",
    "heatmap",
    "timelines",
]

CELL = 22  # px per heatmap cell
LABEL = 110  # px for heatmap row/column labels
TIMELINE_WIDTH = 1000.0
LANE = 14  # px per worker lane
#: The most victims (rows) and aggressors (columns) the heatmap draws: a 300-case corpus's full
#: matrix is 90 000 cells, a 24 MB page that takes seconds to render and to open. Cases with a
#: wrong result come first, then the most exercised; report.json keeps every pair.
HEATMAP_CASES = 40


@dataclass(frozen=True)
class Cell:
    x: int
    y: int
    victim: str
    aggressor: str
    calls: int
    failures: int
    fill: str
    title: str


@dataclass(frozen=True)
class Heatmap:
    victims: tuple[str, ...]
    aggressors: tuple[str, ...]
    cells: tuple[Cell, ...]
    width: int
    height: int
    label: int
    size: int
    total_victims: int = 0  # how many the run had (more than drawn when capped)
    total_aggressors: int = 0

    @property
    def capped(self) -> bool:
        return (self.total_victims, self.total_aggressors) != (
            len(self.victims),
            len(self.aggressors),
        )


def _heat(failures: int, calls: int) -> str:
    if calls == 0:
        return "#eeeeee"
    if failures == 0:
        return "#d9f0d3"
    share = failures / calls
    light = int(70 - 40 * share)  # 70 % (some) .. 30 % (all calls wrong)
    return f"hsl(4, 80%, {light}%)"


def heatmap(run: Run) -> Heatmap:
    """The victim (rows) x aggressor (columns) matrix of wrong results in ``interleaved``."""
    by_pair = {(c.victim, c.aggressor): c for c in run.pairs}
    victims = _shown(run.victims, by_pair, 0)
    aggressors = _shown(run.aggressors, by_pair, 1)
    cells = []
    for i, v in enumerate(victims):
        for j, a in enumerate(aggressors):
            c = by_pair.get((v, a))
            calls, fails = (c.calls, c.failures) if c else (0, 0)
            title = f"victim {v} x aggressor {a}: {fails} of {calls} calls wrong"
            if fails:
                title += f"\nreproduce: {pair_command(run, v, a)}"
            cells.append(
                Cell(
                    LABEL + j * CELL,
                    LABEL + i * CELL,
                    v,
                    a,
                    calls,
                    fails,
                    _heat(fails, calls),
                    title,
                )
            )
    return Heatmap(
        victims,
        aggressors,
        tuple(cells),
        LABEL + CELL * len(aggressors) + 80,  # room for the last rotated column label
        LABEL + CELL * len(victims) + 4,
        LABEL,
        CELL,
        len(run.victims),
        len(run.aggressors),
    )


def _shown(names: tuple[str, ...], by_pair: dict, side: int) -> tuple[str, ...]:
    """At most :data:`HEATMAP_CASES` of ``names`` (victims: side 0, aggressors: side 1), in
    their order: those in a pair with a wrong result first, then the most called."""
    if len(names) <= HEATMAP_CASES:
        return tuple(names)
    failures: dict[str, int] = defaultdict(int)
    calls: dict[str, int] = defaultdict(int)
    for pair, c in by_pair.items():
        failures[pair[side]] += c.failures
        calls[pair[side]] += c.calls
    ranked = sorted(names, key=lambda n: (failures[n] == 0, -calls[n]))
    keep = set(ranked[:HEATMAP_CASES])
    return tuple(n for n in names if n in keep)


@dataclass(frozen=True)
class Bar:
    x: float
    y: int
    w: float
    cls: str
    seq: int
    title: str


@dataclass(frozen=True)
class Lane:
    worker: int
    y: int


@dataclass(frozen=True)
class Timeline:
    """One phase's calls, one lane per worker thread, x in ms on the phase's own clock."""

    key: str
    title: str
    lanes: tuple[Lane, ...]
    bars: tuple[Bar, ...]
    span_ms: float
    height: int
    wrong: int
    ticks: tuple[tuple[float, str], ...]
    total: int = 0  # the phase's calls (more than the bars when the timeline is a sample)


def _ticks(span_s: float) -> tuple[tuple[float, str], ...]:
    if span_s <= 0:
        return ((0.0, "0"),)
    step = 10 ** math.floor(math.log10(span_s / 2)) if span_s > 0 else 1
    out, t = [], 0.0
    while t <= span_s * 1.0001:
        out.append((TIMELINE_WIDTH * t / span_s, f"{t * 1000:g} ms" if span_s < 1 else f"{t:g} s"))
        t = round(t + step, 9)
    return tuple(out)


_LAYER = {"warmup": 0, "ok": 1, "wrong": 2, "lost": 3}


def _timeline(key: str, title: str, calls: list[CallRecord], counts: tuple[int, int]) -> Timeline:
    timed = [(float(c.t), float(c.dur or 0.0)) for c in calls if c.t is not None]
    t0 = min((t for t, _ in timed), default=0.0)
    t1 = max((t + d for t, d in timed), default=t0)
    span = max(t1 - t0, 1e-6)
    scale = TIMELINE_WIDTH / span
    workers = sorted({c.worker or 0 for c in calls})
    lane_y = {w: 18 + i * LANE for i, w in enumerate(workers)}
    bars = []
    for c in calls:
        seq = -1 if c.seq is None else c.seq
        if c.t is None:  # in flight when the child died: drawn at the end, dark
            x, w = TIMELINE_WIDTH - 4, 4.0
            cls = "lost"
        else:
            x, w = (float(c.t) - t0) * scale, max(float(c.dur or 0.0) * scale, 0.6)
            cls = "wrong" if c.failed else ("warmup" if c.warmup else "ok")
        what = f" vs {c.aggressor}" if c.aggressor else ""
        tip = f"{c.case}{what} · seq {seq} · round {c.round or 0} · {c.status}"
        if c.failed:
            tip += " · WRONG" + (f": {c.message}" if c.message else "")
        bars.append(Bar(round(x, 2), lane_y[c.worker or 0], round(w, 2), cls, seq, tip))
    bars.sort(key=lambda b: _LAYER[b.cls])  # wrong ones on top of the calls they overlap
    return Timeline(
        key,
        title,
        tuple(Lane(w, y) for w, y in lane_y.items()),
        tuple(bars),
        span * 1000,
        18 + LANE * len(workers) + 6,
        counts[1],
        _ticks(span),
        counts[0],
    )


def timelines(run: Run) -> tuple[Timeline, ...]:
    """A timeline per phase run, in journal order."""
    by_phase: dict[tuple[str, str], list[CallRecord]] = defaultdict(list)
    for c in run.calls:
        by_phase[(c.phase, c.variant or "")].append(c)
    return tuple(
        _timeline(
            slug(p.name, p.variant),
            p.title,
            by_phase.get((p.name, p.variant), []),
            run.phase_calls.get((p.name, p.variant), (0, 0)),
        )
        for p in run.phases
    )


def slug(*parts: str) -> str:
    """An HTML id from free text (case ids, phase names, variants)."""
    text = "-".join(p for p in parts if p)
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)
