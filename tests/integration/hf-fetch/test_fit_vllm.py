"""hf-fetch inspect --engine-args 'vllm serve ...' (issue 40): vLLM's KV cache planned from config.json and the
safetensors headers, over the Hub simulator, before a byte of weights is fetched.

The repository is a 32B-class FP8 checkpoint (Qwen2.5-32B's shape: 64 layers, 8 KV heads of 128, hidden 5120,
intermediate 27648, vocabulary 152064; FP8 linear weights with 128x128 block scales, bf16 embeddings and head),
served as its headers alone with the sizes the Hub would list (about 34 GB), so the test proves no tensor byte
is read. vLLM's own rules are judged against its printed logs in tests/unit/fit/test_vllm.cpp.

Run one: python3 test_fit_vllm.py test_operators_case_is_refused_before_any_download
"""

import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, tempdir  # noqa: E402
from hf_fixtures import claims_repos, hf_fetch  # noqa: E402
import checkpoints as ck  # noqa: E402

REPO = "org/model-32b-fp8"
LINE = "vllm serve org/model-32b-fp8 -tp 2 --max-model-len 65536"

CONFIG = dict(ck.FP8_CONFIG, architectures=["Qwen2ForCausalLM"], model_type="qwen2", num_hidden_layers=64,
              num_attention_heads=40, num_key_value_heads=8, hidden_size=5120, intermediate_size=27648,
              vocab_size=152064, max_position_embeddings=32768, torch_dtype="bfloat16",
              rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})


def header_only(tensors):
    """A safetensors file's header for `tensors` (name, dtype, shape) and the size of the whole file."""
    header, offset = {}, 0
    for name, dtype, shape in tensors:
        n = ck.prod(shape) * ck.ST_BITS[dtype] // 8
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    head = struct.pack("<Q", len(text)) + text
    return head, len(head) + offset


def serve():
    tmp = tempdir("fit-vllm-")
    shards, index = ck.sharded_model(64, ck.fp8_block, shards=8, hidden=5120, inter=27648, vocab=152064)
    files = [("config.json", json.dumps(CONFIG).encode(), None, False),
             ("model.safetensors.index.json", json.dumps(index).encode(), None, False)]
    for path, tensors in shards.items():
        head, size = header_only(tensors)
        files.append((path, head, size, True))
    return claims_repos(tmp, {REPO: files}), sum(s for _, _, s, lfs in files if lfs)


def inspect(sim, *more, expect=None):
    r = hf_fetch("inspect", REPO, "--endpoint", sim.hub, "--json", *more)
    if expect is not None:
        check(r.rc == expect, f"exit {r.rc}, expected {expect}", r)
    return r, json.loads(r.out.splitlines()[-1])


def text_of(sim, *more):
    return hf_fetch("inspect", REPO, "--endpoint", sim.hub, *more)


def test_operators_case_is_refused_before_any_download():
    repos, listed = serve()
    with HubSim(repos) as sim:
        r, s = inspect(sim, "--engine-args", LINE, "--gpu-memory", "24G,24G", expect=1)
        check(s["reason"] == "does_not_fit", "the reason is not does_not_fit", s)
        fit = s["fit"]
        check(fit["engine"] == "vllm" and not fit["fits"], "not a vLLM plan that does not fit", fit)
        # The weights counted per rank from the headers: about half of the ~34 GB each, TP-split.
        per_rank = fit["gpus"][0]["weights_bytes"]
        check(0.45 * listed < per_rank < 0.52 * listed, f"weights per rank {per_rank} of {listed} listed", fit["gpus"])
        # One 64k request needs 64 layers * 2 * 4 heads * 128 * 2 bytes * 65536 = 8 GiB a rank.
        check(fit["vllm"]["request_bytes"] == 8 << 30, "the KV of one 64k request", fit["vllm"])
        check(fit["gpus"][0]["left"] < 0 and fit["gpus"][1]["left"] < 0, "the cards are not short", fit["gpus"])
        check("estimated maximum model length is" in fit["vllm"]["refusal"], "vLLM's sentence", fit["vllm"])
        most = fit["max_context"]
        check(30000 < most < 65536, f"the largest context {most}", fit)
        # Only headers and sidecars came over the wire: far under a megabyte of 34 GB.
        check(s["transferred"] < 1 << 20, f"{s['transferred']} bytes transferred", s)
        for req in sim.requests():
            if ".safetensors" in req["path"] and req["method"] == "GET" and "index" not in req["path"]:
                check(req["bytes_sent"] < 1 << 20, "a request read tensor bytes", req)

        # The words name the card and the bytes short, and the largest context that fits.
        t = text_of(sim, "--engine-args", LINE, "--gpu-memory", "24G,24G")
        check(t.rc == 1, "exit", t)
        short = -fit["gpus"][0]["left"]
        check(f"GPU 0:" in t.out + t.err and f"({short} bytes) short" in t.out + t.err, "the card and bytes short", t)
        check(f"the largest --max-model-len that fits: {most}" in t.out + t.err, "the largest context", t)

        # That context fits; a block (16 tokens) more does not.
        _, at = inspect(sim, "--engine-args", LINE.replace("65536", str(most)), "--gpu-memory", "24G,24G", expect=0)
        check(at["fit"]["fits"] and at["fit"]["vllm"]["gpu_kv_cache_tokens"] >= most, "max_context fits", at["fit"])
        inspect(sim, "--engine-args", LINE.replace("65536", str(most // 16 * 16 + 16)), "--gpu-memory", "24G,24G",
                expect=1)
        # --print: the value alone.
        p = hf_fetch("inspect", REPO, "--endpoint", sim.hub, "--engine-args", LINE, "--gpu-memory", "24G,24G",
                     "--print", "max_context")
        check(p.rc == 1 and p.out.strip() == str(most), "--print max_context", p)


def test_what_vllm_refuses_is_refused_with_its_reason():
    repos, _ = serve()
    with HubSim(repos) as sim:
        _, s = inspect(sim, "--engine-args", "vllm serve x -tp 3", expect=2)  # 40 heads over 3 ranks
        check(s["reason"] == "engine_refuses" and "divisible by tensor parallel size (3)" in s["message"], "tp", s)
        _, s = inspect(sim, "--engine-args", "vllm serve x --max-model-len 200000", expect=2)
        check("derived max_model_len (131072" in s["message"], "past the derived length (yarn: 32768 x 4)", s)
        _, s = inspect(sim, "--engine-args", "vllm serve x --kv-cache-dtype fp16", expect=2)
        check("invalid choice: 'fp16'" in s["message"], "cache dtype", s)
        # fp8 KV halves the page: 64k then fits where bf16 did not.
        _, s = inspect(sim, "--engine-args", LINE + " --kv-cache-dtype fp8", "--gpu-memory", "24G,24G", expect=0)
        check(s["fit"]["vllm"]["request_bytes"] == 4 << 30, "fp8 KV", s["fit"]["vllm"])
        # No cards: the figures alone, exit 0.
        _, s = inspect(sim, "--engine-args", LINE, expect=0)
        check(s["fit"]["gpus"] == [] and s["fit"]["vllm"]["page_bytes"] == 2 * 16 * 4 * 128 * 2, "no cards", s["fit"])
        # Fewer cards than ranks.
        inspect(sim, "--engine-args", LINE, "--gpu-memory", "24G", expect=2)


# Qwen3-Next-80B-A3B-Instruct's config.json facts (https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct/blob/main/
# config.json): 48 layers, every 4th full attention with 2 KV heads of 256, the rest gated delta nets.
QWEN3_NEXT = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "num_hidden_layers": 48,
              "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "hidden_size": 2048,
              "intermediate_size": 5120, "vocab_size": 151936, "full_attention_interval": 4,
              "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
              "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "max_position_embeddings": 262144,
              "torch_dtype": "bfloat16"}


def serve_config(repo, config):
    """`repo` of config.json and one small checkpoint (its headers are read, its weights are not the point)."""
    tmp = tempdir("fit-vllm-hybrid-")
    shards, index = ck.sharded_model(4, lambda m, shape: [(m + ".weight", "BF16", shape)], shards=1)
    files = [("config.json", json.dumps(config).encode(), None, False)]
    for path, tensors in shards.items():
        head, size = header_only(tensors)
        files.append((path, head, size, True))
    return claims_repos(tmp, {repo: files})


def test_a_hybrid_is_planned_as_vllm_sizes_its_state():
    """vllm-project/vllm#26646: this command line printed "GPU KV cache size: 90,048 tokens" and "Maximum
    concurrency for 215,040 tokens per request: 1.66x" (TP 2, fp8 KV). vLLM's rules give a 1072-token block (one
    GDN state of 548864 bytes a rank, 512 bytes an attention token) and 4 groups of 12 layers; the blocks those lines
    imply (338 or 339) are fed as --kv-cache-memory-bytes, so the words and JSON must say what vLLM said."""
    repo = "org/qwen3-next"
    with HubSim(serve_config(repo, QWEN3_NEXT)) as sim:
        line = ("vllm serve org/qwen3-next --tensor-parallel-size 2 --max-model-len 215040 --gpu-memory-utilization 0.95"
                " --dtype float16 --max-num-seqs 2 --kv-cache-dtype fp8_e5m2 --kv-cache-memory-bytes "
                + str(339 * 12 * 548864))
        r = hf_fetch("inspect", repo, "--endpoint", sim.hub, "--json", "--engine-args", line)
        check(r.rc == 0, "exit", r)
        v = json.loads(r.out.splitlines()[-1])["fit"]["vllm"]
        check(v["block_size"] == 1072 and v["page_bytes"] == 548864 and v["state_bytes"] == 548864, "the page", v)
        check(v["kv_cache_groups"] == 4 and v["layers_per_group"] == 12, "the groups", v)
        # 339 blocks over 4 groups: 84 sequences hold a state and an attention block each at once.
        check(v["max_sequences"] == 84, "the sequences the states allow", v)
        check(v["gpu_kv_cache_tokens"] == 90048 and f"{v['max_concurrency']:.2f}" == "1.66", "the log's lines", v)
        t = hf_fetch("inspect", repo, "--endpoint", sim.hub, "--engine-args", line)
        check("GPU KV cache size: 90,048 tokens" in t.out and "215,040 tokens per request: 1.66x" in t.out, "words", t)
        check("a state of 548864 bytes per sequence per layer" in t.out and "mamba cache mode none" in t.out
              and "at most 84 sequences at once" in t.out, "the text says the state and the sequences", t.out)


def test_a_recurrent_state_it_cannot_size_is_refused_naming_why():
    repo = "org/jamba"
    jamba = dict(QWEN3_NEXT, model_type="jamba", architectures=["JambaForCausalLM"])
    with HubSim(serve_config(repo, jamba)) as sim:
        r = hf_fetch("inspect", repo, "--endpoint", sim.hub, "--json", "--engine-args", "vllm serve org/jamba")
        check(r.rc == 2, "exit", r)
        s = json.loads(r.out.splitlines()[-1])
        check("jamba keeps a recurrent state" in s["message"], "the reason", s)


if __name__ == "__main__":
    main()
