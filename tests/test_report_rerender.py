"""``aclnn-stress report DIR`` on run directories with a bad file beside the journal, or a
journal that is no journal: one line naming the file (exit 2), never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stress import cli
from stress.errors import ConfigError
from stress.report.document import write_reports

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
