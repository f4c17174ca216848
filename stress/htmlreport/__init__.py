"""Visual and CI reports of a run directory: self-contained HTML, JUnit XML, merged runs.

Entry points (wired into the CLI and the pytest plugin): :func:`render_html`,
:func:`write_junit`, :func:`merge_runs`, :func:`render_xdist_summary`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stress.htmlreport.html import render_html, render_xdist_summary
    from stress.htmlreport.junit import write_junit
    from stress.htmlreport.merge import merge_runs

__all__ = ["merge_runs", "render_html", "render_xdist_summary", "write_junit"]

#: Imported on first use: the session imports ``stress.htmlreport.load`` at its start, and
#: jinja2 (for the page) is needed only when the run ends.
_HOME = {
    "render_html": "html",
    "render_xdist_summary": "html",
    "write_junit": "junit",
    "merge_runs": "merge",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(f"stress.htmlreport.{_HOME[name]}"), name)
    raise AttributeError(f"module 'stress.htmlreport' has no attribute {name!r}")
