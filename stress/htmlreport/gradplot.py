"""The gradcheck sweep plot, |FD(h) - g| against h on log-log axes, drawn by matplotlib.

This is the report's one numeric plot (log axes, tick choice, a threshold and a convergence level),
so a plotting library draws it rather than hand-computed SVG. matplotlib is imported lazily, on the
first gradcheck, so a run without one does not pay its import time. Its SVG output is inlined into
the page: text stays text (``svg.fonttype = "none"``, no embedded or external fonts), ids are
seeded (``svg.hashsalt``) and the date left out, so the same journal renders the same bytes; there
is no script and no URL, so the page keeps its CSP ``default-src 'none'``.

Artists carry ids a test can find: ``sweep`` (the series), ``bias`` (|f* - g|, where the sweep
converges) and ``allowed`` (the threshold above which that is called a bias).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

from stress.gradcheck_file import GradcheckElement

__all__ = ["SweepPlot", "sweep_plot"]

_STYLE = {
    "svg.fonttype": "none",
    "svg.hashsalt": "aclnn-stress",
    "font.size": 7,
    "font.family": "sans-serif",
    "axes.linewidth": 0.6,
}
_COLOUR = {"sweep": "#1a73e8", "bias": "#d93025", "allowed": "#188038"}


@dataclass(frozen=True)
class SweepPlot:
    """One element's sweep as an inline ``<svg>`` element (no XML prolog, no DOCTYPE)."""

    element: str
    verdict: str
    reason: str
    svg: str


def _figure(e: GradcheckElement, pairs: list[tuple[float, float]]) -> Any:
    from matplotlib import ticker
    from matplotlib.figure import Figure  # a bare Figure: no pyplot, no GUI backend, no state

    fig = Figure(figsize=(2.9, 1.9), dpi=72)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    floor = min((d for _, d in pairs if d > 0), default=1e-12) / 3
    hs = [h for h, _ in pairs]
    ax.plot(
        hs,
        [max(d, floor) for _, d in pairs],
        marker="o",
        ms=2.5,
        lw=1,
        color=_COLOUR["sweep"],
        gid="sweep",
    )
    if e.estimate is not None and abs(e.estimate - e.backward) > 0:
        ax.axhline(abs(e.estimate - e.backward), ls="--", lw=0.8, color=_COLOUR["bias"], gid="bias")
    if e.allowed:
        ax.axhline(e.allowed, ls=":", lw=0.9, color=_COLOUR["allowed"], gid="allowed")
    for axis in (ax.xaxis, ax.yaxis):  # decades as plain "1e-03": mathtext and minor ticks are
        axis.set_major_formatter(ticker.LogFormatter(labelOnlyBase=True))  # most of the time
        axis.set_minor_locator(ticker.NullLocator())
    ax.set_xlabel("eps", labelpad=1)
    ax.tick_params(length=2, pad=1)
    fig.subplots_adjust(left=0.2, right=0.97, bottom=0.2, top=0.95)
    return fig


_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)  # XML declaration and DOCTYPE: not HTML
_XMLNS = re.compile(r'\s+xmlns(:xlink)?="[^"]*"')
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)  # RDF with namespace URLs


def sweep_plot(e: GradcheckElement) -> SweepPlot:
    """Draw one element's sweep with its convergence level and threshold."""
    import matplotlib

    pairs = [
        (h, abs(f - e.backward))
        for h, f in zip(e.steps, e.fd, strict=False)
        if h is not None and f is not None and h > 0
    ]
    with matplotlib.rc_context(_STYLE):
        fig = _figure(e, pairs)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = _METADATA.sub("", _PROLOG.sub("", buf.getvalue()), count=1)
    # Inline in HTML the namespaces are implied; SVG 2 ``href`` replaces ``xlink:href``. Without
    # them the page holds no URL at all, not even a namespace name.
    svg = _XMLNS.sub("", svg).replace("xlink:href=", "href=")
    return SweepPlot(e.element, e.verdict, e.reason, svg)
