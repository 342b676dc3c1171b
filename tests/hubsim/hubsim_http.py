"""The Hub simulator's two origins: the request handler they share, the Hub's routes, the CDN's.

Part of hubsim.py (see README.md beside this file).
"""

import base64
import hashlib
import http.server
import json
import re
import socket
import struct
import time
import urllib.parse

from hubsim_repos import CHUNK, FIXED_DATE, PLURAL_TYPE, RESOLVE_PREFIX

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
        lie = self._fault("revision_sha")  # a Hub or mirror naming another commit than the one asked for
        info = {
            "_id": hashlib.sha1(repo.id.encode()).hexdigest()[:24],
            "id": repo.id,
            "author": repo.id.split("/")[0] if "/" in repo.id else None,
            "sha": lie["sha"] if lie else commit.sha,
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

