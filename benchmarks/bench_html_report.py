"""Size and speed of report.html for a large run (issue 16: 10 000 calls in < 2 s and < 5 MB).

A synthetic journal (:mod:`stress.htmlreport.synthetic`: serial, interleaved with one failing
pair, mixed on 8 threads) of ``--calls`` calls is written once; ``render_html`` then reads it and
renders the page ``--repeat`` times. A ``gradcheck.json`` of ``--grad-elements`` elements is
added so the matplotlib sweep plots are timed too; the first render (which also pays the lazy
matplotlib import) is reported as ``render_seconds_first``. What a user pays is a cold
process: ``aclnn-stress report DIR`` (interpreter start, imports, grading the journal,
report.json, report.md and report.html) is timed from exec to its exit ``--repeat`` times
(``report_process_seconds``: median, min, max). The time checked is the first render in this
process (template compilation and the lazy matplotlib import included), not the median of the
warm renders, which is reported beside it with its min–max; JUnit XML is timed too.
The exit status is 1 when the first render exceeds ``--max-seconds`` or the page ``--max-mb``.

    .venv/bin/python benchmarks/bench_html_report.py [--calls 10000] [--repeat 5] [--label idle]

The result is written to benchmarks/results/html_report.json (and printed), with the machine
state (load average, nproc) and the command.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import machine_state, with_end_load

from stress.htmlreport import render_html, write_junit
from stress.htmlreport.synthetic import write_synthetic_run

RESULTS = Path(__file__).resolve().parent / "results"


def _times(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def _spread(times: list[float]) -> dict:
    return {
        "median": round(statistics.median(times), 4),
        "min": round(min(times), 4),
        "max": round(max(times), 4),
    }


def _report_process(run: Path) -> None:
    """``aclnn-stress report RUN`` as a fresh process (exit 1: the synthetic run has findings)."""
    proc = subprocess.run(
        [sys.executable, "-m", "stress", "report", str(run)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"aclnn-stress report failed ({proc.returncode}): {proc.stderr[-2000:]}")


def _write_gradcheck(run: Path, n: int) -> None:
    """A gradcheck.json of ``n`` elements (half biased), so the sweep plots are timed too."""
    steps = [0.2, 0.1, 0.05, 0.02, 0.01, 0.005]
    elements = []
    for i in range(n):
        bias = 0.05 * (i % 2)
        g = 1.0 + i
        elements.append(
            {
                "element": f"x[{i}]",
                "backward": g,
                "steps": steps,
                "fd": [g + bias + 0.5 * h * h for h in steps],
                "estimate": g + bias,
                "allowed": 1e-3,
                "verdict": "biased" if bias else "agrees",
                "reason": f"|f*-g| = {bias}",
            }
        )
    doc = {
        "command": "gradcheck",
        "op": "bench",
        "params": {},
        "fd": "synthetic",
        "backward": "synthetic",
        "elements": elements,
        "summary": {"verdict": "biased"},
    }
    (run / "gradcheck.json").write_text(json.dumps(doc))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=10_000)
    ap.add_argument("--cases", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--grad-elements", type=int, default=8, help="gradcheck sweep plots (0: none)")
    ap.add_argument("--max-seconds", type=float, default=2.0)
    ap.add_argument("--max-mb", type=float, default=5.0)
    ap.add_argument("--no-write", action="store_true", help="do not update the result file")
    ap.add_argument("--label", default="", help='machine state label, e.g. "idle"')
    ap.add_argument("--out", default=str(RESULTS), help="html_report.json goes here")
    args = ap.parse_args(argv)
    state = machine_state(args.label)
    with tempfile.TemporaryDirectory(prefix="bench-html-") as tmp:
        run = Path(tmp) / "run"
        journal = write_synthetic_run(run, args.calls, cases=args.cases)
        if args.grad_elements:
            _write_gradcheck(run, args.grad_elements)
        t0 = time.perf_counter()
        page = render_html(run)  # warm-up (template compilation, the lazy matplotlib import)
        first_s = time.perf_counter() - t0
        html_s = _times(lambda: render_html(run), args.repeat)
        junit_s = _times(lambda: write_junit(run, run / "junit.xml"), args.repeat)
        cold_s = _times(lambda: _report_process(run), args.repeat)
        size = page.stat().st_size
        journal_size = journal.stat().st_size
    result = {
        "calls": args.calls,
        "cases": args.cases,
        "journal_bytes": journal_size,
        "html_bytes": size,
        "html_mb": round(size / 1e6, 3),
        "grad_elements": args.grad_elements,
        "render_seconds_first": round(first_s, 4),
        "render_seconds_warm": _spread(html_s),
        "report_process_seconds": _spread(cold_s),
        "junit_seconds": _spread(junit_s),
        "repeat": args.repeat,
        "limits": {"seconds (first render)": args.max_seconds, "mb": args.max_mb},
        "machine": with_end_load(state),
    }
    ok = first_s < args.max_seconds and size / 1e6 < args.max_mb
    result["ok"] = ok
    print(json.dumps(result, indent=1))
    if not args.no_write:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "html_report.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
