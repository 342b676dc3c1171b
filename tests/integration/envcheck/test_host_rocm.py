#!/usr/bin/env python3
"""envcheck end to end, host gates and ROCm: the real binary against stand-in driver libraries
(dlopen'd like the real ones), objects built here with gcc/clang and real tools.

Usage: test_host_rocm.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""

import hashlib
import os
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main  # noqa: E402
from envcheck_fixtures import cc, envcheck, expect, make_kfd_tree, row  # noqa: E402


# ---- host gates and ROCm -------------------------------------------------------

def test_host(tmp):
    r = envcheck("--disk", f"{tmp}=1M", "--disk", f"{tmp}/not/yet/there=1K", "--disk", f"{tmp}=900P", "--json")
    expect(r, 1, "--disk")
    rows = r.json()["checks"]
    check([c["status"] for c in rows] == ["PASS", "PASS", "FAIL"], "--disk statuses", str(r))
    check("900.0 PiB needed" in rows[2]["reason"] or "PiB" in rows[2]["reason"], "--disk reason", str(r))
    expect(envcheck("--disk", tmp), 2, "--disk without =SIZE")

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    busy_port = busy.getsockname()[1]
    try:
        r = envcheck("--port-free", str(busy_port), "--json")
        expect(r, 1, "--port-free on a listening port")
        row(r, f"port-free {busy_port}", "FAIL", "--port-free busy", ["in use", "ss -ltnp"])
    finally:
        busy.close()
    probe = socket.socket()
    probe.bind(("0.0.0.0", 0))
    free_port = probe.getsockname()[1]
    probe.close()
    r = envcheck("--port-free", str(free_port), "--json")
    expect(r, 0, "--port-free on a free port")
    expect(envcheck("--port-free", "70000"), 2, "--port-free 70000")

    data = os.path.join(tmp, "model.safetensors")
    with open(data, "wb") as f:
        f.write(b"weights" * 1000)
    digest = hashlib.sha256(b"weights" * 1000).hexdigest()
    r = envcheck("--file", f"{data}={digest.upper()}", "--file", data, "--json")
    expect(r, 0, "--file with the right sha256")
    r = envcheck("--file", f"{data}={'0' * 64}", "--file", os.path.join(tmp, "absent"), "--json")
    expect(r, 1, "--file wrong sha256 / absent")
    rows = r.json()["checks"]
    check(rows[0]["status"] == "FAIL" and digest in rows[0]["reason"], "--file mismatch names both digests", str(r))
    check(rows[1]["status"] == "FAIL" and "does not exist" in rows[1]["reason"], "--file absent", str(r))
    expect(envcheck("--file", f"{data}=abc"), 2, "--file with a malformed sha256")


def test_rocm(tmp):
    sysfs = os.path.join(tmp, "sys")
    make_kfd_tree(sysfs)
    libdir = os.path.join(tmp, "rocm", "lib")
    os.makedirs(libdir)
    src = os.path.join(tmp, "hip.c")
    with open(src, "w") as f:
        f.write("int hipGetDeviceCount(int* n) { *n = 0; return 0; }\n")
    # Real shared objects under ROCm's names (what the loader would pick up).
    cc("-shared", "-fPIC", "-o", os.path.join(libdir, "libamdhip64.so.6"), src)
    cc("-shared", "-fPIC", "-o", os.path.join(libdir, "libhsa-runtime64.so.1"), src)
    env = {"ENVCHECK_SYSFS_ROOT": sysfs, "LD_LIBRARY_PATH": libdir}
    r = envcheck("--rocm", "--json", env=env)
    expect(r, 0, "--rocm with libraries and GPUs")
    row(r, "rocm", "PASS", "--rocm", ["libamdhip64.so.6", "node 1 gfx942", "node 2 gfx1100", "2 AMD GPUs"])
    inv = envcheck("--json", env=env)
    row(inv, "rocm", "INFO", "inventory rocm", ["gfx942"])
    # ROCM_PATH/lib counts even when it is not on the loader path.
    r = envcheck("--rocm", "--json", env={"ENVCHECK_SYSFS_ROOT": sysfs, "ROCM_PATH": os.path.join(tmp, "rocm")})
    expect(r, 0, "--rocm through ROCM_PATH")
    r = envcheck("--rocm", "--json", env={"ENVCHECK_SYSFS_ROOT": sysfs})
    expect(r, 1, "--rocm without libraries")
    row(r, "rocm", "FAIL", "--rocm without libraries", ["libamdhip64.so not found", "hip-runtime-amd"])
    r = envcheck("--rocm", "--json", env={"ENVCHECK_SYSFS_ROOT": os.path.join(tmp, "nothing"), "LD_LIBRARY_PATH": libdir})
    expect(r, 1, "--rocm without GPUs")
    row(r, "rocm", "FAIL", "--rocm without GPUs", ["no AMD GPU"])


if __name__ == "__main__":
    main()
