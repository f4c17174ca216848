"""The HTML, JUnit and merged reports from journals: synthetic ones (exact, fast) and one real run
killed with SIGKILL. The browser checks of real runs are in test_htmlreport_browser.py."""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from _browser import parse_dom

from stress.errors import ConfigError
from stress.htmlreport import merge_runs, render_html, render_xdist_summary, write_junit
from stress.htmlreport.load import TIMELINE_CALLS, load_run
from stress.htmlreport.synthetic import write_synthetic_run

REPO = Path(__file__).resolve().parents[1]
IDS = ["alpha", "beta", "gamma", "delta"]


def _run(tmp: Path, name: str = "run", **kw) -> Path:
    d = tmp / name
    write_synthetic_run(d, kw.pop("calls", 200), case_ids=kw.pop("case_ids", IDS), **kw)
    return d


def _dom(page: Path):
    return parse_dom(page.read_text(encoding="utf-8"))


def test_heatmap_marks_exactly_the_failing_pair(tmp_path):
    d = _run(tmp_path, victim="gamma", aggressor="beta")
    dom = _dom(render_html(d))
    cells = list(dom.find_id("heatmap").iter("rect"))
    assert len(cells) == len(IDS) ** 2
    failing = [
        (c.attrs["data-victim"], c.attrs["data-aggressor"])
        for c in cells
        if "failing" in c.classes()
    ]
    assert failing == [("gamma", "beta")]
    tip = next(c for c in cells if "failing" in c.classes()).all_text()
    assert "victim gamma x aggressor beta" in tip and "aclnn-stress run" in tip


def test_timeline_has_one_bar_per_call_and_marks_the_wrong_ones(tmp_path):
    d = _run(tmp_path, calls=300, victim="alpha", aggressor="delta")
    records = [json.loads(line) for line in (d / "results.jsonl").read_text().splitlines()]
    calls = [r for r in records if r["type"] == "call"]
    dom = _dom(render_html(d))
    bars = [b for svg in dom.iter("svg") if "timeline" in svg.classes() for b in svg.iter("rect")]
    assert len(bars) == len(calls) == 300
    wrong = sum(not r["match"] for r in calls)
    assert sum("wrong" in b.classes() for b in bars) == wrong == 2  # alpha in (a, d) and (d, a)


def test_verdict_line_grid_links_and_digests(tmp_path):
    d = _run(tmp_path, victim="beta", aggressor="beta")
    dom = _dom(render_html(d))
    verdict = dom.find_id("verdict").all_text()
    assert verdict.startswith("diagnosis: cross-call-contamination — "), verdict
    grid = dom.find_id("verdict-grid")
    bad = [td for td in grid.iter("td") if td.attrs.get("data-verdict", "PASS") != "PASS"]
    assert [td.all_text() for td in bad] == ["MISMATCH_RANDOM"]  # beta in interleaved only
    target = next(bad[0].iter("a")).attrs["href"].lstrip("#")
    assert dom.find_id(target) is not None and "beta" in dom.find_id(target).all_text()
    hrefs = [a.attrs.get("href", "") for a in dom.iter("a")]
    links = [h.lstrip("#") for h in hrefs if h.startswith("#call-")]  # failing call -> its bar
    assert len(links) == 2  # (beta, beta): both records wrong
    assert all(
        "wrong" in dom.find_id(h).classes() and "beta" in dom.find_id(h).all_text() for h in links
    )
    kinds = {
        tr.children[0].all_text(): tr.attrs["data-kind"]
        for tr in dom.find_id("digest-table").iter("tr")
        if "data-kind" in tr.attrs
    }
    assert kinds == {"alpha": "matches", "beta": "random", "gamma": "matches", "delta": "matches"}


def test_a_case_named_script_renders_as_text(tmp_path):
    ids = ["<script>alert(1)</script>", "plain"]
    d = _run(tmp_path, case_ids=ids, calls=50)
    text = render_html(d).read_text()
    assert "<script" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert not list(_dom(d / "report.html").iter("script"))


def test_the_page_references_nothing_outside_itself(tmp_path):
    text = render_html(_run(tmp_path)).read_text()
    assert "default-src 'none'" in text
    for needle in ("http://", "https://", "src=", "<link", "@import", "url("):
        assert needle not in text, needle


def test_a_truncated_journal_still_renders_and_says_so(tmp_path):
    d = _run(tmp_path, calls=200)
    lines = (d / "results.jsonl").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"phase":"mixed"' in line) + 5
    (d / "results.jsonl").write_text("".join(lines[:cut]) + lines[cut][: len(lines[cut]) // 2])
    run = load_run(d)
    assert run.truncated and run.status == "interrupted"
    assert run.n_calls == len(run.calls) == sum('"type":"call"' in line for line in lines[:cut])
    dom = _dom(render_html(d))
    assert "did not finish" in dom.find_id("incomplete").all_text()


def test_a_damaged_journal_names_the_line(tmp_path):
    d = _run(tmp_path, calls=60)
    lines = (d / "results.jsonl").read_text().splitlines()
    lines[3] = lines[3][:10]
    (d / "results.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"results.jsonl: line 4 is not a JSON record"):
        render_html(d)


def test_junit_has_a_testcase_per_case_and_phase_with_digests_in_failures(tmp_path):
    d = _run(tmp_path, victim="delta", aggressor="alpha")
    root = ET.parse(write_junit(d, tmp_path / "junit.xml")).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"aclnn-stress.serial", "aclnn-stress.interleaved", "aclnn-stress.mixed"}
    for s in suites.values():
        assert [tc.get("name") for tc in s.iter("testcase")] == IDS
    failures = [
        (s.get("name"), tc.get("name"), tc.find("failure"))
        for s in suites.values()
        for tc in s.iter("testcase")
        if tc.find("failure") is not None
    ]
    assert [(s, c) for s, c, _ in failures] == [("aclnn-stress.interleaved", "delta")]
    failure = failures[0][2]
    assert failure.get("type") == "MISMATCH_RANDOM"
    baseline = load_run(d).baseline["delta"]
    assert f"baseline digest: {baseline}" in failure.text and failure.text.count(" x ") >= 2
    assert root.get("failures") == "1" and root.get("tests") == str(3 * len(IDS))


def test_merge_shows_hosts_and_failure_rate(tmp_path):
    dirs = [
        _run(tmp_path, "host-a", victim="alpha", aggressor="beta"),
        _run(tmp_path, "host-b", victim="alpha", aggressor="beta"),
        _run(tmp_path, "host-c", victim="gamma", aggressor="beta"),
    ]
    dom = _dom(merge_runs(dirs, tmp_path / "merged"))
    heads = [th.all_text() for th in next(dom.find_id("merged-grid").iter("tr")).iter("th")]
    assert heads == ["case", "host-a", "host-b", "host-c"]
    rates = {
        (tr.children[0].all_text(), tr.children[1].all_text()): tr.attrs["data-rate"]
        for tr in dom.find_id("flaky").iter("tr")
        if "data-rate" in tr.attrs
    }
    assert rates[("alpha", "interleaved")] == "0.667"
    assert rates[("gamma", "interleaved")] == "0.333"
    assert rates[("beta", "serial")] == "0.000"
    links = [a.attrs["href"] for a in dom.find_id("merged-grid").iter("a")]
    assert links and all((tmp_path / "merged" / h.split("#")[0]).exists() for h in links)


def test_merge_refuses_runs_of_different_corpora(tmp_path):
    a = _run(tmp_path, "a")
    b = _run(tmp_path, "b", case_ids=["alpha", "beta", "gamma", "epsilon"])
    with pytest.raises(
        ConfigError, match=r"--merge: .*b ran another corpus than .*a \(fingerprint"
    ):
        merge_runs([a, b], tmp_path / "merged")


def test_xdist_summary_links_every_worker_run(tmp_path):
    dirs = [_run(tmp_path, f"gw{i}") for i in range(3)]
    page = render_xdist_summary(dirs, tmp_path / "summary.html")
    links = [a.attrs["href"] for a in _dom(page).find_id("workers").iter("a")]
    assert links == [f"gw{i}/report.html" for i in range(3)]
    assert all((tmp_path / h).exists() for h in links)


def test_a_run_killed_with_sigkill_re_renders(tmp_path):
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "stress", "run", "--out", str(out), "--quiet"]
    cmd += ["--record-baseline", "--baseline", str(tmp_path / "baseline.json")]
    cmd += ["--phases", "serial,mixed", "--control", "none", "--duration", "30", "--threads", "2"]
    cmd += ["--corpus", "corpus/ops/add.toml", "--variants", "none"]  # small: mixed starts soon
    proc = subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    journal = out / "results.jsonl"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if journal.exists() and journal.read_text().count('"phase":"mixed"') > 20:
                break
            time.sleep(0.2)
        else:
            pytest.fail("the run wrote no mixed calls within 120 s")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    run = load_run(out)
    assert run.status == "interrupted" and any(c.phase == "mixed" for c in run.calls)
    dom = _dom(render_html(out))
    assert dom.find_id("incomplete") is not None
    assert "mixed" in {p.name for p in run.phases}


_STEPS = [0.2, 0.1, 0.05, 0.02, 0.01, 0.005]


def _element(name: str, g: float, bias: float) -> dict:
    """A gradcheck row whose FD converges (as h -> 0) to ``g + bias``."""
    steps = _STEPS
    return {
        "element": name,
        "backward": g,
        "steps": steps,
        "fd": [g + bias + 0.5 * h * h for h in steps],
        "estimate": g + bias,
        "allowed": 1e-3,
        "verdict": "biased" if bias else "agrees",
        "reason": f"|f*-g| = {bias}",
    }


def test_gradcheck_sweep_converges_to_the_bias_or_below_the_threshold(tmp_path):
    d = _run(tmp_path, calls=40)
    doc = {
        "command": "gradcheck",
        "op": "mhc_pre_sinkhorn_backward",
        "params": {"B": 1},
        "fd": "float64 reference forward",
        "backward": "test double",
        "elements": [_element("phi[0,0]", 1.5, 0.0), _element("bias[3]", 2.0, 0.05)],
        "summary": {"verdict": "biased"},
    }
    (d / "gradcheck.json").write_text(json.dumps(doc))
    page = render_html(d)
    plots = [p for p in _dom(page).iter("div") if "plot" in p.classes()]
    assert [p.attrs["data-verdict"] for p in plots] == ["agrees", "biased"]
    text = page.read_text()
    assert text.count('<g id="sweep">') == len(doc["elements"])  # one series per sampled element
    assert not re.search(r"https?://|src=|<link|<script|@import", text)
    assert set(re.findall(r"url\((.)", text)) == {"#"}  # only the plot's own clip paths
    svgs = [ET.fromstring(m) for m in re.findall(r"<svg\b.*?</svg>", text, re.S) if "sweep" in m]
    assert len(svgs) == len(plots)
    for svg, bias in zip(svgs, (0.0, 0.05), strict=True):
        xs, ys = _line(svg, "sweep")
        assert len(xs) == len(_STEPS)
        allowed = _line(svg, "allowed")[1][0]
        # log-log axes: x steps are proportional to log(h ratio) (on a linear axis 0.2 -> 0.1 would
        # be 20x 0.01 -> 0.005, here it is 1x) ...
        dx = [x0 - x1 for x0, x1 in itertools.pairwise(xs)]
        logs = [math.log(h0 / h1) for h0, h1 in itertools.pairwise(_STEPS)]
        assert dx and all(
            abs(d / lg - dx[0] / logs[0]) < 0.01 * dx[0] / logs[0]
            for d, lg in zip(dx, logs, strict=True)
        )
        if bias:  # flattens onto the dashed |f*-g| line, above the threshold
            level = _line(svg, "bias")[1][0]
            assert abs(ys[-1] - level) < 2 and level < allowed
        else:  # ... and |FD - g| = h^2 / 2 is a straight line, falling to below the threshold
            slopes = [(y1 - y0) / d for (y0, y1), d in zip(itertools.pairwise(ys), dx, strict=True)]
            assert max(slopes) - min(slopes) < 0.01 * slopes[0] and slopes[0] > 0
            assert ys[-1] > allowed  # y in px grows downwards


def _line(svg: ET.Element, gid: str) -> tuple[list[float], list[float]]:
    """The vertices of the matplotlib artist with ``gid`` (its first path), in px."""
    group = next(g for g in svg.iter("g") if g.get("id") == gid)
    nums = [float(v) for v in re.findall(r"-?[\d.]+(?:e-?\d+)?", group.find("path").get("d"))]
    return nums[0::2], nums[1::2]


def test_a_file_named_gradcheck_that_is_not_one_is_refused(tmp_path):
    d = _run(tmp_path, calls=40)
    (d / "gradcheck-old.json").write_text('{"command": "run"}')
    with pytest.raises(ConfigError, match=r"gradcheck-old.json: field 'command' is not"):
        render_html(d)


def test_a_10000_call_run_fits_in_5_mb(tmp_path):
    """The size half of the benchmark's budget (benchmarks/bench_html_report.py times it)."""
    d = tmp_path / "big"
    write_synthetic_run(d, 10_000)
    page = render_html(d)
    assert page.stat().st_size < 5e6
    text = page.read_text()
    run = load_run(d)
    assert run.n_calls == (d / "results.jsonl").read_text().count('"type":"call"') >= 10_000
    assert text.count('<rect class="bar ') == len(run.calls)
    # the timeline draws each phase's first TIMELINE_CALLS calls and the failing calls listed;
    # a bigger phase says how many it drew of how many
    drawn = Counter((c.phase, c.variant) for c in run.calls)
    listed = Counter()
    for (phase, variant, _), (_, shown) in run.failing.items():
        listed[(phase, variant)] += len(shown)
    for key, (total, _) in run.phase_calls.items():
        assert min(total, TIMELINE_CALLS) <= drawn[key] <= min(total, TIMELINE_CALLS) + listed[key]
        if total > TIMELINE_CALLS:
            assert f"of {total} calls drawn" in text
    assert max(total for total, _ in run.phase_calls.values()) > TIMELINE_CALLS


def test_the_rerun_command_is_a_valid_run_command_with_the_runs_options(tmp_path):
    import shlex

    from stress.cli.parser import build_parser

    d = _run(tmp_path)
    dom = _dom(render_html(d))
    argv = shlex.split(dom.find_id("rerun").all_text())
    assert argv[:2] == ["aclnn-stress", "run"]
    args = build_parser().parse_args(argv[1:])
    header = json.loads((d / "results.jsonl").read_text().splitlines()[0])
    assert args.seed == header["config"]["seed"] and args.threads == header["config"]["threads"]
    assert args.corpus == header["corpus"] and args.baseline == header["baseline"]["path"]


def test_xdist_summary_finds_the_runs_inside_each_workers_directory(tmp_path):
    for worker in ("gw0", "gw1"):
        for test in ("t1", "t2"):
            _run(tmp_path / worker / test, "out")
    page = render_xdist_summary([tmp_path / "gw0", tmp_path / "gw1"], tmp_path / "summary.html")
    rows = [tr for tr in _dom(page).find_id("workers").iter("tr")][1:]
    assert [(tr.children[0].all_text(), tr.children[1].all_text()) for tr in rows] == [
        ("gw0", "t1/out"),
        ("gw0", "t2/out"),
        ("gw1", "t1/out"),
        ("gw1", "t2/out"),
    ]


def test_a_crashed_phase_shows_the_call_in_flight(tmp_path):
    d = _run(tmp_path, calls=120)
    lines = (d / "results.jsonl").read_text().splitlines()
    end = next(i for i, ln in enumerate(lines) if '"phase-end","phase":"mixed"' in ln)
    crash = {"type": "call", "phase": "mixed", "variant": "", "worker": 2, "round": 9}
    crash |= {"case": "beta", "status": "crash", "match": False, "message": "SIGSEGV in flight"}
    died = {"type": "phase-end", "phase": "mixed", "variant": "", "status": "crashed"}
    died |= {"detail": "the child died with SIGSEGV", "seconds": 1.0}
    lines[end : end + 1] = [json.dumps(crash), json.dumps(died)]
    (d / "results.jsonl").write_text("\n".join(lines) + "\n")
    dom = _dom(render_html(d))
    assert dom.find_id("verdict").all_text().startswith("diagnosis: crash — the process died")
    lost = [b for b in dom.find_id("timeline-mixed").iter("rect") if "lost" in b.classes()]
    assert len(lost) == 1 and "beta" in lost[0].all_text()
    root = ET.parse(write_junit(d, tmp_path / "j.xml")).getroot()
    mixed = next(s for s in root.iter("testsuite") if s.get("name") == "aclnn-stress.mixed")
    failed = [(tc.get("name"), tc.find("failure")) for tc in mixed.iter("testcase")]
    assert [(n, f.get("type")) for n, f in failed if f is not None] == [("beta", "CRASH")]


def test_a_big_corpus_heatmap_is_capped_and_keeps_the_failing_pair(tmp_path):
    from stress.htmlreport.charts import HEATMAP_CASES

    ids = [f"case{i:02d}" for i in range(HEATMAP_CASES + 12)]
    d = _run(tmp_path, calls=400, case_ids=ids, victim=ids[-1], aggressor=ids[-2])
    dom = _dom(render_html(d))
    cells = list(dom.find_id("heatmap").iter("rect"))
    assert len(cells) == HEATMAP_CASES**2
    failing = [
        (c.attrs["data-victim"], c.attrs["data-aggressor"])
        for c in cells
        if "failing" in c.classes()
    ]
    assert failing == [(ids[-1], ids[-2])]  # the last cases, kept because their pair failed
    note = dom.find_id("heatmap-capped").all_text()
    assert f"{HEATMAP_CASES} of {len(ids)} victims" in note


def test_a_small_corpus_heatmap_is_whole_and_says_nothing_of_a_cap(tmp_path):
    dom = _dom(render_html(_run(tmp_path)))
    assert dom.find_id("heatmap-capped") is None
