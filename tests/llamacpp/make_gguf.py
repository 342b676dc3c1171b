"""Tiny random-weight GGUFs of several llama.cpp families, written with gguf-py's
GGUFWriter (Debian's python3-gguf), for the fit planner's judge: llama.cpp loads
them and allocates its caches as it would for the real model.

Usage: make_gguf.py FAMILY OUT.gguf [MAX_TENSORS]
  With MAX_TENSORS, a gguf-split set as gguf-py writes one (convert_hf_to_gguf.py --split-max-tensors):
  OUT-00001-of-0000N.gguf ... beside OUT, each part a whole GGUF with split.no/split.count/split.tensors.count.
"""
import sys

import gguf
import numpy as np

rng = np.random.default_rng(0)
VOCAB = 64


def t(w, name, *shape):
    # gguf-py takes numpy's row-major shape (outermost first)
    w.add_tensor(name, (rng.standard_normal(shape) * 0.02).astype(np.float32))


def ones(w, name, n):
    w.add_tensor(name, np.ones(n, dtype=np.float32))


def common(w, arch, layers, embd, heads, kv_heads, ctx):
    w.add_block_count(layers)
    w.add_context_length(ctx)
    w.add_embedding_length(embd)
    w.add_feed_forward_length(embd * 2)
    w.add_head_count(heads)
    if kv_heads is not None:
        w.add_head_count_kv(kv_heads)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_uint32(f"{arch}.vocab_size", VOCAB)
    w.add_tokenizer_model("none")
    t(w, "token_embd.weight", VOCAB, embd)
    ones(w, "output_norm.weight", embd)
    t(w, "output.weight", VOCAB, embd)


def ffn(w, i, embd):
    ones(w, f"blk.{i}.ffn_norm.weight", embd)
    t(w, f"blk.{i}.ffn_gate.weight", embd * 2, embd)
    t(w, f"blk.{i}.ffn_up.weight", embd * 2, embd)
    t(w, f"blk.{i}.ffn_down.weight", embd, embd * 2)


def attention(w, i, embd, heads, kv_heads, head_k, head_v):
    ones(w, f"blk.{i}.attn_norm.weight", embd)
    t(w, f"blk.{i}.attn_q.weight", heads * head_k, embd)
    t(w, f"blk.{i}.attn_k.weight", kv_heads * head_k, embd)
    t(w, f"blk.{i}.attn_v.weight", kv_heads * head_v, embd)
    t(w, f"blk.{i}.attn_output.weight", embd, heads * head_v)


def llama(w):
    # dense GQA; head_count_kv written as a per-layer array (llama takes one width for all layers)
    arch, layers, embd, heads = "llama", 4, 64, 4
    kv = [2, 2, 2, 2]
    common(w, arch, layers, embd, heads, kv, 4096)
    w.add_rope_dimension_count(16)
    for i in range(layers):
        attention(w, i, embd, heads, kv[i], 16, 16)
        ffn(w, i, embd)


def gemma3(w):
    # sliding-window layers by the architecture's default pattern (il % 6 < 5), window 128
    arch, layers, embd, heads, kv_heads, head = "gemma3", 7, 64, 4, 2, 32
    common(w, arch, layers, embd, heads, kv_heads, 8192)
    w.add_key_length(head)
    w.add_value_length(head)
    w.add_sliding_window(128)
    for i in range(layers):
        attention(w, i, embd, heads, kv_heads, head, head)
        ones(w, f"blk.{i}.attn_q_norm.weight", head)
        ones(w, f"blk.{i}.attn_k_norm.weight", head)
        ones(w, f"blk.{i}.post_attention_norm.weight", embd)
        ones(w, f"blk.{i}.post_ffw_norm.weight", embd)
        ffn(w, i, embd)


def deepseek2(w):
    # MLA: one latent of kv_lora_rank + rope dims per cell, no V; key/value lengths as convert_hf_to_gguf writes them
    arch, layers, embd, heads = "deepseek2", 3, 64, 4
    rank, rope, nope, v_head, q_rank = 64, 32, 32, 32, 32
    common(w, arch, layers, embd, heads, 1, 4096)
    w.add_key_length(rank + rope)
    w.add_value_length(rank)
    w.add_uint32(f"{arch}.attention.key_length_mla", nope + rope)
    w.add_uint32(f"{arch}.attention.value_length_mla", v_head)
    w.add_rope_dimension_count(rope)
    w.add_q_lora_rank(q_rank)
    w.add_kv_lora_rank(rank)
    w.add_leading_dense_block_count(layers)
    w.add_expert_count(0)
    w.add_expert_used_count(0)
    w.add_expert_feed_forward_length(embd)
    w.add_expert_shared_count(0)
    w.add_expert_weights_scale(1.0)
    for i in range(layers):
        ones(w, f"blk.{i}.attn_norm.weight", embd)
        ones(w, f"blk.{i}.attn_q_a_norm.weight", q_rank)
        t(w, f"blk.{i}.attn_q_a.weight", q_rank, embd)
        t(w, f"blk.{i}.attn_q_b.weight", heads * (nope + rope), q_rank)
        ones(w, f"blk.{i}.attn_kv_a_norm.weight", rank)
        t(w, f"blk.{i}.attn_kv_a_mqa.weight", rank + rope, embd)
        t(w, f"blk.{i}.attn_k_b.weight", heads, rank, nope)
        t(w, f"blk.{i}.attn_v_b.weight", heads, v_head, rank)
        t(w, f"blk.{i}.attn_output.weight", embd, heads * v_head)
        ffn(w, i, embd)


def mamba(w):
    # every layer recurrent: R (conv) and S (ssm) states, F32, one per sequence
    arch, layers, embd = "mamba", 3, 64
    d_inner, d_state, d_conv, dt_rank = 128, 16, 4, 8
    w.add_block_count(layers)
    w.add_context_length(4096)
    w.add_embedding_length(embd)
    w.add_feed_forward_length(0)
    w.add_head_count(0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_ssm_conv_kernel(d_conv)
    w.add_ssm_inner_size(d_inner)
    w.add_ssm_state_size(d_state)
    w.add_ssm_time_step_rank(dt_rank)
    w.add_uint32(f"{arch}.vocab_size", VOCAB)
    w.add_tokenizer_model("none")
    t(w, "token_embd.weight", VOCAB, embd)
    ones(w, "output_norm.weight", embd)
    t(w, "output.weight", VOCAB, embd)
    for i in range(layers):
        ones(w, f"blk.{i}.attn_norm.weight", embd)
        t(w, f"blk.{i}.ssm_in.weight", 2 * d_inner, embd)
        t(w, f"blk.{i}.ssm_conv1d.weight", d_inner, d_conv)
        ones(w, f"blk.{i}.ssm_conv1d.bias", d_inner)
        t(w, f"blk.{i}.ssm_x.weight", dt_rank + 2 * d_state, d_inner)
        t(w, f"blk.{i}.ssm_dt.weight", d_inner, dt_rank)
        ones(w, f"blk.{i}.ssm_dt.bias", d_inner)
        t(w, f"blk.{i}.ssm_a", d_inner, d_state)
        ones(w, f"blk.{i}.ssm_d", d_inner)
        t(w, f"blk.{i}.ssm_out.weight", embd, d_inner)


def jamba(w):
    # hybrid: layers with head_count_kv 0 are Mamba (recurrent state), the others attention (KV cache)
    arch, layers, embd, heads = "jamba", 4, 64, 4
    d_inner, d_state, d_conv, dt_rank = 128, 16, 4, 8
    kv = [0, 2, 0, 0]
    common(w, arch, layers, embd, heads, kv, 4096)
    w.add_ssm_conv_kernel(d_conv)
    w.add_ssm_inner_size(d_inner)
    w.add_ssm_state_size(d_state)
    w.add_ssm_time_step_rank(dt_rank)
    for i in range(layers):
        if kv[i]:
            attention(w, i, embd, heads, kv[i], 16, 16)
        else:
            ones(w, f"blk.{i}.attn_norm.weight", embd)
            t(w, f"blk.{i}.ssm_in.weight", 2 * d_inner, embd)
            t(w, f"blk.{i}.ssm_conv1d.weight", d_inner, d_conv)
            ones(w, f"blk.{i}.ssm_conv1d.bias", d_inner)
            t(w, f"blk.{i}.ssm_x.weight", dt_rank + 2 * d_state, d_inner)
            ones(w, f"blk.{i}.ssm_dt_norm.weight", dt_rank)
            ones(w, f"blk.{i}.ssm_b_norm.weight", d_state)
            ones(w, f"blk.{i}.ssm_c_norm.weight", d_state)
            t(w, f"blk.{i}.ssm_dt.weight", d_inner, dt_rank)
            ones(w, f"blk.{i}.ssm_dt.bias", d_inner)
            t(w, f"blk.{i}.ssm_a", d_inner, d_state)
            ones(w, f"blk.{i}.ssm_d", d_inner)
            t(w, f"blk.{i}.ssm_out.weight", embd, d_inner)
        ffn(w, i, embd)


FAMILIES = {"llama": llama, "gemma3": gemma3, "deepseek2": deepseek2, "mamba": mamba, "jamba": jamba}

if __name__ == "__main__":
    family, out = sys.argv[1], sys.argv[2]
    max_tensors = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    w = gguf.GGUFWriter(out, family, split_max_tensors=max_tensors)
    FAMILIES[family](w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
