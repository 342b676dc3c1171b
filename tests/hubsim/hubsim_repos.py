"""The Hub simulator's repositories: repos.json loaded into commits and files, their hashes.

Part of hubsim.py (see README.md beside this file).
"""

import base64
import hashlib
import json
import os
import re

CHUNK = 1 << 20
LFS_POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n"
TYPE_PLURAL = {"model": "models", "dataset": "datasets", "space": "spaces"}
PLURAL_TYPE = {v: k for k, v in TYPE_PLURAL.items()}
RESOLVE_PREFIX = {"datasets": "dataset", "spaces": "space"}
FIXED_DATE = "2026-01-01T00:00:00.000Z"


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def hash_file(path):
    """(size, sha256 hex, git blob id hex) of a file, in one streaming pass."""
    size = os.path.getsize(path)
    sha256 = hashlib.sha256()
    sha1 = hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb") as f:
        while True:
            block = f.read(CHUNK)
            if not block:
                break
            sha256.update(block)
            sha1.update(block)
    return size, sha256.hexdigest(), sha1.hexdigest()


# ----------------------------------------------------------------------------------------------
# Repositories


class RepoFile:
    def __init__(self, path, source, lfs, sha256=None, size=None):
        self.path = path
        self.source = source
        self.lfs = lfs
        if sha256 and lfs:
            # Given by repos.json: trust it and skip hashing a (possibly huge) LFS file. A given `size` is
            # what this Hub claims (a lying Hub: sizes no disk holds); the bytes served stay the source's.
            self.size = os.path.getsize(source) if size is None else int(size)
            self.sha256 = sha256
        else:
            self.size, self.sha256, content_oid = hash_file(source)
        if lfs:
            self.pointer = LFS_POINTER.format(oid=self.sha256, size=self.size).encode()
            self.git_oid = git_blob_id(self.pointer)
        else:
            self.pointer = None
            self.git_oid = content_oid

    @property
    def etag(self):
        """What the cache names the blob: sha256 for LFS files, git blob id for the rest."""
        return self.sha256 if self.lfs else self.git_oid

    def tree_entry(self, commit=None, expand=False):
        entry = {"type": "file", "oid": self.git_oid, "size": self.size, "path": self.path}
        if self.lfs:
            entry["lfs"] = {"oid": self.sha256, "size": self.size, "pointerSize": len(self.pointer)}
        if expand and commit:
            entry["lastCommit"] = commit.last_commit()
            entry["securityFileStatus"] = {"status": "safe"}
        return entry


class Commit:
    def __init__(self, sha, refs, files, title):
        self.sha = sha
        self.refs = refs
        self.title = title
        self.files = {f.path: f for f in files}
        self.dirs = {}  # dir path -> git tree id
        self._entries = {}  # (base, recursive, expand) -> entries: a tree of 300k files is listed page by page
        self._compute_trees()

    def _compute_trees(self):
        """Real git tree ids for every directory, so folder entries carry a plausible oid."""
        children = {"": {}}
        for path in self.files:
            parts = path.split("/")
            for i in range(1, len(parts)):
                children.setdefault("/".join(parts[:i]), {})
            for i in range(len(parts)):
                parent = "/".join(parts[:i])
                children[parent][parts[i]] = "/".join(parts[: i + 1])

        def tree_id(d):
            items = []
            for name, full in children[d].items():
                if full in self.files:
                    items.append((name, b"100644", bytes.fromhex(self.files[full].git_oid)))
                else:
                    items.append((name + "/", b"40000", bytes.fromhex(tree_id(full))))
            items.sort(key=lambda x: x[0].encode())
            body = b"".join(mode + b" " + name.rstrip("/").encode() + b"\0" + oid for name, mode, oid in items)
            oid = hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()
            if d:
                self.dirs[d] = oid
            return oid

        tree_id("")

    def last_commit(self):
        return {"id": self.sha, "title": self.title, "date": FIXED_DATE}

    def entries(self, base, recursive, expand):
        """Tree entries under directory `base` ("" for the root), sorted as the Hub does:
        directories and files by path. None when base is neither the root nor a directory."""
        if base and base not in self.dirs:
            return None
        key = (base, bool(recursive), bool(expand))
        if key not in self._entries:
            self._entries[key] = self._list(base, recursive, expand)
        return self._entries[key]

    def _list(self, base, recursive, expand):
        prefix = base + "/" if base else ""
        out = []
        for d, oid in self.dirs.items():
            if d.startswith(prefix) and (recursive or "/" not in d[len(prefix):]):
                entry = {"type": "directory", "oid": oid, "size": 0, "path": d}
                if expand:
                    entry["lastCommit"] = self.last_commit()
                out.append(entry)
        for p, f in self.files.items():
            if p.startswith(prefix) and (recursive or "/" not in p[len(prefix):]):
                out.append(f.tree_entry(self, expand))
        out.sort(key=lambda e: e["path"])
        return out


class Repo:
    def __init__(self, spec, base_dir):
        self.id = spec["id"]
        self.type = spec.get("type", "model")
        if self.type not in TYPE_PLURAL:
            raise ValueError(f"repo {self.id}: unknown type {self.type!r}")
        self.gated = spec.get("gated", False)
        self.private = bool(spec.get("private", False))
        self.tokens = set(spec.get("tokens", []))
        self.commits = []
        for c in spec["commits"]:
            if not re.fullmatch(r"[0-9a-f]{40}", c["sha"]):
                raise ValueError(f"repo {self.id}: commit sha must be 40 lowercase hex: {c['sha']!r}")
            files = [
                RepoFile(f["path"], os.path.join(base_dir, f["source"]), bool(f.get("lfs", False)), f.get("sha256"),
                         f.get("size"))
                for f in c["files"]
            ]
            self.commits.append(Commit(c["sha"], list(c.get("refs", [])), files, c.get("title", "commit")))

    def find_commit(self, rev):
        for c in self.commits:
            if rev == c.sha or rev in c.refs:
                return c
        return None

    def access(self, token):
        """None when the token may read this repo, else (status, error code, message)."""
        if not (self.gated or self.private) or (token is not None and token in self.tokens):
            return None
        if self.private:
            if token is None:
                return 401, "RepoNotFound", "Repository not found"
            return 404, "RepoNotFound", "Repository not found"
        if token is None:
            return 401, "GatedRepo", f"Access to model {self.id} is restricted. You must have access to it and be authenticated to access it. Please log in."
        return 403, "GatedRepo", f"Access to model {self.id} is restricted and you are not in the authorized list. Visit https://huggingface.co/{self.id} to ask for access."


def load_repos(path):
    with open(path) as f:
        spec = json.load(f)
    base = os.path.dirname(os.path.abspath(path))
    repos = {}
    for r in spec["repos"]:
        repo = Repo(r, base)
        repos[(repo.type, repo.id)] = repo
    return repos



def write_atomic(path, text):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
