"""Issue 40 item 7, torch part: the fit planner's weights per GPU against what torch holds on the card.

For each family (a config built here, random weights, bf16): save_pretrained to WORK/FAMILY, plan it with
`hf-fetch inspect DIR --engine-args 'vllm serve DIR --max-model-len 4096' GPUS --json`, then load it on the GPU in
a fresh process (from_pretrained(dtype=bfloat16, device_map="cuda")) and read torch.cuda.memory_allocated() and the
bytes of the model's parameters and buffers. Writes OUT/torch.json and OUT/torch.md; a family that fails is a row
with its error, and the others go on.

  python fit_gpu_torch.py --hf-fetch BIN --work DIR --out DIR [--gpus-arg '--gpus local'] [--families llama,...]
  --dry-run: no torch; the checkpoint is written by a few lines of Python with transformers' tensor names and
             shapes (zeros), and nothing is loaded (for a run on a box without torch or a GPU).
  --load DIR: (internal) load DIR on the GPU and print one JSON line of what torch holds.
"""
import argparse
import json
import os
import shlex
import struct
import subprocess
import sys
import time
import traceback

MiB = 1 << 20

# hidden 1024, 8 layers, vocab 32000: 120-140 M parameters, 240-290 MB in bf16.
CONFIGS = {
    "llama": dict(model_type="llama", architectures=["LlamaForCausalLM"], vocab_size=32000, hidden_size=1024,
                  intermediate_size=2048, num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=4,
                  max_position_embeddings=4096, rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False,
                  bos_token_id=1, eos_token_id=2),
    "qwen3": dict(model_type="qwen3", architectures=["Qwen3ForCausalLM"], vocab_size=32000, hidden_size=1024,
                  intermediate_size=3072, num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=8,
                  head_dim=128, max_position_embeddings=4096, rms_norm_eps=1e-6, rope_theta=1000000.0,
                  tie_word_embeddings=True, bos_token_id=1, eos_token_id=2),
    "gemma3": dict(model_type="gemma3_text", architectures=["Gemma3ForCausalLM"], vocab_size=32000,
                   hidden_size=1024, intermediate_size=4096, num_hidden_layers=8, num_attention_heads=8,
                   num_key_value_heads=4, head_dim=128, max_position_embeddings=4096, rms_norm_eps=1e-6,
                   sliding_window=512, sliding_window_pattern=6, tie_word_embeddings=True, bos_token_id=2,
                   eos_token_id=1, pad_token_id=0),
}


def log(*a):
    print("[torch]", *a, flush=True)


def load(path):
    """In a fresh process: what torch holds after loading `path` on GPU 0."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.cuda.init()
    free0, total = torch.cuda.mem_get_info()
    base = torch.cuda.memory_allocated()
    t0 = time.monotonic()
    how = 'from_pretrained(dtype=bfloat16, device_map="cuda")'
    try:
        try:
            model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.bfloat16, device_map="cuda")
        except TypeError:  # a transformers that knows only torch_dtype
            how = 'from_pretrained(torch_dtype=bfloat16, device_map="cuda")'
            model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.bfloat16, device_map="cuda")
    except Exception as e:  # device_map wants accelerate in transformers 4.x: load on the host, then move
        how = f"from_pretrained(torch_dtype=bfloat16).to('cuda') (device_map failed: {str(e)[:200]})"
        model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.bfloat16).to("cuda")
    torch.cuda.synchronize()
    if next(model.parameters()).dtype != torch.bfloat16:  # a transformers that took dtype= for a config field
        del model
        import gc
        gc.collect()
        torch.cuda.empty_cache()
        how = 'from_pretrained(torch_dtype=bfloat16, device_map="cuda") (dtype= was not taken)'
        model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.bfloat16, device_map="cuda")
        torch.cuda.synchronize()
    took = time.monotonic() - t0
    free1, _ = torch.cuda.mem_get_info()
    params = {}
    for name, p in model.named_parameters():  # tied weights once (remove_duplicate)
        params[name] = p.numel() * p.element_size()
    buffers = {}
    for name, b in model.named_buffers():
        buffers[name] = (b.numel() * b.element_size(), str(b.dtype), b.device.type)
    # Tied parameters: the same storage under two names (lm_head.weight and embed_tokens.weight).
    storages = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        storages.setdefault(p.untyped_storage().data_ptr(), []).append(name)
    tied = [names for names in storages.values() if len(names) > 1]
    print(json.dumps({
        "torch": torch.__version__, "device": torch.cuda.get_device_name(0), "total": total,
        "allocated": torch.cuda.memory_allocated() - base, "reserved": torch.cuda.memory_reserved(),
        "max_allocated": torch.cuda.max_memory_allocated(), "driver_used": free0 - free1,
        "param_bytes": sum(params.values()), "param_tensors": len(params),
        "param_dtypes": sorted({str(p.dtype) for p in model.parameters()}),
        "buffer_bytes": sum(v[0] for v in buffers.values()), "how": how,
        "cuda_buffer_bytes": sum(v[0] for v in buffers.values() if v[2] == "cuda"),
        "buffers": {k: v for k, v in buffers.items()}, "tied": tied, "load_s": round(took, 2),
        "transformers": __import__("transformers").__version__,
    }))


BF16 = 2


def shapes(cfg):
    """transformers' state dict (names and shapes) for the three families, as save_pretrained writes it."""
    h, inter, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim", h // heads)
    out = {"model.embed_tokens.weight": [cfg["vocab_size"], h], "model.norm.weight": [h]}
    if not cfg["tie_word_embeddings"]:
        out["lm_head.weight"] = [cfg["vocab_size"], h]
    for i in range(layers):
        p = f"model.layers.{i}."
        out.update({p + "self_attn.q_proj.weight": [heads * hd, h], p + "self_attn.k_proj.weight": [kv * hd, h],
                    p + "self_attn.v_proj.weight": [kv * hd, h], p + "self_attn.o_proj.weight": [h, heads * hd],
                    p + "mlp.gate_proj.weight": [inter, h], p + "mlp.up_proj.weight": [inter, h],
                    p + "mlp.down_proj.weight": [h, inter], p + "input_layernorm.weight": [h],
                    p + "post_attention_layernorm.weight": [h]})
        if cfg["model_type"] in ("qwen3", "gemma3_text"):
            out.update({p + "self_attn.q_norm.weight": [hd], p + "self_attn.k_norm.weight": [hd]})
        if cfg["model_type"] == "gemma3_text":
            out.update({p + "pre_feedforward_layernorm.weight": [h], p + "post_feedforward_layernorm.weight": [h]})
    return out


def write_dry(cfg, d):
    """A checkpoint without torch: config.json and one model.safetensors of zeros."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({**cfg, "torch_dtype": "bfloat16"}, f, indent=1)
    header, offset = {}, 0
    for name, shape in sorted(shapes(cfg).items()):
        n = BF16
        for x in shape:
            n *= x
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + offset)
    return offset


def write_torch(cfg, d):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(**{k: v for k, v in cfg.items() if k != "architectures"})
    config.architectures = cfg["architectures"]
    torch.manual_seed(0)
    try:
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    except TypeError:  # a transformers that knows only torch_dtype
        model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
    model = model.to(torch.bfloat16)
    model.save_pretrained(d, safe_serialization=True)
    return sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d) if n.endswith(".safetensors"))


def plan(hf_fetch, d, gpus_arg):
    line = f"vllm serve {d} --max-model-len 4096"
    cmd = [hf_fetch, "inspect", d, "--engine-args", line, *shlex.split(gpus_arg), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    try:
        report = json.loads(p.stdout.splitlines()[-1])
    except Exception:
        raise RuntimeError(f"inspect exit {p.returncode}: {p.stderr[-1500:] or p.stdout[-1500:]}")
    return line, p.returncode, report, " ".join(shlex.quote(c) for c in cmd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hf-fetch")
    ap.add_argument("--work")
    ap.add_argument("--out")
    ap.add_argument("--gpus-arg", default="--gpus local")
    ap.add_argument("--families", default="llama,qwen3,gemma3")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--load")
    a = ap.parse_args()
    if a.load:
        load(a.load)
        return
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for family in a.families.split(","):
        row = {"family": family, "errors": []}
        rows.append(row)
        d = os.path.join(a.work, "ckpt-" + family)
        cfg = CONFIGS[family]
        try:
            t0 = time.monotonic()
            if not os.path.exists(os.path.join(d, "config.json")):
                part = d + ".part"  # a call cut off while saving leaves no half checkpoint for the next
                subprocess.run(["rm", "-rf", part])
                write_dry(cfg, part) if a.dry_run else write_torch(cfg, part)
                os.rename(part, d)
                row["file_bytes"] = sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d)
                                        if n.endswith(".safetensors"))
            else:
                row["file_bytes"] = sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d)
                                        if n.endswith(".safetensors"))
            row["write_s"] = round(time.monotonic() - t0, 2)
            log(family, "checkpoint", d, row["file_bytes"], "bytes of safetensors")
        except Exception as e:
            row["errors"].append("checkpoint: " + "".join(traceback.format_exception_only(type(e), e)).strip())
            log(family, "checkpoint failed:", row["errors"][-1])
            continue
        try:
            line, rc, report, cmd = plan(a.hf_fetch, d, a.gpus_arg)
            fit = report.get("fit") or {}
            gpus = fit.get("gpus") or []
            row.update({"engine_args": line, "inspect": cmd, "inspect_exit": rc,
                        "planner_weights_bytes": fit.get("weights_bytes"),
                        "planner_gpu0": gpus[0] if gpus else None, "local_gpus": fit.get("local_gpus"),
                        "planner_message": report.get("message")})
            log(family, "planner:", "exit", rc, "weights", fit.get("weights_bytes"), "gpu0",
                json.dumps(gpus[0] if gpus else None))
        except Exception as e:
            row["errors"].append("inspect: " + str(e))
            log(family, "inspect failed:", row["errors"][-1])
        if a.dry_run:
            row["errors"].append("not loaded: --dry-run (no torch, no GPU here)")
            continue
        try:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--load", d], capture_output=True,
                               text=True, timeout=240)
            if p.returncode != 0:
                raise RuntimeError(f"exit {p.returncode}: {p.stderr[-2000:]}")
            row["torch"] = json.loads(p.stdout.splitlines()[-1])
            log(family, "torch:", json.dumps({k: v for k, v in row["torch"].items() if k != "buffers"}))
        except Exception as e:
            row["errors"].append("load: " + str(e))
            log(family, "load failed:", row["errors"][-1])
    for row in rows:
        g = row.get("planner_gpu0") or {}
        t = row.get("torch") or {}
        planned = g.get("weights_bytes", row.get("planner_weights_bytes"))
        if planned is not None and t:
            row["allocated_minus_planned"] = t["allocated"] - planned
            row["allocated_minus_planned_pct"] = round(100.0 * (t["allocated"] - planned) / planned, 4)
            row["params_minus_planned"] = t["param_bytes"] - planned
            row["params_plus_buffers_minus_planned"] = t["param_bytes"] + t["buffer_bytes"] - planned
            # what the caching allocator adds beyond the tensors themselves (blocks rounded up to 512 bytes)
            row["allocator_rounding"] = t["allocated"] - t["param_bytes"] - t["cuda_buffer_bytes"]
    with open(os.path.join(a.out, "torch.json"), "w") as f:
        json.dump(rows, f, indent=1)
    md = ["## Weights per GPU: planner vs torch (bf16, from_pretrained device_map=cuda)", "",
          "| family | safetensors bytes | planner GPU 0 weights | torch params | torch buffers | "
          "memory_allocated | allocated - planned | % | params - planned | allocator rounding | tied | errors |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        g = row.get("planner_gpu0") or {}
        t = row.get("torch") or {}
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            row["family"], row.get("file_bytes", ""), g.get("weights_bytes", row.get("planner_weights_bytes", "")),
            t.get("param_bytes", ""), t.get("buffer_bytes", ""), t.get("allocated", ""),
            row.get("allocated_minus_planned", ""), row.get("allocated_minus_planned_pct", ""),
            row.get("params_minus_planned", ""), row.get("allocator_rounding", ""),
            "; ".join("=".join(n) for n in t.get("tied", [])), "; ".join(row["errors"]).replace("|", "/")[:300]))
    md.append("")
    for row in rows:
        t = row.get("torch") or {}
        if t:
            md.append(f"- torch {t['torch']}, transformers {t['transformers']}, {t['device']}; loaded by {t['how']}")
            break
    for row in rows:
        t = row.get("torch") or {}
        if t.get("buffers"):
            md.append(f"- {row['family']} buffers: " + ", ".join(f"{k} {v[0]} B {v[1]} on {v[2]}"
                                                                 for k, v in sorted(t["buffers"].items())))
    with open(os.path.join(a.out, "torch.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    sys.exit(0 if all(not r["errors"] for r in rows) else 1)


if __name__ == "__main__":
    main()
