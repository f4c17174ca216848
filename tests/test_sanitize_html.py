"""The HTML report shows `aclnn-stress sanitize` findings next to the diagnosis (DOM assertions
on a synthetic run with a sanitize.jsonl beside its journal)."""

from __future__ import annotations

import json
from pathlib import Path

from _browser import parse_dom

from stress.htmlreport import render_html
from stress.htmlreport.synthetic import write_synthetic_run
from stress.sanitize import Access, Finding

IDS = ["alpha", "beta", "gamma"]


def _write_findings(run_dir: Path, findings: list[Finding]) -> None:
    lines = [json.dumps(f.to_json() | {"rerun": "reproducer", "via": f.tool}) for f in findings]
    (run_dir / "sanitize.jsonl").write_text("".join(x + "\n" for x in lines))


def test_findings_are_listed_with_tool_kind_bytes_and_calls(tmp_path):
    d = tmp_path / "run"
    write_synthetic_run(d, 100, case_ids=IDS, victim="beta", aggressor="gamma")
    race = Finding(
        "racecheck", "RAW", 16, alloc=9, alloc_kind="mhc_bwd.tiling",
        calls=(Access("aclnnMhcPreSinkhornBackward", 3, "phase1", "Write", 0, "op.c", 891),
               Access("aclnnMhcPreSinkhornBackward", 4, "phase2", "Read", 0, "op.c", 183)),
    )  # fmt: skip
    tsan = Finding("tsan", "data race", 8, calls=(Access("bwd_kernel", stage="kernel"),))
    unread = Finding("initcheck", "uninitialized read", 96, tensor="gradBias",
                     owner="aclnnMhcPreSinkhornBackward#1")  # fmt: skip
    _write_findings(d, [race, tsan, unread])
    dom = parse_dom(render_html(d).read_text(encoding="utf-8"))
    section = dom.find_id("sanitizer")
    assert section is not None
    rows = [tr for tr in dom.find_id("sanitizer-findings").iter("tr") if "finding" in tr.classes()]
    cells = [[td.all_text().strip() for td in tr.children][:3] for tr in rows]
    assert cells == [["racecheck", "RAW", "16"], ["tsan", "data race", "8"],
                     ["initcheck", "uninitialized read", "96"]]  # fmt: skip
    calls = [[li.attrs["data-stage"] for li in tr.iter("li")] for tr in rows]
    assert calls == [["phase1", "phase2"], ["kernel"], []]
    text = rows[0].all_text()
    assert "aclnnMhcPreSinkhornBackward#3 (phase1) Write at op.c:891" in text
    assert "gradBias of aclnnMhcPreSinkhornBackward#1" in rows[2].all_text()


def test_no_sanitizer_section_without_findings_and_names_are_escaped(tmp_path):
    d = tmp_path / "run"
    write_synthetic_run(d, 50, case_ids=IDS)
    assert parse_dom(render_html(d).read_text()).find_id("sanitizer") is None
    evil = Finding("asan", "<script>x</script>", 1, calls=(Access("<b>op</b>", file="<i>.c"),))
    _write_findings(d, [evil])
    text = render_html(d).read_text()
    assert "<script>x" not in text and "&lt;script&gt;x&lt;/script&gt;" in text
    dom = parse_dom(text)
    assert not list(dom.iter("script")) and not list(dom.find_id("sanitizer-findings").iter("b"))
