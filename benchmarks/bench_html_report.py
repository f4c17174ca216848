"""Size and speed of report.html for a large run (issue 16: 10 000 calls in < 2 s and < 5 MB).

A synthetic journal (:mod:`stress.htmlreport.synthetic`: serial, interleaved with one failing
pair, mixed on 8 threads) of ``--calls`` calls is written once; ``render_html`` then reads it and
renders the page ``--repeat`` times. The time reported is the median of those, journal parsing,
grading and templating included (what ``aclnn-stress report DIR`` pays); JUnit XML is timed too.
The exit status is 1 when the median exceeds ``--max-seconds`` or the page ``--max-mb``.

    .venv/bin/python benchmarks/bench_html_report.py [--calls 10000] [--repeat 5]

The result is written to benchmarks/results/html_report.json (and printed).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stress.htmlreport import render_html, write_junit
from stress.htmlreport.synthetic import write_synthetic_run

RESULTS = Path(__file__).resolve().parent / "results" / "html_report.json"


def _median_s(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=10_000)
    ap.add_argument("--cases", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--max-seconds", type=float, default=2.0)
    ap.add_argument("--max-mb", type=float, default=5.0)
    ap.add_argument("--no-write", action="store_true", help="do not update the result file")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-html-") as tmp:
        run = Path(tmp) / "run"
        journal = write_synthetic_run(run, args.calls, cases=args.cases)
        page = render_html(run)  # warm-up (template compilation)
        html_s = _median_s(lambda: render_html(run), args.repeat)
        junit_s = _median_s(lambda: write_junit(run, run / "junit.xml"), args.repeat)
        size = page.stat().st_size
        journal_size = journal.stat().st_size
    result = {
        "calls": args.calls,
        "cases": args.cases,
        "journal_bytes": journal_size,
        "html_bytes": size,
        "html_mb": round(size / 1e6, 3),
        "render_seconds_median": round(html_s, 4),
        "junit_seconds_median": round(junit_s, 4),
        "repeat": args.repeat,
        "limits": {"seconds": args.max_seconds, "mb": args.max_mb},
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    ok = html_s < args.max_seconds and size / 1e6 < args.max_mb
    result["ok"] = ok
    print(json.dumps(result, indent=1))
    if not args.no_write:
        RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
