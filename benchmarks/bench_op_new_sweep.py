"""``op new`` over every simulator header: how many skeletons record and run clean as written.

For every function of ``stress/sim/src/include/aclnnop/aclnn_*.h`` (aclnn_util.h declares
none), in a temporary folder: ``op new HEADER --function F -o F.toml``, ``baseline record
--corpus F.toml --control none``, ``run --corpus F.toml --baseline F.json --budget SECONDS
--phases serial,mixed --control none``. Prints one line per function (exit codes, diagnosis)
and the totals; ``--json FILE`` writes them (benchmarks/results/op_new_sweep.json holds the
numbers before and after the skeleton's header rules).

    .venv/bin/python benchmarks/bench_op_new_sweep.py [--budget 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIM = ROOT / "stress" / "sim" / "src" / "include" / "aclnnop"
CLI = [sys.executable, "-m", "stress"]


def _one(tmp: Path, header: str, function: str, budget: str) -> dict:
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=tmp, check=False)

    path, base, out = tmp / f"{function}.toml", tmp / f"{function}.json", tmp / f"out-{function}"
    new = cli("op", "new", f"aclnnop/{header}", "--function", function, "-o", str(path))
    if new.returncode:
        return {"function": function, "new": new.returncode, "error": new.stderr.strip()}
    rec = cli("baseline", "record", "--corpus", str(path), "--control", "none", "--out", str(base))
    run = cli("run", "--corpus", str(path), "--control", "none", "--baseline", str(base),
              "--budget", budget, "--phases", "serial,mixed", "--out", str(out),
              "--quiet")  # fmt: skip
    report = out / "report.json"
    diagnosis = json.loads(report.read_text())["diagnosis"] if report.is_file() else None
    return {"function": function, "record": rec.returncode, "run": run.returncode,
            "diagnosis": diagnosis}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", default="3", help="run --budget (seconds, default 3)")
    ap.add_argument("--json", type=Path, help="write the rows and totals here")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from stress.ops.header import read_header

    start, rows = time.monotonic(), []
    headers = [h for h in sorted(SIM.glob("aclnn_*.h")) if h.name != "aclnn_util.h"]
    with tempfile.TemporaryDirectory() as tmp:
        for h in headers:
            for op in read_header(h).ops:
                rows.append(_one(Path(tmp), h.name, op.name, args.budget))
                print(json.dumps(rows[-1]), flush=True)
    clean = sum(r.get("run") == 0 and r.get("record") == 0 for r in rows)
    seconds = round(time.monotonic() - start, 1)
    totals = {"headers": len(headers), "functions": len(rows), "clean": clean,
              "not_clean": len(rows) - clean, "seconds": seconds}  # fmt: skip
    print(json.dumps(totals))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, **totals}, indent=2) + "\n")
    return 0 if clean == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
