"""Visual and CI reports of a run directory: self-contained HTML, JUnit XML, merged runs.

Entry points (wired into the CLI and the pytest plugin): :func:`render_html`,
:func:`write_junit`, :func:`merge_runs`, :func:`render_xdist_summary`.
"""

from __future__ import annotations

from stress.htmlreport.html import render_html, render_xdist_summary
from stress.htmlreport.junit import write_junit
from stress.htmlreport.merge import merge_runs

__all__ = ["merge_runs", "render_html", "render_xdist_summary", "write_junit"]
