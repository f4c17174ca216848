"""benchmarks/check_figures.py (run by `make lint`): figures quoted in README and docs must be
in the result files their block names; the check fails on a figure that is not there."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "check_figures", ROOT / "benchmarks" / "check_figures.py"
)
check_figures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_figures)


def _doc(tmp_path: Path, body: str, result: str) -> Path:
    res = tmp_path / "res.json"
    res.write_text(result)
    md = tmp_path / "doc.md"
    md.write_text(f"intro 99\n<!-- figures: {res} -->\n{body}\n<!-- /figures -->\nafter 77\n")
    return md


def test_a_figure_in_its_result_file_passes(tmp_path):
    md = _doc(
        tmp_path,
        "median 1.59 s, ratio 0.96, 10 000 calls (`--seeds 10`)",
        '{"a": 1.5928, "b": 0.9612, "c": 10000}',
    )
    assert check_figures.check_file(md) == []


def test_a_figure_not_in_its_result_file_fails(tmp_path):
    md = _doc(tmp_path, "median 0.24 s", '{"median": 0.8311, "first": 1.5928}')
    problems = check_figures.check_file(md)
    assert len(problems) == 1 and "figure 0.24 is not in" in problems[0]


def test_a_missing_result_file_and_an_unclosed_block_fail(tmp_path):
    md = tmp_path / "doc.md"
    md.write_text(
        "see benchmarks/results/no-such-file.json\n<!-- figures: /nonexistent.md -->\n1.0\n"
    )
    problems = check_figures.check_file(md)
    assert len(problems) == 3, problems
    assert any("no-such-file.json does not exist" in p for p in problems)
    assert any("missing" in p for p in problems) and any("not closed" in p for p in problems)


def test_the_shipped_readme_and_docs_pass():
    assert check_figures.main([]) == 0


def test_a_half_way_figure_matches_either_rounding_but_nothing_else(tmp_path):
    md = _doc(tmp_path, "5.3 s and 5.2 s", '{"phase_s": 5.25}')
    assert check_figures.check_file(md) == []
    md = _doc(tmp_path, "5.4 s", '{"phase_s": 5.25}')
    assert len(check_figures.check_file(md)) == 1


def _linked(tmp_path: Path, prose: str, result: str) -> Path:
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "p.json").write_text(result)
    (tmp_path / "docs").mkdir()
    md = tmp_path / "docs" / "page.md"
    md.write_text(f"defaults 0.75 s and 15 ms stay unchecked;\n{prose}\n")
    return md


def test_a_linked_figure_in_its_result_file_passes(tmp_path):
    md = _linked(
        tmp_path,
        "the slowest took [0.71 s and\n10 000 calls](../benchmarks/results/p.json) there",
        '{"slowest_s": 0.7093, "calls": 10000}',
    )
    assert check_figures.check_file(md) == []


def test_a_linked_figure_missing_from_its_result_file_fails(tmp_path):
    md = _linked(
        tmp_path,
        "prose\nfound at [1.1 s](../benchmarks/results/p.json), diagnosed at 10.1 s",
        '{"first_detection_s": 2.43, "diagnosis_s": 10.1}',
    )
    problems = check_figures.check_file(md)
    assert problems == [f"{md}:3: figure 1.1 is not in {tmp_path}/benchmarks/results/p.json"]


def test_a_link_to_a_result_file_that_is_not_there_from_the_page_fails(tmp_path):
    # relative to the page as the rendered link is: from docs/ the root-relative path is broken
    md = _linked(tmp_path, "took [0.71 s](benchmarks/results/p.json)", '{"s": 0.71}')
    problems = check_figures.check_file(md)
    assert len(problems) == 1 and "no such file from" in problems[0], problems


def test_a_linked_figure_inside_a_block_is_checked_against_its_own_file(tmp_path):
    md = _linked(tmp_path, "", '{"own": 3.25}')
    other = tmp_path / "other.json"
    other.write_text('{"block": 1.5}')
    body = "block 1.5 s, linked [3.25 s](../benchmarks/results/p.json)"
    md.write_text(f"<!-- figures: {other} -->\n{body}\n<!-- /figures -->\n")
    assert check_figures.check_file(md) == []
    md.write_text(f"<!-- figures: {other} -->\n{body.replace('3.25', '3.5')}\n<!-- /figures -->\n")
    assert len(check_figures.check_file(md)) == 1


def test_a_load_average_or_wall_time_outside_any_marking_fails(tmp_path):
    md = _linked(
        tmp_path,
        "at load average 3.9 it took 14.3 s wall; [at load 3.9, 14.3 s\nwall]"
        "(../benchmarks/results/p.json); `--budget 14` and a 15 ms floor are settings",
        '{"load": 3.9, "wall_s": 14.3}',
    )
    problems = check_figures.check_file(md)
    assert len(problems) == 2, problems
    assert "'load average 3.9' looks measured" in problems[0]
    assert "'14.3 s wall' looks measured" in problems[1]
