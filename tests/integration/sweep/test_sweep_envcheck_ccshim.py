#!/usr/bin/env python3
"""The attacker sweep (sweep_table.py), envcheck's and cc-shim's rows. envcheck: --elf, --kernels, the profile,
the sysfs root it reads (RDMA GID tables, PCI config space, the KFD topology) and the driver library it
dlopens (ENVCHECK_NVML_LIB, or its default soname found through LD_LIBRARY_PATH). cc-shim: response files, -o targets, dependency files (-MF) and zig's global
cache, with the real zig of the cc-shim-zig fixture (a zig cache per cell: -c needs nothing built in it).

Run one: python3 test_sweep_envcheck_ccshim.py test_envcheck_rows   (ctest runs each alone)
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "envcheck"))
from common import BUILD, main, skip, tool  # noqa: E402
from envcheck_fixtures import BIN, FAKE_NVML, MISSING, make_kfd_tree  # noqa: E402
from sweep_table import ODD_NAME, Row, sweep  # noqa: E402
from test_links import TWO_GPUS, make_pci_tree, make_port  # noqa: E402

READ_FILE_MAX = 256 << 20  # util::kReadFileMax: a profile, a response file
GPU0 = "devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0"


def envcheck_env(cell, **more):
    e = dict(os.environ)
    e.update({"ENVCHECK_NVML_LIB": MISSING + "/libnvidia-ml.so.1", "ENVCHECK_CUDA_LIB": MISSING + "/libcuda.so.1",
              "ENVCHECK_NVIDIA_SMI": MISSING + "/nvidia-smi", "ENVCHECK_SYSFS_ROOT": MISSING,
              "ENVCHECK_CUDA_ROOT": MISSING})
    e.pop("PROVKIT_FAKE_GPU", None)
    e.update(more)
    return e


def fake_gpu(cell, **more):
    desc = os.path.join(cell.tmp, "gpu-description.txt")
    with open(desc, "w") as f:
        f.write(TWO_GPUS)
    return envcheck_env(cell, PROVKIT_FAKE_GPU=desc, ENVCHECK_NVML_LIB=FAKE_NVML, **more)


def user_path(cell, plant, name, bound):
    path = cell.path(name)
    if plant == "odd-name":
        return cell.odd_path(cell.root)
    cell.plant(path, plant, bound)
    return path


def envcheck_rows():
    def elf_row(cell, plant):
        return {"argv": [BIN, "--elf", user_path(cell, plant, "libx.so", None)], "env": envcheck_env(cell)}

    def kernels_row(cell, plant):
        return {"argv": [BIN, "--kernels", user_path(cell, plant, "libk.so", None)], "env": envcheck_env(cell)}

    def profile_row(cell, plant):
        return {"argv": [BIN, "--profile", user_path(cell, plant, "profile.yaml", READ_FILE_MAX + 1)],
                "env": envcheck_env(cell)}

    def roce_row(cell, plant):
        sysfs = cell.path("sys")
        make_port(sysfs, "mlx5_0", 1, "Ethernet", {0: ("fe80::1", "IB/RoCE v1", "lo"),
                                                    1: ("::ffff:127.0.0.1", "RoCE v2", "lo")}, size=4)
        gid = os.path.join(sysfs, "class", "infiniband", "mlx5_0", "ports", "1", "gids", "1")
        if plant == "odd-name":  # a device name from sysfs with a newline, ESC and bytes that are not UTF-8
            make_port(sysfs, ODD_NAME.decode("utf-8", "surrogateescape"), 1, "Ethernet",
                      {0: ("::ffff:127.0.0.1", "RoCE v2", "lo")}, size=2)
        else:
            cell.plant(gid, plant, 1 << 20)
        return {"argv": [BIN, "--roce"], "env": envcheck_env(cell, ENVCHECK_SYSFS_ROOT=sysfs)}

    def print_device_row(cell, plant):  # issue 41: --print gives the device's name, one line whatever it holds
        return dict(roce_row(cell, plant), argv=[BIN, "--roce", "--print", "device"])

    def print_path_row(cell, plant):  # issue 41: --print gives a path the user named, one line
        return {"argv": [BIN, "--disk", os.fsencode(user_path(cell, plant, "disk", None)) + b"=1", "--print", "path"],
                "env": envcheck_env(cell)}

    def pci_row(cell, plant):
        sysfs = cell.path("sys")
        make_pci_tree(sysfs)
        cell.plant(os.path.join(sysfs, GPU0, "config"), plant, 1 << 20)
        return {"argv": [BIN, "--pcie-atomics"], "env": fake_gpu(cell, ENVCHECK_SYSFS_ROOT=sysfs)}

    def kfd_row(cell, plant):
        sysfs = cell.path("sys")
        make_kfd_tree(sysfs)
        nodes = os.path.join(sysfs, "class/kfd/kfd/topology/nodes")
        if plant == "odd-name":
            os.makedirs(os.path.join(os.fsencode(nodes), ODD_NAME))
            with open(os.path.join(os.fsencode(nodes), ODD_NAME, b"properties"), "w") as f:
                f.write("simd_count 4\ngfx_target_version 90402\n")
        else:
            cell.plant(os.path.join(nodes, "1", "properties"), plant, (64 << 10) + 1)  # rocm.cpp: 64 KiB
        return {"argv": [BIN], "env": envcheck_env(cell, ENVCHECK_SYSFS_ROOT=sysfs)}

    def nvml_row(cell, plant):
        lib = user_path(cell, plant, "libnvidia-ml.so.1", 2 << 30)
        env = fake_gpu(cell)
        env["ENVCHECK_NVML_LIB"] = os.fsdecode(lib)
        return {"argv": [BIN], "env": env}

    def soname_row(cell, plant):
        # The driver's bare sonames, envcheck's defaults: the loader searches LD_LIBRARY_PATH first, which a
        # user's or a job's environment names.
        libdir = cell.path("lib")
        cell.plant(os.path.join(libdir, "libnvidia-ml.so.1"), plant, 2 << 30)
        env = envcheck_env(cell, LD_LIBRARY_PATH=libdir)
        del env["ENVCHECK_NVML_LIB"], env["ENVCHECK_CUDA_LIB"]
        return {"argv": [BIN], "env": env}

    streams = "reads only the ranges the ELF headers name"
    return [
        Row("envcheck --elf PATH", elf_row, skips={"oversized": streams}),
        Row("envcheck --kernels PATH", kernels_row, skips={"oversized": streams}),
        Row("envcheck --profile FILE", profile_row),
        Row("envcheck sysfs class/infiniband/*/ports/*/gids/N (--roce)", roce_row),
        Row("envcheck --roce --print device", print_device_row),
        Row("envcheck --disk PATH=1 --print path", print_path_row),
        Row("envcheck sysfs bus/pci/devices/*/config (--pcie-atomics)", pci_row,
            skips={"odd-name": "bus ids are checked to be canonical before a path is made of them"}),
        Row("envcheck sysfs class/kfd/kfd/topology/nodes/N/properties", kfd_row),
        Row("envcheck ENVCHECK_NVML_LIB (the driver it dlopens)", nvml_row),
        Row("envcheck LD_LIBRARY_PATH/libnvidia-ml.so.1 (the default soname)", soname_row,
            skips={"odd-name": "the driver's own soname"}),
    ]


def test_envcheck_rows(tmp):
    sweep(envcheck_rows(), tmp)


ZIG = os.path.join(BUILD, "npm", "zig", "node_modules", "@ryoppippi", "zig-linux-x64", "zig")
SHIM = tool("cc-shim")


def shim_env(cell, cache=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CC_SHIM_", "ZIG_"))}
    e["CC_SHIM_ZIG"] = ZIG
    # A cache of the cell's own: a cell whose run is killed (a known hole that hangs) leaves its run
    # directory there, never in the fixture's cache that the cc-shim tests check.
    e["ZIG_GLOBAL_CACHE_DIR"] = cache or os.path.join(cell.tmp, "zig-cache")
    return e


def source(cell):
    os.makedirs(cell.root, exist_ok=True)
    with open(cell.path("a.c"), "w") as f:
        f.write("int a(void) { return 1; }\n")
    return "a.c"


def ccshim_rows():
    def rsp_row(cell, plant):
        src = source(cell)
        rsp = user_path(cell, plant, "args.rsp", READ_FILE_MAX + 1)
        return {"argv": [SHIM, b"@" + os.fsencode(rsp), "-c", src, "-o", "a.o"], "env": shim_env(cell),
                "cwd": cell.root}

    def out_row(cell, plant):
        src = source(cell)
        out = user_path(cell, plant, "a.o", None)
        return {"argv": [SHIM, "-c", src, "-o", out], "env": shim_env(cell), "cwd": cell.root}

    def dep_row(cell, plant):
        src = source(cell)
        dep = user_path(cell, plant, "a.d", None)
        return {"argv": [SHIM, "-MD", "-MF", dep, "-c", src, "-o", "a.o"], "env": shim_env(cell), "cwd": cell.root}

    def same_file_row(cell, plant):  # issue 41: an -o that is the input (a Makefile typo) is refused as gcc does
        source(cell)
        src = user_path(cell, plant, "in.c", None)
        if plant == "odd-name":  # a source of that name, there
            with open(src, "wb") as f:
                f.write(b"int odd;\n")
        return {"argv": [SHIM, "-c", src, "-o", src], "env": shim_env(cell), "cwd": cell.root}

    def cache_row(cell, plant):
        src = source(cell)
        cache = cell.path("zig-cache")
        cell.plant(os.path.join(cache, "cc-shim-runs"), plant, 1 << 20)
        return {"argv": [SHIM, "-c", src, "-o", "a.o"], "env": shim_env(cell, cache), "cwd": cell.root}

    written = "an output: written, never read"
    return [
        Row("cc-shim @FILE (a response file)", rsp_row, json_args=None),
        Row("cc-shim -o FILE", out_row, json_args=None, skips={"oversized": written}, timeout=60),
        Row("cc-shim -MF FILE", dep_row, json_args=None, skips={"oversized": written}, timeout=60),
        Row("cc-shim -c IN -o IN (the output one of the inputs)", same_file_row, json_args=None, timeout=60,
            skips={"fifo": "an input that never ends: gcc waits on it too", "device": "an input that never ends"}),
        Row("cc-shim zig cache <global>/cc-shim-runs", cache_row, json_args=None, timeout=120,
            skips={"odd-name": "cc-shim's own name", "oversized": "a directory position"}),
    ]


def test_ccshim_rows(tmp):
    if not os.access(ZIG, os.X_OK):
        skip(f"no zig at {ZIG} (the cc-shim-zig fixture installs it)")
    sweep(ccshim_rows(), tmp)


if __name__ == "__main__":
    main()
