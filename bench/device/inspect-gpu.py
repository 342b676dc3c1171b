"""hf-fetch inspect against checkpoints saved by transformers (issue 15), run on the GPU host:
a tiny Llama with random weights saved in bf16 and sharded (so there is an index), and the same model
quantized by transformers' FineGrainedFP8Config (fp8 with weight_block_size) where that works. Each is
inspected locally (the directory) and remotely (the Hub simulator on loopback), and the figures are compared
with safetensors.safe_open's own reading: tensors, elements and bytes per dtype, per file and in total.

  python3 inspect-gpu.py --hf-fetch BIN --src DIR --out DIR     (DIR: holds tests/hubsim/ and checkpoints.py's folder)
  --reference headers: read the headers with a few lines of Python instead of safe_open (for a dry run here)
"""
import argparse, json, os, struct, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("--hf-fetch", required=True)
ap.add_argument("--src", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--reference", default="safe_open", choices=["safe_open", "headers"])
a = ap.parse_args()
sys.path[:0] = [os.path.join(a.src, "tests", "hubsim"), os.path.join(a.src, "tests", "integration", "hf-fetch")]
from simctl import HubSim, make_repo  # noqa: E402

SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
         "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}
results = {}


def reference(d):
    """Per file: tensors, elements, bytes per dtype, as the safetensors library reads them."""
    out = {}
    for name in sorted(os.listdir(d)):
        if not name.endswith(".safetensors"):
            continue
        path = os.path.join(d, name)
        entries = []
        if a.reference == "safe_open":
            from safetensors import safe_open
            with safe_open(path, framework="pt") as f:
                for k in f.keys():
                    s = f.get_slice(k)
                    entries.append((s.get_dtype(), s.get_shape()))
        else:
            with open(path, "rb") as f:
                n = struct.unpack("<Q", f.read(8))[0]
                h = json.loads(f.read(n))
            entries = [(v["dtype"], v["shape"]) for k, v in h.items() if k != "__metadata__"]
        fig = {"tensors": 0, "elements": 0, "bytes_by_dtype": {}}
        for dtype, shape in entries:
            n = 1
            for x in shape:
                n *= x
            fig["tensors"] += 1
            fig["elements"] += n
            fig["bytes_by_dtype"][dtype] = fig["bytes_by_dtype"].get(dtype, 0) + n * SIZES[dtype]
        out[name] = fig
    return out


def inspect(*args):
    t0 = time.monotonic()
    p = subprocess.run([a.hf_fetch, "inspect", *args, "--json"], capture_output=True, text=True)
    took = time.monotonic() - t0
    report = json.loads(p.stdout.splitlines()[-1])
    return p.returncode, report, took


def compare(label, d, repo_id):
    ref = reference(d)
    total = {"tensors": 0, "elements": 0, "bytes_by_dtype": {}}
    for fig in ref.values():
        total["tensors"] += fig["tensors"]
        total["elements"] += fig["elements"]
        for k, v in fig["bytes_by_dtype"].items():
            total["bytes_by_dtype"][k] = total["bytes_by_dtype"].get(k, 0) + v
    row = {"reference": a.reference, "files": len(ref), "reference_total": total}
    rc, local, took = inspect(d)
    row["local"] = {"exit": rc, "seconds": round(took, 3), "transferred": local["transferred"]}
    tmp = tempfile.mkdtemp(prefix="inspect-gpu-")
    files = {}
    for name in os.listdir(d):
        with open(os.path.join(d, name), "rb") as f:
            files[name] = f.read()
    sha = make_repo(tmp, repo_id, files, lfs={n for n in files if n.endswith(".safetensors")})
    try:
        sim = HubSim(os.path.join(tmp, "repos.json")).__enter__()
    except RuntimeError:  # no 127.0.0.2 on this host: the CDN origin on 127.0.0.1 too
        sim = HubSim(os.path.join(tmp, "repos.json"), extra_args=("--cdn-host", "127.0.0.1")).__enter__()
    try:
        rc2, remote, took2 = inspect(repo_id, "--endpoint", sim.hub)
        reqs = sim.requests()
    finally:
        sim.__exit__(None, None, None)
    header_bytes = sum(8 + struct.unpack("<Q", files[n][:8])[0] for n in files if n.endswith(".safetensors"))
    cdn_sent = sum(r.get("bytes_sent") or 0 for r in reqs if r["origin"] == "cdn")
    row["remote"] = {"exit": rc2, "seconds": round(took2, 3), "transferred": remote["transferred"], "commit": sha,
                     "requests": len(reqs), "cdn_bytes_sent": cdn_sent, "header_bytes": header_bytes,
                     "checkpoint_bytes": sum(len(v) for v in files.values())}
    for where, rep in (("local", local), ("remote", remote)):
        got = {f["path"].rsplit("/", 1)[-1]: {k: f[k] for k in ("tensors", "elements", "bytes_by_dtype")} for f in rep["files"]}
        tot = {k: rep["total"][k] for k in ("tensors", "elements", "bytes_by_dtype")}
        row[where].update(same_per_file=got == ref, same_total=tot == total, quantization=rep["quantization"],
                          indexes=rep["indexes"])
    row["only_headers_read"] = cdn_sent == header_bytes
    results[label] = row
    print(f"== {label}: {len(ref)} files; safe_open: {total}")
    for where in ("local", "remote"):
        r = row[where]
        q = r["quantization"]
        print(f"   {where}: exit {r['exit']} in {r['seconds']} s, transferred {r['transferred']} B, same per file: "
              f"{r['same_per_file']}, same total: {r['same_total']}; scheme {q['scheme']}, {len(q['findings'])} findings over "
              f"{q['linear_modules']} linear modules; index problems: {[i['problems'] for i in r['indexes']]}")
    print(f"   remote: {row['remote']['requests']} requests, CDN sent {cdn_sent} B = the headers' {header_bytes} B: "
          f"{row['only_headers_read']} (checkpoint {row['remote']['checkpoint_bytes']} B)")


work = tempfile.mkdtemp(prefix="inspect-models-")
bf16 = os.path.join(work, "tiny-llama-bf16")
if a.reference == "safe_open":
    import torch
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, cuda {torch.cuda.is_available()}")
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1408, num_hidden_layers=6, num_attention_heads=8,
                      num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048, tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    if torch.cuda.is_available():
        model = model.to("cuda")
    model.save_pretrained(bf16, max_shard_size="20MB")
    results["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__}
else:
    import checkpoints as ck
    os.makedirs(bf16)
    shards, index = ck.sharded_model(6, lambda m, s: [(m + ".weight", "BF16", s)], shards=4)
    for p, t in shards.items():
        with open(os.path.join(bf16, p), "wb") as f:
            f.write(ck.safetensors(t, {"format": "pt"}))
    with open(os.path.join(bf16, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f)
    with open(os.path.join(bf16, "config.json"), "w") as f:
        json.dump({"architectures": ["LlamaForCausalLM"]}, f)
compare("transformers bf16, sharded", bf16, "gpu/tiny-llama-bf16")

if a.reference == "safe_open":
    try:
        from transformers import AutoModelForCausalLM, FineGrainedFP8Config
        fp8 = os.path.join(work, "tiny-llama-fp8")
        q = AutoModelForCausalLM.from_pretrained(bf16, quantization_config=FineGrainedFP8Config(), device_map="cuda")
        q.save_pretrained(fp8, max_shard_size="20MB")
        with open(os.path.join(fp8, "config.json")) as f:
            results["fp8_quantization_config"] = json.load(f).get("quantization_config")
        print("   fp8 quantization_config:", json.dumps(results["fp8_quantization_config"]))
        compare("transformers FineGrainedFP8 (fp8, weight_block_size)", fp8, "gpu/tiny-llama-fp8")
    except Exception as e:  # the comparison above stands; say why this one did not run
        results["fp8_error"] = repr(e)[:500]
        print("   FineGrainedFP8 did not run:", repr(e)[:500])

with open(os.path.join(a.out, "inspect-gpu.json"), "w") as f:
    json.dump(results, f, indent=1)
