#!/usr/bin/env python3
"""envcheck and the GPUs an engine is given (issue 23): CUDA_VISIBLE_DEVICES with MIG ids (the stand-in NVML
lists MIG instances under their parent GPU), --link-test and --pcie-atomics under CUDA_/ROCR_/HIP_VISIBLE_DEVICES,
--gpu on AMD from the KFD topology and amdgpu sysfs, --gfx with xnack/sramecc modes. The real binary, the
stand-in driver libraries through the real dlopen path, sysfs trees written here.

Usage: test_visibility.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main  # noqa: E402
from test_envcheck import checks_by_name, envcheck, expect, fake_gpu, row, write  # noqa: E402
from test_links import TWO_GPUS, make_pci_tree  # noqa: E402

GPU0 = "GPU-a100aaaa-1111-2222-3333-444455556666"
GPU1 = "GPU-a100bbbb-1111-2222-3333-444455556666"
MIG_A = "MIG-4c5b3f0e-aaaa-5555-9999-000000000001"
MIG_B = "MIG-4c5b3f0e-bbbb-5555-9999-000000000002"
GiB = 1 << 30

# GPU 0 in MIG mode with two instances (slot 0 is empty: NVML skips it); GPU 1 whole.
MIG_BOX = f"""
driver_version=580.65.06
cuda_version=13000
gpu.0.uuid={GPU0}
gpu.0.name=NVIDIA A100-SXM4-80GB
gpu.0.cc=8.0
gpu.0.memory_total={80 * GiB}
gpu.0.memory_free={70 * GiB}
gpu.0.mig_mode=1
gpu.0.mig.1.uuid={MIG_A}
gpu.0.mig.1.name=NVIDIA A100-SXM4-80GB MIG 1g.10gb
gpu.0.mig.1.gi=7
gpu.0.mig.1.ci=0
gpu.0.mig.1.memory_total={10 * GiB}
gpu.0.mig.1.memory_free={9 * GiB}
gpu.0.mig.2.uuid={MIG_B}
gpu.0.mig.2.name=NVIDIA A100-SXM4-80GB MIG 3g.40gb
gpu.0.mig.2.gi=2
gpu.0.mig.2.ci=0
gpu.0.mig.2.memory_total={40 * GiB}
gpu.0.mig.2.memory_free={39 * GiB}
gpu.1.uuid={GPU1}
gpu.1.name=NVIDIA A100-SXM4-80GB
gpu.1.cc=8.0
gpu.1.memory_total={80 * GiB}
gpu.1.memory_free={79 * GiB}
"""


def names(run):
    return list(checks_by_name(run))


def test_mig_id_makes_its_parent_gpu_visible(tmp):
    env = fake_gpu(tmp, MIG_BOX)
    mig = dict(env, CUDA_VISIBLE_DEVICES=MIG_A)
    r = envcheck("--min-cc", "8.0", "--json", env=mig)
    expect(r, 0, "CUDA_VISIBLE_DEVICES=MIG-...: its parent GPU 0 is checked")
    check(names(r) == ["min-cc 8.0 gpu0"], "only the MIG instance's parent is checked", str(r))
    row(r, "min-cc 8.0 gpu0", "PASS", "MIG parent", ["MIG 1g.10gb", "through MIG instance " + MIG_A])
    check(checks_by_name(r)["min-cc 8.0 gpu0"]["data"]["visible_migs"][0]["gpu_instance"] == 7, "row data", str(r))
    # The engine's device is the instance: --vram-free judges its 9 GiB free, not the GPU's 70 GiB.
    r = envcheck("--vram-free", "20G", "--json", env=mig)
    expect(r, 1, "--vram-free 20G on a 10 GiB MIG instance")
    row(r, "vram-free gpu0", "FAIL", "MIG instance memory", ["9.0 GiB free < 20.0 GiB"])
    expect(envcheck("--vram-free", "5G", env=mig), 0, "--vram-free 5G on a MIG instance with 9 GiB free")
    # The inventory says which instance the engine gets.
    inv = envcheck("--json", env=mig)
    expect(inv, 0, "inventory under a MIG id")
    row(inv, "gpu 0", "INFO", "inventory: GPU 0", ["MIG mode, 2 instances", "visible to the engine as MIG instance " +
                                                   MIG_A + " (GPU instance 7, compute instance 0"])
    g0 = checks_by_name(inv)["gpu 0"]["data"]
    check([m["uuid"] for m in g0["mig_instances"]] == [MIG_A, MIG_B], "inventory lists the instances", str(g0))
    check(g0["visible_migs"][0]["uuid"] == MIG_A and "visible" not in g0, "inventory: the visible instance", str(g0))
    row(inv, "gpu 1", "INFO", "inventory: GPU 1", ["not visible to the engine"])
    # The older form names the parent by UUID and the instance by its GPU and compute instance ids.
    r = envcheck("--gpu", "0", "--json", env=dict(env, CUDA_VISIBLE_DEVICES=f"MIG-{GPU0}/2/0"))
    expect(r, 0, "MIG-GPU-<uuid>/2/0")
    row(r, "gpu 0", "PASS", "legacy MIG id", ["MIG 3g.40gb", MIG_B])
    # A MIG id beside a whole GPU: both GPUs are the engine's.
    r = envcheck("--min-cc", "8.0", "--json", env=dict(env, CUDA_VISIBLE_DEVICES=f"{MIG_A},1"))
    expect(r, 0, "MIG id, then GPU 1")
    check(names(r) == ["min-cc 8.0 gpu0", "min-cc 8.0 gpu1"], "both parents checked", str(r))


def test_unknown_mig_id_hides_nothing_else_and_is_reported(tmp):
    env = fake_gpu(tmp, MIG_BOX)
    unknown = "MIG-deadbeef-0000-1111-2222-333344445555"
    r = envcheck("--min-cc", "8.0", "--json", env=dict(env, CUDA_VISIBLE_DEVICES=f"0,{unknown},1"))
    expect(r, 0, "an unknown MIG id between two GPUs")
    row(r, "cuda-visible-devices", "WARN", "unknown MIG id", [unknown, "no MIG instance", "nvidia-smi -L"])
    check([n for n in names(r) if n.startswith("min-cc")] == ["min-cc 8.0 gpu0", "min-cc 8.0 gpu1"],
          "the entries after the unknown MIG id still count", str(r))
    # The legacy form with instance ids the GPU does not have is unknown too.
    inv = envcheck("--json", env=dict(env, CUDA_VISIBLE_DEVICES=f"MIG-{GPU0}/9/9,1"))
    row(inv, "cuda-visible-devices", "WARN", "inventory: unknown legacy MIG id", [f"MIG-{GPU0}/9/9"])
    row(inv, "gpu 0", "INFO", "inventory: GPU 0 hidden", ["not visible to the engine"])
    check("visible" not in checks_by_name(inv)["gpu 1"]["data"], "GPU 1 stays visible", str(inv))
    # Only unknown MIG ids: the engine has no GPU, and the row says why.
    r = envcheck("--min-cc", "8.0", "--json", env=dict(env, CUDA_VISIBLE_DEVICES=unknown))
    expect(r, 1, "only an unknown MIG id")
    row(r, "gpu", "FAIL", "no GPU left", ["leaves the engine no GPU"])


def test_link_test_honours_cuda_visible_devices(tmp):
    env = fake_gpu(tmp, TWO_GPUS)
    r = envcheck("--link-test", "0.2", "--json", env=dict(env, CUDA_VISIBLE_DEVICES="1"))
    expect(r, 0, "--link-test under CUDA_VISIBLE_DEVICES=1")
    rows = names(r)
    check("link gpu 1" in rows and "link gpu 0" not in rows and "peer 0-1" not in rows,
          "only the visible GPU's copies run", str(rows))
    r = envcheck("--min-pcie", "3:4", "--json", env=dict(env, CUDA_VISIBLE_DEVICES="GPU-5090aaaa"))
    check("min-pcie gpu 0" in names(r) and "min-pcie gpu 1" not in names(r), "--min-pcie by UUID prefix", str(r))
    # --gpu names a GPU the engine does not see: its selector row fails, and nothing is copied to it.
    r = envcheck("--gpu", "0", "--link-test", "0.2", "--json", env=dict(env, CUDA_VISIBLE_DEVICES="1"))
    expect(r, 1, "--gpu 0 --link-test with GPU 0 hidden")
    row(r, "gpu 0", "FAIL", "hidden selector", ["not visible to the engine"])
    check(not any(n.startswith("link gpu") for n in names(r)), "no copies to a hidden GPU", str(r))
    r = envcheck("--link-test", "0.2", "--json", env=dict(env, CUDA_VISIBLE_DEVICES=""))
    expect(r, 1, "--link-test with CUDA_VISIBLE_DEVICES=''")
    row(r, "link test", "FAIL", "no GPU to copy to", ["leaves the engine no GPU to copy to"])


def kfd_node(root, node, props, name=None):
    d = os.path.join(root, "class/kfd/kfd/topology/nodes", str(node))
    os.makedirs(d)
    write(os.path.join(d, "properties"), "".join(f"{k} {v}\n" for k, v in props.items()))
    if name:
        write(os.path.join(d, "name"), name + "\n")


def test_pcie_atomics_honours_visibility(tmp):
    sysfs = os.path.join(tmp, "sys")
    make_pci_tree(sysfs)  # NVIDIA gpu 0 at 03:00.0, gpu 1 at 05:00.0; AMD card1 at 04:00.0
    # KFD: the AMD card (location_id 0x400 = bus 4) and a second AMD GPU at 0000:41:00.0 without a DRM card here.
    kfd_node(sysfs, 0, {"cpu_cores_count": 32, "gfx_target_version": 0})
    kfd_node(sysfs, 1, {"gfx_target_version": 90402, "domain": 0, "location_id": 0x400})  # its row: amd1
    kfd_node(sysfs, 2, {"gfx_target_version": 90402, "domain": 0, "location_id": 0x4100})
    env = fake_gpu(tmp, TWO_GPUS, ENVCHECK_SYSFS_ROOT=sysfs)
    r = envcheck("--pcie-atomics", "--json", env=dict(env, CUDA_VISIBLE_DEVICES="0"))
    rows = names(r)
    check("pcie-atomics gpu 0" in rows and "pcie-atomics gpu 1" not in rows, "CUDA_VISIBLE_DEVICES=0", str(rows))
    check("pcie-atomics amd1" in rows, "the AMD card stays (no AMD variable set)", str(rows))
    # ROCR_VISIBLE_DEVICES=1: the second KFD GPU only; the card at 04:00.0 is not the engine's.
    r = envcheck("--pcie-atomics", "--json", env=dict(env, ROCR_VISIBLE_DEVICES="1", CUDA_VISIBLE_DEVICES="0"))
    check("pcie-atomics amd1" not in names(r), "ROCR_VISIBLE_DEVICES=1 hides the card", str(r))
    r = envcheck("--pcie-atomics", "--json", env=dict(env, HIP_VISIBLE_DEVICES="0", CUDA_VISIBLE_DEVICES="0"))
    row(r, "pcie-atomics amd1", "PASS", "HIP_VISIBLE_DEVICES=0 keeps the card")
    # Nothing visible at all: one failing row, not a silent pass.
    r = envcheck("--pcie-atomics", "--json", env=dict(env, CUDA_VISIBLE_DEVICES="", ROCR_VISIBLE_DEVICES=""))
    expect(r, 1, "--pcie-atomics with every GPU hidden")
    row(r, "pcie-atomics", "FAIL", "every GPU hidden", ["no GPU is visible to the engine"])
    # The inventory still shows what it could read, marked.
    inv = envcheck("--json", env=dict(env, ROCR_VISIBLE_DEVICES="1"))
    row(inv, "pcie-atomics amd1", "INFO", "inventory: hidden AMD card", ["not visible to the engine"])
    check(checks_by_name(inv)["pcie-atomics amd1"]["data"]["visible"] is False, "data.visible", str(inv))


SRAM_EDC = 0x04000000  # the capability bit HSA_CAP_SRAM_EDCSUPPORTED


def amd_box(root, noretry="1"):
    """KFD nodes 1 (gfx942, SRAM ECC on, MI300X, renderD128, 10 GiB free of 192) and 2 (gfx90a, SRAM ECC off,
    renderD129, 1 GiB free of 64); amdgpu's noretry parameter (None: not there)."""
    kfd_node(root, 0, {"cpu_cores_count": 32, "gfx_target_version": 0})
    kfd_node(root, 1, {"gfx_target_version": 90402, "drm_render_minor": 128, "unique_id": 0x1a2b3c4d5e6f7081,
                       "capability": SRAM_EDC | 0x2000, "location_id": 0xc100, "domain": 0}, name="gfx942")
    kfd_node(root, 2, {"gfx_target_version": 90010, "drm_render_minor": 129, "unique_id": 0x99887766554433,
                       "capability": 0x2000, "location_id": 0x2300, "domain": 0}, name="gfx90a")
    for minor, total, used, product in ((128, 192 * GiB, 182 * GiB, "AMD Instinct MI300X"),
                                        (129, 64 * GiB, 63 * GiB, None)):
        dev = os.path.join(root, f"class/drm/renderD{minor}/device")
        os.makedirs(dev)
        write(os.path.join(dev, "mem_info_vram_total"), f"{total}\n")
        write(os.path.join(dev, "mem_info_vram_used"), f"{used}\n")
        if product:
            write(os.path.join(dev, "product_name"), product + "\n")
    if noretry is not None:
        os.makedirs(os.path.join(root, "module/amdgpu/parameters"))
        write(os.path.join(root, "module/amdgpu/parameters/noretry"), noretry + "\n")


def test_gpu_gate_on_amd(tmp):
    sysfs = os.path.join(tmp, "sys")
    amd_box(sysfs)
    env = {"ENVCHECK_SYSFS_ROOT": sysfs}
    r = envcheck("--gpu", "0", "--json", env=env)
    expect(r, 0, "--gpu 0 on an AMD box")
    row(r, "gpu amd1", "PASS", "--gpu 0", ["AMD GPU node 1 (AMD Instinct MI300X, gfx942:sramecc+:xnack-)",
                                           "GPU-1a2b3c4d5e6f7081", "VRAM 192.0 GiB total / 10.0 GiB free", "is present"])
    d = checks_by_name(r)["gpu amd1"]["data"]
    check(d["pci_bus_id"] == "0000:c1:00.0" and d["target_id"] == "gfx942:sramecc+:xnack-" and d["xnack"] is False,
          "--gpu 0 data", str(d))
    # By UUID (a unique prefix of 8+ characters), as ROCR_VISIBLE_DEVICES takes them.
    r = envcheck("--gpu", "GPU-0099887766", "--json", env=env)
    expect(r, 0, "--gpu by UUID prefix")
    check(names(r) == ["gpu amd2"], "--gpu by UUID picks node 2", str(r))
    r = envcheck("--gpu", "7", "--json", env=env)
    expect(r, 1, "--gpu 7 on a box of two AMD GPUs")
    row(r, "gpu 7", "FAIL", "unknown selector", ["no AMD GPU matches '7'", "GPU-1a2b3c4d5e6f7081"])
    r = envcheck("--gpu", "1", "--json", env=dict(env, HIP_VISIBLE_DEVICES="0"))
    expect(r, 1, "--gpu 1 hidden by HIP_VISIBLE_DEVICES=0")
    row(r, "gpu 1", "FAIL", "hidden selector", ["not visible to the engine (HIP_VISIBLE_DEVICES='0')"])
    # --gpu narrows the memory gate, as it does on NVIDIA.
    r = envcheck("--gpu", "1", "--vram-free", "5G", "--json", env=env)
    expect(r, 1, "--gpu 1 --vram-free 5G")
    check(names(r) == ["vram-free amd2"], "only the selected GPU is judged", str(r))
    expect(envcheck("--gpu", "0", "--vram-free", "5G", env=env), 0, "--gpu 0 --vram-free 5G")
    # and --gfx.
    expect(envcheck("--gpu", "0", "--gfx", "gfx942", env=env), 0, "--gpu 0 --gfx gfx942 (node 2 is gfx90a)")


def test_gfx_compares_xnack_and_sramecc(tmp):
    sysfs = os.path.join(tmp, "sys")
    amd_box(sysfs)  # noretry=1: XNACK off
    env = {"ENVCHECK_SYSFS_ROOT": sysfs, "HIP_VISIBLE_DEVICES": "1"}  # node 2, gfx90a, SRAM ECC off
    expect(envcheck("--gfx", "gfx90a", env=env), 0, "gfx90a (any mode) on gfx90a")
    expect(envcheck("--gfx", "gfx90a:xnack-", env=env), 0, "gfx90a:xnack- on an XNACK-off gfx90a")
    r = envcheck("--gfx", "gfx90a:xnack+", "--json", env=env)
    expect(r, 1, "gfx90a:xnack+ on an XNACK-off gfx90a")
    row(r, "gfx gfx90a:xnack+", "FAIL", "xnack+ on xnack-", ["node 2 gfx90a:sramecc-:xnack-",
                                                            "xnack+ code on a GPU running xnack-", "HSA_XNACK=1"])
    check(checks_by_name(r)["gfx gfx90a:xnack+"]["data"]["gpus"][0]["runs"] is False, "data.runs", str(r))
    # HSA_XNACK=1 in the engine's environment turns XNACK on (gfx90a chooses per process).
    expect(envcheck("--gfx", "gfx90a:xnack+", env=dict(env, HSA_XNACK="1")), 0, "xnack+ with HSA_XNACK=1")
    expect(envcheck("--gfx", "gfx90a:xnack-", env=dict(env, HSA_XNACK="1")), 1, "xnack- with HSA_XNACK=1")
    # SRAM ECC is the board's: node 2 has it off, node 1 on.
    r = envcheck("--gfx", "gfx90a:sramecc+", "--json", env=env)
    expect(r, 1, "sramecc+ on an SRAM-ECC-off gfx90a")
    row(r, "gfx gfx90a:sramecc+", "FAIL", "sramecc+ on sramecc-", ["sramecc+ code on a GPU running sramecc-"])
    one = dict(env, HIP_VISIBLE_DEVICES="0")
    expect(envcheck("--gfx", "gfx942:sramecc+:xnack-", env=one), 0, "gfx942:sramecc+:xnack- on node 1")
    expect(envcheck("--gfx", "gfx9-4-generic:sramecc-", env=one), 1, "a generic target's features count too")
    # retry on (noretry=0): XNACK is on by default.
    on = os.path.join(tmp, "on")
    amd_box(on, noretry="0")
    expect(envcheck("--gfx", "gfx90a:xnack+", env={"ENVCHECK_SYSFS_ROOT": on, "HIP_VISIBLE_DEVICES": "1"}), 0,
           "xnack+ with noretry=0")


if __name__ == "__main__":
    main()
