#!/usr/bin/env python3
"""envcheck end to end, profiles, output and exit codes: the real binary against stand-in driver libraries
(dlopen'd like the real ones), objects built here with gcc/clang and real tools.

Usage: test_profiles.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import SOURCE, check, main  # noqa: E402
from envcheck_fixtures import (BIN, MISSING, MIXED_BOX, checks_by_name, envcheck, expect,  # noqa: E402
                               fake_gpu, row, write)


# ---- profiles, output, exit codes -------------------------------------------------


def test_profile(tmp):
    env = fake_gpu(tmp, MIXED_BOX)
    happy = write(os.path.join(tmp, "happy.yaml"),
                  "envcheck: 1\ncuda: 13.0\ngpus: [0]\nneed: [fp8]\narch_list: [sm_90, sm_120]\n"
                  f"disk:\n  {tmp}: 1M\nfiles:\n  {happy_file(tmp)}: ~\n")
    r = envcheck("--profile", happy, "--json", env=env)
    expect(r, 0, "happy profile")
    check(set(checks_by_name(r)) == {"cuda 13.0", "need fp8 gpu0", "arch-list gpu0", f"disk {tmp}", f"file {happy_file(tmp)}"},
          "happy profile rows", str(r))
    failing = write(os.path.join(tmp, "failing.yaml"), "cuda: 13.0\nneed: fp8\n")
    r = envcheck("--profile", failing, "--json", env=env)
    expect(r, 1, "failing profile (fp8 on the sm_86 card)")
    row(r, "need fp8 gpu1", "FAIL", "failing profile")
    # Options on the command line add to the profile's checks.
    r = envcheck("--profile", happy, "--gpu", "1", "--json", env=env)
    expect(r, 1, "profile plus --gpu 1")
    malformed = write(os.path.join(tmp, "malformed.yaml"), "cuda: 13.0\nneed: [fp8\nstrict: true\n")
    r = envcheck("--profile", malformed, env=env)
    expect(r, 2, "malformed profile")
    check(r.err.startswith(f"envcheck: {malformed}:"), "malformed profile names the file", str(r))
    unknown = write(os.path.join(tmp, "unknown.yaml"), "cuda: 13.0\n\nneeds: [fp8]\n")
    r = envcheck("--profile", unknown, env=env)
    expect(r, 2, "profile with an unknown key")
    check(f"{unknown}:3: unknown key 'needs'" in r.err, "unknown key names file:line", str(r))
    badvalue = write(os.path.join(tmp, "badvalue.yaml"), "cuda: 13.0\nvram_free: 20 gigs\n")
    r = envcheck("--profile", badvalue, env=env)
    expect(r, 2, "profile with a bad value")
    check(f"{badvalue}:2: 'vram_free' wants a size (like 24G, 24GiB, 80GB or 1.5T), not '20 gigs'" in r.err,
          "bad value names file:line and the key", str(r))
    # A bad value is named by the profile's key for it, never by the command-line flag.
    badcuda = write(os.path.join(tmp, "badcuda.yaml"), "strict: true\ncuda: thirteen\n")
    r = envcheck("--profile", badcuda, env=env)
    expect(r, 2, "profile with a bad cuda value")
    check(f"{badcuda}:2: 'cuda' wants a CUDA release as X.Y (like 13.0), not 'thirteen'" in r.err and "--cuda" not in r.err,
          "bad cuda value names the profile key, not --cuda", str(r))
    r = envcheck("--profile", os.path.join(tmp, "absent.yaml"), env=env)
    expect(r, 2, "absent profile")
    example = os.path.join(SOURCE, "examples", "envcheck-profile.yaml")
    r = envcheck("--profile", example, "--json", env=env)
    check(r.rc in (0, 1) and r.json()["checks"], "examples/envcheck-profile.yaml loads", str(r))


def happy_file(tmp):
    path = os.path.join(tmp, "config.json")
    if not os.path.exists(path):
        write(path, "{}\n")
    return path


def test_output(tmp):
    env = fake_gpu(tmp, MIXED_BOX)
    present = happy_file(tmp)
    args = ["--cuda", "13.0", "--need", "fp8", "--min-cc", "8.0", "--port-free", "1", "--file", present]
    r = envcheck(*args, "--json", env=env)
    expect(r, 1, "--json run")
    doc = r.json()
    check(doc["ok"] is False and doc["exit_code"] == 1 and doc["mode"] == "checks", "--json header", str(r))
    names = [c["name"] for c in doc["checks"]]
    want = ["cuda 13.0", "need fp8 gpu0", "min-cc 8.0 gpu0", "need fp8 gpu1", "min-cc 8.0 gpu1", "port-free 1", f"file {present}"]
    check(sorted(names) == sorted(want), "--json has every check", f"{names}")
    for c in doc["checks"]:
        check(set(c) == {"name", "status", "reason", "fix", "rule", "severity", "data"} and c["status"] in ("PASS", "WARN", "FAIL"),
              "--json check fields", json.dumps(c))
    q = envcheck(*args, "--quiet", env=env)
    expect(q, 1, "--quiet with a failure")
    check(q.out == "" and q.err == "", "--quiet prints nothing", str(q))
    q = envcheck("--cuda", "13.0", "--quiet", env=env)
    expect(q, 0, "--quiet passing")
    check(q.out == "" and q.err == "", "--quiet prints nothing (pass)", str(q))
    t = envcheck(*args, env=env)
    lines = t.out.splitlines()
    check(lines[0].split() == ["STATUS", "CHECK", "RESULT"], "table header", t.out)
    check(any(l.startswith("FAIL   need fp8 gpu1") for l in lines), "table FAIL row", t.out)
    check(any(l.strip().startswith("fix: ") for l in lines), "table fix line", t.out)
    u = envcheck("--frobnicate")
    expect(u, 2, "unknown option")
    check("--frobnicate" in u.err, "unknown option named", str(u))
    v = envcheck("--version")
    expect(v, 0, "--version")
    check(v.out.startswith("envcheck "), "--version text", str(v))
    h = envcheck("--help")
    expect(h, 0, "--help")
    for opt in ("--cuda", "--strict", "--gpu", "--need", "--min-cc", "--arch-list", "--vram-free", "--cc", "--nvcc",
                "--python", "--lib", "--elf", "--disk", "--port-free", "--file", "--profile", "--json", "--quiet", "--rocm",
                "ENVCHECK_NVML_LIB"):
        check(opt in h.out, f"--help mentions {opt}", h.out)


def test_deploy_gate(tmp):
    gate = os.path.join(SOURCE, "examples", "deploy-gate.sh")
    profile = write(os.path.join(tmp, "gate.yaml"), f"cuda: 13.0\nneed: [fp8]\ndisk:\n  {tmp}: 1M\n")
    env = dict(os.environ, ENVCHECK=BIN, ENVCHECK_PROFILE=profile, ENVCHECK_NVIDIA_SMI=MISSING,
               ENVCHECK_CUDA_ROOT=MISSING, ENVCHECK_SYSFS_ROOT=MISSING)
    ok = dict(env, **fake_gpu(tmp, MIXED_BOX))
    p = subprocess.run([gate, "--gpu", "0", "--", "echo", "ENGINE STARTED"], env=ok, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and "ENGINE STARTED" in p.stdout, "deploy gate passes on GPU 0 and starts the engine",
          f"rc={p.returncode}\n{p.stdout}\n{p.stderr}")
    p = subprocess.run([gate, "--gpu", "1", "--", "echo", "ENGINE STARTED"], env=ok, capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and "ENGINE STARTED" not in p.stdout and "need fp8 gpu1" in p.stderr,
          "deploy gate refuses GPU 1 (no FP8) and says why", f"rc={p.returncode}\n{p.stdout}\n{p.stderr}")
    broken = write(os.path.join(tmp, "broken.yaml"), "cuda: [\n")
    p = subprocess.run([gate, "--", "echo", "ENGINE STARTED"], env=dict(ok, ENVCHECK_PROFILE=broken),
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "ENGINE STARTED" not in p.stdout, "deploy gate stops on a broken profile",
          f"rc={p.returncode}\n{p.stdout}\n{p.stderr}")


if __name__ == "__main__":
    main()
