"""The package as a user installs it: built into an sdist and a wheel (the wheel from the sdist,
as ``python -m build`` does), installed into a fresh venv outside the checkout, and run from an
empty folder: ``aclnn-stress info``, a short ``run`` of the packaged corpus, ``op list`` and a
pytest file using the plugin's markers. ~15 s of CPU; ``-m "not slow and not wheel"`` deselects it.

How the fresh venv gets its dependencies, without a network or a package index: the wheel is
installed with ``--no-deps`` into ``python -m venv --without-pip``, and one ``.pth`` file adds a
folder of links to exactly the distributions the wheel's ``Requires-Dist`` names, transitively
(resolved in this test's own environment), plus pytest's for the plugin step. Nothing else of
this environment is visible there (not the editable install of the checkout, not the test
extras): an import the metadata does not declare fails the run, as it would for a user; and
``pip check`` in the fresh venv proves every requirement is met by what it sees.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

pytestmark = [pytest.mark.wheel, pytest.mark.xdist_group("wheel")]  # one build under xdist

REPO = Path(__file__).resolve().parents[1]

PLUGIN_TESTS = """
import pytest

@pytest.mark.stress
@pytest.mark.stress_case(op="add", shape=[8, 16], seed=1)
@pytest.mark.stress_case(op="add", shape=[4, 32], other_shape=[32], seed=2)
def test_cases_in_flight_together(stress_run):
    result = stress_run(phases=("serial", "mixed"))
    assert result.ok

@pytest.mark.npu
def test_on_hardware(stress_runtime):
    raise AssertionError("an npu test ran on the simulator")
"""


def _sh(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 180):
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    return done


def _closure(requirements: list[str], extras: frozenset[str] = frozenset()) -> set[str]:
    """The distributions ``requirements`` need, transitively, as installed here."""
    env = default_environment()
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        markers_ok = req.marker is None or any(
            req.marker.evaluate({**env, "extra": e}) for e in (extras | {""})
        )
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        if not markers_ok or name in seen:
            continue
        seen.add(name)
        dist = md.distribution(name)
        todo += [
            r
            for text in dist.requires or []
            if (r := Requirement(text)).marker is None
            or any(r.marker.evaluate({**env, "extra": e}) for e in (req.extras | {""}))
        ]
    return seen


def _link_distributions(names: set[str], into: Path) -> None:
    """Links in ``into`` to each distribution's top-level files and its metadata folder."""
    into.mkdir()
    for name in names:
        dist = md.distribution(name)
        base = Path(dist.locate_file(""))
        tops = {Path(str(f)).parts[0] for f in dist.files or () if not str(f).startswith("..")}
        for top in tops:
            src = base / top
            if src.exists() and not (into / top).exists() and top != "__pycache__":
                (into / top).symlink_to(src)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """(the fresh venv's bin folder, the environment to run it with)."""
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    built = _sh(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(REPO)],
        cwd=tmp,
        env=dict(os.environ),
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheel = next(dist.glob("aclnn_stress-*.whl"))
    assert next(dist.glob("aclnn_stress-*.tar.gz"))
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    for needed in ("stress/corpora/mhc.toml", "stress/corpora/control.toml",
                   "stress/ops/declarations/add.toml", "stress/sim/src/runtime/rt_context.c",
                   "stress/htmlreport/templates/report.html.j2"):  # fmt: skip
        assert needed in names, f"{needed} is not in {wheel.name}"
    requires = [line.split(":", 1)[1].strip() for line in meta.splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line]  # fmt: skip
    deps = tmp / "deps"
    _link_distributions(_closure(requires) | _closure(["pytest"]), deps)

    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})
    Path(purelib, "_aclnn_stress_deps.pth").write_text(f"{deps}\n")
    py = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(py)]
    done = _sh([*pip, "install", "--no-deps", "--no-index", str(wheel)], cwd=tmp, env=os.environ)
    assert done.returncode == 0, done.stderr[-3000:]
    checked = _sh([*pip, "check"], cwd=tmp, env=dict(os.environ))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON", "VIRTUAL"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return venv / "bin", env


@pytest.fixture
def empty(tmp_path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_the_installed_package_is_the_wheel_not_the_checkout(installed, empty):
    bindir, env = installed
    code = "import stress, sys; print(stress.__file__); print(sys.path)"
    done = _sh([str(bindir / "python"), "-c", code], cwd=empty, env=env)
    assert done.returncode == 0, done.stderr
    where = Path(done.stdout.splitlines()[0])
    assert where.is_relative_to(bindir.parent) and not where.is_relative_to(REPO)
    assert str(REPO) not in done.stdout.splitlines()[1]


def test_info_names_the_simulator(installed, empty):
    bindir, env = installed
    done = _sh([str(bindir / "aclnn-stress"), "info"], cwd=empty, env=env)
    assert done.returncode == 0, done.stderr
    assert "(simulator)" in done.stdout and "devices" in done.stdout


def test_a_short_run_of_the_packaged_corpus_is_clean(installed, empty):
    """The packaged corpus (its variants included) records its baseline on first use and runs
    clean, and the reports render from the packaged templates. Two phases, a serial and a
    concurrent one: what this proves is the package, not the protocol (every phase of the
    shipped corpus: tests/test_no_false_positives.py, ``make stress``); all seven phases cost
    ~3x the CPU (26 s against 9 s, loaded 2-core machine, 2026-12-07)."""
    bindir, env = installed
    argv = [str(bindir / "aclnn-stress"), "run", "--budget", "4", "--phases", "serial,mixed"]
    done = _sh(argv, cwd=empty, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    shipped = bindir.parent / "lib"
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("corpus: "))
    assert "the shipped mhc.toml, control.toml from" in line and str(shipped) in line, line
    assert "diagnosis: clean" in done.stdout
    assert list((empty / "baselines").glob("control+mhc.sim.json"))  # recorded on first use
    html = (empty / "stress-out" / "latest" / "report.html").read_text()  # packaged templates
    assert "<title>aclnn-stress: clean (" in html, html[:500]


def test_op_list_reads_the_packaged_simulator_headers(installed, empty):
    bindir, env = installed
    done = _sh([str(bindir / "aclnn-stress"), "op", "list"], cwd=empty, env=env)
    assert done.returncode == 0, done.stderr
    assert "aclnnMhcPreSinkhornBackward" in done.stdout and "aclnnAdd" in done.stdout
    assert str(REPO) not in done.stdout


def test_a_pytest_file_with_the_plugins_markers(installed, empty):
    bindir, env = installed
    (empty / "test_mine.py").write_text(PLUGIN_TESTS)
    argv = [str(bindir / "python"), "-m", "pytest", "-q", "-rs", "--stress-duration", "0.2"]
    done = _sh(argv, cwd=empty, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed, 1 skipped" in done.stdout, done.stdout[-2000:]


def test_the_deps_folder_holds_no_test_extra(installed):
    """The honesty of the set-up above: hypothesis is a runtime dependency now, ruff is not."""
    bindir, env = installed
    done = _sh([str(bindir / "python"), "-c", "import ruff"], cwd=bindir, env=env)
    assert done.returncode != 0 and "No module named 'ruff'" in done.stderr
    assert shutil.which("aclnn-stress", path=str(bindir)) is not None
