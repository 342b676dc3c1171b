#!/usr/bin/env python3
"""Hub simulator: the Hugging Face Hub's download protocol on loopback, for tests.

Two origins, each its own ThreadingHTTPServer: the Hub (API, resolve) and the "CDN"
(signed URLs for LFS blobs) on another loopback address, as on the real Hub.
Standard library only. See README.md beside this file for the contract.
"""

import argparse
import base64
import hashlib
import hmac
import http.server
import json
import os
import re
import secrets
import signal
import socket
import struct
import sys
import threading
import time
import urllib.parse

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
    def __init__(self, path, source, lfs, sha256=None):
        self.path = path
        self.source = source
        self.lfs = lfs
        if sha256 and lfs:
            # Given by repos.json: trust it and skip hashing a (possibly huge) LFS file.
            self.size = os.path.getsize(source)
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
                RepoFile(f["path"], os.path.join(base_dir, f["source"]), bool(f.get("lfs", False)), f.get("sha256"))
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


# ----------------------------------------------------------------------------------------------
# Faults and the request log (shared by both origins)

FAULT_KINDS = {
    "close_mid_body", "ignore_range", "wrong_bytes", "truncate", "status", "stall", "expire_url",
    "redirect_loop", "redirect_other_origin", "rate_limit", "throttle", "relative_redirect", "headers",
}


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []

    def set(self, rules):
        if not isinstance(rules, list):
            raise ValueError("faults must be a JSON list of rules")
        checked = []
        for r in rules:
            if not isinstance(r, dict) or r.get("kind") not in FAULT_KINDS:
                raise ValueError(f"unknown fault rule {r!r}; kinds: {sorted(FAULT_KINDS)}")
            r = dict(r)
            r.setdefault("origin", "any")
            r.setdefault("path_contains", "")
            r.setdefault("times", 1)
            r.setdefault("fired", 0)
            checked.append(r)
        with self.lock:
            self.rules = checked

    def get(self):
        with self.lock:
            return [dict(r) for r in self.rules]

    def take(self, kinds, origin, method, path):
        """The first rule of one of `kinds` matching this request with uses left, consumed; else None."""
        with self.lock:
            for r in self.rules:
                if r["kind"] not in kinds or r["times"] == 0:
                    continue
                if r["origin"] not in ("any", origin):
                    continue
                if r["path_contains"] not in path:
                    continue
                if "method" in r and r["method"].upper() != method:
                    continue
                if r["times"] > 0:
                    r["times"] -= 1
                r["fired"] += 1
                return dict(r)
        return None


class RequestLog:
    def __init__(self, log_path):
        self.lock = threading.Lock()
        self.entries = []
        self.log_file = open(log_path, "a", buffering=1) if log_path else None

    def start(self, record):
        with self.lock:
            self.entries.append(record)

    def finish(self, record):
        if self.log_file:
            with self.lock:
                self.log_file.write(json.dumps(record) + "\n")

    def snapshot(self):
        with self.lock:
            return [dict(e) for e in self.entries]

    def clear(self):
        with self.lock:
            self.entries = []


# ----------------------------------------------------------------------------------------------
# HTTP


class ClientGone(Exception):
    """The connection is to be dropped (fault injection) or the client went away."""


def parse_range(header, size):
    """(start, end inclusive) for a single `bytes=` range; None to serve the whole body;
    "unsatisfiable" for a range past the end."""
    m = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", header or "")
    if not m or (m.group(1) == "" and m.group(2) == ""):
        return None  # absent, malformed or multi-range: ignored, as RFC 9110 allows
    if m.group(1) == "":
        suffix = int(m.group(2))
        if suffix == 0:
            return "unsatisfiable"
        return max(0, size - suffix), size - 1
    start = int(m.group(1))
    end = int(m.group(2)) if m.group(2) else size - 1
    if start >= size or end < start:
        return "unsatisfiable"
    return start, min(end, size - 1)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hubsim/1"
    timeout = 300  # seconds a socket read/write may block: reaps idle keep-alive connections
    sim = None  # set per server class
    origin = None

    def log_message(self, *args):
        pass

    # -- plumbing ---------------------------------------------------------------------------
    def handle_one_request(self):
        self.record = None
        self.extra_headers = {}  # from a "headers" fault, for this request only
        try:
            super().handle_one_request()
        except (ClientGone, ConnectionError, BrokenPipeError, socket.timeout):
            self.close_connection = True
        finally:
            if self.record is not None:
                self.sim.log.finish(self.record)

    def _begin(self):
        url = urllib.parse.urlsplit(self.path)
        self.url_path = url.path
        self.query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.body = self._read_chunked()
        else:
            length = int(self.headers.get("Content-Length") or 0)
            self.body = self.rfile.read(length) if length > 0 else b""
        if not url.path.startswith("/_sim/"):
            headers = {}
            for name, value in self.headers.items():
                headers[name] = headers[name] + ", " + value if name in headers else value
            self.record = {"origin": self.origin, "method": self.command, "path": self.path,
                           "headers": headers, "status": None, "bytes_sent": 0, "time": time.time()}
            self.sim.log.start(self.record)

    def _read_chunked(self):
        body = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return body
            body += self.rfile.read(size)
            self.rfile.readline()

    def _fault(self, *kinds):
        return self.sim.faults.take(kinds, self.origin, self.command, self.path)

    def _head(self, status, headers, raw_headers=None):
        # The log is updated before the bytes go out, so a client that has its answer sees it logged.
        if self.record is not None:
            self.record["status"] = status
        self.send_response(status)
        headers = dict(headers, **self.extra_headers)
        for k, v in headers.items():
            # http.server encodes header values as latin-1: keep non-ASCII (from paths) printable.
            self.send_header(k, str(v).encode("ascii", "backslashreplace").decode())
        for k, v in (raw_headers or {}).items():
            # A fault's raw_headers: the value's bytes as they are (cut mid-UTF-8, not UTF-8 at all).
            self._headers_buffer.append(k.encode("ascii") + b": " + v + b"\r\n")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()

    def _write(self, data):
        if self.record is not None:
            self.record["bytes_sent"] += len(data)
        try:
            self.wfile.write(data)
        except (ConnectionError, BrokenPipeError, socket.timeout) as e:
            if self.record is not None:
                self.record["bytes_sent"] -= len(data)
            raise ClientGone() from e

    def _drop(self, reset=False):
        """Close the connection now, before the end of the body: an orderly close (FIN), or with
        reset an abortive one (RST; the client may then lose bytes it had not read yet)."""
        self.close_connection = True
        try:
            if reset:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            else:
                self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise ClientGone()

    def send_bytes(self, status, body, headers=None, raw_headers=None):
        headers = dict(headers or {})
        headers["Content-Length"] = len(body)
        self._head(status, headers, raw_headers)
        if self.command != "HEAD":
            self._write(body)

    def send_json(self, obj, status=200, headers=None):
        h = {"Content-Type": "application/json; charset=utf-8"}
        h.update(headers or {})
        self.send_bytes(status, json.dumps(obj).encode(), h)

    def send_error_code(self, status, code, message, headers=None):
        h = {"X-Error-Code": code, "X-Error-Message": message} if code else {"X-Error-Message": message}
        h.update(headers or {})
        self.send_json({"error": message}, status, h)

    def do_GET(self):
        self._dispatch()

    def do_HEAD(self):
        self._dispatch()

    def do_POST(self):
        self._dispatch()

    def _dispatch(self):
        self._begin()
        fault = self._fault("status", "rate_limit") if not self.url_path.startswith("/_sim/") else None
        if fault:
            return self._send_fault_status(fault)
        extra = self._fault("headers") if not self.url_path.startswith("/_sim/") else None
        self.extra_headers = dict(extra.get("headers", {})) if extra else {}
        self.route()

    def _send_fault_status(self, fault):
        code = int(fault.get("code", 429 if fault["kind"] == "rate_limit" else 500))
        headers = dict(fault.get("headers", {}))
        if "retry_after" in fault:
            headers["Retry-After"] = fault["retry_after"]
        if "ratelimit" in fault:
            headers["RateLimit"] = fault["ratelimit"]
        if "ratelimit_policy" in fault:
            headers["RateLimit-Policy"] = fault["ratelimit_policy"]
        message = fault.get("message", http.server.BaseHTTPRequestHandler.responses.get(code, ("error",))[0])
        raw = {k: bytes.fromhex(v) for k, v in fault.get("raw_headers", {}).items()}
        self.send_bytes(code, json.dumps({"error": message}).encode(),
                        dict(headers, **{"Content-Type": "application/json"}), raw)

    # -- file bodies ----------------------------------------------------------------------------
    def send_file(self, source, size, headers):
        """Answer a GET/HEAD for a file's bytes, honouring Range and the body faults."""
        headers = dict(headers)
        headers["Accept-Ranges"] = "bytes"
        range_header = self.headers.get("Range")
        rng = parse_range(range_header, size) if size > 0 else None
        if rng is not None and self._fault("ignore_range"):
            rng = None
        if rng == "unsatisfiable":
            headers["Content-Range"] = f"bytes */{size}"
            return self.send_bytes(416, b"", headers)
        if rng is None:
            start, end, status = 0, size - 1, 200
        else:
            start, end = rng
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        length = end - start + 1
        headers["Content-Length"] = length
        body_fault = None
        if self.command == "GET":
            body_fault = self._fault("close_mid_body", "truncate", "wrong_bytes", "stall", "throttle")
            if body_fault and body_fault["kind"] in ("close_mid_body", "truncate"):
                self.close_connection = True
        self._head(status, headers)
        if self.command == "HEAD":
            return
        self._stream(source, start, length, body_fault)

    def _stream(self, source, start, length, fault):
        kind = fault["kind"] if fault else None
        at = int(fault.get("at", length // 2)) if fault else 0
        at = max(0, min(at, length))
        flip_end = at + int(fault.get("count", 16)) if kind == "wrong_bytes" else 0
        rate = float(fault.get("bytes_per_second", 1 << 20)) if kind == "throttle" else 0
        began = time.monotonic()
        sent = 0
        with open(source, "rb") as f:
            f.seek(start)
            while sent < length:
                want = min(CHUNK if not rate else max(1, int(rate / 20)), length - sent)
                if kind in ("close_mid_body", "truncate", "stall") and sent < at:
                    want = min(want, at - sent)
                if kind in ("close_mid_body", "truncate") and sent >= at:
                    self._drop(bool(fault.get("reset")))
                if kind == "stall" and sent == at:
                    time.sleep(float(fault.get("seconds", 30)))
                    kind = None
                block = f.read(want)
                if not block:
                    self._drop()  # the source shrank under us
                if kind == "wrong_bytes" and sent < flip_end and sent + len(block) > at:
                    b = bytearray(block)
                    for i in range(max(at - sent, 0), min(flip_end - sent, len(b))):
                        b[i] ^= 0xFF
                    block = bytes(b)
                self._write(block)
                sent += len(block)
                if rate:
                    ahead = sent / rate - (time.monotonic() - began)
                    if ahead > 0:
                        time.sleep(ahead)
        if kind in ("close_mid_body", "truncate"):
            self._drop(bool(fault.get("reset")))


class HubHandler(Handler):
    origin = "hub"

    def route(self):
        p = self.url_path
        if p.startswith("/_sim/"):
            return self.route_control(p)
        if p.startswith("/api/"):
            return self.route_api(p)
        return self.route_resolve(p)

    # -- control ----------------------------------------------------------------------------
    def route_control(self, p):
        sim = self.sim
        if p == "/_sim/requests" and self.command == "GET":
            return self.send_json(sim.log.snapshot())
        if p == "/_sim/requests/clear" and self.command == "POST":
            sim.log.clear()
            return self.send_json({"ok": True})
        if p == "/_sim/reload" and self.command == "POST":
            try:
                sim.load()
            except (OSError, ValueError, KeyError) as e:
                return self.send_json({"error": f"cannot load {sim.repos_json}: {e!r}"}, 400)
            return self.send_json({"ok": True})
        if p == "/_sim/faults" and self.command == "GET":
            return self.send_json(sim.faults.get())
        if p == "/_sim/faults" and self.command == "POST":
            try:
                sim.faults.set(json.loads(self.body or b"[]"))
            except ValueError as e:
                return self.send_json({"error": str(e)}, 400)
            return self.send_json({"ok": True})
        return self.send_json({"error": "unknown control path"}, 404)

    # -- helpers ----------------------------------------------------------------------------
    def token(self):
        auth = self.headers.get("Authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return None

    def find_repo(self, rtype, repo_id):
        """The repo if it exists and this request may read it; otherwise answers the error and
        returns None. A repo that does not exist looks like a private one, as on the Hub."""
        repo = self.sim.repos.get((rtype, repo_id))
        token = self.token()
        if repo is None:
            if token is None:
                self.send_error_code(401, "RepoNotFound", "Repository not found")
            else:
                self.send_error_code(404, "RepoNotFound", "Repository not found")
            return None
        denied = repo.access(token)
        if denied:
            self.send_error_code(*denied)
            return None
        return repo

    def find_commit(self, repo, rev):
        commit = repo.find_commit(rev)
        if commit is None:
            self.send_error_code(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        return commit

    def split_api(self, p, verb):
        """/api/{type}s/{repo...}/{verb}/{rev}[/{rest}] -> (type, repo id, rev, rest) or None.
        The repo id is one or two segments; the revision is one percent-encoded segment."""
        m = re.fullmatch(r"/api/(models|datasets|spaces)/(.+?)/" + verb + r"/([^/]+)(?:/(.*))?", p)
        if not m:
            return None
        return (PLURAL_TYPE[m.group(1)], urllib.parse.unquote(m.group(2)), urllib.parse.unquote(m.group(3)),
                urllib.parse.unquote(m.group(4) or "").strip("/"))

    def flag(self, name):
        return self.query.get(name, [""])[-1].lower() in ("1", "true")

    # -- API --------------------------------------------------------------------------------
    def route_api(self, p):
        if self.command in ("GET", "HEAD"):
            parts = self.split_api(p, "revision")
            if parts:
                return self.api_revision(*parts)
            parts = self.split_api(p, "tree")
            if parts:
                return self.api_tree(*parts)
            m = re.fullmatch(r"/api/(models|datasets|spaces)/([^/]+(?:/[^/]+)?)", p)
            if m:
                return self.api_revision(PLURAL_TYPE[m.group(1)], urllib.parse.unquote(m.group(2)), "main", "")
        if self.command == "POST":
            parts = self.split_api(p, "paths-info")
            if parts:
                return self.api_paths_info(*parts)
        m = re.fullmatch(r"/api/resolve-cache/(models|datasets|spaces)/(.+)", p)
        if m and self.command in ("GET", "HEAD"):
            return self.resolve_cache(PLURAL_TYPE[m.group(1)], m.group(2))
        return self.send_error_code(404, None, f"Sorry, we can't find the page you are looking for: {p}")

    def api_revision(self, rtype, repo_id, rev, rest):
        if rest:
            return self.send_error_code(404, None, "Not found")
        repo = self.find_repo(rtype, repo_id)
        if not repo:
            return
        commit = self.find_commit(repo, rev)
        if not commit:
            return
        blobs = self.flag("blobs")
        siblings = []
        for f in sorted(commit.files.values(), key=lambda f: f.path):
            s = {"rfilename": f.path}
            if blobs:
                s["size"] = f.size
                s["blobId"] = f.git_oid
                if f.lfs:
                    s["lfs"] = {"size": f.size, "sha256": f.sha256, "pointerSize": len(f.pointer)}
            siblings.append(s)
        info = {
            "_id": hashlib.sha1(repo.id.encode()).hexdigest()[:24],
            "id": repo.id,
            "author": repo.id.split("/")[0] if "/" in repo.id else None,
            "sha": commit.sha,
            "lastModified": FIXED_DATE,
            "createdAt": FIXED_DATE,
            "private": repo.private,
            "gated": repo.gated,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "siblings": siblings,
        }
        if rtype == "model":
            info["modelId"] = repo.id
        if blobs:
            info["usedStorage"] = sum(f.size for f in commit.files.values())
        self.send_json(info)

    def api_tree(self, rtype, repo_id, rev, base):
        repo = self.find_repo(rtype, repo_id)
        if not repo:
            return
        commit = self.find_commit(repo, rev)
        if not commit:
            return
        expand = self.flag("expand")
        entries = commit.entries(base, self.flag("recursive"), expand)
        if entries is None:
            if base in commit.files:
                entries = [commit.files[base].tree_entry(commit, expand)]
            else:
                return self.send_error_code(404, "EntryNotFound", f"{base} does not exist on \"{rev}\"",
                                            {"X-Repo-Commit": commit.sha})
        page_size = self.sim.page_size if not expand else min(self.sim.page_size, 50)
        cursor = self.query.get("cursor", [""])[-1]
        try:
            start = int(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()) if cursor else 0
        except ValueError:
            return self.send_error_code(400, None, "Invalid cursor")
        page = entries[start:start + page_size]
        headers = {}
        if start + page_size < len(entries):
            nxt = base64.urlsafe_b64encode(str(start + page_size).encode()).decode().rstrip("=")
            query = {k: v[-1] for k, v in self.query.items() if k != "cursor"}
            query["cursor"] = nxt
            url = self.sim.hub_url + self.url_path + "?" + urllib.parse.urlencode(query)
            headers["Link"] = f'<{url}>; rel="next"'
        self.send_json(page, 200, headers)

    def api_paths_info(self, rtype, repo_id, rev, rest):
        repo = self.find_repo(rtype, repo_id)
        if not repo:
            return
        commit = self.find_commit(repo, rev)
        if not commit:
            return
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            try:
                req = json.loads(self.body or b"{}")
            except ValueError:
                return self.send_error_code(400, None, "Invalid JSON body")
            paths = req.get("paths", [])
            expand = bool(req.get("expand", False))
        else:
            form = urllib.parse.parse_qs(self.body.decode(), keep_blank_values=True)
            paths = form.get("paths", [])
            expand = form.get("expand", ["false"])[-1].lower() in ("1", "true")
        if isinstance(paths, str):
            paths = [paths]
        out = []
        for path in dict.fromkeys(p.strip("/") for p in paths):  # each path once, in order
            if path in commit.files:
                out.append(commit.files[path].tree_entry(commit, expand))
            elif path in commit.dirs:
                entry = {"type": "directory", "oid": commit.dirs[path], "size": 0, "path": path}
                if expand:
                    entry["lastCommit"] = commit.last_commit()
                out.append(entry)
        self.send_json(out)

    # -- resolve ----------------------------------------------------------------------------
    def route_resolve(self, p):
        """/{[datasets/|spaces/]}{repo}/resolve/{rev}/{path}"""
        if self.command not in ("GET", "HEAD"):
            return self.send_error_code(405, None, "Method not allowed")
        segs = p.lstrip("/").split("/")
        rtype = "model"
        if segs and segs[0] in RESOLVE_PREFIX:
            rtype = RESOLVE_PREFIX[segs[0]]
            segs = segs[1:]
        for n in (2, 1):  # "org/name" first, then legacy one-segment ids
            if len(segs) > n + 2 and segs[n] == "resolve":
                repo_id = urllib.parse.unquote("/".join(segs[:n]))
                rev = urllib.parse.unquote(segs[n + 1])
                path = urllib.parse.unquote("/".join(segs[n + 2:]))
                return self.resolve(rtype, repo_id, rev, path)
        return self.send_error_code(404, None, f"Sorry, we can't find the page you are looking for: {p}")

    def resolve(self, rtype, repo_id, rev, path):
        repo = self.find_repo(rtype, repo_id)
        if not repo:
            return
        commit = self.find_commit(repo, rev)
        if not commit:
            return
        f = commit.files.get(path)
        if f is None:
            return self.send_error_code(404, "EntryNotFound", f"{path} does not exist on \"{rev}\"",
                                        {"X-Repo-Commit": commit.sha})
        base = {"X-Repo-Commit": commit.sha}
        if self._fault("redirect_loop"):
            return self.send_bytes(302, b"", dict(base, Location=self.sim.hub_url + self.path))
        if f.lfs:
            location = self.sim.lfs_location(rtype, repo.id, f.sha256)
            return self.send_bytes(302, b"", dict(base, **{
                "Location": location, "ETag": f'"{f.git_oid}"',
                "X-Linked-Etag": f'"{f.sha256}"', "X-Linked-Size": f.size,
                "Content-Type": "text/plain; charset=utf-8"}))
        if self._fault("redirect_other_origin"):
            location = self.sim.sign(self.sim.cdn_url, f"/raw/{rtype}s/{repo.id}/{f.git_oid}")
            return self.send_bytes(302, b"", dict(base, **{"Location": location, "ETag": f'"{f.git_oid}"'}))
        if self._fault("relative_redirect"):
            # The real Hub's relative 307 to its resolve cache, on the same origin.
            location = "/api/resolve-cache/%ss/%s/%s/%s" % (rtype, repo.id, commit.sha, urllib.parse.quote(path))
            return self.send_bytes(307, b"", dict(base, **{"Location": location, "ETag": f'"{f.git_oid}"'}))
        self.send_file(f.source, f.size, dict(base, **{
            "ETag": f'"{f.git_oid}"', "Content-Type": "application/octet-stream"}))

    def resolve_cache(self, rtype, rest):
        segs = rest.split("/")
        for n in (2, 1):
            if len(segs) > n + 1:
                repo_id = "/".join(segs[:n])
                if (rtype, repo_id) in self.sim.repos:
                    return self.resolve(rtype, repo_id, segs[n], urllib.parse.unquote("/".join(segs[n + 1:])))
        return self.send_error_code(404, None, "Not found")


class CdnHandler(Handler):
    origin = "cdn"

    def route(self):
        if self.command not in ("GET", "HEAD"):
            return self.send_bytes(405, b"")
        blob = self.sim.cdn_blobs.get(self.url_path)
        expires = self.query.get("Expires", [""])[-1]
        signature = self.query.get("Signature", [""])[-1]
        expired = self._fault("expire_url")
        if blob is None or not self.sim.signature_ok(self.url_path, expires, signature) or expired:
            return self.send_bytes(int(expired.get("code", 403)) if expired else 403, b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied"
                                        b"</Code><Message>Access denied</Message></Error>\n",
                                   {"Content-Type": "application/xml"})
        source, size, etag = blob
        self.send_file(source, size, {"ETag": f'"{etag}"', "Content-Type": "application/octet-stream",
                                      "Cache-Control": "public, max-age=604800, immutable"})


class Simulator:
    def __init__(self, repos_json, page_size, url_ttl, log_path, external_cdn=None):
        self.repos_json = repos_json
        self.external_cdn = external_cdn
        self.page_size = page_size
        self.url_ttl = url_ttl
        self.secret = secrets.token_bytes(32)
        self.faults = Faults()
        self.log = RequestLog(log_path)
        self.hub_url = self.cdn_url = None
        self.load()

    def load(self):
        """(Re)reads repos.json; requests in flight keep the repositories they started with."""
        repos = load_repos(self.repos_json)
        # CDN path -> (source file, size, etag): LFS blobs by sha256, and plain files by git oid for
        # the redirect_other_origin fault.
        cdn_blobs = {}
        for repo in repos.values():
            for c in repo.commits:
                for f in c.files.values():
                    if f.lfs:
                        cdn_blobs[f"/repos/{repo.type}s/{repo.id}/{f.sha256}"] = (f.source, f.size, f.sha256)
                    else:
                        cdn_blobs[f"/raw/{repo.type}s/{repo.id}/{f.git_oid}"] = (f.source, f.size, f.git_oid)
        self.repos, self.cdn_blobs = repos, cdn_blobs

    def lfs_location(self, rtype, repo_id, sha256):
        """Where the Hub redirects an LFS download: our CDN origin, or --external-cdn (e.g. nginx
        serving the blobs for a benchmark), with a signed expiry either way."""
        if self.external_cdn:
            url = urllib.parse.urlsplit(self.external_cdn.format(sha256=sha256, repo=repo_id, type=rtype))
            return self.sign(f"{url.scheme}://{url.netloc}", url.path)
        return self.sign(self.cdn_url, f"/repos/{rtype}s/{repo_id}/{sha256}")

    def _mac(self, path, expires):
        return hmac.new(self.secret, f"{path}\n{expires}".encode(), hashlib.sha256).hexdigest()

    def sign(self, origin_url, path):
        expires = int(time.time()) + self.url_ttl
        return f"{origin_url}{path}?Expires={expires}&Signature={self._mac(path, expires)}"

    def signature_ok(self, path, expires, signature):
        if not expires.isdigit() or int(expires) < time.time():
            return False
        return hmac.compare_digest(self._mac(path, expires), signature)


def make_server(host, port, handler_base, sim):
    handler = type(handler_base.__name__, (handler_base,), {"sim": sim})

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128

    return Server((host, port), handler)


def write_atomic(path, text):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def serve(args):
    sim = Simulator(args.repos, args.page_size, args.url_ttl, args.log, args.external_cdn)
    hub = make_server(args.hub_host, args.hub_port, HubHandler, sim)
    cdn = make_server(args.cdn_host, args.cdn_port, CdnHandler, sim)
    sim.hub_url = f"http://{args.hub_host}:{hub.server_address[1]}"
    sim.cdn_url = f"http://{args.cdn_host}:{cdn.server_address[1]}"
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    for server in (hub, cdn):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    if args.ready_file:
        write_atomic(args.ready_file, json.dumps({"hub": sim.hub_url, "cdn": sim.cdn_url, "pid": os.getpid()}))
    print(f"hubsim: hub {sim.hub_url} cdn {sim.cdn_url}", file=sys.stderr, flush=True)
    while not stop.wait(0.5):
        pass
    # Stalled handlers are daemon threads: leave without waiting for them.
    os._exit(0)


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


def main(argv):
    if argv and argv[0] == "make-demo":
        if len(argv) != 2:
            print("usage: hubsim.py make-demo OUTDIR", file=sys.stderr)
            return 2
        os.makedirs(argv[1], exist_ok=True)
        print(json.dumps(make_demo(argv[1]), indent=2))
        return 0
    ap = argparse.ArgumentParser(description="Hugging Face Hub simulator (see README.md)")
    ap.add_argument("--repos", required=True)
    ap.add_argument("--ready-file")
    ap.add_argument("--log")
    ap.add_argument("--hub-host", default="127.0.0.1")
    ap.add_argument("--cdn-host", default="127.0.0.2")
    ap.add_argument("--hub-port", type=int, default=0)
    ap.add_argument("--cdn-port", type=int, default=0)
    ap.add_argument("--page-size", type=int, default=1000)
    ap.add_argument("--url-ttl", type=int, default=3600, help="seconds a signed CDN URL stays valid")
    ap.add_argument("--external-cdn", help="redirect LFS downloads here instead of our CDN origin: a URL "
                    "template with {sha256}, {repo}, {type}, e.g. http://127.0.0.2:8080/blobs/{sha256}")
    args = ap.parse_args(argv)
    try:
        serve(args)
    except (OSError, ValueError, KeyError) as e:
        print(f"hubsim: cannot start: {e!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
