"""Check that the benchmark figures quoted in README.md and docs/ come from result files.

A quoted figure lives in a block that names its result file(s):

    <!-- figures: benchmarks/results/detection.md benchmarks/results/detection.json -->
    ... prose and tables with numbers ...
    <!-- /figures -->

Every number in the block (outside `inline code`, which holds commands and options) must
appear in one of the named files, at the precision quoted (``1.59`` matches ``1.5928``, ``5.3``
and ``5.2`` both match ``5.25``; digit groups such as ``10 000`` are read as one number). Every
``benchmarks/results/...`` path that README.md or docs/ mention must exist. Run by ``make lint``;
exit 1 lists each figure that is not found, with its file and line.

A figure in running prose is a Markdown link to its result file, relative to the page as any
link is (``../benchmarks/results/...`` from docs/); every number of the link text must be in
that file, as in a block:

    the slowest call took [0.71 s](benchmarks/results/policies.json) under load

A measurement's marks outside both (``load average 3.9``, ``14.3 s wall``) are reported: a
figure measured under a load names the result file that holds it.

    .venv/bin/python benchmarks/check_figures.py [FILE.md ...]
"""

from __future__ import annotations

import re
import sys
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPEN = re.compile(r"<!--\s*figures:\s*(.+?)\s*-->")
CLOSE = re.compile(r"<!--\s*/figures\s*-->")
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")
GROUPED = re.compile(r"(?<=\d)[ \u202f\u2009](?=\d{3}(?!\d))")
CODE = re.compile(r"`[^`]*`")
RESULT_PATH = re.compile(r"benchmarks/results/[\w./*-]+")
LINK = re.compile(r"\[([^\]]+)\]\(((?:\.\./)*benchmarks/results/[^)\s#]+)\)")
MEASURED = re.compile(r"\bload(?: averages?)? (?:of )?~?\d[\d.]*|(?<![\w.])\d[\d.]* s wall\b")


def numbers(text: str) -> list[str]:
    """The numbers of ``text``, digit groups joined (``10 000`` is ``10000``)."""
    return NUMBER.findall(GROUPED.sub("", text))


def _matches(figure: str, values: list[Decimal]) -> bool:
    places = len(figure.split(".")[1]) if "." in figure else 0
    want = Decimal(figure)
    quantum = Decimal(1).scaleb(-places)
    return any(
        v.quantize(quantum, rounding=r) == want
        for v in values
        if abs(v) < Decimal(10) ** 15
        for r in (ROUND_HALF_EVEN, ROUND_HALF_UP)  # 5.25 quoted as 5.2 or as 5.3
    )


def _values(paths: list[Path]) -> list[Decimal]:
    out = []
    for p in paths:
        for n in numbers(p.read_text(errors="replace")):
            try:
                out.append(Decimal(n))
            except InvalidOperation:
                continue
    return out


def _rel(p: Path) -> Path:
    return p.relative_to(ROOT) if p.is_relative_to(ROOT) else p


def _unfound(figures: str, files: list[Path], values: list[Decimal], where: str) -> list[str]:
    names = ", ".join(str(_rel(f)) for f in files)
    return [
        f"{where}: figure {figure} is not in {names}"
        for figure in numbers(CODE.sub("", figures))
        if not _matches(figure, values)
    ]


def check_links(md: Path, text: str) -> list[str]:
    """Problems of the figures quoted as links to their result file (``[0.71 s](...)``)."""
    problems: list[str] = []
    for m in LINK.finditer(text):
        where = f"{_rel(md)}:{text.count(chr(10), 0, m.start()) + 1}"
        target = (md.parent / m.group(2)).resolve()
        if not target.is_file():
            problems.append(f"{where}: link to {m.group(2)}: no such file from {_rel(md)}")
            continue
        problems += _unfound(m.group(1), [target], _values([target]), where)
    return problems


def check_file(md: Path) -> list[str]:
    """Problems in one Markdown file: figures not found, result paths that do not exist."""
    text = md.read_text()
    problems = check_links(md, text)
    lines = text.splitlines()
    name = _rel(md)
    unlinked = LINK.sub(lambda m: m.group(1), text).splitlines()  # links checked above
    for i, line in enumerate(unlinked, 1):
        for path in RESULT_PATH.findall(line):
            path = path.rstrip(".,;:)")
            if "*" in path:
                found = list(ROOT.glob(path))
            else:
                found = [ROOT / path] if (ROOT / path).exists() else []
            if not found:
                problems.append(f"{name}:{i}: {path} does not exist")
    blanked = LINK.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text).splitlines()
    block: tuple[int, list[Path]] | None = None
    for i, line in enumerate(lines, 1):
        opened = OPEN.search(line)
        if opened:
            files = [ROOT / f for f in opened.group(1).split()]
            missing = [f for f in files if not f.exists()]
            for f in missing:
                problems.append(f"{name}:{i}: figures block names {_rel(f)}: missing")
            block = (i, [f for f in files if f.exists()])
            values = _values(block[1])
            continue
        if CLOSE.search(line):
            block = None
            continue
        if block is None:
            problems += [
                f"{name}:{i}: {m!r} looks measured: quote it in a figures block or as a link"
                for m in MEASURED.findall(CODE.sub("", blanked[i - 1]))
            ]
        if block is None or not block[1]:
            continue
        problems += _unfound(LINK.sub("", line), block[1], values, f"{name}:{i}")
    if block is not None:
        problems.append(f"{name}:{block[0]}: figures block not closed (<!-- /figures -->)")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    files = [Path(a).resolve() for a in args] or [
        ROOT / "README.md",
        *sorted(ROOT.glob("docs/*.md")),
    ]
    problems = [p for f in files for p in check_file(f)]
    for p in problems:
        print(p)
    blocks = sum(len(OPEN.findall(f.read_text())) for f in files)
    links = sum(len(LINK.findall(f.read_text())) for f in files)
    if problems:
        print(f"check_figures: {len(problems)} problem(s) in {len(files)} file(s)")
        return 1
    print(
        f"check_figures: {blocks} figures block(s) and {links} linked figure(s)"
        f" in {len(files)} file(s) match their results"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
