"""The small repository most hf-fetch tests fetch (two JSON files, two LFS shards), and its fetch."""

import os
import sys
import socket

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from hf_fixtures import Repo, blob, hf_fetch  # noqa: E402


def small_repo(**kw):
    files = {
        "config.json": b'{"model_type": "llama", "hidden_size": 64}\n',
        "tokenizer.json": b'{"version": "1.0"}\n',
        "weights/model-00001-of-00002.safetensors": blob(300_000, "w1"),
        "weights/model-00002-of-00002.safetensors": blob(200_000, "w2"),
    }
    return Repo(files, lfs={p for p in files if p.endswith(".safetensors")}, **kw)


def fetch(repo, sim, *extra, env=None):
    return hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, *extra, env=env)


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
