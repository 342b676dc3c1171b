"""envcheck --engine-args LINE (issue 40 item 2): the fit planner as a pre-start gate, one check row. The model is
read from the files the line names on disk (a GGUF for llama.cpp, a snapshot directory's config.json and
safetensors headers for vLLM), the cards are the engine's, with their free memory now, from the stand-in
libnvidia-ml (fake_nvml.c) through the same dlopen path as on a real driver.

Run one: python3 test_engine_fit.py test_a_half_full_card_fails_the_gate
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "hf-fetch"))
from checkpoints import safetensors, sharded_model, tiny_llama_gguf  # noqa: E402
from envcheck_fixtures import HALF_FULL_BOX, check, envcheck, expect, fake_gpu, hub_cache, row  # noqa: E402

MiB = 1 << 20
BOX = HALF_FULL_BOX
ROW = "engine-fit llama-server"
# vLLM's own overhead (its profiling estimate, about 0.5 GiB here) needs cards of GiBs: card 1 is half full.
GiB = 1 << 30
VLLM_BOX = BOX.replace(str(64 * MiB), str(4 * GiB)).replace(str(60 * MiB), str(4 * GiB - 64 * MiB)) \
    .replace(str(24 * MiB), str(2 * GiB)).replace(str(40 * MiB), str(2 * GiB))


def gate(tmp, line, visible=None, rc=0, box=BOX, **more):
    # An empty Hub cache of the test's own unless the test names one: the user's never leaks in.
    env = fake_gpu(tmp, box, **{"HF_HUB_CACHE": os.path.join(tmp, "no-cache"), "LLAMA_CACHE": "", **more})
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    r = envcheck("--engine-args", line, "--json", env=env)
    expect(r, rc, line)
    return r


def test_a_half_full_card_fails_the_gate():
    with tempfile.TemporaryDirectory() as tmp:
        model = tiny_llama_gguf(os.path.join(tmp, "x.gguf"))
        # 32 MiB of KV and 0.6 MB of weights: the empty card holds them.
        line = f"llama-server -m {model} -c 65536 -np 2 -fa on"
        r = gate(tmp, line, visible="0")
        row(r, ROW, "PASS", "the empty card", ["NVIDIA GeForce RTX 5090", "KV cache 32.0 MiB"])
        data = {c["name"]: c for c in r.json()["checks"]}[ROW]["data"]
        g = data["fit"]["gpus"][0]
        check(g["source"] == "local" and g["free"] == 60 * MiB and g["left"] > 0, "the row's card", g)
        # The half-full card: 24 MiB free of 64 is short; the row names it, the bytes and the largest -c.
        r = gate(tmp, line, visible="1", rc=1)
        c = {c["name"]: c for c in r.json()["checks"]}[ROW]
        fit = c["data"]["fit"]
        short = -fit["gpus"][0]["left"]
        check(c["data"]["refusal"] == "does_not_fit" and not fit["fits"], "does_not_fit", c)
        row(r, ROW, "FAIL", "the half-full card",
            ["GPU 0 (NVIDIA GeForce RTX 3090) is", f"({short} bytes) short", "24.0 MiB free",
             f"the largest -c that fits: {fit['max_context']}", f"lower -c to {fit['max_context']}"])
        check(0 < fit["max_context"] < 65536, "max_context", fit)
        # The largest -c it names passes the same gate.
        gate(tmp, f"llama-server -m {model} -c {fit['max_context']} -np 2 -fa on", visible="1")
        # The table says it too.
        t = envcheck("--engine-args", line, env={**fake_gpu(tmp, BOX), "CUDA_VISIBLE_DEVICES": "1"})
        check(t.rc == 1 and "FAIL" in t.out and "GPU 0 (NVIDIA GeForce RTX 3090)" in t.out, "the table", t)


def test_a_model_not_on_disk_or_a_refused_line():
    with tempfile.TemporaryDirectory() as tmp:
        r = gate(tmp, "llama-server -m /nonexistent/envcheck-test/x.gguf -c 4096", rc=1)
        row(r, ROW, "FAIL", "a missing -m", ["is not on disk"])
        r = gate(tmp, f"llama-server -m {tmp} -c 4096", rc=1)
        row(r, ROW, "FAIL", "-m a directory", ["is a directory; llama.cpp loads a GGUF file"])
        # vllm serve ORG/NAME not in the cache: the engine fetches it; nothing to plan from is a warning.
        r = gate(tmp, "vllm serve Qwen/Qwen3-8B --max-model-len 4096")
        row(r, "engine-fit vllm", "WARN", "a repo id not cached",
            ["Qwen/Qwen3-8B (revision main) is not in the Hugging Face cache", os.path.join(tmp, "no-cache"),
             "the engine would fetch it", "hf-fetch Qwen/Qwen3-8B"])
        # What llama.cpp refuses while parsing is refused as a usage error, naming the flag.
        bad = envcheck("--engine-args", "llama-server -m x.gguf -ctk q3_k", "--json", env=fake_gpu(tmp, BOX))
        expect(bad, 2, "a cache type llama.cpp refuses")
        check("--engine-args:" in bad.err and "q3_k" in bad.err, "names the flag and the type", bad.err)
        # A file that is not a GGUF is said, not planned.
        junk = os.path.join(tmp, "junk.gguf")
        with open(junk, "wb") as f:
            f.write(b"not a gguf at all")
        r = gate(tmp, f"llama-server -m {junk}", rc=1)
        row(r, ROW, "FAIL", "a bad file", ["cannot plan"])


def tiny_vllm_files():
    """A 4-layer llama checkpoint as vLLM reads it: {path: bytes}."""
    shards, _ = sharded_model(4, lambda m, s: [(m + ".weight", "BF16", s)], shards=1, hidden=64, inter=128,
                              vocab=64)
    files = {name: safetensors(tensors) for name, tensors in shards.items()}
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
              "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
              "num_hidden_layers": 4, "max_position_embeddings": 4096, "vocab_size": 64,
              "torch_dtype": "bfloat16"}
    files["config.json"] = json.dumps(config).encode()
    return files


def test_vllm_from_a_snapshot_directory():
    with tempfile.TemporaryDirectory() as tmp:
        snap = os.path.join(tmp, "snapshot")
        os.makedirs(snap)
        for name, data in tiny_vllm_files().items():
            with open(os.path.join(snap, name), "wb") as f:
                f.write(data)
        line = f"vllm serve {snap} --max-model-len 4096"
        given = line + " --kv-cache-memory-bytes 8M"
        r = gate(tmp, given, visible="0")
        row(r, "engine-fit vllm", "PASS", "vLLM on the empty card", ["NVIDIA GeForce RTX 5090"])
        fit = {c["name"]: c for c in r.json()["checks"]}["engine-fit vllm"]["data"]["fit"]
        # 4 layers x 2 KV heads x 16 x 2 (K, V) x 2 bytes = 512 bytes a token: 8 MiB is 16384 tokens.
        check(fit["vllm"]["gpu_kv_cache_tokens"] == 16384, "vLLM's KV tokens", fit["vllm"])
        # Its KV memory from the cards: 4 GiB less 64 MiB free is above gpu-memory-utilization's 0.92 of the total.
        gate(tmp, line, visible="0", box=VLLM_BOX)
        # On the half-full card vLLM itself refuses to start (free below 0.92 of the total), and the row says so.
        r = gate(tmp, line, visible="1", rc=1, box=VLLM_BOX)
        row(r, "engine-fit vllm", "FAIL", "vLLM on the half-full card",
            ["vLLM would refuse to start: Free memory on device cuda:0", "less than desired GPU memory utilization"])


COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"
VROW = "engine-fit vllm"


def data_of(r, name):
    return {c["name"]: c for c in r.json()["checks"]}[name]["data"]


def test_vllm_serve_a_repo_id_from_the_hub_cache():
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "hub")
        snap = hub_cache(cache, "Org/Tiny", tiny_vllm_files(), commit=COMMIT, refs=("main",))
        check(os.path.islink(os.path.join(snap, "config.json")), "the snapshot holds links into blobs/", snap)
        line = "vllm serve Org/Tiny --max-model-len 4096 --kv-cache-memory-bytes 8M"
        # HF_HUB_CACHE: refs/main's snapshot is planned as the snapshot directory itself is.
        r = gate(tmp, line, visible="0", HF_HUB_CACHE=cache)
        row(r, VROW, "PASS", "a cached repo id", ["Org/Tiny: KV cache", "NVIDIA GeForce RTX 5090"])
        d = data_of(r, VROW)
        check(d["snapshot"] == snap and d["fit"]["vllm"]["gpu_kv_cache_tokens"] == 16384, "the snapshot's plan", d)
        # HF_HOME/hub when HF_HUB_CACHE is not set (huggingface_hub's rule, the one hf-fetch fills by).
        home = os.path.join(tmp, "hf-home")
        hub_cache(os.path.join(home, "hub"), "Org/Tiny", tiny_vllm_files(), commit=COMMIT)
        r = gate(tmp, line, visible="0", HF_HUB_CACHE="", HF_HOME=home)
        row(r, VROW, "PASS", "HF_HOME/hub", ["Org/Tiny: KV cache"])
        # --revision: a ref the cache holds, a commit named directly, a ref it does not hold.
        hub_cache(cache, "Org/Tiny", tiny_vllm_files(), commit=OTHER, refs=("v2",))
        r = gate(tmp, line + " --revision v2", visible="0", HF_HUB_CACHE=cache)
        check(data_of(r, VROW)["snapshot"].endswith(OTHER), "refs/v2's snapshot", data_of(r, VROW))
        r = gate(tmp, f"{line} --revision {COMMIT}", visible="0", HF_HUB_CACHE=cache)
        check(data_of(r, VROW)["snapshot"].endswith(COMMIT), "a commit as the revision", data_of(r, VROW))
        r = gate(tmp, line + " --revision v9", HF_HUB_CACHE=cache)
        row(r, VROW, "WARN", "a revision not cached",
            ["(revision v9) is not in the Hugging Face cache " + cache, "no ref v9", "hf-fetch Org/Tiny@v9"])
        # Not cached, offline: vLLM cannot start, so the gate fails.
        r = gate(tmp, "vllm serve Org/Other --max-model-len 4096", rc=1, HF_HUB_CACHE=cache, HF_HUB_OFFLINE="1")
        row(r, VROW, "FAIL", "offline and not cached",
            ["models--Org--Other is not there", "HF_HUB_OFFLINE is set", "hf-fetch Org/Other"])


def test_a_hostile_repo_id_or_revision_is_refused():
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "hub")
        hub_cache(cache, "Org/Tiny", tiny_vllm_files(), commit=COMMIT)
        # A planted tree outside the cache that a "../" id would reach: never read.
        hub_cache(tmp, "Org/Tiny", tiny_vllm_files(), commit=COMMIT)
        for bad in ["../Org", "a/" + "b" * 300, "Org/../../x"]:
            r = gate(tmp, f"vllm serve {bad} --max-model-len 4096", rc=1, HF_HUB_CACHE=cache)
            row(r, VROW, "FAIL", f"vllm serve {bad}", ["is not on disk, and is not a Hub repository id"])
        for bad in ["../../x:Q4_K_M", "/abs/x", "Org/Tiny/extra", "x" * 300 + "/y"]:
            r = gate(tmp, f"llama-server -hf {bad} -c 4096", rc=1, HF_HUB_CACHE=cache)
            row(r, ROW, "FAIL", f"-hf {bad}", ["is not a Hub repository id (ORG/NAME[:QUANT])"])
        for rev in ["../../../x", "/etc", "a//b"]:
            r = gate(tmp, f"vllm serve Org/Tiny --revision {rev}", rc=1, HF_HUB_CACHE=cache)
            row(r, VROW, "FAIL", f"--revision {rev}", ["is not a revision name"])


def test_llama_server_hf_from_the_hub_cache():
    with tempfile.TemporaryDirectory() as tmp:
        with open(tiny_llama_gguf(os.path.join(tmp, "t.gguf")), "rb") as f:
            gguf = f.read()
        cache = os.path.join(tmp, "hub")
        # Distinct contents for each name (a byte past the data), so each name has its own blob.
        files = {name: gguf + bytes([i]) for i, name in enumerate(
            ["mmproj-Tiny-Q8_0.gguf", "Tiny-Q8_0.gguf", "Tiny-Q4_K_M.gguf", "sub/Tiny-IQ4_XS.gguf"])}
        files["README.md"] = b"tiny"
        snap = hub_cache(cache, "Org/Tiny-GGUF", files, commit=COMMIT)
        tail = " -c 4096 -np 1 -fa on"

        def picked(spec, **env):
            r = gate(tmp, f"llama-server {spec}{tail}", visible="0", HF_HUB_CACHE=cache, **env)
            row(r, ROW, "PASS", spec, ["Org/Tiny-GGUF", "KV cache"])
            return data_of(r, ROW)["model_file"]

        # The tag picks the file as llama.cpp does (the mmproj is never the model), case aside.
        check(picked("-hf Org/Tiny-GGUF:Q8_0") == "Tiny-Q8_0.gguf", "Q8_0", snap)
        check(picked("-hf Org/Tiny-GGUF:q8_0") == "Tiny-Q8_0.gguf", "q8_0", snap)
        check(picked("--hf-repo Org/Tiny-GGUF:IQ4_XS") == "sub/Tiny-IQ4_XS.gguf", "in a folder", snap)
        # No tag: Q4_K_M first, as llama.cpp's default.
        check(picked("-hf Org/Tiny-GGUF") == "Tiny-Q4_K_M.gguf", "the default tag", snap)
        # --hf-file names the file, case aside.
        check(picked("-hf Org/Tiny-GGUF --hf-file tiny-q8_0.GGUF") == "Tiny-Q8_0.gguf", "--hf-file", snap)
        # A tag the snapshot has no GGUF for: the row lists the ones it has.
        r = gate(tmp, "llama-server -hf Org/Tiny-GGUF:Q5_K_M" + tail, rc=1, HF_HUB_CACHE=cache)
        row(r, ROW, "FAIL", "no Q5_K_M", ["holds no GGUF for the quantization Q5_K_M", "Tiny-Q4_K_M.gguf"])
        # LLAMA_CACHE is llama.cpp's cache for -hf when set (the same layout): looked at instead of HF_HUB_CACHE.
        other = os.path.join(tmp, "llama-cache")
        r = gate(tmp, "llama-server -hf Org/Tiny-GGUF:Q8_0" + tail, HF_HUB_CACHE=cache, LLAMA_CACHE=other)
        row(r, ROW, "WARN", "LLAMA_CACHE", ["not in the Hugging Face cache " + other, "hf-fetch Org/Tiny-GGUF"])
        hub_cache(other, "Org/Tiny-GGUF", files, commit=COMMIT)
        check(picked("-hf Org/Tiny-GGUF:Q8_0", LLAMA_CACHE=other) == "Tiny-Q8_0.gguf", "LLAMA_CACHE", other)
        # --offline: llama.cpp cannot fetch what the cache lacks, so the gate fails.
        r = gate(tmp, "llama-server -hf Org/None-GGUF --offline" + tail, rc=1, HF_HUB_CACHE=cache)
        row(r, ROW, "FAIL", "--offline", ["the line runs llama.cpp offline"])


if __name__ == "__main__":
    from common import main  # noqa: E402
    main()
