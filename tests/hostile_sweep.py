"""The hostile-input sweep of issue #19, by hand, as one script (not a pytest module).

Every row starts the real CLI (``python -m stress``) the way a user or a CI job would — wrong
numbers, files that are FIFOs, /dev/zero, directories, non-UTF-8 or nested 100000 deep, broken
baselines and CANN installs, out dirs that cannot be made, a full disk, a closed stdout, kills
and two runs at once — and checks what issue #19 promises: the stated exit code, and for exit 2
exactly one line on stderr; never a traceback. It prints a table (row, exit code, first line of
stderr, pass/fail) and exits 1 when a row fails.

    .venv/bin/python tests/hostile_sweep.py            # from the repository root, < 3 min
    .venv/bin/python tests/hostile_sweep.py -k baseline -v

The single-purpose tests of the same promises are tests/test_hostile_cli.py and
tests/test_fuzz_inputs.py (docs/reliability.md); this sweep is the done-when check of #19.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _hostile_proc import Files, Outcome, Row, cli, limited, unprivileged_prefix
from _hostile_rows import rows


# -- judging ---------------------------------------------------------------------------------------
def judge(row: Row, got: Outcome) -> str:
    """'' when the row holds, else why not."""
    text = got.stdout + got.stderr
    if "Traceback" in text:
        return "traceback"
    if got.code not in row.expect:
        return got.problem or f"exit {got.code}, wanted {sorted(row.expect)}"
    if got.problem:
        return got.problem
    lines = got.stderr.strip().splitlines()
    if row.one_line(got.code) and len(lines) != 1:
        return f"{len(lines)} lines on stderr"
    if row.needle and row.needle not in text:
        return f"does not mention {row.needle!r}"
    return ""


def attempt(row: Row, f: Files, drop_root: list[str] | None) -> tuple[Row, Outcome, float]:
    started = time.monotonic()
    if row.custom is not None:
        got = row.custom(f)
    else:
        prefix = drop_root if row.unprivileged and drop_root else []
        got = cli(
            row.argv,
            f.root,
            env=row.env,
            timeout=row.timeout,
            preexec_fn=limited(row.limits),
            prefix=prefix,
        )
    return row, got, time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="", help="only rows whose name contains one of A,B,...")
    parser.add_argument("-j", "--jobs", type=int, default=3, help="rows at once (default 3)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print failing output")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    opts = parser.parse_args(argv)
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="aclnn-hostile-"))
    root.chmod(0o755)  # the unprivileged rows must reach it
    try:
        files = Files(root)
        files.prepare()
        drop_root = unprivileged_prefix()
        todo = [r for r in rows(files, drop_root) if any(k in r.name for k in opts.k.split(","))]
        with ThreadPoolExecutor(max(1, opts.jobs)) as pool:
            results = list(pool.map(lambda r: attempt(r, files, drop_root), todo))
    finally:
        if not opts.keep:
            for sub in root.rglob("*"):
                if sub.is_dir() and not sub.is_symlink():
                    sub.chmod(0o755)
            shutil.rmtree(root, ignore_errors=True)
    return report(results, time.monotonic() - started, opts.verbose, drop_root is None)


def report(
    results: list[tuple[Row, Outcome, float]], wall: float, verbose: bool, no_ro: bool
) -> int:
    failed = 0
    width = max(len(r.name) for r, _, _ in results)
    print(f"{'row':<{width}}  exit  {'s':>5}  result  first line of stderr")
    for row, got, seconds in results:
        why = judge(row, got)
        failed += bool(why)
        first = (got.stderr.strip().splitlines() or [""])[0][:110]
        verdict = "pass" if not why else f"FAIL ({why})"
        print(f"{row.name:<{width}}  {got.code:>4}  {seconds:5.1f}  {verdict}  {first}")
        if why and verbose:
            print("    stdout:", got.stdout[-1500:], "\n    stderr:", got.stderr[-3000:])
    if no_ro:
        print("(read-only rows skipped: root without setpriv, or a checkout uid 65534 cannot read)")
    print(f"{len(results) - failed}/{len(results)} rows pass in {wall:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
