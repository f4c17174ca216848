"""msSanitizer log parser and the findings model (logs written here in the documented format)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stress.errors import ConfigError
from stress.sanitize import Finding, finding_from_json, parse_log, read_jsonl

FIXTURE = Path(__file__).parent / "data" / "tiling_race_run"

MEMCHECK = """\
mssanitizer banner line that is not a finding
====== ERROR: illegel read of size 100
======    at 0x124040017f9c on GM
======    code in add_custom.cpp:52
====== WARNNING: out of bounds of size 256
======    at 0x1240c002e000 on GM when writing data
======    code in add_custom.cpp:84
program output in between
====== ERROR: illegal write of size 32
======    at 0x10 on UB
======    code in matmul_custom.cpp:7
"""

RACECHECK = """\
====== ERROR: Potential RAW hazard detected at GM in kernel_float on device 0:
======    PIPE_MTE2 Write at RAW()+0x0 in block 0 (aiv) at pc current 0xa98 (serialNo:14)
======    #0 /cann/tikcfw/impl/kernel_operator_data_copy_impl.h:58:9
======    #1 add_custom.cpp:41:5
======    PIPE_V Read at RAW()+0x0 in block 0 (aiv) on device 0 at pc current 0xb10 (serialNo:20)
======    #0 add_custom.cpp:498:9
========= ERROR: Potential WAR hazard detected at UB :
=========     PIPE_V Read at RAW()+0xf280 in add_custom.cpp:520
=========     PIPE_MTE3 Write at RAW()+0xf280 in add_custom.cpp:498
"""


def test_memcheck_blocks():
    got = parse_log(MEMCHECK, "memcheck")
    assert [(f.tool, f.kind, f.bytes, f.address, f.alloc_kind) for f in got] == [
        ("memcheck", "illegal read", 100, "0x124040017f9c", "GM"),
        ("memcheck", "out of bounds", 256, "0x1240c002e000", "GM"),
        ("memcheck", "illegal write", 32, "0x10", "UB"),
    ]
    assert [(f.calls[0].file, f.calls[0].line) for f in got] == [
        ("add_custom.cpp", 52), ("add_custom.cpp", 84), ("matmul_custom.cpp", 7)]  # fmt: skip
    assert all(f.source == "mssanitizer" for f in got)


def test_racecheck_blocks_name_both_events():
    raw, war = parse_log(RACECHECK, "racecheck")
    assert (raw.tool, raw.kind, raw.alloc_kind) == ("racecheck", "RAW", "GM")
    assert [(c.op, c.stage, c.access, c.file, c.line) for c in raw.calls] == [
        ("kernel_float", "PIPE_MTE2", "Write", "/cann/tikcfw/impl/kernel_operator_data_copy_impl.h",
         58),
        ("kernel_float", "PIPE_V", "Read", "add_custom.cpp", 498),
    ]  # fmt: skip
    assert (war.kind, war.alloc_kind) == ("WAR", "UB")
    assert [(c.access, c.line) for c in war.calls] == [("Read", 520), ("Write", 498)]


def test_initcheck_and_leak_lines():
    log = """\
====== ERROR: uninitialized read of size 224
======    at 0x12c0c0015000 on GM
======    code in mhc_kernel.cpp:12
====== Direct leak of 4096 byte(s) allocated in aclrtMalloc
"""
    init, leak = parse_log(log, "initcheck")
    assert (init.tool, init.kind, init.bytes) == ("initcheck", "uninitialized read", 224)
    assert (leak.tool, leak.kind, leak.bytes) == ("memcheck", "leak", 4096)


def test_simulator_stderr_parses_too():
    err = """\
====== ERROR: uninitialized read of size 96
======    at 0x562c4d48f4c0 on GM (device allocation #6 + 0, 96 bytes); output gradBias
======    owned by aclnnMhcPreSinkhornBackward#1
======    host Read at +0 in host by aclrtMemcpy (runtime) in rt_copy.c:143
====== SUMMARY: aclsim sanitizer: 1 finding(s)
"""
    (f,) = parse_log(err)
    assert (f.tool, f.kind, f.bytes, f.address) == ("initcheck", "uninitialized read", 96,
                                                    "0x562c4d48f4c0")  # fmt: skip


def test_nothing_in_a_clean_log():
    assert parse_log("mssanitizer: done\n====== SUMMARY: 0 errors\n") == []


def test_jsonl_round_trip(tmp_path):
    rec = {"tool": "racecheck", "kind": "WAW", "bytes": 16, "alloc": 3, "alloc_kind": "device",
           "owner": {"call": 4, "op": "aclnnAdd"}, "tensor": "out",
           "calls": [{"call": 4, "op": "aclnnAdd", "stage": "kernel", "access": "Write",
                      "stream": 1, "file": "op_add.c", "line": 9},
                     {"call": 5, "op": "aclnnAdd", "stage": "kernel", "access": "Write",
                      "stream": 2, "file": "op_add.c", "line": 9}]}  # fmt: skip
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(rec) + "\n\n")
    (f,) = read_jsonl(path)
    assert f.owner == "aclnnAdd#4" and f.stages == ("kernel", "kernel")
    assert "aclnnAdd#4 (kernel) vs aclnnAdd#5 (kernel)" in f.summary()
    again = finding_from_json(f.to_json())
    assert again == f and isinstance(again, Finding)


def test_malformed_records_name_file_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"tool": "initcheck", "kind": "x"}\n')
    with pytest.raises(ConfigError, match=r"bad.jsonl:1: field 'bytes'"):
        read_jsonl(path)
    path.write_text("not json\n")
    with pytest.raises(ConfigError, match=r"bad.jsonl:1: not JSON"):
        read_jsonl(path)


FAKE_MSSANITIZER = """#!/bin/sh
# stands in for CANN's mssanitizer: records its arguments, writes a documented-format log
log=""
for a in "$@"; do case "$a" in --log-file=*) log="${a#--log-file=}";; esac; done
echo "$@" >> "$(dirname "$log")/argv.txt"
case "$1" in
  --tool=memcheck) printf '%s\\n' '====== ERROR: illegal write of size 64' \\
      '======    at 0x1000 on GM' '======    code in op.cpp:3' > "$log";;
  *) printf 'no errors\\n' > "$log";;
esac
"""


def test_sanitize_run_on_cann_uses_mssanitizer(tmp_path, monkeypatch):
    """On a real install the reproducer runs under mssanitizer, once per tool, log parsed."""
    from stress.sanitize import sanitize_run

    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "mssanitizer"
    fake.write_text(FAKE_MSSANITIZER)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    run = tmp_path / "run"
    run.mkdir()
    cmd = "aclnn-stress run --corpus repro/corpus.toml --phases mixed --threads 4"
    report = json.loads((FIXTURE / "report.json").read_text())  # a whole report, then the run's
    report.update(diagnosis="cross-call-contamination", reproducer={"command": cmd},
                  backend={"kind": "cann", "simulator": False})  # fmt: skip
    (run / "report.json").write_text(json.dumps(report))
    result = sanitize_run(run)
    (f,) = result.findings
    assert (f.tool, f.kind, f.bytes, f.source) == ("memcheck", "illegal write", 64, "mssanitizer")
    argv = (next((run / "sanitize").iterdir()) / "argv.txt").read_text().splitlines()
    assert sorted(a.split()[0] for a in argv) == [
        "--tool=initcheck", "--tool=memcheck", "--tool=racecheck"]  # fmt: skip
    assert all("-m stress run --corpus repro/corpus.toml --phases mixed" in a for a in argv)
    report = json.loads((run / "report.json").read_text())
    assert report["sanitizer"]["findings"] == 1
    assert report["sanitizer"]["explains"] == "cross-call-contamination"


def test_sanitize_run_without_report_is_a_config_error(tmp_path):
    from stress.cli.sanitize import main

    assert main([str(tmp_path)]) == 2
