"""The naive harness's own baseline, for a fault the framework finds while recording its own.

When ``aclnn-stress baseline record`` refuses to write the baseline (order-dependence: a case
gives another result in another case's recycled memory than at fresh addresses) the naive
harness of benchmarks/detection.py has no baseline to check against. A naive user records one
the plain way: every case run serially and its outputs kept, with no second pass to compare.
This script does exactly the framework's serial recording (every case at fresh addresses, the
same digests and tolerances) without that second pass — the kindest baseline the naive side
could have: it holds the fault-free results, so any difference the harness later sees is real.

    ACLSIM_FAULTS=stale-tail python benchmarks/naive_baseline.py --corpus A.toml ... --out B.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stress import acl
from stress.corpus import load_corpus
from stress.engine.replay import baseline as recorder


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="sim")
    args = ap.parse_args(argv)
    rt = acl.runtime(args.backend)
    cases = load_corpus(args.corpus)
    with mock.patch.object(recorder, "check_order", lambda *a, **k: None):  # no second pass
        baseline = recorder.record_baseline(rt, cases)
    print(f"naive baseline: {baseline.save(args.out)} ({len(cases)} cases)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
