"""The Hub simulator's demo repository (`hubsim.py make-demo OUTDIR`).

Part of hubsim.py (see README.md beside this file).
"""

import base64
import hashlib
import json
import os

from hubsim_repos import git_blob_id, write_atomic

# ----------------------------------------------------------------------------------------------
# The demo repository

DEMO_REPO = "provkit/demo-model"
DEMO_SHA = "5d0c7d5a1f0e4c3b9a8d7e6f5a4b3c2d1e0f9a8b"


def safetensors_bytes(name, shape, seed):
    """A valid safetensors file: 8-byte little-endian header length, JSON header, F32 data."""
    count = 1
    for d in shape:
        count *= d
    data = bytearray()
    state = seed
    while len(data) < count * 4:
        state = hashlib.sha256(state.to_bytes(8, "little") + data[-32:]).digest()
        data += state
        state = int.from_bytes(state[:8], "little")
    data = bytes(data[: count * 4])
    header = {name: {"dtype": "F32", "shape": list(shape), "data_offsets": [0, len(data)]},
              "__metadata__": {"format": "pt"}}
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * (-len(hb) % 8)
    return len(hb).to_bytes(8, "little") + hb + data


def deterministic_bytes(n, seed):
    out = bytearray()
    block = seed.encode()
    while len(out) < n:
        block = hashlib.sha256(block).digest()
        out += block
    return bytes(out[:n])


def demo_files():
    """path -> bytes, and the set of LFS paths, for provkit/demo-model."""
    config = {"architectures": ["DemoForCausalLM"], "model_type": "llama", "hidden_size": 256,
              "num_hidden_layers": 2, "vocab_size": 320, "torch_dtype": "float32"}
    tokenizer = {"version": "1.0", "model": {"type": "BPE", "vocab": {chr(97 + i): i for i in range(26)},
                                             "merges": []}}
    # A GGUF header (magic, version 3, no tensors, no metadata) followed by filler bytes.
    header = b"GGUF" + (3).to_bytes(4, "little") + (0).to_bytes(8, "little") + (0).to_bytes(8, "little")
    gguf = header + deterministic_bytes(600 * 1024 - len(header), "gguf")
    third = len(gguf) // 3
    files = {
        "config.json": json.dumps(config, indent=2).encode() + b"\n",
        "generation_config.json": json.dumps({"bos_token_id": 1, "eos_token_id": 2, "max_length": 64},
                                             indent=2).encode() + b"\n",
        "tokenizer.json": json.dumps(tokenizer, indent=2).encode() + b"\n",
        "README.md": b"# provkit/demo-model\n\nA tiny generated repository served by the provkit Hub simulator.\n",
        "model-00001-of-00002.safetensors": safetensors_bytes("model.embed_tokens.weight", [320, 256], 1),
        "model-00002-of-00002.safetensors": safetensors_bytes("lm_head.weight", [320, 256], 2),
        "UD-IQ4_XS/part-1": gguf[:third],
        "UD-IQ4_XS/part-2": gguf[third:2 * third],
        "UD-IQ4_XS/part-3": gguf[2 * third:],
    }
    lfs = {p for p in files if p.endswith(".safetensors") or p.startswith("UD-IQ4_XS/")}
    return files, lfs


def write_repos_json(outdir, repos):
    """repos: list of repo specs as in README.md; merges nothing, overwrites OUTDIR/repos.json."""
    write_atomic(os.path.join(outdir, "repos.json"), json.dumps({"repos": repos}, indent=2) + "\n")


def demo_manifest(files, lfs, gguf):
    """The demo as an hf-fetch manifest (issue 2's format): LFS files by sha256, the others by
    git blob id and sha256, and the split GGUF as an assemble entry."""
    lines = ["manifest: 1", f"repo: {DEMO_REPO}", "type: model", f"revision: {DEMO_SHA}", "files:"]
    for path in sorted(files):
        data = files[path]
        lines += [f"  - path: {path}", f"    size: {len(data)}", f"    sha256: {hashlib.sha256(data).hexdigest()}"]
        if path not in lfs:
            lines.append(f"    git_oid: {git_blob_id(data)}")
    lines += ["assemble:", "  - output: model-UD-IQ4_XS.gguf",
              "    parts: [UD-IQ4_XS/part-1, UD-IQ4_XS/part-2, UD-IQ4_XS/part-3]",
              f"    sha256: {hashlib.sha256(gguf).hexdigest()}", f"    size: {len(gguf)}"]
    return "\n".join(lines) + "\n"


def make_demo(outdir):
    files, lfs = demo_files()
    src = os.path.join(outdir, "files", DEMO_REPO)
    entries = []
    for path, data in files.items():
        dest = os.path.join(src, path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
        entries.append({"path": path, "source": os.path.relpath(dest, outdir), "lfs": path in lfs})
    gguf = b"".join(files[f"UD-IQ4_XS/part-{i}"] for i in (1, 2, 3))
    write_atomic(os.path.join(outdir, "demo.manifest"), demo_manifest(files, lfs, gguf))
    write_repos_json(outdir, [{"id": DEMO_REPO, "type": "model", "gated": False, "private": False,
                               "commits": [{"sha": DEMO_SHA, "refs": ["main"], "title": "demo", "files": entries}]}])
    summary = {"repo": DEMO_REPO, "sha": DEMO_SHA, "repos_json": os.path.abspath(os.path.join(outdir, "repos.json")),
               "assembled": {"output": "model-UD-IQ4_XS.gguf", "size": len(gguf),
                             "sha256": hashlib.sha256(gguf).hexdigest()}}
    return summary

