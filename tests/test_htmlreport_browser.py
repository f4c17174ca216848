"""report.html of real runs (clean and ``tiling-race``) opened in headless Chromium.

What the DOM shows is checked against what the run wrote: the heatmap against ``report.json``'s
interference cells (rendered by the console report's code, not this package), the timeline
against the call records of ``results.jsonl``. Screenshots go to ``test-artifacts/`` (CI keeps
that directory).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from _browser import chromium, load_page, parse_dom, screenshot

from stress.htmlreport import merge_runs, render_html
from stress.htmlreport.charts import HEATMAP_CASES
from stress.htmlreport.load import load_run
from stress.htmlreport.synthetic import write_synthetic_run

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"

pytestmark = pytest.mark.skipif(
    chromium() is None,
    reason="headless Chromium not found: `make browser` installs Debian's chromium (as root), "
    "or set CHROMIUM=/path/to/chromium",
)


def _stress_run(out: Path, fault: str) -> Path:
    env = {"STRESS_BACKEND": "sim", "ACLSIM_FAULTS": fault}
    cmd = [sys.executable, "-m", "stress", "run", "--out", str(out / "run"), "--quiet"]
    cmd += ["--record-baseline", "--baseline", str(out / "baseline.json"), "--seed", "3"]
    cmd += ["--phases", "serial,interleaved,mixed", "--control", "none"]
    cmd += ["--duration", "0.5", "--threads", "4", "--shrink-budget", "0"]
    # the corpus as written: with its variants the interleaved phase runs every pair of 77
    cmd += ["--variants", "none"]

    done = subprocess.run(
        cmd, cwd=REPO, env={**os.environ, **env}, capture_output=True, text=True, timeout=300
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return out / "run"


_RUNS: dict[str, Path] = {}


def _real_run(kind: str, tmp_path_factory) -> Path:
    """A clean or faulted run, made once per test process."""
    if kind not in _RUNS:
        fault = "" if kind == "clean" else kind
        _RUNS[kind] = _stress_run(tmp_path_factory.mktemp(kind), fault)
    return _RUNS[kind]


@pytest.fixture(params=["clean", "tiling-race"])
def run_dir(request, tmp_path_factory) -> Path:
    return _real_run(request.param, tmp_path_factory)


def test_the_heatmap_command_replays_the_failing_cell(tmp_path, tmp_path_factory):
    run = _real_run("tiling-race", tmp_path_factory)
    dom = parse_dom(render_html(run).read_text())
    failing = [c for c in dom.find_id("heatmap").iter("rect") if "failing" in c.classes()]
    assert failing
    cell = failing[0]
    command = cell.all_text().split("reproduce: ", 1)[1].strip()
    env_part, _, cli = command.partition(" aclnn-stress ")
    assert env_part == "ACLSIM_FAULTS=tiling-race", command
    out = tmp_path / "replay"
    env = {**os.environ, "STRESS_BACKEND": "sim", "ACLSIM_FAULTS": "tiling-race"}
    done = subprocess.run(
        [sys.executable, "-m", "stress", *shlex.split(cli), "--out", str(out), "--quiet"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    replayed = json.loads((out / "report.json").read_text())
    again = {
        (c["victim"], c["aggressor"]) for c in replayed["interference"]["cells"] if c["failures"]
    }
    assert (cell.attrs["data-victim"], cell.attrs["data-aggressor"]) in again


def test_report_in_chromium(run_dir):
    report = json.loads((run_dir / "report.json").read_text())
    calls = [
        json.loads(line)
        for line in (run_dir / "results.jsonl").read_text().splitlines()
        if '"type":"call"' in line
    ]
    page = render_html(run_dir)
    html, requests = load_page(page)
    dom = parse_dom(html)
    name = "faulted" if report["diagnosis"] != "clean" else "clean"

    verdict = dom.find_id("verdict").all_text()
    assert verdict == f"diagnosis: {report['diagnosis']} — {report['explanation']}"
    assert (report["diagnosis"] == "clean") == (name == "clean")

    heat = dom.find_id("heatmap")
    inter = report["interference"]
    n = len(inter["victims"])
    assert n == len(inter["aggressors"]) > 1
    cells = list(heat.iter("rect"))
    assert len(cells) == min(n, HEATMAP_CASES) ** 2  # the heatmap draws at most 40 x 40 cases
    marked = {
        (c.attrs["data-victim"], c.attrs["data-aggressor"])
        for c in cells
        if "failing" in c.classes()
    }
    expected = {(c["victim"], c["aggressor"]) for c in inter["cells"] if c["failures"]}
    assert marked == expected
    assert bool(marked) == (name == "faulted")

    bars = [b for svg in dom.iter("svg") if "timeline" in svg.classes() for b in svg.iter("rect")]
    # one bar per call the loader draws (each phase's first TIMELINE_CALLS, the failing ones)
    drawn = load_run(run_dir).calls
    assert drawn and len(bars) == len(drawn) <= len(calls)
    wrong = [b for b in bars if "wrong" in b.classes()]
    assert bool(wrong) == (name == "faulted")

    assert requests == []
    assert "http://" not in page.read_text() and "https://" not in page.read_text()
    shot = screenshot(page, ARTIFACTS / f"report-{name}.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_request_detector_sees_a_leaky_page(tmp_path):
    """The network check can fail: a page with an external image is caught."""
    leaky = tmp_path / "leaky.html"
    leaky.write_text('<!DOCTYPE html><img src="http://example.invalid/pixel.png"><p>x</p>')
    _, requests = load_page(leaky)
    assert requests == ["http://example.invalid/pixel.png"]


def test_a_case_named_script_stays_text_in_the_browser(tmp_path):
    d = tmp_path / "run"
    write_synthetic_run(d, 40, case_ids=["<script>document.title='owned'</script>", "b"])
    html, _ = load_page(render_html(d))
    dom = parse_dom(html)
    assert not list(dom.iter("script"))
    title = next(dom.iter("title")).all_text()
    assert "owned" not in title
    assert "<script>document.title='owned'</script>" in dom.find_id("verdict-grid").all_text()


def test_merged_report_of_both_runs_in_chromium(tmp_path, tmp_path_factory):
    runs = [_real_run(kind, tmp_path_factory) for kind in ("clean", "tiling-race")]
    page = merge_runs(runs, tmp_path / "merged")
    html, requests = load_page(page)
    assert requests == []
    dom = parse_dom(html)
    heads = [th.all_text() for th in next(dom.find_id("merged-grid").iter("tr")).iter("th")]
    assert len(heads) == 3  # case, one column per run
    rates = [
        float(tr.attrs["data-rate"])
        for tr in dom.find_id("flaky").iter("tr")
        if "data-rate" in tr.attrs
    ]
    faulted = json.loads((runs[1] / "report.json").read_text())
    failing = {
        (p["name"], c["id"])
        for p in faulted["phases"]
        for c in p["cases"]
        if c["verdict"] != "PASS"
    }
    assert rates.count(0.5) == len(failing) > 0  # failed on one of the two hosts
    screenshot(page, ARTIFACTS / "report-merged.png", height=1400)
