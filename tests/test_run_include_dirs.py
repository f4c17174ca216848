"""``aclnn-stress run -I DIR``: a declaration's header, and the headers it includes, are found
in the given folders (and only there); the folders reach the phase children through the run's
configuration, and a folder that does not exist is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from _cli import stress_cli

from stress.config import RunConfig

ROOT = Path(__file__).resolve().parent.parent

HEADER = """/* RmsNorm behind a vendor macro defined in a header of its own (found only with -I). */
#include "vendor_api.h"
VENDOR_API aclnnStatus aclnnRmsNormGetWorkspaceSize(const aclTensor *x, const aclTensor *gamma,
    double epsilon, const aclTensor *yOut, const aclTensor *rstdOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);
VENDOR_API aclnnStatus aclnnRmsNorm(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
"""


def _declaration(tmp: Path) -> Path:
    inc = tmp / "inc"
    (inc / "vendorop").mkdir(parents=True)
    (inc / "vendorop" / "aclnn_vendor_rms.h").write_text(HEADER)
    (inc / "vendor_api.h").write_text('#define VENDOR_API __attribute__((visibility("default")))\n')
    text = (ROOT / "corpus" / "ops" / "rms_norm.toml").read_text()
    text = text.replace('"aclnnop/aclnn_rms_norm.h"', '"vendorop/aclnn_vendor_rms.h"')
    decl = tmp / "decl" / "vendor_rms.toml"
    decl.parent.mkdir()
    decl.write_text(text)
    return decl


def _run(tmp: Path, decl: Path, *extra: str):
    return stress_cli("run", "--corpus", str(decl), "--control", "none", "--phases",
                      "serial,mixed", "--record-baseline", "--threads", "2", "--iterations", "2",
                      "--baseline", str(tmp / "b.json"), "--out", str(tmp / "out"), "--quiet",
                      *extra, cwd=tmp)  # fmt: skip


def test_run_finds_the_header_and_its_includes_with_dash_i(tmp_path):
    decl = _declaration(tmp_path)
    proc = _run(tmp_path, decl, "-I", str(tmp_path / "inc"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["diagnosis"] == "clean"


def test_without_dash_i_the_header_is_not_found(tmp_path):
    proc = _run(tmp_path, _declaration(tmp_path))
    assert proc.returncode == 2
    assert "vendorop/aclnn_vendor_rms.h" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_missing_include_dir_is_one_line(tmp_path):
    proc = _run(tmp_path, _declaration(tmp_path), "-I", str(tmp_path / "nope"))
    assert proc.returncode == 2
    assert f"-I {tmp_path / 'nope'}: not a directory" in proc.stderr


def test_include_dirs_travel_with_the_config_and_the_replay_command(tmp_path):
    config = RunConfig(include_dirs=(str(tmp_path),)).validate()
    assert RunConfig.from_json(json.loads(json.dumps(config.to_json()))) == config
    assert f"-I {tmp_path}" in " ".join(config.to_cli_args())
