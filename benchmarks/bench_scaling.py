"""Scaling: generated corpora of N cases under one fixed --budget.

For each N, a corpus of N generated cases (``aclnn-stress corpus generate``), its baseline
recorded first (not timed: it is a one-off per corpus), then ``aclnn-stress run --budget S``
with the phases that scale with N (serial, shuffled, isolated, interleaved, mixed; no control).
Per N: wall time of the run, seconds per phase, pair coverage (report.json ``coverage``), peak
RSS of the run and its phase children (``resource.getrusage(RUSAGE_CHILDREN)`` in a fresh
wrapper process per N, so the maximum is this N's) and the peak of each role in the run's
process tree (session, fork server, phase children: :class:`RoleRss`), and the corpus bytes
(RSS should grow at most linearly in them).

Full run (issue #15):
    .venv/bin/python benchmarks/bench_scaling.py --sizes 10,30,100,300 --budget 20
Writes ``benchmarks/results/scaling.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

from machine import machine_state, with_end_load

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "stress"]
PHASES = "serial,shuffled,isolated,interleaved,mixed"


def one(n: int, budget: float, op: str, work: Path) -> dict:
    """Generate, record, run one N (called in a wrapper process: its children are this N's)."""
    corpus = work / f"{op}-{n}.toml"
    gen = [*CLI, "corpus", "generate", "--op", op, "--count", str(n), "--seed", "1"]
    if op == "add":
        gen += ["--max-elements", "4096"]
    subprocess.run([*gen, "--out", str(corpus), "--force"], check=True, capture_output=True)
    base = work / f"base-{n}.json"
    t0 = time.monotonic()
    subprocess.run(
        [*CLI, "baseline", "record", "--corpus", str(corpus), "--out", str(base)],
        check=True,
        capture_output=True,
    )
    record_s = time.monotonic() - t0
    out = work / f"run-{n}"
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [*CLI, "run", "--corpus", str(corpus), "--baseline", str(base), "--budget", str(budget),
         "--phases", PHASES, "--seed", "1", "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    roles = RoleRss(proc.pid)
    watcher = threading.Thread(target=roles.watch, args=(proc,), daemon=True)
    watcher.start()
    proc.communicate()
    watcher.join()
    wall = time.monotonic() - t0
    report = json.loads((out / "report.json").read_text())
    rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {
        "n": n,
        "exit": proc.returncode,
        "diagnosis": report["diagnosis"],
        "corpus_bytes": corpus.stat().st_size,
        "baseline_record_s": round(record_s, 2),
        "wall_s": round(wall, 2),
        "phases": {
            p["name"] + (f" [{p['variant']}]" if p.get("variant") else ""): round(p["seconds"], 2)
            for p in report["phases"]
        },
        "calls": report["calls"],
        "coverage": report.get("coverage", {}),
        "peak_rss_mib": round(rss_kib / 1024, 1),
        "peak_rss_by_role_mib": roles.peaks(),
    }


#: The process tree of a run, by depth below the CLI process.
ROLES = ("session", "fork server", "phase children")


class RoleRss:
    """Peak resident memory of each role of a run's process tree (the session, the fork server,
    the phase children), from each process's ``VmHWM`` (its own high-water mark) read every
    20 ms while the run lasts: the attribution ``ru_maxrss`` of the whole tree cannot give.
    Pages a forked process shares with its parent count in both (RSS, not PSS)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.peak = dict.fromkeys(ROLES, 0)

    def watch(self, proc: subprocess.Popen) -> None:
        while proc.poll() is None:
            for pid, depth in self._tree():
                role = ROLES[min(depth, len(ROLES) - 1)]
                self.peak[role] = max(self.peak[role], _hwm_kib(pid))
            time.sleep(0.02)

    def _tree(self) -> list[tuple[int, int]]:
        children: dict[int, list[int]] = defaultdict(list)
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                children[int(stat[1])].append(int(entry.name))
        found, frontier = [(self.root, 0)], [(self.root, 0)]
        while frontier:
            pid, depth = frontier.pop()
            below = [(child, depth + 1) for child in children.get(pid, ())]
            found += below
            frontier += below
        return found

    def peaks(self) -> dict[str, float]:
        return {role: round(kib / 1024, 1) for role, kib in self.peak.items()}


def _hwm_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _table(rows: list[dict], budget: float) -> str:
    # a phase run under both stream policies is two columns ("isolated [stream=shared]")
    order = PHASES.split(",")
    keys = {p for r in rows for p in r["phases"]}
    phases = sorted(keys, key=lambda p: (order.index(p.split(" [")[0]), p))
    lines = [
        f"Generated corpora under `--budget {budget:g}` (phases {PHASES}; baseline recorded "
        "first, not timed).",
        "",
        "| N | corpus KiB | run wall s | "
        + " | ".join(f"{p} s" for p in phases)
        + " | serial / shuffled / isolated cases run | interleaved pairs run / total (min "
        "partners) | mixed pairs run / total (min; target) | PCT schedules | peak RSS MiB | "
        "session / fork server / phase child peak MiB |",
        "|---:|---:|---:|" + "---:|" * len(phases) + "---|---|---|---:|---:|---|",
    ]
    for r in rows:
        ci = r["coverage"].get("interleaved", {})
        cm = r["coverage"].get("mixed", {})
        cases = " / ".join(
            str(r["coverage"].get(p, {}).get("cases_run", "—"))
            for p in ("serial", "shuffled", "isolated")
        )
        lines.append(
            f"| {r['n']} | {r['corpus_bytes'] / 1024:.1f} | {r['wall_s']:.1f} | "
            + " | ".join(f"{r['phases'].get(p, 0):.1f}" for p in phases)
            + f" | {cases} of {r['n']}"
            + f" | {ci.get('pairs_run')} / {ci.get('pairs_total')} ({ci.get('min_partners')}) | "
            f"{cm.get('pairs_run')} / {cm.get('pairs_total')} ({cm.get('min_partners')}; "
            f"{cm.get('target')}) | "
            f"{ci.get('schedules')} | {r['peak_rss_mib']} | "
            + " / ".join(str(v) for v in r.get("peak_rss_by_role_mib", {}).values())
            + " |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,30,100,300")
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--op", default="add", choices=("add", "mhc_pre_sinkhorn_backward"))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the wrapper of one N
    ap.add_argument("--work", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.budget, args.op, Path(args.work))))
        return 0
    state = machine_state()
    rows = []
    with tempfile.TemporaryDirectory(prefix="scaling-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            proc = subprocess.run(
                [sys.executable, __file__, "--one", str(n), "--budget", str(args.budget),
                 "--op", args.op, "--work", tmp],
                capture_output=True, text=True, check=True, cwd=ROOT,
            )  # fmt: skip
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"budget_s": args.budget, "op": args.op, "sizes": args.sizes, "rows": rows}
    doc["machine"] = with_end_load(state)
    (out / "scaling.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out / "scaling.md").write_text(_table(rows, args.budget))
    print(_table(rows, args.budget), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
