"""``aclnn-stress report DIR`` on run directories with a bad file beside the journal, or a
journal that is no journal: one line naming the file (exit 2), never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stress import cli
from stress.errors import ConfigError
from stress.grading.tally import JournalTally
from stress.journal.results import read_results
from stress.report.writers import write_reports

FIXTURE = Path(__file__).parent / "data" / "tiling_race_run"


@pytest.fixture()
def run_dir(tmp_path) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    shutil.copy(FIXTURE / "results.jsonl", out / "results.jsonl")
    return out


def _report(out: Path, capsys) -> tuple[int, str]:
    code = cli.main(["report", str(out), "--no-html"])
    return code, capsys.readouterr().err


def test_sanitizer_summary_survives_a_rerender(run_dir):
    found = {"file": "sanitize.json", "findings": 2, "summary": ["x"]}
    (run_dir / "sanitize.json").write_text(json.dumps({"findings": [], "report": found}))
    assert write_reports(run_dir, html=False).extra["sanitizer"] == found
    assert json.loads((run_dir / "report.json").read_text())["sanitizer"] == found


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json", "corrupt sanitizer summary, not valid JSON"),
        ("[1, 2]", "the sanitizer summary is not a JSON object"),
        ("[" * 100_000, "the sanitizer summary nests more than"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_bad_sanitizer_summary_is_one_line(run_dir, capsys, content, why):
    path = run_dir / "sanitize.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ConfigError, match=r"sanitize\.json"):
        write_reports(run_dir, html=False)
    code, err = _report(run_dir, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: " in err and why in err and "aclnn-stress sanitize DIR" in err
    assert not (run_dir / "report.json").exists()


def _cut(run_dir: Path) -> None:
    """Cut the journal mid-line, as a SIGKILL while writing leaves it."""
    path = run_dir / "results.jsonl"
    text = path.read_text()
    path.write_text(text[: text.rindex("\n", 0, len(text) - 1) + 40])


@pytest.mark.parametrize("cut", [False, True])
def test_one_pass_says_whether_the_last_line_was_cut(run_dir, cut):
    if cut:
        _cut(run_dir)
    reader = read_results(run_dir)
    records = list(reader)
    assert reader.truncated is cut and records[0]["type"] == "run"
    tally = JournalTally()
    tally.feed(read_results(run_dir))
    assert tally.truncated is cut and tally.records == len(records)
    # write_reports hands its one pass to the HTML: the page says what the reader found
    write_reports(run_dir)
    page = (run_dir / "report.html").read_text()
    assert ("last line was cut" in page) is cut


_DEEP = 100_000


@pytest.mark.parametrize(
    ("last", "why"),
    [
        ("[" * _DEEP + "]" * _DEEP, "line {n} nests more than 64 deep; not a journal record"),
        ('{"a":' * _DEEP + "1" + "}" * _DEEP, "line {n} nests more than 64 deep"),
        ("[" * _DEEP, "line {n} nests more than 64 deep"),  # cut or not: no record nests so
        ("not json at all", "line {n} is not a JSON record; the file is damaged or not an"),
    ],
)
@pytest.mark.parametrize("alone", [True, False])
def test_a_last_line_that_is_no_record_is_one_line_not_no_results(
    run_dir, capsys, last, why, alone
):
    """Only the start of a record (a kill mid-write) is skipped as a cut last line: a deep or
    non-JSON line is the file's fault, alone (the file is no journal) or after records."""
    path = run_dir / "results.jsonl"
    before = "" if alone else path.read_text()
    path.write_text(before + last + "\n")
    n = before.count("\n") + 1
    code, err = _report(run_dir, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: {why.format(n=n)}" in err and "no results" not in err
