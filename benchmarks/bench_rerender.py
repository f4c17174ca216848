"""Re-render time of ``aclnn-stress report DIR`` on a large journal (the journal read, checked
and graded a line at a time; report.json + report.md, and report.html with ``--html``).

A synthetic journal (:mod:`stress.htmlreport.synthetic`) of ``--calls`` calls is written once;
:func:`stress.report.writers.write_reports` then re-renders it ``--repeat`` times and the
median is reported. ``--src DIR`` times the ``stress`` package of another source tree (e.g. a
``git archive`` of an earlier commit) on the same journal: compare two trees in one run, on
one machine, under one load.

    .venv/bin/python benchmarks/bench_rerender.py [--calls 200000] [--repeat 3] [--src DIR]

Prints one JSON object (``--out FILE`` also writes it).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from machine import machine_state


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--html", action="store_true", help="render report.html too")
    ap.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--journal", type=Path, help="an existing run dir (no synthetic one)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    import stress
    from stress.htmlreport.synthetic import write_synthetic_run
    from stress.report.writers import write_reports

    with tempfile.TemporaryDirectory() as tmp:
        run = args.journal or Path(tmp) / "run"
        if args.journal is None:
            write_synthetic_run(run, args.calls)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            report = write_reports(run, html=args.html)
            times.append(time.perf_counter() - t0)
        result = {
            "src": str(Path(stress.__file__).parent.parent),
            "calls": report.calls,
            "journal_mb": round((run / "results.jsonl").stat().st_size / 2**20, 1),
            "html": args.html,
            "seconds_median": round(statistics.median(times), 3),
            "seconds": [round(t, 3) for t in times],
            "python": platform.python_version(),
            "machine": machine_state(),
        }
    print(json.dumps(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
