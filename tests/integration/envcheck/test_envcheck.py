#!/usr/bin/env python3
"""envcheck end to end, the driver and CUDA: the real binary against stand-in driver libraries
(dlopen'd like the real ones), objects built here with gcc/clang and real tools.

Usage: test_envcheck.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, run, skip  # noqa: E402
from envcheck_fixtures import (BIN, FAKE_CUDA, MISSING, MIXED_BOX, UUID_3090, UUID_5090,  # noqa: E402
                               checks_by_name, envcheck, expect, fake_gpu, row)
# test_links.py, test_kernels.py and test_gates.py import the shared helpers from here.
from envcheck_fixtures import make_kfd_tree, write  # noqa: E402,F401


# ---- driver and CUDA ---------------------------------------------------------

def test_needs_only_libc_and_libstdcxx_at_run_time(tmp):
    # envcheck runs on GPU hosts of other distributions (Ubuntu, RHEL): yaml-cpp and libcrypto are linked
    # in from their archives, so the binary asks the loader for nothing beyond the C and C++ runtimes.
    archives = [a for a in ("libyaml-cpp.a", "libcrypto.a") if os.path.exists("/usr/lib/x86_64-linux-gnu/" + a)]
    if len(archives) < 2:
        skip("the static archives of yaml-cpp and libcrypto are not installed here")
    out = subprocess.run(["readelf", "-d", BIN], capture_output=True, text=True, check=True).stdout
    needed = sorted(line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line)
    runtimes = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"}
    check(needed and set(needed) <= runtimes, "envcheck needs only the C and C++ runtimes", "NEEDED: %s" % needed)


def test_no_driver(tmp):
    inv = envcheck("--json")
    expect(inv, 0, "inventory without a driver")
    row(inv, "driver", "WARN", "inventory without a driver", ["no NVIDIA driver found", "nvidia-smi"])
    check(not any(n.startswith("gpu ") for n in checks_by_name(inv)), "inventory without a driver lists GPUs", str(inv))
    r = envcheck("--cuda", "13.0", "--json")
    expect(r, 1, "--cuda without a driver")
    row(r, "cuda 13.0", "FAIL", "--cuda without a driver", ["no NVIDIA driver found", "580.65.06"])
    r = envcheck("--need", "fp8", "--json")
    expect(r, 1, "--need without a driver")
    row(r, "gpu", "FAIL", "--need without a driver", ["no NVIDIA driver found"])
    # The default is the real driver's name, dlopen'd: on this host there is none.
    e = dict(os.environ)
    for k in ("ENVCHECK_NVML_LIB", "ENVCHECK_CUDA_LIB"):
        e.pop(k, None)
    e["ENVCHECK_NVIDIA_SMI"] = MISSING
    default = run([BIN, "--cuda", "13.0"], expect=None, env=e, timeout=60)
    if default.rc == 1:
        check("libnvidia-ml.so.1" in default.out, "default NVML name is not libnvidia-ml.so.1", str(default))


def test_driver_older(tmp):
    env = fake_gpu(tmp, "driver_version=570.26\ncuda_version=12080\ngpu.0.uuid=GPU-1\ngpu.0.cc=9.0\n")
    r = envcheck("--cuda", "13.0", "--json", env=env)
    expect(r, 1, "older driver")
    row(r, "cuda 13.0", "FAIL", "older driver", ["570.26", "12.8", "580.65.06", "Table 3"])
    check(checks_by_name(r)["cuda 13.0"]["rule"] == "insufficient-driver", "older driver: wrong rule", str(r))
    t = envcheck("--cuda", "13.0", env=env)
    check(t.out.splitlines()[1].startswith("FAIL   cuda 13.0"), "older driver: table row", str(t))
    check("fix: install NVIDIA driver 580.65.06 or newer" in t.out, "older driver: table fix line", str(t))


def test_minor_compat(tmp):
    env = fake_gpu(tmp, "driver_version=580.65.06\ncuda_version=13000\ngpu.0.uuid=GPU-1\ngpu.0.cc=9.0\n")
    r = envcheck("--cuda", "13.1", "--json", env=env)
    expect(r, 0, "same-major newer minor")
    row(r, "cuda 13.1", "WARN", "same-major newer minor", ["minor-version compatibility", "PTX", "590.44.01"])
    check(checks_by_name(r)["cuda 13.1"]["rule"] == "minor-version-compatibility", "MVC: wrong rule", str(r))
    s = envcheck("--cuda", "13.1", "--strict", "--json", env=env)
    expect(s, 1, "same-major newer minor with --strict")
    row(s, "cuda 13.1", "FAIL", "--strict", ["--strict"])


def test_newer(tmp):
    env = fake_gpu(tmp, "driver_version=590.44.01\ncuda_version=13010\ngpu.0.uuid=GPU-1\ngpu.0.cc=9.0\n")
    for asked in ("13.0", "13.1", "12.8"):
        r = envcheck("--cuda", asked, "--strict", "--json", env=env)
        expect(r, 0, f"newer driver, --cuda {asked}")
        row(r, f"cuda {asked}", "PASS", f"newer driver, --cuda {asked}", ["590.44.01"])
    bad = envcheck("--cuda", "thirteen", env=env)
    expect(bad, 2, "--cuda thirteen")
    check("envcheck: --cuda wants a CUDA release as X.Y (like 13.0), not 'thirteen'" in bad.err, "--cuda thirteen: message", str(bad))


def test_size_values_name_their_flag(tmp):
    # A SIZE that is not one is said as every other bad value is: the flag, what it wants, what was given
    # (before: "'lots' is not a size", no flag).
    for args, flag in ((["--vram-free", "lots"], "--vram-free"), (["--disk", "/=lots"], "--disk")):
        r = envcheck(*args)
        expect(r, 2, " ".join(args))
        check(f"envcheck: {flag} wants a size (like 24G, 24GiB, 80GB or 1.5T), not 'lots'" in r.err,
              f"{' '.join(args)}: the flag is not named", str(r))


def test_mixed_box(tmp):
    env = fake_gpu(tmp, MIXED_BOX)
    inv = envcheck("--json", env=env)
    expect(inv, 0, "mixed box inventory")
    row(inv, "driver", "INFO", "inventory", ["580.65.06", "13.0", "NVML"])
    row(inv, "gpu 0", "INFO", "inventory", ["RTX 5090", UUID_5090, "12.0", "gen 1 x16 now", "gen 5 x16 max", "train down"])
    row(inv, "gpu 1", "INFO", "inventory", ["RTX 3090", "8.6", "gen 4 x4 now", "gen 4 x16 max"])
    row(inv, "p2p 0-1", "INFO", "inventory", ["read GPU not supported", "NVLink not supported"])
    d = checks_by_name(inv)["gpu 1"]["data"]
    check(d["memory_total"] == 25769803776 and d["memory_free"] == 2147483648, "inventory memory", json.dumps(d))
    table = envcheck(env=env)
    check("INFO   gpu 0" in table.out, "inventory table", str(table))

    r = envcheck("--need", "fp8", "--json", env=env)
    expect(r, 1, "--need fp8 on the mixed box")
    row(r, "need fp8 gpu0", "PASS", "fp8 on sm_120", ["12.0 >= 8.9"])
    row(r, "need fp8 gpu1", "FAIL", "fp8 on sm_86", ["8.6 < 8.9", "weight-only"])
    r = envcheck("--need", "nvfp4", "--json", env=env)
    row(r, "need nvfp4 gpu0", "PASS", "nvfp4 on sm_120")
    row(r, "need nvfp4 gpu1", "FAIL", "nvfp4 on sm_86")

    by_index = envcheck("--gpu", "0", "--need", "fp8", "--json", env=env)
    expect(by_index, 0, "--gpu 0 --need fp8")
    check(list(checks_by_name(by_index)) == ["need fp8 gpu0"], "--gpu 0 selects only GPU 0", str(by_index))
    by_uuid = envcheck("--gpu", UUID_3090, "--need", "fp8", "--json", env=env)
    expect(by_uuid, 1, "--gpu UUID-of-3090 --need fp8")
    check(list(checks_by_name(by_uuid)) == ["need fp8 gpu1"], "--gpu UUID selects only that GPU", str(by_uuid))
    both = envcheck("--gpu", UUID_5090, "--gpu", "1", "--min-cc", "8.0", "--json", env=env)
    expect(both, 0, "--gpu twice --min-cc 8.0")
    check(set(checks_by_name(both)) == {"min-cc 8.0 gpu0", "min-cc 8.0 gpu1"}, "--gpu repeated", str(both))
    nosuch = envcheck("--gpu", "7", "--need", "fp8", "--json", env=env)
    expect(nosuch, 1, "--gpu 7")
    row(nosuch, "gpu 7", "FAIL", "--gpu 7", ["no GPU matches '7'", UUID_5090])

    cc = envcheck("--min-cc", "8.9", "--json", env=env)
    row(cc, "min-cc 8.9 gpu0", "PASS", "--min-cc 8.9")
    row(cc, "min-cc 8.9 gpu1", "FAIL", "--min-cc 8.9")
    arch = envcheck("--arch-list", "sm_80,sm_90", "--json", env=env)
    expect(arch, 1, "--arch-list sm_80,sm_90")
    row(arch, "arch-list gpu0", "FAIL", "sm_120 against sm_80,sm_90", ["no kernel image is available"])
    row(arch, "arch-list gpu1", "PASS", "sm_86 against sm_80,sm_90", ["sm_80"])
    arch = envcheck("--arch-list", "sm_80,sm_90,sm_120", env=env)
    expect(arch, 0, "--arch-list with sm_120")
    ptx = envcheck("--arch-list", "sm_86,compute_90", "--json", env=env)
    expect(ptx, 0, "--arch-list with PTX")
    row(ptx, "arch-list gpu0", "PASS", "PTX on sm_120", ["compute_90", "PTX"])
    # The cubin the runtime picks: the newest that runs, whatever the list's order (issue 43 item 9).
    newest = envcheck("--arch-list", "sm_80,sm_86", "--json", env=env)
    row(newest, "arch-list gpu1", "PASS", "sm_86 card, sm_80 and sm_86 listed", ["runs sm_86 (cubin)"])
    check(checks_by_name(newest)["arch-list gpu1"]["data"]["match"] == "sm_86", "the match field", str(newest))
    vram = envcheck("--vram-free", "20GiB", "--json", env=env)
    expect(vram, 1, "--vram-free 20GiB")
    row(vram, "vram-free gpu0", "PASS", "--vram-free on the 5090")
    row(vram, "vram-free gpu1", "FAIL", "--vram-free on the 3090", ["2.0 GiB free"])
    bad = envcheck("--need", "fp16", env=env)
    expect(bad, 2, "--need fp16")
    bad = envcheck("--vram-free", "lots", env=env)
    expect(bad, 2, "--vram-free lots")
    check("--vram-free wants a size" in bad.err and "not 'lots'" in bad.err, "--vram-free lots: message", str(bad))


def test_nvml_without_libcuda(tmp):
    env = fake_gpu(tmp, MIXED_BOX, cuda_lib=MISSING + "/libcuda.so.1")
    r = envcheck("--cuda", "13.0", "--json", env=env)
    expect(r, 1, "NVML but no libcuda")
    row(r, "cuda 13.0", "FAIL", "NVML but no libcuda", ["580.65.06", "libcuda.so.1 cannot be used"])
    check(checks_by_name(r)["cuda 13.0"]["rule"] == "libcuda-missing", "NVML but no libcuda: rule", str(r))
    inv = envcheck("--json", env=env)
    expect(inv, 0, "inventory, NVML but no libcuda")
    row(inv, "libcuda", "WARN", "inventory, NVML but no libcuda", ["cannot be used"])
    row(inv, "gpu 1", "INFO", "inventory, NVML but no libcuda")


def test_the_probe_binds_only_what_it_calls(tmp):
    # The probe opens libcuda with RTLD_LAZY: a function of the library that the probe never calls (here one
    # that calls a symbol no library defines) is not bound, so cuDriverGetVersion still answers.
    src = write(os.path.join(tmp, "lazy_cuda.c"),
                "int cuDriverGetVersion(int *v) { *v = 13000; return 0; }\n"
                "extern int provkit_no_such_symbol(void);\n"
                "int cuInit(unsigned flags) { (void)flags; return provkit_no_such_symbol(); }\n")
    lib = os.path.join(tmp, "libcuda.so.1")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", lib, src], check=True, capture_output=True, timeout=60)
    inv = envcheck("--json", env=fake_gpu(tmp, MIXED_BOX, cuda_lib=lib))
    expect(inv, 0, "inventory, a libcuda with an unbound function")
    row(inv, "libcuda", "INFO", "libcuda loaded lazily", ["cuDriverGetVersion says CUDA 13.0"])


def test_the_trace_times_each_inventory_step(tmp):
    # PROVKIT_LOG=debug: where the inventory's milliseconds go on a real host, step by step.
    inv = envcheck(env=dict(fake_gpu(tmp, MIXED_BOX), PROVKIT_LOG="debug"))
    expect(inv, 0, "inventory with the trace on")
    for step in ("nvml: dlopen", "nvml: nvmlInit_v2", "nvml: queries", "libcuda: dlopen", "libcuda: cuDriverGetVersion",
                 "inventory: driver (NVML beside libcuda), on its own thread", "inventory: cc", "inventory: nvcc",
                 "inventory: python", "inventory: rocm", "inventory: roce GID tables", "inventory: pcie atomics",
                 "inventory: links"):
        check(any(("host: " + step) in line and line.endswith(" ms") for line in inv.err.splitlines()),
              f"the trace times '{step}'", inv.err)
    check("ms in all" in inv.err, "the trace gives the inventory's whole time", inv.err)


def test_forward_compat(tmp):
    root = os.path.join(tmp, "usr-local")
    compat = os.path.join(root, "cuda-13.1", "compat")
    os.makedirs(compat)
    shutil.copy(FAKE_CUDA, os.path.join(compat, "libcuda.so.590.44.01"))
    os.symlink("libcuda.so.590.44.01", os.path.join(compat, "libcuda.so.1"))
    desc = "driver_version=580.65.06\ncuda_version=13000\nlibcuda_version=13010\ngpu.0.uuid=GPU-1\ngpu.0.cc=9.0\n"
    # The compat libcuda is what gets loaded: the runtime sees 13.1.
    env = fake_gpu(tmp, desc, cuda_lib=os.path.join(compat, "libcuda.so.1"), ENVCHECK_CUDA_ROOT=root)
    r = envcheck("--cuda", "13.1", "--json", env=env)
    expect(r, 0, "compat libcuda loaded")
    row(r, "cuda 13.1", "PASS", "compat libcuda loaded", ["forward-compatibility", "datacenter GPUs", "NVML) reports CUDA 13.0"])
    # Not loaded (the driver's own libcuda is older): a failure that names the compat library.
    env = fake_gpu(tmp, "driver_version=570.26\ncuda_version=12080\ngpu.0.uuid=GPU-1\ngpu.0.cc=9.0\n", ENVCHECK_CUDA_ROOT=root)
    r = envcheck("--cuda", "13.1", "--json", env=env)
    expect(r, 1, "compat libcuda present, not loaded")
    row(r, "cuda 13.1", "FAIL", "compat libcuda present", ["forward-compatibility libcuda 590.44.01", compat, "LD_LIBRARY_PATH"])
    # As on real hosts, /usr/local/cuda and cuda-13 link to one tree: the library is named once, by its real
    # path; and a compat libcuda no newer than the installed driver is said to add nothing.
    os.symlink("cuda-13.1", os.path.join(root, "cuda"))
    os.symlink("cuda-13.1", os.path.join(root, "cuda-13"))
    env = fake_gpu(tmp, "driver_version=595.45.04\ncuda_version=13020\ngpu.0.uuid=GPU-1\ngpu.0.cc=9.0\n", ENVCHECK_CUDA_ROOT=root)
    r = envcheck("--cuda", "13.0", "--json", env=env)
    expect(r, 0, "compat libcuda older than the driver")
    reason = checks_by_name(r)["cuda 13.0"]["reason"]
    check(reason.count("forward-compatibility libcuda") == 1, "compat libcuda named more than once through links", reason)
    check("not newer than the installed driver 595.45.04" in reason, "older compat libcuda not called useless", reason)


def test_smi_fallback(tmp):
    smi = os.path.join(tmp, "nvidia-smi")
    # A stand-in nvidia-smi: NVML cannot be opened, so envcheck parses this tool's output.
    with open(smi, "w") as f:
        f.write("#!/bin/sh\n"
                "case \"$1\" in\n"
                "  --query-gpu=*) echo '0, GPU-6f1c8a2e-0000-1111-2222-333344445555, NVIDIA H200, 9.0, 143771, 143187, 5, 5, 16, 16, 580.159.04';;\n"
                "  *) echo '| NVIDIA-SMI 580.159.04     Driver Version: 580.159.04     CUDA Version: 13.0     |';;\n"
                "esac\n")
    os.chmod(smi, 0o755)
    env = {"ENVCHECK_NVIDIA_SMI": smi}
    inv = envcheck("--json", env=env)
    expect(inv, 0, "nvidia-smi fallback inventory")
    row(inv, "driver", "INFO", "nvidia-smi fallback", ["580.159.04", "13.0", "nvidia-smi"])
    row(inv, "gpu 0", "INFO", "nvidia-smi fallback", ["NVIDIA H200", "9.0", "gen 5 x16"])
    r = envcheck("--need", "fp8", "--json", env=env)
    expect(r, 0, "nvidia-smi fallback --need fp8")
    row(r, "need fp8 gpu0", "PASS", "nvidia-smi fallback --need fp8")


if __name__ == "__main__":
    main()
