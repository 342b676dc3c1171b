"""hf-fetch inspect (issue 15): a checkpoint's facts from its headers alone, over the Hub simulator and on disk.
The checkpoints are written here (checkpoints.py); the simulator's request log proves that only header ranges
were read.

Run one: python3 test_inspect.py test_clean_fp8_model   (ctest runs each as its own test)
"""

import json
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, make_repo, tempdir  # noqa: E402
from hf_fixtures import TOKEN, clean_env, header, hf_fetch, resolves  # noqa: E402
import checkpoints as ck  # noqa: E402

REPO = "org/model"


def serve(files, lfs=None, **repo):
    tmp = tempdir("inspect-")
    lfs = {p for p in files if p.endswith((".safetensors", ".gguf"))} if lfs is None else lfs
    sha = make_repo(tmp, REPO, files, lfs=lfs, **repo)
    return os.path.join(tmp, "repos.json"), sha


def model_files(shards, index, config, **more):
    files = {p: ck.safetensors(t, {"format": "pt"}) for p, t in shards.items()}
    files["model.safetensors.index.json"] = json.dumps(index).encode()
    files["config.json"] = json.dumps(config).encode()
    files.update({k: v if isinstance(v, bytes) else json.dumps(v).encode() for k, v in more.items()})
    return files


def inspect(*args, env=None):
    r = hf_fetch("inspect", *args, "--json", env=env)
    lines = [json.loads(x) for x in r.out.splitlines() if x.strip()]
    return r, (lines[-1] if lines else {})


def header_end(data):
    """Where a safetensors file's tensor data starts."""
    return 8 + struct.unpack("<Q", data[:8])[0]


def ranges_read(requests, path_part):
    """(first, last) byte of every range request whose path names `path_part` (CDN requests: by sha256)."""
    out = []
    for r in requests:
        if path_part in r["path"] and r["method"] == "GET":
            rng = header(r, "Range")
            check(rng and rng.startswith("bytes="), f"a request without Range read checkpoint bytes: {r['path']}", r)
            a, b = rng[6:].split("-")
            out.append((int(a), int(b)))
            check(r["bytes_sent"] == int(b) - int(a) + 1, f"{r['path']}: {r['bytes_sent']} bytes for {rng}")
    return out


def check_only_headers(sim, files):
    """Every GET of a safetensors file is a Range inside its header: no byte of tensor data went out."""
    import hashlib
    reqs = sim.requests()
    for path, data in files.items():
        if not path.endswith(".safetensors"):
            continue
        got = ranges_read(reqs, hashlib.sha256(data).hexdigest())
        check(got, f"{path} was not read")
        for a, b in got:
            check(b < header_end(data), f"{path}: bytes {a}-{b} reach into the tensor data at {header_end(data)}")


def check_figures(report, shards):
    want = ck.summary(shards)
    check(report["total"]["tensors"] == want["tensors"], "tensor count", report["total"])
    check(report["total"]["elements"] == want["elements"], "elements", report["total"])
    check(report["total"]["bytes_by_dtype"] == want["bytes_by_dtype"], "bytes per dtype", report["total"])
    got = {f["path"]: {k: f[k] for k in ("tensors", "elements", "bytes_by_dtype")} for f in report["files"]}
    check(got == want["files"], "per-file figures", got)


def test_clean_fp8_model():
    shards, index = ck.sharded_model(4, ck.fp8_block, shards=3)
    files = model_files(shards, index, ck.FP8_CONFIG)
    repos, sha = serve(files)
    with HubSim(repos) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub)
        check(r.rc == 0, f"a clean FP8 model: exit {r.rc}", r)
        check(report["repo"] == REPO and report["revision"] == sha, "repo and commit", report)
        check_figures(report, shards)
        q = report["quantization"]
        check(q["scheme"] == "fp8 (weight_block_size [128, 128])" and q["checked"], "scheme", q)
        check(q["findings"] == [] and q["linear_modules"] == 4 * 7 + 1 and q["quantized_modules"] == 28, "findings", q)
        check(report["indexes"][0]["problems"] == [] and report["indexes"][0]["total_size"] == index["metadata"]["total_size"],
              "index", report["indexes"])
        check_only_headers(sim, files)
        # transferred: the header ranges and the sidecars, nothing more.
        want = sum(header_end(d) for p, d in files.items() if p.endswith(".safetensors")) + \
            sum(len(d) for p, d in files.items() if p.endswith(".json"))
        check(report["transferred"] == want, f"transferred {report['transferred']}, expected {want}")
        # Text mode says the same in sentences.
        t = hf_fetch("inspect", REPO, "--endpoint", sim.hub)
        check(t.rc == 0 and "quantization: fp8 (weight_block_size [128, 128]) (method fp8, format e4m3, block size [128,128]), findings: 0 over 29 linear modules" in t.out, "text", t)
        check(f"transferred: {want} bytes" in t.out, "text transferred", t)


def test_planted_bf16_linear_weight():
    def linear(module, shape):
        if module == "model.layers.2.mlp.down_proj":
            return [(module + ".weight", "BF16", shape)]
        return ck.fp8_block(module, shape)
    shards, index = ck.sharded_model(4, linear, shards=2)
    with HubSim(serve(model_files(shards, index, ck.FP8_CONFIG))[0]) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub)
        t = hf_fetch("inspect", REPO, "--endpoint", sim.hub)
    check(r.rc == 1, f"a planted BF16 weight: exit {r.rc}", r)
    f = report["quantization"]["findings"]
    check(len(f) == 1 and f[0]["tensor"] == "model.layers.2.mlp.down_proj.weight" and f[0]["dtype"] == "BF16"
          and f[0]["expected"] == "F8_E4M3", "the finding", f)
    lines = [x for x in t.err.splitlines() if x.startswith("CONTRADICTS")]
    check(t.rc == 1 and len(lines) == 1 and "model.layers.2.mlp.down_proj.weight: stored BF16, expected F8_E4M3" in lines[0],
          "one line per finding", t)


def test_fp8_weight_without_scale_and_excluded_layers():
    def linear(module, shape):
        if module == "model.layers.0.self_attn.q_proj":
            return [(module + ".weight", "F8_E4M3", shape)]  # no weight_scale_inv
        if module.startswith("model.layers.1."):
            return [(module + ".weight", "BF16", shape)]  # excluded below
        return ck.fp8_block(module, shape)
    shards, index = ck.sharded_model(2, linear, shards=1)
    config = json.loads(json.dumps(ck.FP8_CONFIG))
    config["quantization_config"]["modules_to_not_convert"] = ["model.layers.1"]
    with HubSim(serve(model_files(shards, index, config))[0]) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub)
    f = report["quantization"]["findings"]
    check(r.rc == 1 and len(f) == 1 and f[0]["tensor"] == "model.layers.0.self_attn.q_proj.weight"
          and "weight_scale_inv" in f[0]["expected"], "the missing scale, and nothing for the excluded layer", f)


def test_nvfp4_extra_layer_not_excluded():
    extra = [("model.layers.3.mlp.extra_proj.weight", "BF16", [256, 256])]
    shards, index = ck.sharded_model(4, ck.nvfp4, shards=2, extra=extra)
    quant = {"producer": {"name": "modelopt", "version": "0.29.0"},
             "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16,
                              "exclude_modules": ["lm_head"]}}
    config = {"architectures": ["LlamaForCausalLM"]}
    with HubSim(serve(model_files(shards, index, config, **{"hf_quant_config.json": quant}))[0]) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub)
        quant["quantization"]["exclude_modules"] = ["lm_head", "model.layers.3.mlp.extra*"]
    check(r.rc == 1, f"an unexcluded BF16 layer: exit {r.rc}", r)
    q = report["quantization"]
    check(q["scheme"] == "modelopt NVFP4" and q["source"] == "hf_quant_config.json", "scheme", q)
    check([f["tensor"] for f in q["findings"]] == ["model.layers.3.mlp.extra_proj.weight"], "findings", q)
    with HubSim(serve(model_files(shards, index, config, **{"hf_quant_config.json": quant}))[0]) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub)
    check(r.rc == 0 and report["quantization"]["findings"] == [], "excluded by a glob", r)


GGUF_TENSORS = [("token_embd.weight", 12, [256, 64]), ("blk.0.attn_q.weight", 8, [256, 256]),
                ("blk.0.ffn_down.weight", 23, [1024, 256]), ("blk.0.ffn_up.weight", 14, [256, 1024]),
                ("output_norm.weight", 0, [256]), ("output.weight", 30, [256, 64]), ("blk.0.attn_k.weight", 2, [256, 64])]
GGUF_META = {"general.architecture": "llama", "general.name": "tiny", "general.file_type": ("u32", 15),
             "llama.context_length": ("u32", 4096), "llama.block_count": ("u32", 1),
             "tokenizer.ggml.tokens": [f"tok{i}" for i in range(2000)]}


def gguf_bytes():
    out = {}
    for _, t, shape in GGUF_TENSORS:
        name, block, size = ck.GGML[t]
        out[name] = out.get(name, 0) + ck.prod(shape) // block * size
    return out


def test_gguf_with_several_types():
    data, end = ck.gguf(GGUF_META, GGUF_TENSORS)
    repos, _ = serve({"tiny-Q4_K_M.gguf": data, "README.md": b"# tiny\n"})
    with HubSim(repos) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub)
        reqs = [q for q in resolves(sim.requests()) if q["method"] == "GET"]
    check(r.rc == 0, f"exit {r.rc}", r)
    f = report["files"][0]
    check(f["format"] == "gguf" and f["gguf_version"] == 3 and f["architecture"] == "llama", "format", f)
    check(f["bytes_by_dtype"] == gguf_bytes(), "bytes per ggml type", f["bytes_by_dtype"])
    check(set(f["bytes_by_dtype"]) == {"Q4_K", "Q8_0", "IQ4_XS", "Q6_K", "F32", "BF16", "Q4_0"}, "types")
    check(f["metadata"]["llama.context_length"] == 4096 and f["metadata"]["tokenizer.ggml.tokens"] == "[2000 STRING]", "metadata", f)
    check(f["header_bytes"] == end, f"header {f['header_bytes']}, written {end}")
    # Only ranges from the start; the reads grow from 16 KiB by doubling, so they end before twice the header.
    sent = sum(q["bytes_sent"] for q in reqs if q["bytes_sent"])
    check(all(header(q, "Range") for q in reqs if "gguf" in q["path"] or q["origin"] == "cdn"), "a read without Range", reqs)
    check(sent == report["transferred"] and sent < max(2 * end, 16 << 10) + 1, f"{sent} bytes read for a {end}-byte header of a "
          f"{len(data)}-byte file", reqs)


def test_gguf_split_set():
    parts = [GGUF_TENSORS[:3], GGUF_TENSORS[3:5], GGUF_TENSORS[5:]]
    files = {}
    for i, tensors in enumerate(parts):
        meta = {"split.no": ("u16", i), "split.count": ("u16", 3), "split.tensors.count": ("u16", len(GGUF_TENSORS))}
        if i == 0:
            meta = {**GGUF_META, **meta}
        files[f"Q4_K_M/tiny-Q4_K_M-{i + 1:05d}-of-00003.gguf"] = ck.gguf(meta, tensors)[0]
    with HubSim(serve(files)[0]) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub)
        check(r.rc == 0 and report["gguf_split_problems"] == [], f"a whole split set: exit {r.rc}", r)
        check(report["total"]["bytes_by_dtype"] == gguf_bytes() and report["total"]["tensors"] == len(GGUF_TENSORS),
              "totals over the parts", report["total"])
        # A part left out on purpose is not a missing one.
        r, report = inspect(REPO, "--endpoint", sim.hub, "--exclude", "*-00002-of-*")
        check(r.rc == 0 and report["gguf_split_problems"] == [] and len(report["files"]) == 2, "--exclude of a part", report)
    del files["Q4_K_M/tiny-Q4_K_M-00002-of-00003.gguf"]
    with HubSim(serve(files)[0]) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub)
    check(r.rc == 1 and "2 of the 3 gguf-split parts" in report["gguf_split_problems"][0], "a missing part", report)


def test_include_leaves_shards_out_without_a_contradiction():
    shards, index = ck.sharded_model(4, ck.fp8_block, shards=4)
    with HubSim(serve(model_files(shards, index, ck.FP8_CONFIG))[0]) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub, "--include", "*-00002-of-*", "--include", "*.json")
    check(r.rc == 0 and [f["path"] for f in report["files"]] == ["model-00002-of-00004.safetensors"], "one shard read", r)
    check(report["indexes"][0]["problems"] == [] and len(report["indexes"][0]["not_read"]) == 3, "the index", report["indexes"])


def test_index_that_lies():
    shards, index = ck.sharded_model(2, ck.fp8_block, shards=2)
    index["weight_map"]["model.layers.0.mlp.up_proj.weight"] = "model-00002-of-00002.safetensors"
    index["metadata"]["total_size"] += 1
    with HubSim(serve(model_files(shards, index, ck.FP8_CONFIG))[0]) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub)
    problems = report["indexes"][0]["problems"]
    check(r.rc == 1 and any("up_proj.weight in model-00002-of-00002.safetensors, which does not hold it" in p for p in problems)
          and any("metadata.total_size" in p for p in problems), "index problems", problems)


def test_fit():
    shards, index = ck.sharded_model(2, ck.fp8_block, shards=1)
    with HubSim(serve(model_files(shards, index, ck.FP8_CONFIG))[0]) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub, "--gpus", "2", "--gpu-memory", "2M", "--tp", "2")
        check(r.rc == 0 and report["fit"]["fits"], "fits on 2 x 2 MiB", report.get("fit"))
        whole = sum(b for b in ck.summary(shards)["bytes_by_dtype"].values())
        vectors = sum(ck.prod(s) * ck.ST_BITS[d] // 8 for t in shards.values() for _, d, s in t if len(s) < 2)
        want = (whole - vectors + 1) // 2 + vectors
        check(report["fit"]["weights_per_gpu"] == want and report["fit"]["free_per_gpu"] == (2 << 20) - want, "per GPU", report["fit"])
        r, report = inspect(REPO, "--endpoint", sim.hub, "--gpus", "1", "--gpu-memory", "1M")
        check(r.rc == 1 and report["fit"]["fits"] is False and report["fit"]["free_per_gpu"] < 0, "does not fit", report.get("fit"))
        q = hf_fetch("inspect", REPO, "--endpoint", sim.hub, "--gpus", "1", "--gpu-memory", "1M", "--quiet")
        check(q.rc == 1 and q.out == "" and q.err.count("\n") == 1 and q.err.startswith("DOES NOT FIT")
              and "more than the 1.0 MiB each has" in q.err, "--quiet says why it failed, in one line", q)
        # A --tp that does not divide --gpus is a command-line mistake: said naming both flags, before any request
        # (before: the library's sentence, after every header was read).
        sim.clear_requests()
        r = hf_fetch("inspect", REPO, "--endpoint", sim.hub, "--gpus", "3", "--gpu-memory", "1G", "--tp", "2")
        check(r.rc == 2 and "--tp 2 does not divide --gpus 3" in r.err, "tp that does not divide", r)
        check(not sim.requests(), f"the Hub was asked first: {[q['path'] for q in sim.requests()]}")
        r = hf_fetch("inspect", REPO, "--endpoint", sim.hub, "--gpus", "1", "--gpu-memory", "lots")
        check(r.rc == 2, "a SIZE that is not one", r)


def test_local_paths_cache_and_manifest():
    """The same figures from a snapshot on disk, single files, an hf-fetch cache, and --manifest."""
    shards, index = ck.sharded_model(3, ck.fp8_block, shards=2)
    files = model_files(shards, index, ck.FP8_CONFIG)
    repos, sha = serve(files)
    tmp = tempdir("inspect-local-")
    with HubSim(repos) as sim:
        _, remote = inspect(REPO, "--endpoint", sim.hub)
        manifest = os.path.join(tmp, "m.yaml")
        hf_fetch("manifest", "create", REPO, "--endpoint", sim.hub, "-o", manifest)
        _, from_manifest = inspect("--manifest", manifest, "--endpoint", sim.hub)
        cache = os.path.join(tmp, "cache")
        check(hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", cache).rc == 0, "fetch")
    check(from_manifest["total"] == remote["total"] and from_manifest["revision"] == sha, "--manifest", from_manifest)
    repo_dir = os.path.join(cache, "models--org--model")
    r, cached = inspect(repo_dir)
    check(r.rc == 0 and cached["total"] == remote["total"] and cached["indexes"] == remote["indexes"]
          and cached["quantization"] == remote["quantization"], "the hf-fetch cache", r)
    snap = os.path.join(repo_dir, "snapshots", sha)
    r, one = inspect(os.path.join(snap, "model-00001-of-00002.safetensors"), os.path.join(snap, "config.json"))
    check(r.rc == 0 and one["total"]["tensors"] == len(shards["model-00001-of-00002.safetensors"])
          and one["quantization"]["scheme"].startswith("fp8"), "single files", one)


def test_private_repo_needs_the_token():
    shards, index = ck.sharded_model(1, ck.fp8_block, shards=1)
    repos, _ = serve(model_files(shards, index, ck.FP8_CONFIG), private=True, tokens=[TOKEN])
    with HubSim(repos) as sim:
        r, _ = inspect(REPO, "--endpoint", sim.hub)
        check(r.rc == 4, f"no token: exit {r.rc}", r)
        r, report = inspect(REPO, "--endpoint", sim.hub, env=clean_env(HF_TOKEN=TOKEN))
        check(r.rc == 0 and report["total"]["tensors"] > 0, "with the token", r)
        cdn = [q for q in sim.requests("cdn")]
        check(cdn and not any(header(q, "Authorization") for q in cdn), "the token went to the CDN")
    check(TOKEN not in r.out + r.err, "the token was printed")


def test_server_ignoring_range_and_faults():
    shards, index = ck.sharded_model(2, ck.fp8_block, shards=1)
    files = model_files(shards, index, ck.FP8_CONFIG)
    with HubSim(serve(files)[0]) as sim:
        sim.set_faults([{"kind": "ignore_range", "origin": "cdn", "times": -1}])
        r, report = inspect(REPO, "--endpoint", sim.hub)
        check(r.rc == 0 and report["total"]["tensors"] == ck.summary(shards)["tensors"], "a server that ignores Range", r)
        sim.set_faults([{"kind": "status", "code": 503, "origin": "cdn", "times": 2}])
        r, _ = inspect(REPO, "--endpoint", sim.hub, "--retries", "3")
        check(r.rc == 0, "retried past two 503s", r)
        sim.set_faults([{"kind": "status", "code": 503, "origin": "cdn", "times": -1}])
        r, _ = inspect(REPO, "--endpoint", sim.hub, "--retries", "2")
        check(r.rc == 3, f"503 for ever: exit {r.rc}", r)


def test_bad_input_and_network():
    bad = {"model.safetensors": struct.pack("<Q", 1000) + b"{}"}
    with HubSim(serve(bad)[0]) as sim:
        r, _ = inspect(REPO, "--endpoint", sim.hub)
        check(r.rc == 2 and "model.safetensors" in r.err + r.out and "past the end of the file" in r.err + r.out,
              "a lying header length", r)
        r, _ = inspect("org/absent", "--endpoint", sim.hub)
        check(r.rc == 4, f"a repo that is not there: exit {r.rc}", r)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    r, _ = inspect(REPO, "--endpoint", f"http://127.0.0.1:{port}", "--retries", "1")
    check(r.rc == 3, f"no server: exit {r.rc}", r)
    r = hf_fetch("inspect")
    check(r.rc == 2, "no target", r)
    r = hf_fetch("inspect", "/nonexistent/dir/x", "/nonexistent/y")
    check(r.rc == 2 and "no such file" in r.err, "missing paths", r)


if __name__ == "__main__":
    main()
