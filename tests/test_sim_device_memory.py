"""ACLSIM_DEVICE_MEMORY: a total over live device allocations, enforced by aclrtMalloc with
CANN's out-of-memory status (207001) and reported by aclrtGetMemInfo."""

from __future__ import annotations

import json

import _rawacl as r
import pytest

OOM = 207001  # ACL_ERROR_RT_MEMORY_ALLOCATION (hicann/runtime rt_error_codes.h)

_PRELUDE = (
    "import _rawacl as r, json, ctypes\nfrom stress import sim\nacl = r.Acl(sim.root())\n"
    "out = {'init': acl.aclInit(None), 'msg': acl.msg()}\n"
)

_SCRIPT = _PRELUDE + (
    "acl.aclrtSetDevice(0)\n"
    "def malloc(n):\n"
    "    p = ctypes.c_void_p(); rc = acl.aclrtMalloc(ctypes.byref(p), n, 0)\n"
    "    return rc, p.value, acl.msg()\n"
    "def info():\n"
    "    f = ctypes.c_size_t(); t = ctypes.c_size_t()\n"
    "    acl.aclrtGetMemInfo(1, ctypes.byref(f), ctypes.byref(t)); return f.value, t.value\n"
    "out['info0'] = info()\n"
    "rc1, p1, _ = malloc(600); rc2, p2, m2 = malloc(500)\n"
    "out.update(rc1=rc1, rc2=rc2, m2=m2, info1=info())\n"
    "out['free'] = acl.aclrtFree(p1)\n"
    "rc3, p3, _ = malloc(500); out['rc3'] = rc3; out['info3'] = info()\n"
    "out['big'] = malloc(1025)[0]\n"
    "print(json.dumps(out))\n"
)


def _child(code: str, env: dict[str, str]) -> dict:
    proc = r.run_py(code, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_limit_is_a_total_over_live_allocations_with_the_oom_status():
    res = _child(_SCRIPT, {"ACLSIM_DEVICE_MEMORY": "1K"})
    assert res["init"] == 0
    assert res["info0"] == [1024, 1024]  # free, total: the limit
    assert res["rc1"] == 0 and res["rc2"] == OOM  # 600 + 500 > 1024
    assert "out of device memory" in res["m2"] and "ACLSIM_DEVICE_MEMORY=1024" in res["m2"]
    assert res["info1"] == [1024 - 600, 1024]
    assert res["free"] == 0 and res["rc3"] == 0  # freed bytes count again
    assert res["info3"] == [1024 - 500, 1024]
    assert res["big"] == OOM  # one allocation larger than the whole device


def test_unset_keeps_the_nominal_64_gib_and_no_total():
    res = _child(_SCRIPT, {"ACLSIM_DEVICE_MEMORY": ""})
    assert res["info0"][1] == 64 << 30
    assert res["rc1"] == res["rc2"] == res["rc3"] == res["big"] == 0


@pytest.mark.parametrize("bad", ["abc", "0", "-5", "1X", "12KB", "99999999999999999999", " 5"])
def test_a_bad_value_fails_acl_init_naming_the_variable(bad):
    res = _child(_PRELUDE + "print(json.dumps(out))\n", {"ACLSIM_DEVICE_MEMORY": bad})
    assert res["init"] == r.INVALID_PARAM and "ACLSIM_DEVICE_MEMORY" in res["msg"], res
