"""The size budget: a case too large is refused from its shapes and dtypes, before anything is
allocated; gradcheck's shape options likewise."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest
from _cli import REPO, stress_cli

from stress.config import RunConfig
from stress.corpus.parse import load_corpus
from stress.engine.call.case_size import case_bytes, check_case_sizes, default_max_case_bytes
from stress.errors import ConfigError

HUGE = """
[[case]]
id = "huge"
op = "add"
shape = [1000000, 1000000]
dtype = "float32"
alpha = 1.0
"""

HUGE_DECLARATION = """
[op]
header = "aclnnop/aclnn_add.h"
function = "aclnnAdd"
name = "huge_add"

[dims]
B = [1, 2000000]
H = [1, 2000000]

[dtypes]
T = ["float32"]

[params]
self = { shape = ["B", "H"], dtype = "T" }
other = { shape = ["H"], dtype = "T" }
alpha = { value = 1.0, dtype = "T" }
out = { shape = "self", dtype = "T" }

[[case]]
id = "huge-declared"
B = 1000000
H = 1000000
"""


@pytest.mark.parametrize(
    "text, size",
    [(HUGE, 3 * 4 * 10**12), (HUGE_DECLARATION, 2 * 4 * 10**12 + 4 * 10**6)],
    ids=["corpus", "declaration"],  # add's other defaults to self's shape; declared: [H]
)
def test_a_4_tb_case_is_refused_at_load_in_under_a_second_with_nothing_allocated(
    tmp_path: Path, text: str, size: int
):
    path = tmp_path / "huge.toml"
    path.write_text(text)
    tracemalloc.start()
    t0 = time.perf_counter()
    cases = load_corpus([path])
    with pytest.raises(ConfigError) as err:
        check_case_sizes(cases, default_max_case_bytes(), given=False)
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 1.0
    assert peak < 50 << 20  # nothing near the case's size was allocated
    msg = str(err.value)
    assert case_bytes(cases[0]) == size
    assert "\n" not in msg and "'huge" in msg and f"({size} bytes)" in msg
    assert "--max-case-bytes" in msg


def test_case_bytes_counts_every_tensor_exactly():
    case = load_corpus([REPO / "corpus/control.toml"])[0]  # add-f32 [2,128,256] + same other
    n = 2 * 128 * 256
    assert case_bytes(case) == 3 * n * 4


def test_a_given_limit_is_named_and_respected():
    cases = load_corpus([REPO / "corpus/control.toml"])
    check_case_sizes(cases, max(case_bytes(c) for c in cases), given=True)
    with pytest.raises(ConfigError, match=r"over --max-case-bytes \(1\.0 kB\)"):
        check_case_sizes(cases, 1000, given=True)


def test_the_cli_refuses_it_in_one_line_exit_2(tmp_path: Path):
    path = tmp_path / "huge.toml"
    path.write_text(HUGE)
    proc = stress_cli(
        "run",
        "--corpus",
        str(path),
        "--control",
        "none",
        "--phases",
        "serial",
        "--out",
        str(tmp_path / "o"),
        "--baseline",
        str(tmp_path / "b.json"),
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "12.0 TB" in lines[0] and "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()  # refused before the run made anything


def test_max_case_bytes_option_reaches_the_config_and_is_validated():
    proc = stress_cli("run", "--max-case-bytes", "abc")
    assert proc.returncode == 2 and "positive number of bytes" in proc.stderr
    with pytest.raises(ConfigError, match="--max-case-bytes"):
        RunConfig(max_case_bytes=0).validate()
    config = RunConfig(max_case_bytes=5 << 30).validate()
    assert "--max-case-bytes 5368709120" in config.to_cli_args()
    assert RunConfig.from_json(config.to_json()) == config


@pytest.mark.parametrize(
    "args, words",
    [
        (["--C", "0"], "--C 0"),
        (["--B", "100000", "--S", "100000"], "--C 1024 (40960000000000 elements of x)"),
    ],
)
def test_gradcheck_shapes_that_cannot_run_are_one_line(args: list[str], words: str):
    proc = stress_cli("gradcheck", *args, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in proc.stderr
