"""Regenerate the README's report screenshots (docs/img/report-*.png) with headless Chromium.

    .venv/bin/python docs/img/make_screenshots.py FAULTED_RUN CLEAN_RUN [MORE_RUNS...]

FAULTED_RUN: an ``aclnn-stress run`` directory with findings (e.g. ``ACLSIM_FAULTS=tiling-race``,
``--stream both``) holding a ``gradcheck*.json`` (``aclnn-stress gradcheck --json``); CLEAN_RUN a
clean run of the same corpus; all of them are merged for the merged view. Each view is the
report framed at one of its anchors (an iframe scrolls to the fragment; no script needed).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from stress.htmlreport import merge_runs, render_html

IMG = Path(__file__).resolve().parent

VIEWS = [  # file name, page key, anchor, height
    ("report-verdict.png", "faulted", "", 820),
    ("report-heatmap.png", "faulted", "interference", 400),
    ("report-timeline.png", "faulted", "tl-mixed-stream_per-thread", 560),
    ("report-digests.png", "faulted", "digests", 330),
    ("report-gradcheck.png", "faulted", "gradcheck", 470),
    ("report-clean.png", "clean", "", 620),
    ("report-merged.png", "merged", "", 760),
    ("report-flakiness.png", "merged", "flakiness", 420),
]


def shoot(page: Path, anchor: str, height: int, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        frame = Path(tmp) / "frame.html"
        src = page.resolve().as_uri() + (f"#{anchor}" if anchor else "")
        frame.write_text(
            f'<!DOCTYPE html><body style="margin:0"><iframe src="{src}" '
            f'style="width:1280px;height:{height}px;border:0"></iframe>'
        )
        subprocess.run(
            [shutil.which("chromium") or "chromium", "--headless", "--no-sandbox", "--disable-gpu",
             "--hide-scrollbars", f"--user-data-dir={tmp}/profile", f"--window-size=1280,{height}",
             f"--screenshot={out}", frame.as_uri()],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip


def main(argv: list[str]) -> int:
    faulted, clean, *more = (Path(a) for a in argv)
    pages = {
        "faulted": render_html(faulted),
        "clean": render_html(clean),
        "merged": merge_runs([clean, faulted, *more], faulted.parent / "merged"),
    }
    for name, key, anchor, height in VIEWS:
        shoot(pages[key], anchor, height, IMG / name)
        print(IMG / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
