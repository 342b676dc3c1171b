"""What envcheck's integration tests share: the binary run with no host driver leaking in, the stand-in
driver's description files (a mixed RTX 5090 + RTX 3090 box), the rows of --json, a KFD sysfs tree."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import BUILD, check, run, tool  # noqa: E402


BIN = tool("envcheck")
FAKE_DRIVER = os.path.join(BUILD, "envcheck-fake-driver")
FAKE_NVML = os.path.join(FAKE_DRIVER, "libnvidia-ml.so.1")
FAKE_CUDA = os.path.join(FAKE_DRIVER, "libcuda.so.1")
MISSING = "/nonexistent/envcheck-test"

# Two 64 MiB cards for the fit planner's gates (envcheck --engine-args, hf-fetch inspect --gpus local): card 0
# nearly empty, card 1 with 40 MiB held by another process (24 MiB free).
UUID_EMPTY = "GPU-e0e0e0e0-1111-2222-3333-444455556666"
UUID_HALF = "GPU-4a1f4a1f-1111-2222-3333-444455556666"
HALF_FULL_BOX = f"""
driver_version=580.65.06
cuda_version=13000
gpu.0.uuid={UUID_EMPTY}
gpu.0.name=NVIDIA GeForce RTX 5090
gpu.0.cc=12.0
gpu.0.memory_total={64 << 20}
gpu.0.memory_free={60 << 20}
gpu.1.uuid={UUID_HALF}
gpu.1.name=NVIDIA GeForce RTX 3090
gpu.1.cc=8.6
gpu.1.memory_total={64 << 20}
gpu.1.memory_free={24 << 20}
gpu.1.process.0=4242,{40 << 20}
"""

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


def cc(*args):
    subprocess.run(["gcc", *args], check=True, capture_output=True, timeout=60)


def make_kfd_tree(root):
    nodes = os.path.join(root, "class/kfd/kfd/topology/nodes")
    for node, props in {"0": "cpu_cores_count 32\nsimd_count 0\ngfx_target_version 0\n",
                        "1": "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\ndevice_id 29857\n",
                        "2": "cpu_cores_count 0\nsimd_count 192\ngfx_target_version 110000\ndevice_id 29772\n"}.items():
        os.makedirs(os.path.join(nodes, node))
        with open(os.path.join(nodes, node, "properties"), "w") as f:
            f.write(props)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def hub_cache(cache, repo, files, commit="0123456789abcdef0123456789abcdef01234567", refs=("main",)):
    """A Hugging Face cache holding `repo` at `commit` as huggingface_hub lays it out: each file's bytes in
    blobs/<sha256>, snapshots/<commit>/<path> a relative link to it, refs/<name> holding the commit.
    `files`: {path: bytes}. Returns the snapshot directory."""
    import hashlib
    top = os.path.join(cache, "models--" + repo.replace("/", "--"))
    snap = os.path.join(top, "snapshots", commit)
    os.makedirs(os.path.join(top, "blobs"), exist_ok=True)
    for path, data in files.items():
        blob = hashlib.sha256(data).hexdigest()
        with open(os.path.join(top, "blobs", blob), "wb") as f:
            f.write(data)
        link = os.path.join(snap, path)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink("../" * (path.count("/") + 2) + "blobs/" + blob, link)
    for name in refs:
        os.makedirs(os.path.dirname(os.path.join(top, "refs", name)), exist_ok=True)
        with open(os.path.join(top, "refs", name), "w") as f:
            f.write(commit)
    return snap
