"""examples/serve-gguf-amd.sh, the serve script of issue 43's second box (a Strix Halo, gfx1151, beside two
R9700s, gfx1201; a gated GGUF shipped as a gguf-split set with an MTP head and an mmproj), run end to end:
the Hub simulator serves the repo, a KFD sysfs tree stands in for the GPUs (the real envcheck reads it), and
the "engine" is a stand-in that records its command line (llama-server cannot run without the GPUs).

Run one: python3 test_serve_gguf_amd.py test_first_run_then_rerun   (ctest runs each as its own test)
"""

import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "hf-fetch"))
sys.path.insert(0, os.path.join(HERE, "..", "envcheck"))
from common import HubSim, check, main, make_repo, tempdir  # noqa: E402
from hf_fixtures import HF_FETCH, TOKEN, blob, clean_env  # noqa: E402
from envcheck_fixtures import BIN as ENVCHECK  # noqa: E402
import checkpoints as ck  # noqa: E402

SCRIPT = os.path.join(HERE, "..", "..", "..", "examples", "serve-gguf-amd.sh")
LAYERS = 8


def split_set():
    """A llama GGUF of 8 layers as gguf-split writes it: 3 parts, each a whole GGUF, the metadata in the first."""
    meta = {"general.architecture": "llama", "general.name": "tiny", "general.file_type": ("u32", 15),
            "llama.context_length": ("u32", 131072), "llama.block_count": ("u32", LAYERS),
            "llama.embedding_length": ("u32", 256), "llama.attention.head_count": ("u32", 8),
            "llama.attention.head_count_kv": ("u32", 2), "llama.feed_forward_length": ("u32", 1024),
            "tokenizer.ggml.tokens": [f"tok{i}" for i in range(2000)]}
    tensors = [("token_embd.weight", 8, [256, 2000])]
    for i in range(LAYERS):
        tensors += [(f"blk.{i}.attn_q.weight", 8, [256, 256]), (f"blk.{i}.attn_k.weight", 8, [256, 64]),
                    (f"blk.{i}.attn_v.weight", 8, [256, 64]), (f"blk.{i}.attn_output.weight", 8, [256, 256]),
                    (f"blk.{i}.ffn_up.weight", 8, [256, 1024]), (f"blk.{i}.ffn_down.weight", 8, [1024, 256])]
    tensors += [("output_norm.weight", 0, [256]), ("output.weight", 8, [256, 2000])]
    cuts = [tensors[:17], tensors[17:34], tensors[34:]]
    files = {}
    for i, part in enumerate(cuts):
        m = {"split.no": ("u16", i), "split.count": ("u16", 3), "split.tensors.count": ("i32", len(tensors))}
        files[f"Q4_K_M/model-Q4_K_M-{i + 1:05d}-of-00003.gguf"] = ck.gguf({**meta, **m} if i == 0 else m, part)[0]
    return files


def amd_box(sysfs, holder=None):
    """KFD nodes 1 (gfx1151, 96 GiB, 90 free), 2 and 3 (gfx1201, 32 GiB, 30 free); `holder` holds 20 GiB of node
    2 (KFD's per-process file), leaving it 10 GiB free."""
    nodes = os.path.join(sysfs, "class/kfd/kfd/topology/nodes")
    for node, version, minor, total, used in ((1, 110501, 128, 96, 6), (2, 120001, 129, 32, 2), (3, 120001, 130, 32, 2)):
        used += 20 if holder and node == 2 else 0
        os.makedirs(os.path.join(nodes, str(node)))
        with open(os.path.join(nodes, str(node), "properties"), "w") as f:
            f.write(f"simd_count 64\ngfx_target_version {version}\ndrm_render_minor {minor}\n")
        with open(os.path.join(nodes, str(node), "gpu_id"), "w") as f:
            f.write(f"{1000 + node}\n")
        dev = os.path.join(sysfs, f"class/drm/renderD{minor}/device")
        os.makedirs(dev)
        for name, gib in (("mem_info_vram_total", total), ("mem_info_vram_used", used)):
            with open(os.path.join(dev, name), "w") as f:
                f.write(f"{gib << 30}\n")
    if holder:
        proc = os.path.join(sysfs, "class/kfd/kfd/proc", str(holder))
        os.makedirs(proc)
        with open(os.path.join(proc, "vram_1002"), "w") as f:
            f.write(f"{20 << 30}\n")


def free_port():
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        return s.getsockname()[1]


class Box:
    def __init__(self, holder=None):
        self.tmp = tempdir("serve-gguf-amd-")
        self.files = split_set()
        self.files.update({"mtp-head-Q8_0.gguf": ck.gguf({"general.architecture": "llama", "general.name": "mtp"},
                                                        [("blk.0.nextn.eh_proj.weight", 8, [512, 256])])[0],
                           "mmproj-F16.gguf": ck.gguf({"general.architecture": "clip", "general.name": "mmproj"},
                                                     [("v.patch_embd.weight", 1, [14, 14, 3, 256])])[0],
                           "Q8_0/model-Q8_0.gguf": blob(300_000, "q8"), "README.md": b"# model\n"})
        make_repo(self.tmp, "org/model-GGUF", self.files, lfs={p for p in self.files if p.endswith(".gguf")},
                  gated=True, tokens=[TOKEN])
        self.token = os.path.join(self.tmp, "token")
        with open(self.token, "w") as f:
            f.write(TOKEN + "\n")
        self.sysfs = os.path.join(self.tmp, "sys")
        amd_box(self.sysfs, holder)
        self.models = os.path.join(self.tmp, "models")
        self.engine_log = os.path.join(self.tmp, "engine.log")
        self.engine = os.path.join(self.tmp, "llama-server")
        with open(self.engine, "w") as f:
            f.write(f'#!/bin/sh\nprintf "%s\\n" "$@" > {self.engine_log}\n')
        os.chmod(self.engine, 0o755)

    def run(self, hub, *engine_args, **extra):
        env = clean_env(HF_FETCH=HF_FETCH, ENVCHECK=ENVCHECK, ENVCHECK_SYSFS_ROOT=self.sysfs, HF_ENDPOINT=hub.hub,
                        HF_TOKEN_FILE=self.token, MODELS=self.models, STATE=os.path.join(self.tmp, "state"),
                        HF_HUB_CACHE=os.path.join(self.tmp, "cache"), PORT=str(free_port()), WAIT="1", **extra)
        first = os.path.join(self.models, "Q4_K_M", "model-Q4_K_M-00001-of-00003.gguf")
        cmd = [SCRIPT, "--", self.engine, "-m", first, *engine_args]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)

    def engine_ran(self):
        return os.path.exists(self.engine_log)


def test_first_run_then_rerun():
    box = Box()
    with HubSim(os.path.join(box.tmp, "repos.json")) as hub:
        r = box.run(hub, "-c", "8192", "-np", "2")
        check(r.returncode == 0, f"the first run: {r.returncode}\n{r.stdout}\n{r.stderr}")
        check(box.engine_ran(), "the engine was not started")
        with open(box.engine_log) as f:
            check(f.read().split("\n")[2:6] == ["-c", "8192", "-np", "2"], "the engine's arguments", box.engine_log)
        for path, data in box.files.items():
            want = path.startswith("Q4_K_M/") or "mmproj" in path or path.startswith("mtp")
            there = os.path.join(box.models, path)
            check(os.path.exists(there) == want, f"{path}: {'missing' if want else 'fetched, not asked for'}")
            if want:
                with open(there, "rb") as f:
                    check(f.read() == data, f"{path}: the bytes")
        check(os.path.getsize(os.path.join(box.tmp, "state", "model.manifest")) > 0, "no manifest was pinned")
        os.remove(box.engine_log)
        hub.clear_requests()
        again = box.run(hub, "-c", "8192", "-np", "2")
        check(again.returncode == 0 and box.engine_ran(), f"the rerun: {again.returncode}\n{again.stderr}")
        check(not any("/resolve/" in q["path"] for q in hub.requests()), "the rerun fetched files again")
    with open(SCRIPT) as f:
        code = [line for line in f if not line.lstrip().startswith("#")]
    check(not any("jq" in line.split() or "awk" in line for line in code), "the script uses jq or awk")


def test_a_plan_that_does_not_fit_stops_before_the_engine():
    box = Box()
    with HubSim(os.path.join(box.tmp, "repos.json")) as hub:
        r = box.run(hub, "-c", "131072", "-np", "4", GPU_MEMORY="40M,40M,40M")
        check(r.returncode == 1 and not box.engine_ran(), f"does not fit: {r.returncode}\n{r.stderr}")
        check("DOES NOT FIT" in r.stderr and "the largest -c that fits" in r.stderr and "the plan for" in r.stderr,
              "the sentence says what is short and what fits", r.stderr)


def test_a_build_without_a_gpus_target_stops_before_the_fetch():
    box = Box()
    with HubSim(os.path.join(box.tmp, "repos.json")) as hub:
        r = box.run(hub, "-c", "8192", GFX_TARGETS="gfx1151")
        check(r.returncode == 1 and not box.engine_ran(), f"gfx1151 only: {r.returncode}\n{r.stderr}")
        check("does not load on node 2 gfx1201" in r.stdout + r.stderr and "--offload-arch=gfx1201" in r.stdout + r.stderr,
              "the box check names the GPU and the target the build lacks", r.stdout + r.stderr)
        check(not any("/resolve/" in q["path"] for q in hub.requests()), "files were fetched before the box check")


def test_a_seat_holding_the_gpu_is_named():
    holder = subprocess.Popen(["sleep", "60"])
    try:
        box = Box(holder=holder.pid)
        with HubSim(os.path.join(box.tmp, "repos.json")) as hub:
            r = box.run(hub, "-c", "8192", VRAM_FREE="24G")
        out = r.stdout + r.stderr
        check(r.returncode == 1 and not box.engine_ran(), f"node 2 has 10 GiB free: {r.returncode}\n{out}")
        check(f"PID {holder.pid} (20.0 GiB" in out and "sleep 60" in out and f"kill {holder.pid}" in out,
              "the box check names the process holding the GPU and how to stop it", out)
    finally:
        holder.kill()
        holder.wait()


if __name__ == "__main__":
    main()
