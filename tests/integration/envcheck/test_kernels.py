#!/usr/bin/env python3
"""envcheck --kernels end to end: the real binary on the real libraries of
tests/data/kernels (nvcc 13.0 fatbins, hipcc 5.2 offload bundles and their
CCOB forms), judged against stand-in drivers (NVIDIA) and a KFD sysfs tree
(AMD); the listing compared with clang-offload-bundler --list where that tool
is installed.

Usage: test_kernels.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""
import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import SOURCE, check, main, skip  # noqa: E402
from test_envcheck import checks_by_name, envcheck, expect, fake_gpu, make_kfd_tree, row  # noqa: E402

DATA = os.path.join(SOURCE, "tests", "data", "kernels")
H200_BOX = "driver_version=580.159.04\ncuda_version=13000\n" + "".join(
    f"gpu.{i}.uuid=GPU-h200-{i}\ngpu.{i}.name=NVIDIA H200\ngpu.{i}.cc=9.0\n" for i in range(2))


def lib(name):
    return os.path.join(DATA, name)


def test_h200_passes_a_library_with_sm_90a_and_fails_one_without(tmp):
    env = fake_gpu(tmp, H200_BOX)
    r = envcheck("--kernels", lib("libk_multi.so"), "--json", env=env)
    expect(r, 0, "--kernels on an sm_90a build")
    row(r, "kernels " + lib("libk_multi.so"), "PASS", "sm_90a on H200",
        ["cubins sm_80 sm_90a sm_100f sm_120", "compute_90 (ISA 9.0)", "runs its sm_90a cubins on GPU 0-1 (NVIDIA H200, sm_90)"])
    data = checks_by_name(r)["kernels " + lib("libk_multi.so")]["data"]
    check(data["cubins"] == ["sm_80", "sm_90a", "sm_100f", "sm_120"] and data["images"] == 9, "--kernels data", str(data))
    check(data["gpus"][0]["indices"] == [0, 1] and data["gpus"][0]["via"] == "sm_90a", "--kernels per-GPU data", str(data))
    r = envcheck("--kernels", lib("libk_no_sm90.so"), "--json", env=env)
    expect(r, 1, "--kernels on a build without sm_90")
    row(r, "kernels " + lib("libk_no_sm90.so"), "FAIL", "no sm_90 on H200",
        ["nothing in it runs on GPU 0-1", "sm_80 sm_86 sm_120", "compute_100", "code=sm_90"])
    t = envcheck("--kernels", lib("libk_no_sm90.so"), env=env)
    check(any(line.startswith("FAIL   kernels ") for line in t.out.splitlines()), "--kernels table row", str(t))


def test_the_driver_is_read_while_the_libraries_are(tmp):
    # NVML's init takes 0.1-0.25 s on the GPU host: the libraries' headers are read meanwhile, and only the
    # verdicts wait for it. Here it takes 3 s, and the trace says in which order the two ended.
    env = fake_gpu(tmp, H200_BOX + "nvml_init_ms=3000\n", PROVKIT_LOG="debug")
    r = envcheck("--kernels", lib("libk_multi.so"), lib("libk_compressed.so"), "--json", env=env)
    expect(r, 0, "--kernels with a slow driver")
    row(r, "kernels " + lib("libk_multi.so"), "PASS", "sm_90a on H200, slow driver", ["sm_90a"])
    lines = r.err.splitlines()
    known = [i for i, line in enumerate(lines) if "kernels: GPUs and driver known at" in line]
    read = [i for i, line in enumerate(lines) if ".nv_fatbin: " in line and "images so far" in line]
    check(len(known) == 1 and len(read) == 2, "the trace has the driver's and both libraries' lines", r.err)
    check(read and known and read[0] < known[0], "a library was read before the driver was known", r.err)


V100_GPU = "gpu.2.uuid=GPU-v100\ngpu.2.name=Tesla V100\ngpu.2.cc=7.0\n"
B200_BOX = "driver_version=580.159.04\ncuda_version=13000\ngpu.0.uuid=GPU-b200\ngpu.0.name=NVIDIA B200\ngpu.0.cc=10.0\n"


def test_ptx_only_warns_and_an_old_driver_cannot_jit_it(tmp):
    r = envcheck("--kernels", lib("libk_no_sm90.so"), "--json", env=fake_gpu(tmp, B200_BOX))
    expect(r, 0, "PTX only")
    row(r, "kernels " + lib("libk_no_sm90.so"), "WARN", "compute_100 PTX on sm_100", ["compute_100", "JIT-compiled"])
    old = B200_BOX.replace("580.159.04", "570.26").replace("13000", "12080")
    r = envcheck("--kernels", lib("libk_no_sm90.so"), "--json", env=fake_gpu(tmp, old))
    expect(r, 1, "PTX too new for the driver")
    row(r, "kernels " + lib("libk_no_sm90.so"), "FAIL", "ISA 9.0 on a 12.8 driver", ["needs a driver for CUDA 13.0", "update the NVIDIA driver"])


def test_relocatable_code_is_listed_not_counted(tmp):
    # libk_rdc.so: the device-linked sm_86 cubin, and nvcc -rdc's sm_86 + compute_89 in __nv_relfatbin.
    r = envcheck("--kernels", lib("libk_rdc.so"), "--json", env=fake_gpu(tmp, H200_BOX))
    expect(r, 1, "relocatable PTX is not loaded")
    name = "kernels " + lib("libk_rdc.so")
    row(r, name, "FAIL", "rdc on sm_90", ["cubins sm_86", "relocatable (__nv_relfatbin, not loaded as it is) sm_86 compute_89"])
    data = checks_by_name(r)[name]["data"]
    check(data["images"] == 1 and data["relocatable"]["images"] == 2 and data["ptx"] == [], "rdc data", str(data))


def test_a_directory_like_site_packages(tmp):
    site = os.path.join(tmp, "site-packages")
    os.makedirs(os.path.join(site, "torch", "lib"))
    os.makedirs(os.path.join(site, "nvidia", "cu13", "lib"))
    shutil.copy(lib("libk_multi.so"), os.path.join(site, "torch", "lib", "libtorch_cuda.so"))
    shutil.copy(lib("libk_compressed.so"), os.path.join(site, "nvidia", "cu13", "lib", "libcublasLt.so.13"))
    with open(os.path.join(site, "torch", "__init__.py"), "w") as f:
        f.write("")
    r = envcheck("--kernels", site, "--json", env=fake_gpu(tmp, H200_BOX))
    expect(r, 0, "--kernels on a directory")
    rows = checks_by_name(r)
    check(rows["kernels"]["data"]["objects"] == 2 and rows["kernels"]["data"]["with_device_code"] == 2, "summary", str(rows["kernels"]))
    row(r, "kernels " + os.path.join(site, "nvidia", "cu13", "lib", "libcublasLt.so.13"), "PASS", "compressed", ["sm_90"])
    check(rows["kernels " + os.path.join(site, "nvidia", "cu13", "lib", "libcublasLt.so.13")]["data"]["compressed"] == 5,
          "compressed count", str(r))
    # Without a driver the kernels are listed, not judged.
    r = envcheck("--kernels", site, "--json")
    expect(r, 0, "--kernels without a GPU")
    row(r, "kernels", "INFO", "no GPU", ["no GPU to judge them against"])
    expect(envcheck("--kernels", os.path.join(tmp, "nowhere")), 1, "--kernels on a missing path")


def test_a_set_with_no_gpu_code_fails_unless_allowed(tmp):
    # Issue 43, item 7: a CPU-only torch got through the documented gate, every per-GPU verdict vacuous. Its
    # libraries are real shared objects with no GPU code: a copy of this machine's libz stands in for them.
    site = os.path.join(tmp, "site-packages")
    os.makedirs(os.path.join(site, "torch", "lib"))
    libz = next(p for p in ("/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1") if os.path.exists(p))
    shutil.copy(libz, os.path.join(site, "torch", "lib", "libtorch_cpu.so"))
    env = fake_gpu(tmp, H200_BOX)
    r = envcheck("--kernels", site, "--json", env=env)
    expect(r, 1, "--kernels on a CPU-only set")
    row(r, "kernels", "FAIL", "no GPU code", ["0 with GPU kernels", "none of them carries GPU code"])
    check("--allow-no-gpu-code" in checks_by_name(r)["kernels"]["fix"], "the fix names the way out", str(r))
    expect(envcheck("--kernels", site, env=env), 1, "the same without a driver's GPUs judged")
    r = envcheck("--kernels", site, "--allow-no-gpu-code", "--json", env=env)
    expect(r, 0, "--allow-no-gpu-code")
    row(r, "kernels", "INFO", "CPU-only meant", ["0 with GPU kernels"])
    # The profile holds the same gate: kernels, allow_no_gpu_code and gfx are keys.
    gate = os.path.join(tmp, "gate.yaml")
    with open(gate, "w") as f:
        f.write(f"envcheck: 1\nkernels: [{site}]\n")
    expect(envcheck("--profile", gate, env=env), 1, "profile kernels: on a CPU-only set")
    with open(gate, "a") as f:
        f.write("allow_no_gpu_code: true\n")
    expect(envcheck("--profile", gate, env=env), 0, "profile allow_no_gpu_code")
    with open(gate, "a") as f:
        f.write("gfx: [gfx942, gfx9]\n")
    r = envcheck("--profile", gate, env=env)
    expect(r, 2, "profile gfx with a bad target")
    check("gate.yaml:4: 'gfx' wants a gfx target" in r.err and "'gfx9'" in r.err, "named by its key and line", str(r))


def test_amd_gpus_from_kfd(tmp):
    sysfs = os.path.join(tmp, "sys")
    make_kfd_tree(sysfs)  # gfx942 and gfx1100
    r = envcheck("--kernels", lib("libh_multi.so"), "--json", env={"ENVCHECK_SYSFS_ROOT": sysfs})
    expect(r, 1, "gfx90a/gfx908/gfx1030 bundle on gfx942 + gfx1100")
    row(r, "kernels " + lib("libh_multi.so"), "FAIL", "no gfx942", ["nothing in it runs on AMD gfx942", "--offload-arch=gfx942"])
    props = os.path.join(sysfs, "class/kfd/kfd/topology/nodes/1/properties")
    with open(props, "w") as f:
        f.write("cpu_cores_count 0\nsimd_count 440\ngfx_target_version 90010\n")  # gfx90a
    shutil.rmtree(os.path.join(sysfs, "class/kfd/kfd/topology/nodes/2"))
    for name in ("libh_multi.so", "libh_ccob_v3.so"):
        r = envcheck("--kernels", lib(name), "--json", env={"ENVCHECK_SYSFS_ROOT": sysfs})
        expect(r, 0, f"{name} on gfx90a")
        row(r, "kernels " + lib(name), "PASS", f"{name} on gfx90a", ["gfx90a:xnack-"])


def test_amd_xnack_mode_decides_which_code_objects_load(tmp):
    # hipcc's real bundles: libh_multi.so has gfx90a:xnack- (and gfx908:sramecc+:xnack-, gfx1030); libh_two.so
    # has gfx906 with no feature named, which loads in either mode. One MI210 (gfx90a), XNACK as the engine gets it.
    sysfs = os.path.join(tmp, "sys")
    make_kfd_tree(sysfs)
    with open(os.path.join(sysfs, "class/kfd/kfd/topology/nodes/1/properties"), "w") as f:
        f.write("cpu_cores_count 0\nsimd_count 416\ngfx_target_version 90010\n")
    shutil.rmtree(os.path.join(sysfs, "class/kfd/kfd/topology/nodes/2"))
    name = "kernels " + lib("libh_multi.so")
    r = envcheck("--kernels", lib("libh_multi.so"), "--json", env={"ENVCHECK_SYSFS_ROOT": sysfs, "HSA_XNACK": "1"})
    expect(r, 1, "xnack- code on a GPU running xnack+")
    row(r, name, "FAIL", "gfx90a:xnack- on xnack+",
        ["nothing in it runs on AMD gfx90a:xnack+", "gfx90a:xnack-: xnack- code on a GPU running xnack+", "HSA_XNACK=0"])
    check(checks_by_name(r)[name]["data"]["gpus"][0]["gpu"] == "AMD gfx90a:xnack+", "the GPU's target id", str(r))
    r = envcheck("--kernels", lib("libh_multi.so"), "--json", env={"ENVCHECK_SYSFS_ROOT": sysfs, "HSA_XNACK": "0"})
    expect(r, 0, "xnack- code on xnack-")
    row(r, name, "PASS", "gfx90a:xnack- on xnack-", ["runs its gfx90a:xnack- code object on AMD gfx90a:xnack-"])
    # amdgpu's noretry=0 turns retry on: XNACK on for every process that does not set HSA_XNACK.
    params = os.path.join(sysfs, "module/amdgpu/parameters")
    os.makedirs(params)
    with open(os.path.join(params, "noretry"), "w") as f:
        f.write("0\n")
    r = envcheck("--kernels", lib("libh_multi.so"), "--json", env={"ENVCHECK_SYSFS_ROOT": sysfs})
    expect(r, 1, "noretry=0: xnack+")
    row(r, name, "FAIL", "gfx90a:xnack- under noretry=0", ["AMD gfx90a:xnack+", "xnack- code on a GPU running xnack+"])
    # A gfx906 node in the same mode: libh_two.so's featureless gfx906 loads.
    with open(os.path.join(sysfs, "class/kfd/kfd/topology/nodes/1/properties"), "w") as f:
        f.write("cpu_cores_count 0\nsimd_count 240\ngfx_target_version 90006\n")
    r = envcheck("--kernels", lib("libh_two.so"), "--json", env={"ENVCHECK_SYSFS_ROOT": sysfs, "HSA_XNACK": "1"})
    expect(r, 0, "no feature named: either mode")
    row(r, "kernels " + lib("libh_two.so"), "PASS", "gfx906 on xnack+", ["runs its gfx906 code object"])


def test_fatbins_kept_as_data_are_looked_for_when_the_registered_ones_fail(tmp):
    # cuFFT registers one sm_75 cubin and keeps ~24000 fatbins in .ldata; libk_ldata.so is built the same way.
    r = envcheck("--kernels", lib("libk_ldata.so"), "--json", env=fake_gpu(tmp, H200_BOX))
    expect(r, 0, "kept as data")
    name = "kernels " + lib("libk_ldata.so")
    row(r, name, "PASS", "sm_90 in .ldata", ["kept as data (.ldata, loaded by the library itself): sm_75 sm_90",
                                              "runs its sm_90 cubins"])
    # Its .ldata (27 KB) holds the same fatbin twice; no larger than the windows it would be looked at in,
    # it is read whole.
    kept = checks_by_name(r)[name]["data"]["kept_as_data"]
    check(kept["images"] == 10 and kept["cubins"] == ["sm_75", "sm_90"] and kept["read_in_part"] is False,
          "kept-as-data read whole", str(kept))
    # A GPU that no cubin kept as data serves keeps the whole section read, for the FAIL to name all of it.
    r = envcheck("--kernels", lib("libk_ldata.so"), "--json", env=fake_gpu(tmp, H200_BOX + V100_GPU))
    expect(r, 1, "kept as data")
    kept = checks_by_name(r)[name]["data"]["kept_as_data"]
    check(kept["images"] == 10 and kept["read_in_part"] is False, "kept-as-data read whole", str(kept))
    row(r, name, "FAIL", "nothing on the V100", ["sm_75 sm_90 compute_90", "nothing in it runs on GPU 2 (Tesla V100"])


def test_a_large_kept_as_data_section_is_looked_at_in_windows(tmp):
    # A 16 MiB .ldata, as cuFFT's 278 MB one keeps its modules grouped by arch: libk_no_sm90.so's fatbin
    # (sm_80, sm_86, sm_120) between two of the 256 windows of 32 KiB (64 KiB apart), libk_compressed.so's
    # (sm_75, sm_90) in the 201st. A scan from the start would list both; the windows find the sm_90 cubin
    # without reading up to it, and an H200's verdict needs no more.
    def fatbin(name):
        out = os.path.join(tmp, name + ".fatbin")
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", lib(name), out], check=True)
        with open(out, "rb") as f:
            return f.read()
    ldata = bytearray(b"y" * (16 << 20))
    early, late = fatbin("libk_no_sm90.so"), fatbin("libk_compressed.so")
    at_early, at_late = 10 * 65536 + 36864, 200 * 65536 + 1024
    assert at_early + len(early) <= 11 * 65536 and len(late) < 32768
    ldata[at_early:at_early + len(early)] = early
    ldata[at_late:at_late + len(late)] = late
    with open(os.path.join(tmp, "ldata.bin"), "wb") as f:
        f.write(ldata)
    big = os.path.join(tmp, "libk_big_ldata.so")
    subprocess.run(["objcopy", "--add-section", ".ldata=" + os.path.join(tmp, "ldata.bin"),
                    "--set-section-flags", ".ldata=alloc,data", lib("libk_no_sm90.so"), big], check=True)
    name = "kernels " + big
    r = envcheck("--kernels", big, "--json", env=fake_gpu(tmp, H200_BOX))
    expect(r, 0, "sm_90 found in a window")
    row(r, name, "PASS", "sm_90 in a window", ["kept as data (.ldata, loaded by the library itself): sm_75 sm_90",
                                               "looked at in windows until each GPU had a cubin that runs",
                                               "runs its sm_90 cubins"])
    kept = checks_by_name(r)[name]["data"]["kept_as_data"]
    check(kept["images"] == 5 and kept["cubins"] == ["sm_75", "sm_90"] and kept["read_in_part"] is True,
          "kept-as-data looked at in windows", str(kept))
    # A V100 that nothing there runs on: the windows are not enough, and the section is read whole.
    r = envcheck("--kernels", big, "--json", env=fake_gpu(tmp, H200_BOX + V100_GPU))
    expect(r, 1, "nothing for the V100")
    kept = checks_by_name(r)[name]["data"]["kept_as_data"]
    check(kept["images"] == 12 and kept["read_in_part"] is False and
          kept["cubins"] == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_120"], "kept-as-data read whole", str(kept))


def test_an_empty_module_needs_no_gpu(tmp):
    # cuFFTW's only cubin is a module with no kernel; libk_empty.so is one (sm_75 only).
    r = envcheck("--kernels", lib("libk_empty.so"), "--json", env=fake_gpu(tmp, H200_BOX))
    expect(r, 0, "empty module")
    name = "kernels " + lib("libk_empty.so")
    row(r, name, "PASS", "empty module on sm_90", ["empty module"])
    check(checks_by_name(r)[name]["data"]["empty_modules"] == 2, "empty_modules", str(r))


def bundler():
    for cand in [shutil.which("clang-offload-bundler")] + sorted(glob.glob("/usr/lib/llvm-*/bin/clang-offload-bundler"), key=lambda p: int(p.split("llvm-")[1].split("/")[0]), reverse=True):
        # --list came with LLVM 15; an older bundler (Debian's llvm-14) cannot be compared with.
        if cand and "-list" in subprocess.run([cand, "--help"], capture_output=True, text=True).stdout:
            return cand
    skip("clang-offload-bundler is not installed (apt-get install clang-15 or hipcc)")


def test_listing_equals_clang_offload_bundler(tmp):
    tool = bundler()
    # LLVM 14 and 15 spell it --inputs=, later releases --input=.
    help_text = subprocess.run([tool, "--help"], capture_output=True, text=True).stdout
    input_flag = "--inputs=" if "-inputs" in help_text else "--input="
    for name in ("libh_multi.so", "libh_two.so"):
        section = os.path.join(tmp, name + ".hip_fatbin")
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.hip_fatbin", lib(name), section], check=True)
        blob = open(section, "rb").read()
        # The bundler lists the first bundle of a file: cut the section at each bundle (4096-aligned).
        theirs = []
        starts = [i for i in range(0, len(blob), 4096) if blob.startswith(b"__CLANG_OFFLOAD_BUNDLE__", i)] + [len(blob)]
        for a, b in zip(starts, starts[1:]):
            piece = os.path.join(tmp, f"{name}.{a}")
            with open(piece, "wb") as f:
                f.write(blob[a:b])
            out = subprocess.run([tool, "--list", "--type=o", input_flag + piece], capture_output=True, text=True, check=True).stdout
            theirs += [t for t in out.split() if not t.startswith("host-")]
        r = envcheck("--kernels", lib(name), "--json")
        data = checks_by_name(r)["kernels " + lib(name)]["data"]
        check(data["images"] == len(theirs), f"{name}: {data['images']} code objects, the bundler lists {len(theirs)}", str(theirs))
        check(sorted(set(t.split("--", 1)[1] for t in theirs)) == sorted(data["code_objects"]),
              f"{name}: ours {data['code_objects']} vs clang-offload-bundler {theirs}", str(r))


if __name__ == "__main__":
    main()
