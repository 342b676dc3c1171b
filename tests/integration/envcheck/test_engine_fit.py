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
from envcheck_fixtures import HALF_FULL_BOX, check, envcheck, expect, fake_gpu, row  # noqa: E402

MiB = 1 << 20
BOX = HALF_FULL_BOX
ROW = "engine-fit llama-server"
# vLLM's own overhead (its profiling estimate, about 0.5 GiB here) needs cards of GiBs: card 1 is half full.
GiB = 1 << 30
VLLM_BOX = BOX.replace(str(64 * MiB), str(4 * GiB)).replace(str(60 * MiB), str(4 * GiB - 64 * MiB)) \
    .replace(str(24 * MiB), str(2 * GiB)).replace(str(40 * MiB), str(2 * GiB))


def gate(tmp, line, visible=None, rc=0, box=BOX):
    env = fake_gpu(tmp, box)
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
        # vllm serve ORG/NAME: the engine fetches it; nothing on disk to plan from is a warning, not a failure.
        r = gate(tmp, "vllm serve Qwen/Qwen3-8B --max-model-len 4096")
        row(r, "engine-fit vllm", "WARN", "a repo id", ["not on disk", "a Hub repository"])
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


def test_vllm_from_a_snapshot_directory():
    with tempfile.TemporaryDirectory() as tmp:
        snap = os.path.join(tmp, "snapshot")
        os.makedirs(snap)
        shards, index = sharded_model(4, lambda m, s: [(m + ".weight", "BF16", s)], shards=1, hidden=64, inter=128,
                                      vocab=64)
        for name, tensors in shards.items():
            with open(os.path.join(snap, name), "wb") as f:
                f.write(safetensors(tensors))
        config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
                  "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
                  "num_hidden_layers": 4, "max_position_embeddings": 4096, "vocab_size": 64,
                  "torch_dtype": "bfloat16"}
        with open(os.path.join(snap, "config.json"), "w") as f:
            json.dump(config, f)
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


if __name__ == "__main__":
    from common import main  # noqa: E402
    main()
