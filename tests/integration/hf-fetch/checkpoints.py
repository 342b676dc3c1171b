"""Checkpoint files written by hand for the inspect tests: safetensors (an 8-byte little-endian header length,
the JSON header, the data) and GGUF v3 (ggml's docs/gguf.md), with deterministic tensor bytes."""

import json
import struct

ST_BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E4M3": 8, "F8_E5M2": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
           "I32": 32, "U32": 32, "F32": 32, "F64": 64, "I64": 64, "U64": 64}


def prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def pattern(n, step):
    """n bytes of a repeating pattern with no zero byte."""
    unit = bytes((i * step) % 251 + 1 for i in range(251))
    return (unit * (n // 251 + 1))[:n]


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype, shape). The data bytes are a repeating pattern (never zero), so a
    request that reads them is visible in the simulator's log by its range."""
    header, offset = {}, 0
    for name, dtype, shape in tensors:
        n = prod(shape) * ST_BITS[dtype] // 8
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + pattern(offset, 7)


# ggml type id -> (name, elements per block, bytes per block)
GGML = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 8: ("Q8_0", 32, 34), 12: ("Q4_K", 256, 144),
        14: ("Q6_K", 256, 210), 23: ("IQ4_XS", 256, 136), 30: ("BF16", 1, 2)}


def _str(s):
    b = s if isinstance(s, bytes) else s.encode()  # bytes: written as they are (names that are not UTF-8)
    return struct.pack("<Q", len(b)) + b


def _value(v):
    if isinstance(v, bool):
        return struct.pack("<IB", 7, int(v))
    if isinstance(v, int):
        return struct.pack("<Iq", 11, v) if v < 0 else struct.pack("<IQ", 10, v)
    if isinstance(v, float):
        return struct.pack("<If", 6, v)
    if isinstance(v, (str, bytes)):
        return struct.pack("<I", 8) + _str(v)
    if isinstance(v, tuple) and v[0] == "u32":
        return struct.pack("<II", 4, v[1])
    if isinstance(v, tuple) and v[0] == "i32":
        return struct.pack("<Ii", 5, v[1])
    if isinstance(v, tuple) and v[0] == "u16":
        return struct.pack("<IH", 2, v[1])
    if isinstance(v, list):  # a list of strings
        return struct.pack("<IIQ", 9, 8, len(v)) + b"".join(_str(s) for s in v)
    raise TypeError(v)


def gguf(metadata, tensors, alignment=32):
    """metadata: key -> value (int: UINT64, ("u32", n), ("i32", n), ("u16", n), float, str, bool, list of str);
    tensors: list of (name, ggml type id, shape in ggml order)."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for k, v in metadata.items():
        out += _str(k) + _value(v)
    offset, sizes = 0, []
    for name, type_id, shape in tensors:
        _, block, block_bytes = GGML[type_id]
        n = prod(shape) // block * block_bytes
        out += _str(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", d) for d in shape)
        out += struct.pack("<IQ", type_id, offset)
        sizes.append(n)
        offset += n + (-n % alignment)
    header_end = len(out)
    out += b"\0" * (-len(out) % alignment)
    data = bytearray()
    for n in sizes:
        data += pattern(n, 13)
        data += b"\0" * (-len(data) % alignment)
    return out + bytes(data), header_end


def summary(shards):
    """What inspect must report for shards (path -> tensor list): per file and total tensors, elements,
    bytes per dtype, computed here from the tensor lists."""
    out = {"files": {}, "tensors": 0, "elements": 0, "bytes_by_dtype": {}}
    for path, tensors in shards.items():
        f = {"tensors": len(tensors), "elements": 0, "bytes_by_dtype": {}}
        for _, dtype, shape in tensors:
            n = prod(shape) * ST_BITS[dtype] // 8
            f["elements"] += prod(shape)
            f["bytes_by_dtype"][dtype] = f["bytes_by_dtype"].get(dtype, 0) + n
            out["bytes_by_dtype"][dtype] = out["bytes_by_dtype"].get(dtype, 0) + n
        out["files"][path] = f
        out["tensors"] += f["tensors"]
        out["elements"] += f["elements"]
    return out


def sharded_model(layers, linear, shards=2, hidden=256, inter=512, vocab=1000, extra=None):
    """A Llama-shaped model of `layers` decoder layers split over `shards` files: linear(module, shape) gives
    each projection's tensors; extra: tensors added to the last shard. Returns (path -> tensor list,
    index dict)."""
    per_layer = []
    for i in range(layers):
        p = f"model.layers.{i}."
        t = [(p + "input_layernorm.weight", "BF16", [hidden]), (p + "post_attention_layernorm.weight", "BF16", [hidden])]
        for m, shape in [("self_attn.q_proj", [hidden, hidden]), ("self_attn.k_proj", [hidden // 4, hidden]),
                         ("self_attn.v_proj", [hidden // 4, hidden]), ("self_attn.o_proj", [hidden, hidden]),
                         ("mlp.gate_proj", [inter, hidden]), ("mlp.up_proj", [inter, hidden]),
                         ("mlp.down_proj", [hidden, inter])]:
            t += linear(p + m, shape)
        per_layer.append(t)
    groups = [[] for _ in range(shards)]
    groups[0].append(("model.embed_tokens.weight", "BF16", [vocab, hidden]))
    for i, t in enumerate(per_layer):
        groups[i * shards // layers] += t
    groups[-1] += [("model.norm.weight", "BF16", [hidden]), ("lm_head.weight", "BF16", [vocab, hidden])]
    groups[-1] += extra or []
    names = [f"model-{i + 1:05d}-of-{shards:05d}.safetensors" for i in range(shards)]
    out = dict(zip(names, groups))
    total = sum(prod(s) * ST_BITS[d] // 8 for ts in out.values() for _, d, s in ts)
    index = {"metadata": {"total_size": total}, "weight_map": {n: f for f, ts in out.items() for n, _, _ in ts}}
    return out, index


def fp8_block(module, shape):
    return [(module + ".weight", "F8_E4M3", shape),
            (module + ".weight_scale_inv", "F32", [(shape[0] + 127) // 128, (shape[1] + 127) // 128])]


def nvfp4(module, shape):
    return [(module + ".weight", "U8", [shape[0], shape[1] // 2]), (module + ".weight_scale", "F8_E4M3", [shape[0], shape[1] // 16]),
            (module + ".weight_scale_2", "F32", []), (module + ".input_scale", "F32", [])]


FP8_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                                      "weight_block_size": [128, 128]}}


# A tiny llama GGUF for the fit planner: 4 layers, 2 KV heads of 16 (f16 K and V: 512 bytes a cell over the
# model), F32 weights of about 0.6 MB. The planner's own bytes are judged against llama.cpp in
# test_fit_llamacpp.py; here the GPUs are the point.
TINY_LLAMA_META = {"general.architecture": "llama", "general.name": "tiny-fit",
                   "llama.context_length": ("u32", 131072), "llama.block_count": ("u32", 4),
                   "llama.embedding_length": ("u32", 64), "llama.feed_forward_length": ("u32", 128),
                   "llama.attention.head_count": ("u32", 4), "llama.attention.head_count_kv": ("u32", 2)}


def tiny_llama_gguf(path):
    tensors = [("token_embd.weight", 0, [64, 64]), ("output_norm.weight", 0, [64]), ("output.weight", 0, [64, 64])]
    for i in range(4):
        tensors += [(f"blk.{i}.attn_norm.weight", 0, [64]), (f"blk.{i}.attn_q.weight", 0, [64, 64]),
                    (f"blk.{i}.attn_k.weight", 0, [64, 32]), (f"blk.{i}.attn_v.weight", 0, [64, 32]),
                    (f"blk.{i}.attn_output.weight", 0, [64, 64]), (f"blk.{i}.ffn_norm.weight", 0, [64]),
                    (f"blk.{i}.ffn_gate.weight", 0, [64, 128]), (f"blk.{i}.ffn_up.weight", 0, [64, 128]),
                    (f"blk.{i}.ffn_down.weight", 0, [128, 64])]
    data, _ = gguf(TINY_LLAMA_META, tensors)
    with open(path, "wb") as f:
        f.write(data)
    return path
