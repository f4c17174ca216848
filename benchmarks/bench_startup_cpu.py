"""CPU the CLI's process spends from exec to letting ``run``'s first step go, per source tree.

Wall times of a start-up are the load's on the shared 2-core machine; the CPU a process uses
moves much less with it. For each tree ``aclnn-stress run`` (the detection benchmark's corpus
and flags, against a baseline recorded on the faulty backend) runs under
benchmarks/_startup_probe.py, which stops it at the go of its first step (no call is made) and
prints the process's CPU seconds when its fork server had started, when ``Session.run`` began
and at the go (the parent alone: the fork server and the held child are other processes), and
which heavy modules it had imported. The trees take turns run by run, one untimed run each
first; the medians go under ``--label`` into ``--json``.

A tree ``--tree NAME=DIR`` (``DIR/stress``: e.g. ``git archive REV stress | tar -x -C DIR``)
gets its bytecode written first, as an installed package has it (benchmarks/machine.py
``precompile``); ``--raw NAME=DIR`` runs one whose ``stress`` has no ``__pycache__`` as it is
(under ``PYTHONDONTWRITEBYTECODE=1`` every module is then compiled in every process).

    .venv/bin/python benchmarks/bench_startup_cpu.py --tree main=/tmp/main --tree branch=. \
        --raw branch-raw=/tmp/raw --runs 7 --label loaded
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import machine_state, precompile, with_end_load

REPO = Path(__file__).resolve().parents[1]
PROBE = Path(__file__).with_name("_startup_probe.py")
CORPUS = ["corpus/mhc.toml", "corpus/pool/mul.toml", "corpus/pool/softmax.toml"]
CONTROL = "corpus/control.toml"
MARKS = ("fork server started", "Session.run", "go")
HEAVY = ("rich", "jinja2", "matplotlib", "hypothesis", "pycparser", "pcpp", "tomli_w")


def _corpus_args() -> list[str]:
    return [a for c in CORPUS for a in ("--corpus", c)] + ["--control", CONTROL]


def _env(tree: Path, fault: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "ACLSIM_FAULTS": fault}
    return {**env, "PYTHONDONTWRITEBYTECODE": "1"}  # a --raw tree stays without bytecode


def _record(tree: Path, fault: str, out: Path) -> None:
    cmd = [sys.executable, "-m", "stress", "baseline", "record", *_corpus_args(), "--out", str(out)]
    subprocess.run(cmd, env=_env(tree, fault), cwd=REPO, check=True, capture_output=True)


def _once(tree: Path, fault: str, baseline: Path, out: Path) -> dict:
    cmd = [sys.executable, str(PROBE), "run", "--stream", "both", "--duration", "3"]
    cmd += ["--seed", "1", *_corpus_args(), "--baseline", str(baseline)]
    cmd += ["--shrink-budget", "0", "--out", str(out)]
    done = subprocess.run(cmd, env=_env(tree, fault), cwd=REPO, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    marks = json.loads(lines[-1]) if lines else {}
    if "go" not in marks:
        raise SystemExit(f"{tree}: the run did not reach its first step's go:\n{done.stderr}")
    return marks


def measure(trees: dict[str, Path], runs: int, fault: str) -> dict:
    rows: dict[str, list[dict]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="startup-cpu-") as tmp:
        baseline = Path(tmp) / "baseline.json"
        _record(next(iter(trees.values())), fault, baseline)
        for k in range(runs + 1):  # the first round untimed (caches, page cache)
            for name, tree in trees.items():
                marks = _once(tree, fault, baseline, Path(tmp) / f"out-{name}-{k}")
                if k:
                    rows[name].append(marks)
    result = {}
    med = statistics.median
    for name, marks in rows.items():
        mods = marks[0]["modules"]
        result[name] = {
            **{f"{m}_cpu_s": [round(r[m], 4) for r in marks] for m in MARKS},
            **{f"{m}_median_cpu_s": round(med(r[m] for r in marks), 3) for m in MARKS},
            "heavy_imported_at_go": sorted({m.split(".")[0] for m in mods} & set(HEAVY)),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    p.add_argument("--raw", action="append", default=[], metavar="NAME=DIR")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--fault", default="tiling-race")
    p.add_argument("--label", default="now")
    p.add_argument("--json", default=str(REPO / "benchmarks/results/startup_cpu.json"))
    args = p.parse_args(argv)
    trees: dict[str, Path] = {}
    bytecode: dict[str, object] = {}
    for text, raw in [(t, False) for t in args.tree] + [(t, True) for t in args.raw]:
        name, sep, folder = text.partition("=")
        tree = Path(folder).resolve()
        if not sep or not (tree / "stress" / "__init__.py").is_file():
            p.error(f"--tree/--raw must be NAME=DIR with DIR/stress/__init__.py, got {text!r}")
        if raw and any((tree / "stress").rglob("__pycache__")):
            p.error(f"--raw {text}: {tree}/stress holds __pycache__ folders")
        trees[name] = tree
        bytecode[name] = "none (PYTHONDONTWRITEBYTECODE=1)" if raw else precompile(tree)
    if not trees or args.runs < 3:
        p.error("give at least one --tree or --raw, and --runs >= 3")
    state = machine_state(args.label)
    result = measure(trees, args.runs, args.fault)
    doc = {
        "machine": with_end_load(state),
        "how": "CPU seconds (user + system) of the aclnn-stress process from exec, at the marks; "
        "benchmarks/_startup_probe.py; the trees in turn, one untimed round first",
        "fault": args.fault,
        "trees": {name: str(t) for name, t in trees.items()},
        "bytecode": bytecode,
        "results": result,
    }
    path = Path(args.json)
    data = json.loads(path.read_text()) if path.exists() else {}
    data[args.label] = doc
    path.write_text(json.dumps(data, indent=1) + "\n")
    for name, r in result.items():
        cols = "  ".join(f"{m} {r[f'{m}_median_cpu_s']:.3f}" for m in MARKS)
        print(f"{name:<12} median CPU s: {cols}  heavy at go: {r['heavy_imported_at_go']}")
    print(f"wrote {path} ({args.label})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
