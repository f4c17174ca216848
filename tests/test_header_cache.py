"""The header reader's cache (stress/ops/header_cache.py): a header is read again when its text,
a file it includes, a file where an include was not found, the include folders or the defines
change, never when none did; errors are never cached."""

from __future__ import annotations

import subprocess
import sys

import pytest

from stress.errors import ConfigError
from stress.ops import header, header_cache

_OP = (
    "{api} aclnnStatus aclnnCustomGetWorkspaceSize(const aclTensor *x, aclTensor *{out},\n"
    "    uint64_t *workspaceSize, aclOpExecutor **executor);\n"
    "{api} aclnnStatus aclnnCustom(void *w, uint64_t s, aclOpExecutor *e, aclrtStream stream);\n"
)


@pytest.fixture
def reads(tmp_path, monkeypatch):
    """The cache in ``tmp_path``; the list of headers the C reader really parsed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    parsed: list[str] = []
    real = header.read_header_text

    def counting(text, source, *args, **kw):
        parsed.append(source)
        return real(text, source, *args, **kw)

    monkeypatch.setattr(header, "read_header_text", counting)
    return parsed


def _write(tmp_path, out="y", api="VENDOR_API"):
    (tmp_path / "inc").mkdir(exist_ok=True)
    (tmp_path / "inc" / "vendor_api.h").write_text("#define VENDOR_API\n")
    path = tmp_path / "aclnn_custom.h"
    path.write_text('#include "vendor_api.h"\n' + _OP.format(api=api, out=out))
    return path


def _params(info):
    return [(p.name, p.role) for p in info.ops[0].params]


def test_an_unchanged_header_is_read_once(tmp_path, reads):
    path = _write(tmp_path)
    first = header_cache.read_header(path, [tmp_path / "inc"])
    again = header_cache.read_header(path, [tmp_path / "inc"])
    assert again == first and len(reads) == 1
    assert again == header.read_header(path, [tmp_path / "inc"])  # what the reader says


def test_a_changed_header_include_or_option_is_read_again(tmp_path, reads):
    path = _write(tmp_path)
    inc = [tmp_path / "inc"]
    header_cache.read_header(path, inc)
    _write(tmp_path, out="z")  # the header's text
    assert _params(header_cache.read_header(path, inc)) == [("x", "input"), ("z", "output")]
    (tmp_path / "inc" / "vendor_api.h").write_text("#define VENDOR_API \n")  # an include
    header_cache.read_header(path, inc)
    header_cache.read_header(path, defines=["VENDOR_API="])  # the folders and defines
    assert len(reads) == 4


def test_a_file_appearing_where_an_include_was_not_found_is_read(tmp_path, reads):
    path = _write(tmp_path)
    with pytest.raises(ConfigError):  # vendor_api.h not found: VENDOR_API unknown
        header_cache.read_header(path)
    info = header_cache.read_header(path, defines=["VENDOR_API="])
    (tmp_path / "vendor_api.h").write_text("#define VENDOR_API\n")  # beside the header now
    assert header_cache.read_header(path, defines=["VENDOR_API="]) == info
    assert len(reads) == 3  # the error was not cached, the new file was seen


def test_a_cached_corpus_load_imports_no_c_reader(tmp_path):
    code = (
        "import sys\nfrom stress.corpus import preload\n"
        "preload.load(['corpus/mhc.toml', 'corpus/control.toml'], ())\n"
        "print(sorted(m for m in ('pcpp', 'pycparser') if m in sys.modules))\n"
    )
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        for _ in range(2)
    ]
    assert [r.stdout.strip() for r in runs] == ["['pcpp', 'pycparser']", "[]"], runs[1].stderr
