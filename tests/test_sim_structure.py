"""The simulator's C sources keep their shape: no file over 400 lines, and no call cycle between
files (a file calls into another when its object file leaves undefined a global symbol the other
defines: the file-level call graph, read with ``nm`` from each source compiled on its own)."""

from __future__ import annotations

import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from stress.sim import _build

MAX_LINES = 400


def _rel(path: Path) -> str:
    return path.relative_to(_build.SRC_DIR).as_posix()


def test_no_c_file_over_the_line_limit():
    sizes = {_rel(p): len(p.read_text().splitlines()) for p in _build.source_files()}
    assert sizes, "no simulator sources found"
    too_long = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not too_long, f"split these files (at most {MAX_LINES} lines each): {too_long}"


def _symbols(obj: Path) -> tuple[set[str], set[str]]:
    """(defined, undefined) global symbols of one object file."""
    out = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    defined: set[str] = set()
    undefined: set[str] = set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == "U":
            undefined.add(fields[1])
        elif len(fields) == 3 and fields[1] in "TDBRVWG":  # global code and data
            defined.add(fields[2])
    return defined, undefined


def _call_graph(objdir: Path) -> dict[str, set[str]]:
    """file -> the files it calls into (or whose data it uses), from the compiled objects."""
    src = _build.SRC_DIR
    cc = _build._compiler()
    flags = [
        "-O0",
        "-std=gnu11",
        "-pthread",
        "-fPIC",
        "-w",
        "-Wno-psabi",
        f"-I{src / _build.INCLUDE_DIR}",
        f"-I{src / _build.INCLUDE_DIR / _build.OP_HEADER_DIR}",
        f"-I{src / _build.INTERNAL_DIR}",
    ]
    sources = [p for p in _build.source_files() if p.suffix == ".c"]

    def compile_one(path: Path) -> tuple[str, Path]:
        obj = objdir / (_rel(path).replace("/", "__") + ".o")
        subprocess.run([*cc, *flags, "-c", str(path), "-o", str(obj)], check=True)
        return _rel(path), obj

    with ThreadPoolExecutor(max_workers=4) as pool:
        objects = dict(pool.map(compile_one, sources))
    symbols = {name: _symbols(obj) for name, obj in objects.items()}
    owner = {sym: name for name, (defined, _) in symbols.items() for sym in defined}
    return {
        name: {owner[s] for s in undefined if s in owner and owner[s] != name}
        for name, (_, undefined) in symbols.items()
    }


def _find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph as a path [a, b, ..., a], or [] when there is none."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_find_cycle_finds_one_and_only_one():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": {"b"}}) == ["b", "b"]


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils nm")
def test_no_call_cycle_between_c_files(tmp_path):
    graph = _call_graph(tmp_path)
    # the graph is real: the operators call into nnopbase, nnopbase into the runtime
    assert "nnopbase/nb_executor.c" in graph["opapi/math/op_binary.c"]
    assert any(dep.startswith("runtime/") for dep in graph["nnopbase/nb_launch.c"])
    cycle = _find_cycle(graph)
    assert not cycle, "call cycle between simulator files: " + " -> ".join(cycle)
