"""What the hf-fetch integration tests share beyond the harness (../common.py): the real binary run with a
clean environment, repositories for the Hub simulator with their manifests, and readers of its request log."""

import hashlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, make_repo, run, tempdir, tool  # noqa: E402

HF_FETCH = tool("hf-fetch")
TOKEN = "hf_provkitTestToken0123456789abcdef"


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def git_oid(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def blob(n, seed):
    """n deterministic pseudo-random bytes."""
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{counter}".encode()).digest() * 64
        counter += 1
    return bytes(out[:n])


def clean_env(**extra):
    """The environment for hf-fetch: no token or endpoint from the machine running the tests."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("HF_") and k not in ("HUGGING_FACE_HUB_TOKEN", "XDG_CACHE_HOME")}
    env["HF_HOME"] = tempdir("hf-home-")  # no stray token file
    env.update({k: v for k, v in extra.items() if v is not None})
    return env


def hf_fetch(*args, env=None, timeout=120):
    return run([HF_FETCH, *args], expect=None, env=env if env is not None else clean_env(), timeout=timeout)


def manifest_yaml(repo, sha, files, assemble=None, repo_type=None):
    """files: list of dicts path/size/sha256/git_oid (as the manifest has them)."""
    lines = ["manifest: 1", f"repo: {repo}"]
    if repo_type:
        lines.append(f"type: {repo_type}")
    lines += [f"revision: {sha}", "files:"]
    for f in files:
        lines.append(f'  - path: "{f["path"]}"')
        lines.append(f'    size: {f["size"]}')
        for key in ("sha256", "git_oid"):
            if f.get(key):
                lines.append(f"    {key}: {f[key]}")
    if assemble:
        lines.append("assemble:")
        for a in assemble:
            lines.append(f'  - output: "{a["output"]}"')
            lines.append("    parts: [" + ", ".join(f'"{p}"' for p in a["parts"]) + "]")
            if a.get("sha256"):
                lines.append(f'    sha256: {a["sha256"]}')
    return "\n".join(lines) + "\n"


def file_entries(files, lfs):
    """Manifest entries for path -> bytes: sha256 for all, git_oid for non-LFS files."""
    out = []
    for path, data in files.items():
        e = {"path": path, "size": len(data), "sha256": sha256(data)}
        if path not in lfs:
            e["git_oid"] = git_oid(data)
        out.append(e)
    return out


class Repo:
    """A repository for the simulator plus its manifest, in a fresh temporary directory."""

    def __init__(self, files, lfs=(), repo_id="org/model", gated=False, private=False, tokens=()):
        self.tmp = tempdir("hf-fetch-test-")
        self.files = files
        self.lfs = set(lfs)
        self.repo_id = repo_id
        self.sha = make_repo(self.tmp, repo_id, files, lfs=lfs, gated=gated, private=private, tokens=tokens)
        self.repos_json = os.path.join(self.tmp, "repos.json")
        self.cache = os.path.join(self.tmp, "cache")
        self.manifest = self.write_manifest(file_entries(files, self.lfs))

    def write_manifest(self, entries, name="manifest.yaml", assemble=None, sha=None):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(manifest_yaml(self.repo_id, sha or self.sha, entries, assemble))
        return path

    def repo_dir(self):
        return os.path.join(self.cache, "models--" + self.repo_id.replace("/", "--"))

    def snapshot(self, path=""):
        return os.path.join(self.repo_dir(), "snapshots", self.sha, path)

    def etag(self, path):
        data = self.files[path]
        return sha256(data) if path in self.lfs else git_oid(data)

    def blob(self, path):
        return os.path.join(self.repo_dir(), "blobs", self.etag(path))


def resolves(requests):
    return [r for r in requests if "/resolve/" in r["path"] or r["origin"] == "cdn"]


def body_bytes(requests):
    return sum(r.get("bytes_sent") or 0 for r in resolves(requests))


def header(req, name):
    for k, v in req["headers"].items():
        if k.lower() == name.lower():
            return v
    return None


def check_correct_or_absent(repo):
    """The fault matrix's ending: every file of `repo` is correct at its final path (blob and snapshot
    link) or absent from it; never a wrong or partial byte where a loader would look."""
    for path, data in repo.files.items():
        for where in (repo.blob(path), repo.snapshot(path)):
            if os.path.lexists(where):
                check(os.path.exists(where), f"{where} is a dangling link")
                with open(where, "rb") as f:
                    check(f.read() == data, f"{where} holds wrong bytes")


def claims_repos(tmp, repos, sha="c1" * 20):
    """repos.json in `tmp` for the simulator where the Hub may claim sizes no disk holds (its `size` key):
    repos maps a repo id to (path, bytes, claimed size or None, lfs) tuples, one commit `sha` on main each.
    Returns the repos.json path."""
    import json
    os.makedirs(os.path.join(tmp, "files"), exist_ok=True)
    specs = []
    for repo_id, files in repos.items():
        entries = []
        for path, data, size, lfs in files:
            source = os.path.join("files", f"f{len(os.listdir(os.path.join(tmp, 'files')))}")
            with open(os.path.join(tmp, source), "wb") as f:
                f.write(data)
            e = {"path": path, "source": source, "lfs": lfs}
            if lfs:
                e["sha256"] = sha256(data)
            if size is not None:
                e["size"] = size
            entries.append(e)
        specs.append({"id": repo_id, "commits": [{"sha": sha, "refs": ["main"], "files": entries}]})
    with open(os.path.join(tmp, "repos.json"), "w") as f:
        json.dump({"repos": specs}, f)
    return os.path.join(tmp, "repos.json")


def huge_tensor_header(nbytes):
    """The header alone of a safetensors file holding one consistent U8 tensor of `nbytes` bytes (shape
    [256, nbytes / 256], data_offsets [0, nbytes]): served with claims_repos' size len(header) + nbytes."""
    import json
    import struct
    header = json.dumps({"w": {"dtype": "U8", "shape": [256, nbytes // 256], "data_offsets": [0, nbytes]}}).encode()
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header
