"""Hypothesis fuzz tests of every parser of user input: corpus TOML, declaration TOML, baseline
JSON, the results journal (JSONL, re-rendered by ``aclnn-stress report``) and the CLI's argv.

Each feeds mutated versions of a valid input (values of the wrong type or range, deleted and
unknown keys, truncated or corrupted text) and asserts the parser either accepts the input or
refuses it with the project's one-line error (:class:`~stress.errors.ConfigError`, or argparse's
exit 2) — never another exception, never a traceback. Bounded: a few dozen examples each, the
whole file well under a minute; derandomized in CI. Counterexamples the fuzzers found are kept
as ``@example`` regression cases.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from _cli import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stress.baseline.store import Baseline, CaseBaseline, OutputBaseline
from stress.cli.parser import build_parser
from stress.config import RunConfig
from stress.corpus.parse import load_corpus_file
from stress.errors import ConfigError
from stress.grading.assemble import build_report
from stress.htmlreport.synthetic import synthetic_records
from stress.journal.results import read_results
from stress.ops.references import ALLOW_ENV
from stress.report.writers import render_markdown

FUZZ = settings(  # ACLNN_STRESS_FUZZ_EXAMPLES=N for a longer hunt by hand
    max_examples=int(os.environ.get("ACLNN_STRESS_FUZZ_EXAMPLES", "40")),
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# -- mutations ---------------------------------------------------------------------------------
_SCALARS = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([-1, 0, 1, 2**31, 2**63 - 1, 10**12]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "x", "float32", "add", "ok", "error", "a:b", "../x", "\x00"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(tree: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indices) into a JSON-like tree, the root included."""
    out = [prefix]
    if isinstance(tree, dict):
        for k, v in tree.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(data: st.DataObject, tree: Any, values: st.SearchStrategy = _VALUES) -> Any:
    """``tree`` with 1-3 mutations: replace a subtree, delete a key or item, add a key."""
    tree = json.loads(json.dumps(tree))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(tree) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = tree
        for key in path[:-1]:
            parent = parent[key]
        action = data.draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = data.draw(values)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[data.draw(st.text(min_size=1, max_size=8))] = data.draw(values)
        else:
            parent.append(data.draw(values))
    return tree


def _corrupt_text(data: st.DataObject, text: str) -> str:
    """Text-level damage: truncation, inserted junk, or a deeply nested value."""
    kind = data.draw(st.sampled_from(["truncate", "insert", "nest"]))
    at = data.draw(st.integers(0, len(text)))
    if kind == "truncate":
        return text[:at]
    if kind == "insert":
        return text[:at] + data.draw(st.text(max_size=20)) + text[at:]
    return text + "\nx = " + "[" * 2000 + "]" * 2000 + "\n"


def _one_line(exc: ConfigError) -> None:
    text = str(exc)
    assert text and "\n" not in text, text
    assert "Traceback" not in text


# -- corpus and declaration TOML -------------------------------------------------------------
_CORPORA = [REPO / "corpus/control.toml", REPO / "corpus/mhc.toml"]
_DECLARATIONS = [
    REPO / "corpus/ops/add.toml",
    REPO / "corpus/ops/rms_norm.toml",
    REPO / "corpus/ops/softmax_backward.toml",  # a [gradcheck] section
]


def _toml_seed(path: Path) -> dict:
    return tomllib.loads(path.read_text())


def _load_toml_input(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_corpus_file(path)
    except ConfigError as exc:
        _one_line(exc)


def _toml_text(data: st.DataObject, seed: dict) -> str:
    tree = _mutate(data, seed)
    try:
        text = tomli_w.dumps(tree)
    except (TypeError, ValueError):  # not representable in TOML: damage the text instead
        text = tomli_w.dumps(seed)
    return _corrupt_text(data, text) if data.draw(st.booleans()) else text


@pytest.fixture(autouse=True)
def _no_reference_imports(monkeypatch):
    monkeypatch.delenv(ALLOW_ENV, raising=False)


@FUZZ
@given(data=st.data(), seed=st.sampled_from(_CORPORA))
def test_fuzz_corpus_toml(tmp_path: Path, data: st.DataObject, seed: Path):
    _load_toml_input(tmp_path, _toml_text(data, _toml_seed(seed)))


@FUZZ
@given(data=st.data(), seed=st.sampled_from(_DECLARATIONS))
def test_fuzz_declaration_toml(tmp_path: Path, data: st.DataObject, seed: Path):
    _load_toml_input(tmp_path, _toml_text(data, _toml_seed(seed)))


# -- baseline JSON ----------------------------------------------------------------------------
def _baseline_seed(tmp_path: Path) -> dict:
    out = OutputBaseline(digest="ab" * 32, shape=[2, 3], dtype="float32", canary_chance=0)
    case = CaseBaseline(
        id="c1", key="k1", op="add", status="ok", call_digest="cd" * 32, outputs={"out": out}
    )
    bad = CaseBaseline(id="c2", key="k2", op="add", status="error", code=161002, message="no")
    path = Baseline(
        backend={"kind": "sim"},
        corpus={"digest": "x"},
        deterministic=True,
        repeats=3,
        cases={"c1": case, "c2": bad},
    ).save(tmp_path / "seed.json")
    return json.loads(path.read_text())


@FUZZ
@given(data=st.data())
def test_fuzz_baseline_json(tmp_path: Path, data: st.DataObject):
    seed = _baseline_seed(tmp_path)
    text = json.dumps(_mutate(data, seed, _VALUES | st.none()))
    if data.draw(st.booleans()):
        text = _corrupt_text(data, text)
    path = tmp_path / "fuzz.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        Baseline.load(path)
    except ConfigError as exc:
        _one_line(exc)


# -- results journal (JSONL), re-rendered as `aclnn-stress report DIR` does --------------------
_JOURNAL = list(synthetic_records(["a", "b", "c"], calls=40, victim="a", aggressor="b"))


@FUZZ
@given(data=st.data())
def test_fuzz_results_journal(tmp_path: Path, data: st.DataObject):
    records = [dict(r) for r in _JOURNAL]
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(records) - 1))
        records[i] = _mutate(data, records[i], _VALUES | st.none())
    text = "".join(json.dumps(r) + "\n" for r in records)
    if data.draw(st.booleans()):
        text = _corrupt_text(data, text)
    path = tmp_path / "results.jsonl"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        render_markdown(build_report(read_results(path)))
    except ConfigError as exc:
        _one_line(exc)


# -- CLI argv ---------------------------------------------------------------------------------
_OPTIONS = [
    "--threads",
    "--duration",
    "--iterations",
    "--budget",
    "--seed",
    "--repeats",
    "--canary",
    "--call-timeout",
    "--device",
    "--phases",
    "--stream",
    "--context",
    "--max-case-bytes",
    "--shrink-budget",
]
_TOKENS = st.one_of(
    st.sampled_from(_OPTIONS),
    st.sampled_from(["nan", "inf", "-1", "0", "1e309", "100000", "abc", "", "8G", "-", "--"]),
    st.integers(-(2**70), 2**70).map(str),
    st.text(max_size=8),
)


@FUZZ
@given(
    command=st.sampled_from([["run"], ["baseline", "record"]]), rest=st.lists(_TOKENS, max_size=6)
)
def test_fuzz_cli_argv(command: list[str], rest: list[str]):
    """Parsing and validating any argv ends in a RunConfig, a one-line ConfigError or argparse's
    exit 2 — never a traceback (nothing is run)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            args = build_parser().parse_args([*command, *rest])
        except SystemExit as exc:
            assert exc.code == 2, err.getvalue()
            assert "Traceback" not in err.getvalue()
            return
    try:
        RunConfig.from_cli(args)
    except ConfigError as exc:
        _one_line(exc)


# -- the counterexamples the fuzzers found, kept as regression cases ---------------------------
def _declaration_with(change) -> dict:
    tree = _toml_seed(REPO / "corpus/ops/add.toml")
    change(tree)
    return tree


_FOUND_TOML = {
    # resolve._dtype looked an unhashable list up in a dict: TypeError
    "dtype-list": _declaration_with(lambda d: d["params"]["alpha"].update(dtype=[])),
    # a key holding a newline was echoed verbatim: a two-line error
    "newline-top-key": _declaration_with(lambda d: d.update({"\n": 0})),
    "newline-op-key": _declaration_with(lambda d: d["op"].update({"a\nb": 1})),
}


@pytest.mark.parametrize("name", sorted(_FOUND_TOML))
def test_found_declaration_inputs_are_one_line_errors(tmp_path: Path, name: str):
    path = tmp_path / "found.toml"
    path.write_text(tomli_w.dumps(_FOUND_TOML[name]))
    with pytest.raises(ConfigError) as err:
        load_corpus_file(path)
    _one_line(err.value)


@pytest.mark.parametrize(
    "field, value",
    [("backend", None), ("cases", None), ("config", {"streams": 1}), ("cases", [1])],
)
def test_found_journal_headers_are_one_line_errors(tmp_path: Path, field: str, value: Any):
    """render_markdown read ``backend.get`` of a null backend; grading iterated null cases."""
    records = [dict(r) for r in _JOURNAL]
    assert records[0]["type"] == "run"
    records[0][field] = value
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(ConfigError, match=f"line 1 .*field '{field}'") as err:
        build_report(read_results(path))
    _one_line(err.value)


@pytest.mark.parametrize(
    "change",
    [{"status": "weird"}, {"case": None}, {"match": "yes"}, {"unwritten": {"out": "x"}}],
)
def test_found_call_records_are_one_line_errors(tmp_path: Path, change: dict):
    records = [dict(r) for r in _JOURNAL]
    i = next(i for i, r in enumerate(records) if r["type"] == "call")
    records[i].update(change)
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(ConfigError, match=f"line {i + 1} ") as err:
        build_report(read_results(path))
    _one_line(err.value)
