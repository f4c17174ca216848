"""The CLI starts like a small tool: ``--version``, ``--help`` and parsing a command import only
what they need (benchmarks/bench_startup.py times it; this checks what is imported, which does
not depend on the machine's load), and ``--help`` speaks to the user, not to the project."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

#: Heavy or command-specific: none of them is needed to print the version, the help or to parse.
HEAVY = (
    "numpy",
    "ml_dtypes",
    "rich",
    "jinja2",
    "matplotlib",
    "hypothesis",
    "pycparser",
    "pcpp",
    "tomli_w",
    "stress.ops",
    "stress.corpus",
    "stress.acl",
    "stress.engine",
)


def _imported(code: str) -> set[str]:
    """Every module a fresh interpreter has imported after ``code`` (python -X importtime)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 2), done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "stress.cli" in names  # the probe itself worked
    return names


def _heavy(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == h or n.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["run", "--help"], []])
def test_version_and_help_import_nothing_heavy(argv):
    code = f"import sys; from stress.cli import main; sys.exit(main({argv!r}))"
    assert _heavy(_imported(code)) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--budget", "3", "--corpus", "corpus/mhc.toml"],
        ["baseline", "record", "--repeats", "2"],
        ["report", "some-dir"],
        ["info"],
    ],
)
def test_a_command_is_parsed_before_the_catalogue_or_the_corpus_parser_is_imported(argv):
    code = (
        "from stress.cli.parser import build_parser, command_of\n"
        f"build_parser(command_of({argv!r}), full=False).parse_args({argv!r})\n"
    )
    assert _heavy(_imported(code)) == []


#: What the ``op`` and ``corpus`` parsers may import of stress.ops: the package and the -I/-D
#: options it shares with ``op inspect`` (no numpy, no header reader, no catalogue).
LIGHT_OPS = {"stress.ops", "stress.ops.header_options", "stress.ops.inspect_header"}


@pytest.mark.parametrize(
    "argv",
    [
        ["op", "--help"],
        ["corpus", "--help"],
        ["corpus", "generate", "--help"],
        ["op", "new", "aclnn_x.h", "-o", "x.toml", "-I", "inc"],
        ["corpus", "generate", "--op", "no_such_op", "--count", "2"],
        ["corpus", "generate", "--count", "two"],  # an argument error: one line, exit 2
    ],
)
def test_op_and_corpus_parse_before_the_catalogue_or_the_header_reader(argv):
    code = (
        "import sys\nfrom stress.cli.parser import build_parser, command_of\n"
        f"build_parser(command_of({argv!r}), full=False).parse_args({argv!r})\n"
    )
    assert [n for n in _heavy(_imported(code)) if n not in LIGHT_OPS] == []


def test_corpus_generate_names_an_unknown_op_in_one_line():
    done = subprocess.run(
        [sys.executable, "-m", "stress", "corpus", "generate", "--op", "conv"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--op must be one of " in done.stderr and "add, " in done.stderr
    assert done.stderr.rstrip().endswith("got 'conv'")


def test_python_m_stress_version_imports_nothing_heavy():
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "stress", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.startswith("aclnn-stress ")
    names = {ln.rsplit("|", 1)[1].strip() for ln in done.stderr.splitlines() if "|" in ln}
    assert "stress.cli" in names and _heavy(names) == []


#: Run in a fresh interpreter: building every command's parser imports the whole package, and
#: the process the tests share should not carry that (tests/test_tally.py measures memory).
_HELP_PROBE = """
import argparse, json
from stress.cli.parser import ELSEWHERE, build_parser

def subparsers(parser):
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))

def every(parser, path=("aclnn-stress",)):
    yield " ".join(path), parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from every(sub, (*path, name))

full = build_parser()
print(json.dumps({
    "top": [build_parser(full=False).format_help(), full.format_help()],
    "placeholders": {
        name: [
            subparsers(build_parser(name, full=False)).choices[name].format_help(),
            subparsers(full).choices[name].format_help(),
        ]
        for name in ELSEWHERE
    },
    "helps": dict(every(full)),
}))
"""


@pytest.fixture(scope="module")
def helps() -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _HELP_PROBE], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_the_placeholders_show_the_same_help_as_the_commands(helps):
    """Commands defined elsewhere are placeholders until named: their help line must agree."""
    lazy, full = helps["top"]
    assert lazy == full
    for name, (placeholder_built, real) in helps["placeholders"].items():
        assert placeholder_built == real, name


def test_help_has_no_internal_references(helps):
    """No "(DESIGN item 3)", "issue #19" or the like: references a user cannot follow."""
    assert len(helps["helps"]) >= 20  # every command and action was rendered
    bad = [
        (path, needle)
        for path, text in helps["helps"].items()
        for needle in ("DESIGN", "issue #", "issue ", " item ")
        if needle in text
    ]
    assert bad == [], json.dumps(bad)


#: ``run`` with a baseline file that does not exist: the corpus loads, the fork server is
#: started (early), and the baseline check then fails with exit 2; the order of the two, and
#: whether the server was stopped, are printed.
_EARLY_PROBE = """
import json, sys
import stress.engine.run.early as early
from stress.corpus import preload
seen = {"order": []}
real_start, real_load = early.start_early, preload.load
def start(*args, **kw):
    seen["order"].append("fork server")
    seen["session imported"] = "stress.engine.run.session" in sys.modules
    seen["early"] = real_start(*args, **kw)
    return seen["early"]
def load(*args, **kw):
    if "corpus load" not in seen["order"]:
        seen["order"].append("corpus load")
    return real_load(*args, **kw)
early.start_early, preload.load = start, load
from stress.cli import main
code = main(["run", "--corpus", "corpus/mhc.toml", "--control", "corpus/control.toml",
             "--baseline", sys.argv[1] + ".json", "--budget", "2", "--out", sys.argv[1]])
server = seen["early"].server
stopped = server._proc.poll() is not None
print(json.dumps({"code": code, "order": seen["order"], "stopped": stopped,
                  "session imported": seen["session imported"]}))
"""


def test_run_starts_its_fork_server_once_the_corpus_is_loaded(tmp_path):
    """The fork server (forked with the engine this process imported and the corpus it parsed,
    which the children inherit; it loads the backend for the info job) starts right after the
    corpus load, before the session's module is imported (the server needs none of it) and its
    checks; it is stopped when the run ends, here at a baseline that does not exist."""
    done = subprocess.run(
        [sys.executable, "-c", _EARLY_PROBE, str(tmp_path / "out")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe["code"] == 2, done.stderr
    assert probe["order"] == ["corpus load", "fork server"]
    assert probe["session imported"] is False
    assert probe["stopped"] is True


def test_the_session_takes_the_info_result_of_its_own_job_only():
    from stress.engine.run.early import EarlyStart

    class _Server:
        closed = False

        def close(self):
            self.closed = True

    early = EarlyStart(_Server(), {})  # type: ignore[arg-type]
    job = {"backend": None, "kind": "info", "device": 0}
    assert early.take_info(job) is None  # nothing asked
    early.ask_info(lambda j: ("result of", j["device"]), job)
    assert early.take_info({**job, "device": 1}) is None  # another device: run it anew
    assert early.take_info(job) == ("result of", 0)
    early.close()
    assert early.server.closed is True


#: ``run`` up to its first failure's line, ``Session.run`` standing in for the phases: which of
#: the heavy modules the run had imported by then is printed.
_RUN_PROBE = """
import json, sys
from stress.engine.run.session import Session
seen = {}
def run(self):
    self.ui.run_start(None)
    self.ui.phase_start("burst", "stream=per-thread", 3)
    self.ui.message("first failure: 0.2 s after the start, case a in burst (stream=per-thread): ok")
    seen["heavy"] = sorted(m for m in sys.modules if m.split(".")[0] in sys.argv[2].split(","))
    raise KeyboardInterrupt
Session.run = run
from stress.cli import main
code = main(["run", "--corpus", "corpus/mhc.toml", "--control", "corpus/control.toml",
             "--no-isolate", "--budget", "2", "--out", sys.argv[1]])
print(json.dumps({"code": code, **seen}))
"""


def test_a_run_reaches_its_first_failure_line_without_rich_or_the_report_modules(tmp_path):
    """Off a terminal the run's lines up to its first failure are printed without rich (it is
    imported at the first line it would render otherwise, a phase's end); nor are the HTML
    report's template engine, matplotlib, hypothesis or the TOML writer imported before the
    phases, nor — its headers read once (stress.ops.header_cache) — the C reader."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # the header cache: empty, then filled
    heavy = "rich,jinja2,matplotlib,hypothesis,markupsafe,pygments,tomli_w,pycparser,pcpp"
    probes = []
    for k in range(2):
        done = subprocess.run(
            [sys.executable, "-c", _RUN_PROBE, str(tmp_path / f"out{k}"), heavy],
            capture_output=True, text=True, check=True, env=env,
        )  # fmt: skip
        probes.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert [p["code"] for p in probes] == [130, 130], done.stderr
    assert [sorted({m.split(".")[0] for m in p["heavy"]}) for p in probes] == [
        ["pcpp", "pycparser"],  # the headers read and cached
        [],
    ]
    lines = done.stderr.splitlines()
    assert lines[0].startswith("aclnn-stress ") and "seed" in lines[0]
    assert "phase burst [stream=per-thread]: 3 cases ..." in lines
    assert "first failure: 0.2 s after the start, case a in burst (stream=per-thread): ok" in lines


@pytest.mark.parametrize(
    "text",
    [
        "first failure: 0.69 s after the start, case fp16-mid in burst (stream=per-thread): ok",
        "aclnn-stress 0.1.0: seed 1 (replay with --seed 1)\ncorpus: corpus/mhc.toml",
        "diagnosing: 5 case(s) (fp16-mid, base-a@pad); next — é 中 50% *b* `c` <h> &amp; \\",
        "  spaces  ",
        "x" * 300,
        "",
        "a [b] c",  # markup
        "emoji :smile: here",
        "tab\there",
        "[bold]x[/]",
    ],
)
def test_a_line_printed_without_rich_is_what_rich_would_print(text):
    import io

    from rich.console import Console

    from stress.report.progress import plain

    buf = io.StringIO()
    Console(file=buf).print(text, soft_wrap=True, highlight=False)
    if plain(text):
        assert buf.getvalue() == text + "\n"
    else:
        assert any(c in text for c in "[:\t")  # only what rich may change goes through rich
