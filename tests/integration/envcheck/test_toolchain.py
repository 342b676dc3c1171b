#!/usr/bin/env python3
"""envcheck end to end, the toolchain (cc, nvcc, Python): the real binary against stand-in driver libraries
(dlopen'd like the real ones), objects built here with gcc/clang and real tools.

Usage: test_toolchain.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, run, skip, tool  # noqa: E402
from envcheck_fixtures import BIN, MISSING, checks_by_name, envcheck, expect, row  # noqa: E402


# ---- toolchain -------------------------------------------------------------------

def test_cc(tmp):
    r = envcheck("--cc", "--json")
    expect(r, 0, "--cc with the host's compiler")
    row(r, "cc", "PASS", "--cc", ["-O3 -shared -fPIC"])
    # The inventory names the compiler, and the flag that proves it builds.
    r = envcheck("--json")
    expect(r, 0, "the inventory's compiler")
    row(r, "cc", "INFO", "the inventory's compiler", ["); --cc proves it builds"])
    broken = os.path.join(tmp, "broken-cc")
    with open(broken, "w") as f:
        f.write("#!/bin/sh\necho 'broken-cc: internal compiler error: this one is broken' >&2\nexit 4\n")
    os.chmod(broken, 0o755)
    r = envcheck("--cc", "--json", env={"CC": broken})
    expect(r, 1, "--cc with CC broken")
    row(r, "cc", "FAIL", "--cc with CC broken", [broken, "internal compiler error", "CC"])
    # A compiler that exits 0 but writes nothing is not a working one either.
    liar = os.path.join(tmp, "liar-cc")
    with open(liar, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(liar, 0o755)
    r = envcheck("--cc", "--json", env={"CC": liar})
    expect(r, 1, "--cc with a compiler that writes nothing")
    r = envcheck("--cc", "--json", env={"CC": MISSING + "/gcc"})
    expect(r, 1, "--cc with CC absent")
    row(r, "cc", "FAIL", "--cc with CC absent", ["not an executable"])
    empty = os.path.join(tmp, "empty-bin")
    os.makedirs(empty)
    e = {"PATH": empty}
    r = run([BIN, "--cc", "--json"], expect=None, env={k: v for k, v in os.environ.items() if k != "CC"} | e,
            timeout=60)
    expect(r, 1, "--cc with no compiler on PATH")
    row(r, "cc", "FAIL", "--cc with no compiler", ["Failed to find C compiler"])


def test_nvcc(tmp):
    # A stand-in toolkit under CUDA_HOME wins over PATH and the default root.
    home = os.path.join(tmp, "cuda-home")
    os.makedirs(os.path.join(home, "bin"))
    nvcc = os.path.join(home, "bin", "nvcc")
    with open(nvcc, "w") as f:
        f.write("#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
                "echo 'Cuda compilation tools, release 12.8, V12.8.93'\n")
    os.chmod(nvcc, 0o755)
    r = envcheck("--nvcc", "--json", env={"CUDA_HOME": home})
    expect(r, 0, "--nvcc through CUDA_HOME")
    row(r, "nvcc", "PASS", "--nvcc through CUDA_HOME", ["nvcc 12.8", nvcc, "CUDA_HOME"])
    empty = os.path.join(tmp, "empty-root")
    os.makedirs(empty)
    r = envcheck("--nvcc", "--json", env={"CUDA_HOME": "", "PATH": "/usr/bin:/bin", "ENVCHECK_CUDA_ROOT": empty})
    expect(r, 1, "--nvcc with none anywhere")
    row(r, "nvcc", "FAIL", "--nvcc missing", ["Could not find nvcc", "CUDA_HOME"])


def test_nvcc_real(tmp):
    real = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if not real:
        skip("no real nvcc on this host")
    out = subprocess.run([real, "--version"], capture_output=True, text=True, timeout=60).stdout
    release = out.split("release ")[1].split(",")[0]
    r = envcheck("--nvcc", "--json", env={"ENVCHECK_CUDA_ROOT": "/usr/local"})
    expect(r, 0, "--nvcc with the real toolkit")
    row(r, "nvcc", "PASS", "--nvcc real", ["nvcc " + release])
    inv = envcheck("--json", env={"ENVCHECK_CUDA_ROOT": "/usr/local"})
    check(checks_by_name(inv)["nvcc"]["data"]["version"].startswith(release), "inventory nvcc version (without running it)", str(inv))


def test_python(tmp):
    want = "3.11"
    real = shutil.which("python" + want)
    if not real:
        check(False, f"python{want} is needed by this test (scripts/deps.sh installs it)")
        return
    r = envcheck("--python", want, "--json")
    expect(r, 0, f"--python {want}")
    row(r, f"python {want}", "PASS", f"--python {want}", ["Python " + want, "Python.h"])
    r = envcheck("--python", "--json")
    expect(r, 0, "--python (any)")
    row(r, "python", "PASS", "--python", ["Python.h"])
    r = envcheck("--python", "3.99", "--json")
    expect(r, 1, "--python 3.99")
    row(r, "python 3.99", "FAIL", "--python 3.99", ["no interpreter found for 3.99", "uv's installs"])
    # Issue 22, Why 6: one rule for both tools: envcheck --python X.Y is the interpreter
    # `envbuild python find X.Y` prints (pyenv shims on PATH are skipped for a version in both),
    # and --python takes a path.
    found = run([tool("envbuild"), "python", "find", want], expect=0).stdout.strip()
    r = envcheck("--python", want, "--json")
    check(r.json()["checks"][0]["data"]["path"] == found, f"envcheck and envbuild agree on {want}: {found}", str(r))
    r = envcheck("--python", real, "--json")
    expect(r, 0, f"--python {real}")
    check(r.json()["checks"][0]["data"]["path"] == real, f"--python takes a path: {real}", str(r))
    # An interpreter whose include directory lacks Python.h (as without pythonX.Y-dev).
    fake_bin = os.path.join(tmp, "bin")
    os.makedirs(fake_bin)
    headerless = os.path.join(fake_bin, "python3.11")
    with open(headerless, "w") as f:
        f.write(f"#!/bin/sh\necho 3.11.9\necho {tmp}/include/python3.11\n")
    os.chmod(headerless, 0o755)
    r = envcheck("--python", "3.11", "--json", env={"PATH": fake_bin + ":" + os.environ["PATH"]})
    expect(r, 1, "--python 3.11 without headers")
    row(r, "python 3.11", "FAIL", "no headers", ["Python.h", "is missing", "python3.11-dev"])
    bad = envcheck("--python", "three")
    expect(bad, 2, "--python three")


if __name__ == "__main__":
    main()
