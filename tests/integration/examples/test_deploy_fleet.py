"""examples/deploy-fleet.sh, the operator's deploy script of issue 21, against the Hub simulator: a gated
GGUF in byte-split parts + MTP head + mmproj, a 12-shard FP8 checkpoint, a seed and 4 nodes behind mirrors
(a dead one, then one serving a shard wrong) with fallback to the Hub. The script uses no jq or awk.

Run one: python3 test_deploy_fleet.py test_seed_then_four_nodes   (ctest runs each as its own test)
"""

import hashlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hf-fetch"))
from common import HubSim, check, main, make_repo, tempdir  # noqa: E402
from hf_fixtures import HF_FETCH, TOKEN, blob, clean_env, sha256  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "envcheck"))
from envcheck_fixtures import BIN as ENVCHECK  # noqa: E402
from test_links import make_port  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "deploy-fleet.sh")


def repos(tmp):
    parts = {f"Q4_K_M/model-Q4_K_M.gguf.part{i}of3": blob(150_000 + i, f"gguf{i}") for i in range(1, 4)}
    whole = b"".join(parts[f"Q4_K_M/model-Q4_K_M.gguf.part{i}of3"] for i in range(1, 4))
    gguf = dict(parts)
    gguf.update({"mtp-head-Q8_0.gguf": blob(40_000, "mtp"), "mmproj-F16.gguf": blob(60_000, "mm"),
                 "config.json": b'{"model_type": "qwen3"}\n', "Q8_0/model-Q8_0.gguf": blob(300_000, "q8"),
                 "SHA256SUMS": f"{sha256(whole)}  model-Q4_K_M.gguf\n".encode()})
    make_repo(tmp, "org/model-GGUF", gguf, lfs={p for p in gguf if ".gguf" in p}, gated=True, tokens=[TOKEN])
    fp8 = {f"model-{i:05d}-of-00012.safetensors": blob(50_000 + i, f"fp8-{i}") for i in range(1, 13)}
    fp8["config.json"] = b'{"quantization_config": {"quant_method": "fp8"}}\n'
    make_repo(tmp, "org/model-FP8", fp8, lfs={p for p in fp8 if p.endswith(".safetensors")})
    return gguf, whole, fp8


def deploy(role, env, timeout=120):
    return subprocess.run([SCRIPT, role], env=env, capture_output=True, text=True, timeout=timeout)


def fleet(prefix):
    """A work folder with the repos, the token file and the state folder: (tmp, gguf, whole, fp8, token_file, state)."""
    tmp = tempdir(prefix)
    gguf, whole, fp8 = repos(tmp)
    token_file = os.path.join(tmp, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    return tmp, gguf, whole, fp8, token_file, os.path.join(tmp, "state")


def test_seed_then_four_nodes():
    tmp, gguf, whole, fp8, token_file, state = fleet("deploy-fleet-")
    repos_json = os.path.join(tmp, "repos.json")
    with HubSim(repos_json) as hub, HubSim(repos_json) as mirror:
        base = dict(HF_FETCH=HF_FETCH, HF_TOKEN_FILE=token_file, STATE=state, HF_ENDPOINT=hub.hub)
        seed = deploy("seed", clean_env(**base, MODELS=os.path.join(tmp, "seed-models"),
                                        HF_HUB_CACHE=os.path.join(tmp, "seed-cache")))
        check(seed.returncode == 0, f"seed failed:\n{seed.stdout}\n{seed.stderr}")
        with open(os.path.join(tmp, "seed-models", "gguf", "model-Q4_K_M.gguf"), "rb") as f:
            check(f.read() == whole, "the seed's GGUF is not its parts in order")
        check(os.path.isdir(os.path.join(state, "mirror")), "no mirror export")
        # The mirror serves one FP8 shard wrong; the first mirror is down.
        bad_shard = "model-00007-of-00012.safetensors"
        mirror.set_faults([{"kind": "wrong_bytes", "at": 100, "times": -1, "path_contains": sha256(fp8[bad_shard])}])
        hub.clear_requests()
        nodes = []
        for k in range(4):
            env = clean_env(**base, MODELS=os.path.join(tmp, f"node{k}"), HF_HUB_CACHE=os.path.join(tmp, f"cache{k}"),
                            MIRRORS=f"http://127.0.0.1:9 {mirror.hub}")
            nodes.append(subprocess.Popen([SCRIPT, "node"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        outs = [p.communicate(timeout=180) for p in nodes]
        hub_reqs = hub.requests()
    for k, (p, (out, err)) in enumerate(zip(nodes, outs)):
        check(p.returncode == 0, f"node {k} failed:\n{out}\n{err}")
        check("MIRROR WRONG BYTES " + bad_shard in out + err, f"node {k}: the mirror's wrong bytes were not named")
        check("MIRROR SKIPPED http://127.0.0.1:9" in out + err, f"node {k}: the dead mirror was not named")
        with open(os.path.join(tmp, f"node{k}", "gguf", "model-Q4_K_M.gguf"), "rb") as f:
            check(hashlib.sha256(f.read()).hexdigest() == sha256(whole), f"node {k}: GGUF")
        snap = os.path.join(tmp, f"cache{k}", "models--org--model-FP8", "snapshots")
        (commit,) = os.listdir(snap)
        for path, data in fp8.items():
            with open(os.path.join(snap, commit, path), "rb") as f:
                check(f.read() == data, f"node {k}: {path}")
    # FP8: only the shard the mirror served wrong came from the Hub (once per node), every other byte from the
    # mirror. (The stand-in mirror is a second simulator, which gates the GGUF repo as the Hub does and is sent
    # no token, so the GGUF falls back to the Hub: the fallback for a refusing mirror.)
    from_hub = [q for q in hub_reqs if "/resolve/" in q["path"] and "model-FP8" in q["path"]]
    check(len(from_hub) == 4 and all(bad_shard in q["path"] for q in from_hub),
          f"the Hub served more than the bad shard: {[q['path'] for q in from_hub]}")
    with open(SCRIPT) as f:
        code = [line for line in f if not line.lstrip().startswith("#")]
    check(not any("jq" in line.split() or "awk" in line for line in code), "the deploy script uses jq or awk")


def test_node_writes_the_nccl_settings_and_stops_on_a_down_port():
    """Issue 43 item 8, the four-node RoCE box: a node takes NCCL's HCA, GID index and interface from envcheck
    --roce into the file the engine's unit reads, with no jq; a node whose port is DOWN stops (exit 1) before it
    fetches a byte and writes no file."""
    tmp, _, _, _, token_file, state = fleet("deploy-fleet-roce-")
    sysfs = os.path.join(tmp, "sys")
    make_port(sysfs, "mlx5_0", 1, "Ethernet", {1: ("::ffff:10.99.0.1", "RoCE v2", "lo"),  # another node's
                                               3: ("::ffff:127.0.0.1", "RoCE v2", "lo")})
    make_port(sysfs, "mlx5_1", 1, "Ethernet", {0: ("::ffff:127.0.0.1", "RoCE v2", "lo")})
    with open(os.path.join(sysfs, "class/infiniband/mlx5_1/ports/1/state"), "w") as f:
        f.write("1: DOWN\n")
    with HubSim(os.path.join(tmp, "repos.json")) as hub:
        base = dict(HF_FETCH=HF_FETCH, ENVCHECK=ENVCHECK, ENVCHECK_SYSFS_ROOT=sysfs, HF_TOKEN_FILE=token_file,
                    STATE=state, HF_ENDPOINT=hub.hub)
        seed = deploy("seed", clean_env(**base, MODELS=os.path.join(tmp, "seed"), HF_HUB_CACHE=os.path.join(tmp, "c0")))
        check(seed.returncode == 0, f"seed failed:\n{seed.stdout}\n{seed.stderr}")
        node = deploy("node", clean_env(**base, ROCE_DEVICE="mlx5_0", MODELS=os.path.join(tmp, "n1"),
                                        HF_HUB_CACHE=os.path.join(tmp, "c1")))
        check(node.returncode == 0, f"node failed:\n{node.stdout}\n{node.stderr}")
        with open(os.path.join(tmp, "n1", "nccl.env")) as f:
            check(f.read() == "NCCL_IB_HCA==mlx5_0:1\nNCCL_IB_GID_INDEX=3\nNCCL_SOCKET_IFNAME==lo\n",
                  "the node's nccl.env", os.path.join(tmp, "n1", "nccl.env"))
        hub.clear_requests()
        down = deploy("node", clean_env(**base, ROCE_DEVICE="mlx5_1", MODELS=os.path.join(tmp, "n2"),
                                        HF_HUB_CACHE=os.path.join(tmp, "c2")))
        check(down.returncode == 1 and "mlx5_1: RoCE is not usable" in down.stderr,
              f"a DOWN port: exit {down.returncode}\n{down.stderr}")
        check(not any("/resolve/" in q["path"] for q in hub.requests()), "the DOWN node fetched before its gate")
        check(not os.path.exists(os.path.join(tmp, "n2", "nccl.env")), "the DOWN node wrote an nccl.env")


if __name__ == "__main__":
    main()
