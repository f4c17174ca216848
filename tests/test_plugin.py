"""The pytest plugin: options, markers, fixtures, npu skipping, xdist device fan-out, merged
results, baselines shared by workers, and readable failures.

The tests drive inner pytest sessions with ``pytester``; the ``stress``-marked tests that run the
shipped corpus through the plugin's own fixtures are in tests/test_plugin_stress.py.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import hypothesis  # noqa: F401 - see below
import pytest

import stress.acl.runtime
import stress.engine.run.session  # noqa: F401
from stress.baseline.shared import BaselineStore
from stress.baseline.store import Baseline, CaseBaseline
from stress.config import DEFAULTS, PYTEST_DURATION
from tests._sim_available import skip_or_fail

# In-process pytester runs restore sys.modules afterwards, dropping modules first imported by the
# inner session: a later inner session would then import stress.acl.runtime afresh and create a
# second Runtime for the one process-wide CANN state. Importing them here keeps one runtime
# (and spares every inner session re-importing hypothesis for its terminal summary).

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
FAST = ("--stress-duration", "0.1", "--stress-threads", "2", "-p", "no:randomly")

CORPUS = """
[defaults]
op = "add"

[[case]]
id = "a-f32"
shape = [8, 16]
seed = 1

[[case]]
id = "a-bf16"
shape = [4, 32]
other_shape = [32]
dtype = "bf16"
seed = 2

[[case]]
id = "a-neg"
shape = [2, 3]
other_shape = [4]
seed = 3
expect = { status = 161002 }
"""


# -- helpers ---------------------------------------------------------------------------------
@pytest.fixture
def corpus(pytester):
    path = pytester.path / "corpus.toml"
    path.write_text(CORPUS)
    return path


def _summary(pytester) -> dict:
    latest = max(pytester.path.glob("stress-out/*/summary.json"), key=lambda p: p.stat().st_mtime)
    return json.loads(latest.read_text())


# -- options and markers ---------------------------------------------------------------------
def test_options_and_markers_are_registered(pytester):
    result = pytester.runpytest("--help")
    for option in (
        "--stress-backend",
        "--stress-threads",
        "--stress-duration",
        "--stress-corpus",
        "--stress-out",
        "--stress-isolate",
        "--stress-seed",
    ):
        assert option in result.stdout.str()
    result.stdout.fnmatch_lines(["*aclnn-stress*"])
    markers = pytester.runpytest("--markers").stdout.str()
    assert "@pytest.mark.stress:" in markers and "@pytest.mark.npu:" in markers
    assert "@pytest.mark.stress_case(*ids, **case):" in markers


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stress-threads", "0"], "--stress-threads must be >= 1, got 0"),
        (["--stress-duration", "-1"], "--stress-duration must be > 0 seconds"),
        (["--stress-seed", "-3"], "--stress-seed must be >= 0"),
        (["--stress-corpus", "missing.toml"], "--stress-corpus missing.toml: no such file"),
        (["--stress-corpus", "bad.toml"], "field 'shape': expected a list of integers"),
        (["--stress-control", "nope"], "--stress-control nope: no such file"),
        (["--stress-backend", "gpu"], "invalid choice: 'gpu'"),
        (
            ["--stress-max-case-bytes", "abc"],
            "must be a positive number of bytes (e.g. 8G, 512M, 1000000), got 'abc'",
        ),
    ],
)
def test_bad_options_are_usage_errors(pytester, args, message):
    pytester.makefile(".toml", bad='[[case]]\nid = "x"\nop = "add"\nshape = "2x3"\n')
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_bad_stress_backend_environment_is_a_usage_error(pytester, monkeypatch):
    monkeypatch.setenv("STRESS_BACKEND", "tpu")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "STRESS_BACKEND='tpu' is not a backend" in result.stderr.str()


def test_header_names_backend_seed_corpus_and_device(pytester, corpus):
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest("--stress-corpus", str(corpus), "--stress-seed", "42")
    result.stdout.fnmatch_lines(
        [
            f"stress: backend sim, {DEFAULTS['threads']} threads, {PYTEST_DURATION:g} s per "
            "concurrent phase, seed 42*",
            "stress: corpus corpus.toml; control built-in aclnnAdd set; results stress-out*",
            "stress: device 0 (no xdist)",
        ]
    )


MAX_BYTES_TEST = """
def test_big(stress_run):
    stress_run([{"id": "big", "op": "add", "shape": [256, 256]}], phases=("serial",),
               control=False, iterations=1)

def test_small(stress_run):
    stress_run([{"id": "small", "op": "add", "shape": [2, 2]}], phases=("serial",),
               control=False, iterations=1)
"""


@pytest.mark.parametrize("where", ["option", "ini"])
def test_max_case_bytes_refuses_a_bigger_case_before_it_runs(pytester, where):
    """--stress-max-case-bytes (or ini stress_max_case_bytes): a case whose tensors take more
    fails its test with the size and the option's name; a smaller one runs."""
    pytester.makepyfile(test_sizes=MAX_BYTES_TEST)
    args = ["--stress-max-case-bytes", "64K"] if where == "option" else []
    if where == "ini":
        pytester.makeini("[pytest]\nstress_max_case_bytes = 64K\n")
    result = pytester.runpytest(*FAST, *args)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    # add [256, 256] float32: self, other and out, 3 x 256 KiB; 64K = 65536 bytes
    assert "case 'big': its tensors take 786.4 kB (786432 bytes)" in out
    assert "over --stress-max-case-bytes (65.5 kB)" in out
    assert "FAILED test_sizes.py::test_big" in out
    assert "During handling" not in out  # the ConfigError is not chained into the failure


def test_a_bad_case_dict_fails_its_test_with_one_line(pytester):
    """stress_run's failure after a ConfigError is its one line: no chained exception text."""
    pytester.makepyfile(
        test_bad="def test_bad(stress_run):\n"
        '    stress_run([{"id": "bad", "op": "add", "shape": "2x3"}])\n'
    )
    result = pytester.runpytest(*FAST)
    result.assert_outcomes(failed=1)
    out = result.stdout.lines
    at = next(i for i, line in enumerate(out) if line.startswith("___") and "test_bad" in line)
    assert out[at + 1] == (
        "stress_run: test_bad.py::test_bad: case 'bad', field 'shape': expected a list of "
        "integers (a shape), got '2x3'"
    )
    assert out[at + 2].startswith("===")  # the section ends there
    assert "During handling" not in result.stdout.str()


def test_a_backend_that_cannot_load_fails_with_one_line(pytester, monkeypatch):
    """No CANN here: the stress tests fail with the loader's line, nothing chained to it."""
    monkeypatch.setenv("ASCEND_HOME_PATH", str(pytester.path / "no-cann"))
    pytester.makepyfile(test_cann="def test_x(stress_run):\n    stress_run()\n")
    result = pytester.runpytest(*FAST, "--stress-backend", "cann")
    result.assert_outcomes(errors=1)  # at the fixture's setup
    out = result.stdout.lines
    at = next(i for i, line in enumerate(out) if "ERROR at setup of test_x" in line)
    assert out[at + 1].startswith("stress: cannot load the backend: ")  # why: one line
    assert out[at + 2].startswith("===")  # the section is that one line


def test_a_bad_ini_max_case_bytes_is_a_usage_error(pytester):
    pytester.makeini("[pytest]\nstress_max_case_bytes = lots\n")
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ini stress_max_case_bytes: 'lots' is not a positive number of bytes" in (
        result.stderr.str()
    )


def test_npu_tests_are_skipped_on_the_simulator(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.npu
        def test_needs_hardware(stress_runtime):
            raise AssertionError("must not run on the simulator")

        def test_plain():
            pass
        """
    )
    result = pytester.runpytest("-rs", "--strict-markers")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED*test_npu_tests_are_skipped*needs a real Ascend NPU*"])
    assert "the stress backend is the CANN simulator" in result.stdout.str()


# -- cases -----------------------------------------------------------------------------------
def test_corpus_and_marker_cases_become_items_with_readable_ids(pytester, corpus):
    pytester.makepyfile(
        test_inner_ids="""
        import pytest

        def test_each(stress_case_item):
            assert stress_case_item.op == "add"

        @pytest.mark.stress_case(op="add", shape=[2, 3], seed=1)
        @pytest.mark.stress_case(id="mine", op="add", shape=[4], dtype="bf16")
        def test_marked(stress_case_item, stress_cases):
            assert len(stress_cases) == 2

        @pytest.mark.stress_case("a-bf16", "a-neg")
        def test_by_id(stress_cases):
            assert [c.id for c in stress_cases] == ["a-bf16", "a-neg"]
            assert stress_cases[1].expect.status == 161002
        """
    )
    result = pytester.runpytest("--stress-corpus", str(corpus), "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "test_inner_ids.py::test_each[[]a-f32[]]",
            "test_inner_ids.py::test_each[[]a-bf16[]]",
            "test_inner_ids.py::test_each[[]a-neg[]]",
            "test_inner_ids.py::test_marked[[]add-shape2x3-s1[]]",
            "test_inner_ids.py::test_marked[[]mine[]]",
            "test_inner_ids.py::test_by_id",
        ]
    )
    result = pytester.runpytest("--stress-corpus", str(corpus))
    result.assert_outcomes(passed=6)


def test_without_a_corpus_folder_the_shipped_corpora_and_the_header_says_so(pytester, corpus):
    """No --stress-corpus, no ini, no corpus/ folder in the rootdir: the shipped corpora (as
    `run` falls back to them), named in the header; with a corpus/ folder, its files."""
    from stress.shipped import shipped_corpus_files, shipped_dir

    shipped = shipped_corpus_files()
    assert shipped and all(p.name != "control.toml" for p in shipped)
    from stress.corpus.parse import load_corpus

    ids = [c.id for c in load_corpus([str(p) for p in shipped])]
    pytester.makepyfile(test_inner_default="def test_each(stress_case_item): pass")
    result = pytester.runpytest("--collect-only", "-p", "no:randomly")
    header = f"stress: corpus * (the shipped corpora from {shipped_dir()} (no corpus/ folder in *"
    result.stdout.fnmatch_lines([header, f"*<Function test_each[[]{ids[0]}[]]>"])
    assert f"collected {len(ids)} items" in result.stdout.str()
    (pytester.path / "corpus").mkdir()
    corpus.rename(pytester.path / "corpus" / "mine.toml")
    result = pytester.runpytest("--collect-only", "-p", "no:randomly")
    result.stdout.fnmatch_lines(["stress: corpus corpus/mine.toml; *", "*test_each[[]a-f32[]]>"])
    out = result.stdout.str()
    assert "the shipped corpora" not in out and "collected 3 items" in out


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('stress_case(op="conv", shape=[1])', "unknown op 'conv'"),
        ('stress_case(op="add", shape="2x3")', "field 'shape': expected a list of integers"),
        ("stress_case(shape=[1])", "'op' is required"),
        ('stress_case("nope")', "stress_case('nope'): no such case in the corpus"),
    ],
)
def test_bad_stress_case_markers_say_what_is_wrong(pytester, marker, message):
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.{marker}
        def test_x(stress_case_item):
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret != 0
    assert message in result.stdout.str() + result.stderr.str()


# -- runs, results, failures -----------------------------------------------------------------
MIX_TEST = """
import pytest

@pytest.mark.stress
def test_mix(stress_run, stress_corpus):
    result = stress_run(stress_corpus)
    assert result.ok and result.verdict("mixed", "a-f32") == "PASS"
    assert {p.name for p in result.phases} == {
        "burst", "serial", "shuffled", "interleaved", "isolated", "mixed", "control"}
"""


def test_a_session_inside_an_xdist_worker_is_its_own_controller(pytester, corpus, monkeypatch):
    # an in-process session (pytester) started by an xdist worker inherits PYTEST_XDIST_WORKER;
    # it must still bind device 0 as "main" and write its own summary
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    pytester.makepyfile(test_inner_mix=MIX_TEST)
    args = ("--stress-corpus", str(corpus), "--stress-baseline-dir", str(pytester.path), *FAST)
    result = pytester.runpytest(*args, "-m", "stress", "--stress-out", "out")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["devices in use: 1 (main -> device 0)", "summary: out/summary.md"])


def test_stress_run_passes_and_records_baseline_results_and_summary(pytester, corpus):
    pytester.makepyfile(test_inner_mix=MIX_TEST)
    base = pytester.path / "baselines"
    args = ("--stress-corpus", str(corpus), "--stress-baseline-dir", str(base), *FAST)
    out = pytester.path / "out"
    result = pytester.runpytest(*args, "--junitxml=junit.xml", "-m", "stress", "--stress-out", out)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*aclnn-stress*",
            "1 stress runs (backend sim, seed *): 1 clean, 0 with findings",
            "devices in use: 1 (main -> device 0)",
            "summary: out/summary.md",
        ]
    )
    recorded = Baseline.load(base / "pytest.sim.json")
    assert {"a-f32", "a-bf16", "a-neg", "control-add-f32"} <= set(recorded.cases)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdict"] == "clean" and summary["workers"] == {"main": 0}
    (run,) = summary["runs"]  # only this session's run, also when --stress-out is reused
    assert run["nodeid"] == "test_inner_mix.py::test_mix" and run["diagnosis"] == "clean"
    assert (Path(run["out_dir"]) / "results.jsonl").is_file()
    assert (Path(run["out_dir"]) / "report.md").is_file()
    props = {
        p.get("name"): p.get("value")
        for p in ET.parse(pytester.path / "junit.xml").iter("property")
    }
    assert props["stress_device"] == "0" and props["stress_worker"] == "main"
    assert props["stress_diagnosis"] == "clean" and props["stress_results"] == run["out_dir"]
    # a second session reuses the recorded baseline (nothing re-recorded); a reused
    # --stress-out keeps both sessions' runs, and each summary lists its own
    before = (base / "pytest.sim.json").stat().st_mtime_ns
    again = ("-m", "stress", "--stress-out", str(out))
    pytester.runpytest(*args, *again).assert_outcomes(passed=1)
    assert (base / "pytest.sim.json").stat().st_mtime_ns == before
    assert len((out / "main" / "runs.jsonl").read_text().splitlines()) == 2
    second = json.loads((out / "summary.json").read_text())
    assert len(second["runs"]) == 1 and second["session"] != summary["session"]


def test_a_failing_run_names_phase_case_verdict_digests_and_replay(pytester, corpus):
    """No simulator fault needed: a baseline that cannot hold (a wrong digest for a-bf16)
    makes every phase fail for that case, the way a real fault would."""
    pytester.makepyfile(
        test_inner_mix=MIX_TEST,
        test_inner_shrink="""
        def test_shrink(stress_run):
            assert [c.id for c in stress_run.shrink(phase="serial")] == ["a-bf16"]
        """,
    )
    base = pytester.path / "baselines"
    args = ("--stress-corpus", str(corpus), "--stress-baseline-dir", str(base), *FAST)
    pytester.runpytest(*args, "-m", "stress", "--stress-seed", "5").assert_outcomes(passed=1)
    path = base / "pytest.sim.json"
    doc = json.loads(path.read_text())
    doc["cases"]["a-bf16"]["call_digest"] = "0" * 64
    path.write_text(json.dumps(doc))

    result = pytester.runpytest(*args, "-m", "stress", "--stress-seed", "5")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "E *StressFailure: stress run found baseline-mismatch on device 0 (worker main, "
            "backend sim, seed 5, 3 cases)",
            "E *serial*: a-bf16 MISMATCH_STABLE*",  # the focused serial (serial[focus])
            "E *baseline digest 000000000000; seen: * x*",  # the launches of every mode
            "E *results: *results.jsonl*",
            "E *replay:  *aclnn-stress run --corpus *corpus.toml --control *control.toml "
            "--baseline *baseline.json --phases *serial,shuffled*"
            " --seed 5 --threads 2 *--duration 0.1 --device 0",
            "FINDING test_inner_mix.py::test_mix [[]main, device 0[]]: baseline-mismatch*",
        ]
    )
    assert "a-f32 MISMATCH" not in out  # only the case that fails is named
    assert _summary(pytester)["verdict"] == "findings"
    # the run's own directory replays with the CLI, to the same verdict
    replay = next(ln for ln in out.splitlines() if "replay:  " in ln).split("replay:  ")[1]
    proc = subprocess.run(
        # --force: this test process may hold a simulator build loaded by an earlier test, so
        # the snapshot's library hashes need not be the fresh process's; the verdict must match.
        [sys.executable, "-m", "stress", *replay.split()[2:], "--no-isolate", "--quiet",
         "--shrink-budget", "0", "--force", "--out", str(pytester.path / "replayed")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    # shrinking with re-runs of a phase finds the one case that fails
    pytester.runpytest(*args, "test_inner_shrink.py").assert_outcomes(passed=1)


def test_check_false_returns_the_result_for_custom_assertions(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.stress_case(op="add", shape=[2, 3], seed=1, expect={"status": 161002})
        def test_expectation_that_cannot_hold(stress_run):
            result = stress_run(phases="serial", check=False, control=False)
            assert not result.ok
            (failure,) = result.failures()
            assert failure["phase"] == "serial" and failure["verdict"] == "MISMATCH_STABLE"
            assert "expected status 161002, the call succeeded" in result.message()
        """
    )
    pytester.runpytest(*FAST).assert_outcomes(passed=1)


@pytest.mark.slow  # a child process per phase: seconds of interpreter starts
def test_isolated_phases_run_in_supervised_children(pytester, corpus):
    pytester.makepyfile(
        """
        import os

        def test_child(stress_run):
            result = stress_run(["a-f32", "a-neg"], phases="mixed", control=False)
            header = (result.out_dir / "results.jsonl").read_text().splitlines()[0]
            assert result.ok and '"type":"run"' in header
        """
    )
    result = pytester.runpytest("--stress-corpus", str(corpus), "--stress-isolate", *FAST)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*isolated child per phase*"])


# -- xdist -----------------------------------------------------------------------------------
XDIST_TESTS = """
import pytest

@pytest.mark.parametrize("shape", [[2, 3], [4, 8], [16], [3, 3, 3], [32, 2], [7], [5, 5], [9]])
def test_run(stress_run, shape):
    stress_run([{"op": "add", "shape": shape, "seed": len(shape)}], phases="serial,mixed",
               control=False)
"""


def assert_two_workers_merged(result, pytester) -> Path:
    """8 clean runs from two workers on devices 0 and 1, merged into one summary; its out dir."""
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(
        [
            "stress: xdist -n 2: worker gwI binds device (0 + I) mod 8: gw0->0 gw1->1",
            "8 stress runs (backend sim, seed *): 8 clean, 0 with findings",
            "devices in use: 2 (gw0 -> device 0, gw1 -> device 1)",
        ]
    )
    summary = _summary(pytester)
    assert summary["workers"] == {"gw0": 0, "gw1": 1}
    assert summary["devices_used"] == [0, 1] and len(summary["runs"]) == 8
    return Path(summary["out"])


# the two-worker session itself (devices, merged summary, junit properties, one baseline file
# from both workers) is tests/test_fleet.py's: ``-n 2`` is xdist's ``--tx 2*popen``


def _case_baseline(cid: str) -> CaseBaseline:
    digest = hashlib.sha256(cid.encode()).hexdigest()  # a well-formed digest, per case
    return CaseBaseline(id=cid, key=f"key-{cid}", op="add", status="ok", call_digest=digest)


WRITER = """
import sys, time
from pathlib import Path
from stress.baseline.shared import BaselineStore
from stress.baseline.store import Baseline, CaseBaseline
from stress.config import DEFAULTS, PYTEST_DURATION

path, who, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])

class FakeCase:
    def __init__(self, i):
        self.id, self.key, self.source = f"{who}-{i}", f"key-{who}-{i}", "fake.toml"

def record(cases):
    time.sleep(0.05)  # overlap with the other writers
    return Baseline(
        backend={"kind": "sim"}, corpus={"cases": {}, "files": ["fake.toml"]},
        deterministic=True, repeats=3,
        cases={c.id: CaseBaseline(id=c.id, key=c.key, op="add", status="ok") for c in cases})

store = BaselineStore(path)
for i in range(n):
    got = store.ensure([FakeCase(i)], {"kind": "sim"}, record)
    assert f"{who}-{i}" in got.cases
"""


def test_concurrent_baseline_writers_never_clobber_each_other(tmp_path):
    """Several processes add their own cases to one baseline file at once (as xdist workers
    do): the lock + merge + atomic rename keeps every case of every writer."""
    path = tmp_path / "pytest.sim.json"
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"w{k}", "6"]) for k in range(3)
    ]
    assert [w.wait(timeout=60) for w in writers] == [0, 0, 0]
    recorded = Baseline.load(path)
    assert set(recorded.cases) == {f"w{k}-{i}" for k in range(3) for i in range(6)}
    assert not list(tmp_path.glob(".pytest.sim.json.*"))  # no temp files left behind


def test_baseline_store_rerecords_changed_cases_and_other_backends(tmp_path):
    class FakeCase:
        def __init__(self, cid, key):
            self.id, self.key, self.source = cid, key, "f.toml"

    recorded = []

    def record(cases):
        recorded.append([c.id for c in cases])
        return Baseline(
            backend={"kind": "sim"},
            corpus={"cases": {}, "files": ["f.toml"]},
            deterministic=True,
            repeats=3,
            cases={c.id: CaseBaseline(id=c.id, key=c.key, op="add", status="ok") for c in cases},
        )

    store = BaselineStore(tmp_path / "b.json")
    store.ensure([FakeCase("a", "k1"), FakeCase("b", "k1")], {"kind": "sim"}, record)
    store.ensure([FakeCase("a", "k1")], {"kind": "sim"}, record)  # nothing missing
    store.ensure([FakeCase("a", "k2")], {"kind": "sim"}, record)  # changed case
    store.ensure([FakeCase("b", "k1")], {"kind": "cann"}, record)  # another backend: afresh
    assert recorded == [["a", "b"], ["a"], ["b"]]
    assert set(Baseline.load(tmp_path / "b.json").cases) == {"b"}


# -- the example module, -p stress, real faults ---------------------------------------------
def test_example_module_passes_on_the_simulator(pytester):
    shutil.copy(ROOT / "examples" / "test_my_operator.py", pytester.path)
    result = pytester.runpytest("-rs", *FAST)
    result.assert_outcomes(passed=8, skipped=1)
    result.stdout.fnmatch_lines(["*SKIPPED*needs a real Ascend NPU*"])


def test_dash_p_stress_loads_the_plugin_without_autoload(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.stress_case(op="add", shape=[2, 2], seed=3)
        def test_x(stress_case_item, stress_device):
            assert stress_device.device_id == 0
        """
    )
    result = pytester.runpytest_subprocess("-p", "stress", "--strict-markers", *FAST[:4])
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["stress: backend sim*"])


def _known_faults() -> list[str]:
    from stress.acl.backend import discover

    lib = ctypes.CDLL(str(discover("sim").ascendcl))
    if not hasattr(lib, "aclsimKnownFaults"):
        return []
    lib.aclsimKnownFaults.restype = ctypes.c_char_p
    return [f for f in (lib.aclsimKnownFaults() or b"").decode().split(",") if f]


CONTAMINATION_FAULTS = ("tiling-race", "stale-tail")  # both show in the interleaved phase


def test_a_simulator_fault_fails_the_shipped_corpus_with_a_readable_message(pytester):
    """`pytest -m stress` over shipped corpus cases under a cross-call fault of the simulator
    (guarded: skipped while the simulator has none of those faults)."""
    known = _known_faults()
    fault = next((f for f in CONTAMINATION_FAULTS if f in known), None)
    if fault is None:
        skip_or_fail(f"the simulator has none of {CONTAMINATION_FAULTS} (known: {known or 'none'})")
    pytester.makepyfile(
        test_inner_fault="""
        import pytest

        @pytest.mark.stress
        @pytest.mark.stress_case("base-a", "base-b", "small-c-fp16")
        def test_mix(stress_run):
            stress_run(phases=("serial", "interleaved"))
        """
    )
    env_before = os.environ.get("ACLSIM_FAULTS")
    os.environ["ACLSIM_FAULTS"] = fault  # read at aclInit: needs a fresh process
    try:
        result = pytester.runpytest_subprocess(
            "-m", "stress", "--stress-corpus", str(ROOT / "corpus" / "mhc.toml"),
            "--stress-seed", "1",
        )  # fmt: skip
    finally:
        if env_before is None:
            os.environ.pop("ACLSIM_FAULTS")
        else:
            os.environ["ACLSIM_FAULTS"] = env_before
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *StressFailure: stress run found cross-call-contamination on device 0*",
            "E *interleaved: * MISMATCH_*",
            "E *replay:  *",
            "FINDING test_inner_fault.py::test_mix *cross-call-contamination*",
        ]
    )
    assert f"ACLSIM_FAULTS={fault}" in result.stdout.str()  # the replay command keeps the fault


def test_baseline_store_subset_is_a_self_contained_snapshot(tmp_path):
    full = Baseline(
        backend={"kind": "sim"},
        corpus={"cases": {}, "files": []},
        deterministic=True,
        repeats=3,
        cases={c: _case_baseline(c) for c in ("x", "y", "z")},
    )

    class FakeCase:
        def __init__(self, cid):
            self.id, self.key, self.source = cid, f"key-{cid}", "f.toml"

    snap = BaselineStore.subset(full, [FakeCase("y")])
    path = snap.save(tmp_path / "snap.json")
    assert set(Baseline.load(path).cases) == {"y"}
