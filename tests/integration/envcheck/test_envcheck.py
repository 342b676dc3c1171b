#!/usr/bin/env python3
"""envcheck end to end: the real binary against stand-in driver libraries
(dlopen'd like the real ones), objects built here with gcc/clang, a real
compiler, nvcc and Python, a KFD sysfs tree and real sockets.

Usage: test_envcheck.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import BUILD, SOURCE, check, main, run, skip, tool  # noqa: E402,F401

BIN = tool("envcheck")
FAKE_DRIVER = os.path.join(BUILD, "envcheck-fake-driver")
FAKE_NVML = os.path.join(FAKE_DRIVER, "libnvidia-ml.so.1")
FAKE_CUDA = os.path.join(FAKE_DRIVER, "libcuda.so.1")
MISSING = "/nonexistent/envcheck-test"

UUID_5090 = "GPU-5090aaaa-1111-2222-3333-444455556666"
UUID_3090 = "GPU-3090bbbb-1111-2222-3333-444455556666"
MIXED_BOX = f"""
driver_version=580.65.06
cuda_version=13000
gpu.0.uuid={UUID_5090}
gpu.0.name=NVIDIA GeForce RTX 5090
gpu.0.cc=12.0
gpu.0.memory_total=34190917632
gpu.0.memory_free=33554432000
gpu.0.pcie_gen=1,5
gpu.0.pcie_width=16,16
gpu.1.uuid={UUID_3090}
gpu.1.name=NVIDIA GeForce RTX 3090
gpu.1.cc=8.6
gpu.1.memory_total=25769803776
gpu.1.memory_free=2147483648
gpu.1.pcie_gen=4,4
gpu.1.pcie_width=4,16
p2p.0.1=2
nvlink.0.1=5
"""

def checks_by_name(run):
    """envcheck --json's rows by name."""
    return {c["name"]: c for c in run.json()["checks"]}


def envcheck(*args, env=None, **extra):
    e = dict(os.environ)
    # The host's own driver (none here) must never leak into a test.
    e.update({"ENVCHECK_NVML_LIB": MISSING + "/libnvidia-ml.so.1", "ENVCHECK_CUDA_LIB": MISSING + "/libcuda.so.1",
              "ENVCHECK_NVIDIA_SMI": MISSING + "/nvidia-smi", "ENVCHECK_SYSFS_ROOT": MISSING,
              "ENVCHECK_CUDA_ROOT": MISSING})
    e.pop("PROVKIT_FAKE_GPU", None)
    e.update(env or {})
    return run([BIN, *args], expect=None, env=e, timeout=60, **extra)


def fake_gpu(tmp, description, cuda_lib=FAKE_CUDA, **more):
    path = os.path.join(tmp, "gpu-description.txt")
    with open(path, "w") as f:
        f.write(description)
    env = {"PROVKIT_FAKE_GPU": path, "ENVCHECK_NVML_LIB": FAKE_NVML, "ENVCHECK_CUDA_LIB": cuda_lib}
    env.update(more)
    return env


def expect(run, rc, what):
    check(run.rc == rc, f"{what}: exit {run.rc}, expected {rc}", str(run))


def row(run, name, status, what, contains=()):
    rows = checks_by_name(run)
    if name not in rows:
        check(False, f"{what}: no row '{name}'", str(run))
        return
    r = rows[name]
    check(r["status"] == status, f"{what}: '{name}' is {r['status']}, expected {status}", json.dumps(r, indent=1))
    for text in contains:
        check(text in r["reason"] + " " + r["fix"], f"{what}: '{name}' does not mention {text!r}", json.dumps(r, indent=1))


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
    vram = envcheck("--vram-free", "20GiB", "--json", env=env)
    expect(vram, 1, "--vram-free 20GiB")
    row(vram, "vram-free gpu0", "PASS", "--vram-free on the 5090")
    row(vram, "vram-free gpu1", "FAIL", "--vram-free on the 3090", ["2.0 GiB free"])
    bad = envcheck("--need", "fp16", env=env)
    expect(bad, 2, "--need fp16")
    bad = envcheck("--vram-free", "lots", env=env)
    expect(bad, 2, "--vram-free lots")
    check("'lots' is not a size" in bad.err, "--vram-free lots: message", str(bad))


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


# ---- ELF and libraries ---------------------------------------------------------

def cc(*args):
    subprocess.run(["gcc", *args], check=True, capture_output=True, timeout=60)


def build_elf_tree(tmp):
    """app/bin/prog -> libalpha.so (RUNPATH $ORIGIN/../lib) -> libbeta.so, libmissing.so."""
    src = os.path.join(tmp, "src")
    os.makedirs(src)
    paths = {k: os.path.join(tmp, k) for k in ("app/bin", "app/lib", "ld32", "ld64", "gone")}
    for p in paths.values():
        os.makedirs(p, exist_ok=True)
    files = {"beta.c": "int beta(void) { return 2; }\n",
             "missing.c": "int missing(void) { return 3; }\n",
             "alpha.c": "int beta(void); int missing(void);\nint alpha(void) { return beta() + missing(); }\n",
             "prog.c": "int alpha(void);\nint main(void) { return alpha() == 5 ? 0 : 1; }\n"}
    for name, text in files.items():
        with open(os.path.join(src, name), "w") as f:
            f.write(text)
    cc("-shared", "-fPIC", "-o", os.path.join(paths["ld64"], "libbeta.so"), os.path.join(src, "beta.c"))
    cc("-shared", "-fPIC", "-o", os.path.join(paths["gone"], "libmissing.so"), os.path.join(src, "missing.c"))
    cc("-shared", "-fPIC", "-o", os.path.join(paths["app/lib"], "libalpha.so"), os.path.join(src, "alpha.c"),
       "-L" + paths["ld64"], "-L" + paths["gone"], "-lbeta", "-lmissing")
    cc("-o", os.path.join(paths["app/bin"], "prog"), os.path.join(src, "prog.c"), "-L" + paths["app/lib"], "-lalpha",
       "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib", "-Wl,--allow-shlib-undefined")
    # The 32-bit decoy: gcc -m32 has no 32-bit libc here, so clang builds it (no libc needed).
    subprocess.run(["clang", "--target=i386-linux-gnu", "-nostdlib", "-shared", "-fPIC", "-o",
                    os.path.join(paths["ld32"], "libbeta.so"), os.path.join(src, "beta.c")],
                   check=True, capture_output=True, timeout=60)
    return paths


def loader_says(prog, ld_path):
    env = dict(os.environ, LD_LIBRARY_PATH=ld_path)
    p = subprocess.run([prog], env=env, capture_output=True, text=True, timeout=30)
    return p.returncode, p.stderr


def test_elf(tmp):
    p = build_elf_tree(tmp)
    prog = os.path.join(p["app/bin"], "prog")
    with_decoy = p["ld32"] + ":" + p["ld64"]
    # libmissing.so is nowhere: the real loader refuses the program, envcheck says which and why.
    rc, err = loader_says(prog, with_decoy)
    check(rc != 0 and "libmissing.so" in err, "the real loader should fail on libmissing.so", err)
    r = envcheck("--elf", prog, "--json", env={"LD_LIBRARY_PATH": with_decoy})
    expect(r, 1, "--elf with a missing library")
    name = f"elf {prog}: libmissing.so"
    row(r, name, "FAIL", "--elf missing", ["libmissing.so", os.path.join(p["app/lib"], "libalpha.so")])
    check(not any("libbeta.so" in n or "libalpha.so" in n for n in checks_by_name(r) if n != name),
          "--elf reports only libmissing.so as missing", str(r))
    # Found it: the loader agrees and so does envcheck, through $ORIGIN RUNPATH and past the 32-bit decoy.
    shutil.copy(os.path.join(p["gone"], "libmissing.so"), p["ld64"])
    rc, err = loader_says(prog, with_decoy)
    check(rc == 0, "the real loader should run prog now", err)
    r = envcheck("--elf", prog, "--json", env={"LD_LIBRARY_PATH": with_decoy})
    expect(r, 0, "--elf resolving everything")
    row(r, f"elf {prog}", "PASS", "--elf resolving everything", ["needed libraries resolve"])
    resolved = {e["name"]: e for e in checks_by_name(r)[f"elf {prog}"]["data"]["resolved"]}
    check(resolved.get("libalpha.so", {}).get("via") == "RUNPATH", "libalpha.so found through RUNPATH", str(resolved))
    check(resolved.get("libalpha.so", {}).get("path") == os.path.join(p["app/lib"], "libalpha.so"),
          "$ORIGIN/../lib expanded from the program's directory", str(resolved))
    check(resolved.get("libbeta.so", {}).get("path") == os.path.join(p["ld64"], "libbeta.so"),
          "libbeta.so resolved past the 32-bit decoy", str(resolved))
    check("libc.so.6" in resolved, "libc.so.6 resolved (cache or default dirs)", str(resolved))
    # Only the decoy on the path: the 64-bit program cannot use it.
    r = envcheck("--elf", prog, "--json", env={"LD_LIBRARY_PATH": p["ld32"]})
    expect(r, 1, "--elf with only the 32-bit decoy")
    row(r, f"elf {prog}: libbeta.so", "FAIL", "32-bit decoy", ["ELF32 i386, not ELF64 x86-64"])
    # A truncated object is refused cleanly, naming it.
    cut = os.path.join(tmp, "truncated.so")
    with open(os.path.join(p["app/lib"], "libalpha.so"), "rb") as f, open(cut, "wb") as g:
        g.write(f.read(200))
    r = envcheck("--elf", cut, "--json")
    expect(r, 1, "--elf on a truncated file")
    row(r, f"elf {cut}", "FAIL", "truncated", [cut, "truncated"])
    text = os.path.join(tmp, "notes.txt")
    with open(text, "w") as f:
        f.write("not an object\n")
    r = envcheck("--elf", text, "--elf", os.path.join(tmp, "absent"), "--json")
    expect(r, 1, "--elf on a text file and an absent one")
    row(r, f"elf {text}", "FAIL", "text file", ["not an ELF file"])
    row(r, f"elf {os.path.join(tmp, 'absent')}", "FAIL", "absent file", ["cannot open"])



def test_elf_fifo(tmp):
    # Issue 11 item 13: a FIFO is never opened for reading (with no writer the open
    # would wait forever); it is reported as not a regular file, directly and
    # through a profile. The harness's 60 s timeout fails the test if it hangs.
    fifo = os.path.join(tmp, "libfifo.so")
    os.mkfifo(fifo)
    r = envcheck("--elf", fifo, "--json")
    expect(r, 1, "--elf on a FIFO")
    row(r, f"elf {fifo}", "FAIL", "--elf FIFO", [fifo, "not a regular file (a FIFO)"])
    profile = write(os.path.join(tmp, "fifo.yaml"), f"elf:\n  - {fifo}\n")
    r = envcheck("--profile", profile, "--json")
    expect(r, 1, "profile naming a FIFO")
    row(r, f"elf {fifo}", "FAIL", "profile elf FIFO", ["not a regular file (a FIFO)"])
    # A FIFO where the loader looks is passed over like any non-library.
    r = envcheck("--lib", "libfifo.so", "--json", env={"LD_LIBRARY_PATH": tmp})
    expect(r, 1, "--lib with a FIFO of that name on LD_LIBRARY_PATH")
    row(r, "lib libfifo.so", "FAIL", "--lib FIFO", ["would not find"])

def test_lib(tmp):
    p = build_elf_tree(tmp)
    r = envcheck("--lib", "libc.so.6", "--json")
    expect(r, 0, "--lib libc.so.6")
    row(r, "lib libc.so.6", "PASS", "--lib libc.so.6", ["ELF64"])
    r = envcheck("--lib", "libbeta.so", "--json", env={"LD_LIBRARY_PATH": p["ld32"] + ":" + p["ld64"]})
    expect(r, 0, "--lib past a decoy")
    row(r, "lib libbeta.so", "PASS", "--lib past a decoy",
        [os.path.join(p["ld64"], "libbeta.so"), "LD_LIBRARY_PATH", "passed over " + os.path.join(p["ld32"], "libbeta.so")])
    r = envcheck("--lib", "libbeta.so", "--lib", "libprovkit-never-there.so.9", "--json", env={"LD_LIBRARY_PATH": p["ld32"]})
    expect(r, 1, "--lib only a decoy / absent")
    row(r, "lib libbeta.so", "FAIL", "--lib only a decoy", ["ELF32 i386"])
    row(r, "lib libprovkit-never-there.so.9", "FAIL", "--lib absent", ["would not find", "LD_LIBRARY_PATH"])


# ---- toolchain -------------------------------------------------------------------

def test_cc(tmp):
    r = envcheck("--cc", "--json")
    expect(r, 0, "--cc with the host's compiler")
    row(r, "cc", "PASS", "--cc", ["-O3 -shared -fPIC"])
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
    row(r, "python 3.99", "FAIL", "--python 3.99", ["no interpreter found for --python 3.99"])
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


def make_kfd_tree(root):
    nodes = os.path.join(root, "class/kfd/kfd/topology/nodes")
    for node, props in {"0": "cpu_cores_count 32\nsimd_count 0\ngfx_target_version 0\n",
                        "1": "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\ndevice_id 29857\n",
                        "2": "cpu_cores_count 0\nsimd_count 192\ngfx_target_version 110000\ndevice_id 29772\n"}.items():
        os.makedirs(os.path.join(nodes, node))
        with open(os.path.join(nodes, node, "properties"), "w") as f:
            f.write(props)


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


# ---- profiles, output, exit codes -------------------------------------------------

def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


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
    check(f"{badvalue}:2: '20 gigs' is not a size" in r.err, "bad value names file:line", str(r))
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
        check(set(c) == {"name", "status", "reason", "fix", "rule", "data"} and c["status"] in ("PASS", "WARN", "FAIL"),
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
