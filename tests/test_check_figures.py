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
