#!/usr/bin/env python3
"""Self-test of the Hub simulator: the protocol the clients rely on, every fault kind, the request
log and access control, spoken to with plain http.client (no client library in between)."""

import hashlib
import http.client
import json
import os
import re
import socket
import sys
import tempfile
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import DEMO_REPO, DEMO_SHA, HubSim, demo_files, make_demo, make_repo  # noqa: E402

GOOD = "hf_good_token"
BAD = "hf_other_token"
PR_SHA = "1" * 40


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def request(url, method="GET", headers=None, body=None, timeout=10):
    """(status, headers as a case-insensitive message, body bytes) for one request, no redirects."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request(method, u.path + ("?" + u.query if u.query else ""), body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.headers, resp.read()
    finally:
        conn.close()


def list_tree(url):
    """Every entry of a tree listing, following Link pages; also returns the number of pages."""
    entries, pages = [], 0
    while url:
        status, h, body = request(url)
        if status != 200:
            raise AssertionError(f"{url}: {status}")
        entries += json.loads(body)
        pages += 1
        link = h.get("Link")
        m = re.fullmatch(r'<(http://[^>]+)>; rel="next"', link) if link else None
        if link and not m:
            raise AssertionError(f"Link header {link!r} is not '<ABSOLUTE-URL>; rel=\"next\"'")
        url = m.group(1) if m else None
    return entries, pages


def follow(url, headers=None, limit=5):
    """GET following redirects (relative ones too); returns the last (status, headers, body, url)."""
    for _ in range(limit):
        status, h, body = request(url, headers=headers)
        if status not in (301, 302, 307, 308):
            return status, h, body, url
        url = urllib.parse.urljoin(url, h["Location"])
    raise AssertionError("too many redirects")


class Fixture:
    """One simulator over the demo and a few small repos, shared by the test classes that use the
    same settings (starting one per class would only cost time)."""
    started = {}

    def __init__(self, page_size, url_ttl):
        self.tmp = tempfile.TemporaryDirectory(prefix="hubsim-test-")
        d = self.tmp.name
        self.repos_json = make_demo(d)
        make_repo(d, "provkit/demo-model", {"config.json": b'{"pr": 1}\n'}, sha=PR_SHA, refs=["refs/pr/1"])
        make_repo(d, "org/gated", {"a.txt": b"gated\n", "w.bin": b"W" * 5000}, lfs={"w.bin"}, gated="manual",
                  tokens=[GOOD])
        make_repo(d, "org/private", {"a.txt": b"private\n"}, private=True, tokens=[GOOD])
        make_repo(d, "org/data", {"d/x.csv": b"a,b\n1,2\n"}, repo_type="dataset")
        self.log_path = os.path.join(d, "requests.jsonl")
        self.sim = HubSim(self.repos_json, page_size=page_size, url_ttl=url_ttl, log=self.log_path).start()

    @classmethod
    def get(cls, page_size, url_ttl):
        key = (page_size, url_ttl)
        if key not in cls.started:
            cls.started[key] = Fixture(page_size, url_ttl)
        return cls.started[key]

    @classmethod
    def stop_all(cls):
        for f in cls.started.values():
            f.sim.stop()
            f.tmp.cleanup()
        cls.started.clear()


def tearDownModule():
    Fixture.stop_all()


class SimTest(unittest.TestCase):
    page_size = 3
    url_ttl = None

    @classmethod
    def setUpClass(cls):
        fixture = Fixture.get(cls.page_size, cls.url_ttl)
        cls.tmp, cls.sim, cls.log_path = fixture.tmp, fixture.sim, fixture.log_path
        cls.files, cls.lfs = demo_files()

    def setUp(self):
        self.sim.set_faults([])

    def resolve_url(self, path, rev="main", repo=DEMO_REPO):
        return f"{self.sim.hub}/{repo}/resolve/{urllib.parse.quote(rev, safe='')}/{path}"


class Protocol(SimTest):
    def test_revision_by_branch_sha_and_encoded_ref(self):
        for rev in ("main", DEMO_SHA):
            status, h, body = request(f"{self.sim.hub}/api/models/{DEMO_REPO}/revision/{rev}")
            self.assertEqual(status, 200)
            info = json.loads(body)
            self.assertEqual(info["sha"], DEMO_SHA)
            self.assertEqual(info["id"], DEMO_REPO)
            self.assertEqual(sorted(s["rfilename"] for s in info["siblings"]), sorted(self.files))
        status, _, body = request(f"{self.sim.hub}/api/models/{DEMO_REPO}/revision/refs%2Fpr%2F1")
        self.assertEqual((status, json.loads(body)["sha"]), (200, PR_SHA))

    def test_revision_blobs(self):
        _, _, body = request(f"{self.sim.hub}/api/models/{DEMO_REPO}/revision/main?blobs=true")
        sib = {s["rfilename"]: s for s in json.loads(body)["siblings"]}
        self.assertEqual(sib["config.json"]["blobId"], git_blob_id(self.files["config.json"]))
        shard = "model-00001-of-00002.safetensors"
        self.assertEqual(sib[shard]["lfs"]["sha256"], sha256(self.files[shard]))
        self.assertEqual(sib[shard]["size"], len(self.files[shard]))

    def test_unknown_revision(self):
        status, h, body = request(f"{self.sim.hub}/api/models/{DEMO_REPO}/revision/nope")
        self.assertEqual((status, h["X-Error-Code"]), (404, "RevisionNotFound"))
        self.assertIn("nope", json.loads(body)["error"])

    def test_tree_pages_follow_link_and_cover_everything(self):
        entries, pages = list_tree(f"{self.sim.hub}/api/models/{DEMO_REPO}/tree/{DEMO_SHA}?recursive=true&expand=false")
        self.assertEqual(pages, -(-len(entries) // self.page_size))
        files = {e["path"]: e for e in entries if e["type"] == "file"}
        dirs = [e for e in entries if e["type"] == "directory"]
        self.assertEqual(sorted(files), sorted(self.files))
        self.assertEqual([d["path"] for d in dirs], ["UD-IQ4_XS"])
        self.assertRegex(dirs[0]["oid"], r"^[0-9a-f]{40}$")
        for path, data in self.files.items():
            e = files[path]
            self.assertEqual(e["size"], len(data))
            if path in self.lfs:
                pointer = (f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256(data)}\n"
                           f"size {len(data)}\n").encode()
                self.assertEqual(e["lfs"], {"oid": sha256(data), "size": len(data), "pointerSize": len(pointer)})
                self.assertEqual(e["oid"], git_blob_id(pointer))
            else:
                self.assertNotIn("lfs", e)
                self.assertEqual(e["oid"], git_blob_id(data))
            self.assertNotIn("xetHash", e)

    def test_tree_non_recursive_subpath_and_recursive_1(self):
        _, _, body = request(f"{self.sim.hub}/api/models/{DEMO_REPO}/tree/main")
        top = [e["path"] for e in json.loads(body)]
        self.assertIn("UD-IQ4_XS", top)
        self.assertNotIn("UD-IQ4_XS/part-1", top)
        status, _, body = request(f"{self.sim.hub}/api/models/{DEMO_REPO}/tree/main/UD-IQ4_XS?recursive=1")
        self.assertEqual([e["path"] for e in json.loads(body)],
                         ["UD-IQ4_XS/part-1", "UD-IQ4_XS/part-2", "UD-IQ4_XS/part-3"])
        status, h, _ = request(f"{self.sim.hub}/api/models/{DEMO_REPO}/tree/main/nope")
        self.assertEqual((status, h["X-Error-Code"]), (404, "EntryNotFound"))

    def test_dataset_tree_and_resolve(self):
        status, _, body = request(f"{self.sim.hub}/api/datasets/org/data/tree/main?recursive=true")
        self.assertEqual([e["path"] for e in json.loads(body)], ["d", "d/x.csv"])
        status, h, body = request(f"{self.sim.hub}/datasets/org/data/resolve/main/d/x.csv")
        self.assertEqual((status, body), (200, b"a,b\n1,2\n"))
        status, h, _ = request(f"{self.sim.hub}/api/models/org/data/tree/main")
        self.assertEqual((status, h["X-Error-Code"]), (401, "RepoNotFound"))

    def test_paths_info_json_and_form(self):
        url = f"{self.sim.hub}/api/models/{DEMO_REPO}/paths-info/{DEMO_SHA}"
        status, _, body = request(url, "POST", {"Content-Type": "application/json"},
                                  json.dumps({"paths": ["config.json", "UD-IQ4_XS", "missing"], "expand": True}))
        out = {e["path"]: e for e in json.loads(body)}
        self.assertEqual(sorted(out), ["UD-IQ4_XS", "config.json"])
        self.assertEqual(out["config.json"]["lastCommit"]["id"], DEMO_SHA)
        status, _, body = request(url, "POST", {"Content-Type": "application/x-www-form-urlencoded"},
                                  "paths=UD-IQ4_XS%2Fpart-2&paths=README.md&expand=false")
        out = {e["path"]: e for e in json.loads(body)}
        self.assertEqual(out["UD-IQ4_XS/part-2"]["lfs"]["oid"], sha256(self.files["UD-IQ4_XS/part-2"]))
        self.assertNotIn("lastCommit", out["README.md"])

    def test_resolve_plain_file(self):
        data = self.files["config.json"]
        for method in ("HEAD", "GET"):
            status, h, body = request(self.resolve_url("config.json"), method)
            self.assertEqual(status, 200)
            self.assertEqual(h["ETag"], f'"{git_blob_id(data)}"')
            self.assertEqual(h["X-Repo-Commit"], DEMO_SHA)
            self.assertEqual(h["Content-Length"], str(len(data)))
            self.assertEqual(h["Accept-Ranges"], "bytes")
            self.assertEqual(body, data if method == "GET" else b"")

    def test_resolve_lfs_redirects_to_signed_cdn_url(self):
        path = "model-00001-of-00002.safetensors"
        data = self.files[path]
        for method in ("HEAD", "GET"):
            status, h, _ = request(self.resolve_url(path), method, {"Authorization": f"Bearer {GOOD}"})
            self.assertEqual(status, 302)
            self.assertEqual(h["X-Linked-Etag"], f'"{sha256(data)}"')
            self.assertEqual(h["X-Linked-Size"], str(len(data)))
            self.assertEqual(h["X-Repo-Commit"], DEMO_SHA)
            self.assertTrue(h["ETag"].startswith('"'))
            loc = urllib.parse.urlsplit(h["Location"])
            self.assertEqual(f"{loc.scheme}://{loc.netloc}", self.sim.cdn)
            self.assertEqual(loc.hostname, "127.0.0.2")
            q = urllib.parse.parse_qs(loc.query)
            self.assertGreater(int(q["Expires"][0]), time.time() + 60)
            self.assertIn("Signature", q)
        # The CDN needs no token: the signature is the credential.
        status, ch, body = request(h["Location"])
        self.assertEqual((status, body), (200, data))
        self.assertEqual(ch["ETag"], f'"{sha256(data)}"')
        self.assertNotIn("X-Repo-Commit", ch)  # as on the real CDN
        # A tampered signature or path is refused like an expired one.
        self.assertEqual(request(h["Location"].replace("Signature=", "Signature=0"))[0], 403)
        self.assertEqual(request(h["Location"].replace("Expires=", "Expires=1"))[0], 403)

    def test_ranges(self):
        path = "UD-IQ4_XS/part-2"
        data = self.files[path]
        cdn_url = request(self.resolve_url(path))[1]["Location"]
        for url, d in ((cdn_url, data), (self.resolve_url("tokenizer.json"), self.files["tokenizer.json"])):
            status, h, body = request(url, headers={"Range": "bytes=0-0"})
            self.assertEqual((status, body, h["Content-Range"]), (206, d[:1], f"bytes 0-0/{len(d)}"))
            self.assertIn("ETag", h)
            status, h, body = request(url, headers={"Range": "bytes=100-"})
            self.assertEqual((status, body, h["Content-Range"]), (206, d[100:], f"bytes 100-{len(d) - 1}/{len(d)}"))
            status, h, body = request(url, headers={"Range": "bytes=10-19"})
            self.assertEqual((status, body, h["Content-Length"]), (206, d[10:20], "10"))
            status, h, body = request(url, headers={"Range": "bytes=-5"})
            self.assertEqual((status, body), (206, d[-5:]))
            status, h, body = request(url, headers={"Range": f"bytes={len(d) + 10}-"})
            self.assertEqual((status, h["Content-Range"]), (416, f"bytes */{len(d)}"))
            status, h, body = request(url, headers={"Range": f"bytes=5-{len(d) + 1000}"})
            self.assertEqual((status, body), (206, d[5:]))

    def test_resolve_errors(self):
        status, h, body = request(self.resolve_url("nope.bin"))
        self.assertEqual((status, h["X-Error-Code"], h["X-Repo-Commit"]), (404, "EntryNotFound", DEMO_SHA))
        self.assertTrue(h["X-Error-Message"])
        status, h, _ = request(self.resolve_url("config.json", rev="nope"))
        self.assertEqual((status, h["X-Error-Code"]), (404, "RevisionNotFound"))
        status, h, _ = request(self.resolve_url("config.json", repo="org/missing"))
        self.assertEqual((status, h["X-Error-Code"]), (401, "RepoNotFound"))
        status, h, _ = request(self.resolve_url("config.json", repo="org/missing"),
                               headers={"Authorization": f"Bearer {GOOD}"})
        self.assertEqual((status, h["X-Error-Code"]), (404, "RepoNotFound"))
        status, h, body = request(self.resolve_url("config.json", rev="refs/pr/1"))
        self.assertEqual((status, body, h["X-Repo-Commit"]), (200, b'{"pr": 1}\n', PR_SHA))

    def test_keep_alive(self):
        u = urllib.parse.urlsplit(self.sim.hub)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        try:
            conn.request("GET", f"/{DEMO_REPO}/resolve/main/config.json")
            r = conn.getresponse()
            r.read()
            sock = conn.sock
            conn.request("HEAD", f"/{DEMO_REPO}/resolve/main/README.md")
            r = conn.getresponse()
            r.read()
            self.assertEqual(r.status, 200)
            self.assertIs(conn.sock, sock, "the server closed a keep-alive connection")
        finally:
            conn.close()

    def test_demo_repo_contents(self):
        for path in ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"):
            data = self.files[path]
            n = int.from_bytes(data[:8], "little")
            header = json.loads(data[8:8 + n])
            tensors = {k: v for k, v in header.items() if k != "__metadata__"}
            end = max(v["data_offsets"][1] for v in tensors.values())
            self.assertEqual(8 + n + end, len(data))
            self.assertGreater(len(data), 100_000)
        gguf = b"".join(self.files[f"UD-IQ4_XS/part-{i}"] for i in (1, 2, 3))
        self.assertTrue(gguf.startswith(b"GGUF"))
        self.assertEqual(self.files, demo_files()[0], "the demo is not deterministic")

    def test_demo_manifest_matches_the_tree(self):
        with open(os.path.join(self.tmp.name, "demo.manifest")) as f:
            text = f.read()
        self.assertIn(f"revision: {DEMO_SHA}\n", text)
        blocks = re.findall(r"  - path: (\S+)\n    size: (\d+)\n    sha256: (\w+)\n(?:    git_oid: (\w+)\n)?", text)
        self.assertEqual(sorted(b[0] for b in blocks), sorted(self.files))
        entries, _ = list_tree(f"{self.sim.hub}/api/models/{DEMO_REPO}/tree/{DEMO_SHA}?recursive=1")
        tree = {e["path"]: e for e in entries}
        for path, size, digest, git_oid in blocks:
            e = tree[path]
            self.assertEqual(int(size), e["size"])
            if "lfs" in e:
                self.assertEqual((digest, git_oid), (e["lfs"]["oid"], ""))
            else:
                self.assertEqual((digest, git_oid), (sha256(self.files[path]), e["oid"]))
        gguf = b"".join(self.files[f"UD-IQ4_XS/part-{i}"] for i in (1, 2, 3))
        self.assertIn(f"    sha256: {sha256(gguf)}\n    size: {len(gguf)}\n", text)


class Access(SimTest):
    def test_gated_repo(self):
        url = self.resolve_url("a.txt", repo="org/gated")
        tree = f"{self.sim.hub}/api/models/org/gated/tree/main"
        for u in (url, tree):
            status, h, body = request(u)
            self.assertEqual((status, h["X-Error-Code"]), (401, "GatedRepo"))
            self.assertIn("error", json.loads(body))
            status, h, _ = request(u, headers={"Authorization": f"Bearer {BAD}"})
            self.assertEqual((status, h["X-Error-Code"]), (403, "GatedRepo"))
            status, h, _ = request(u, headers={"Authorization": f"Bearer {GOOD}"})
            self.assertEqual(status, 200)
        status, h, _ = request(f"{self.sim.hub}/api/models/org/gated/revision/main",
                               headers={"Authorization": f"Bearer {GOOD}"})
        self.assertEqual(status, 200)

    def test_gated_lfs_cdn_needs_no_token(self):
        status, h, _ = request(self.resolve_url("w.bin", repo="org/gated"), headers={"Authorization": f"Bearer {GOOD}"})
        self.assertEqual(status, 302)
        status, _, body = request(h["Location"])
        self.assertEqual((status, body), (200, b"W" * 5000))

    def test_private_repo(self):
        url = self.resolve_url("a.txt", repo="org/private")
        status, h, _ = request(url)
        self.assertEqual((status, h["X-Error-Code"]), (401, "RepoNotFound"))
        status, h, _ = request(url, headers={"Authorization": f"Bearer {BAD}"})
        self.assertEqual((status, h["X-Error-Code"]), (404, "RepoNotFound"))
        status, h, body = request(url, headers={"Authorization": f"Bearer {GOOD}"})
        self.assertEqual((status, body), (200, b"private\n"))


class Log(SimTest):
    def test_request_log_both_origins(self):
        self.sim.clear_requests()
        self.assertEqual(self.sim.requests(), [])
        path = "model-00002-of-00002.safetensors"
        status, h, _ = request(self.resolve_url(path), headers={"Authorization": f"Bearer {GOOD}",
                                                                "X-Probe": "one"})
        request(h["Location"], headers={"Range": "bytes=0-99"})
        reqs = self.sim.requests()
        self.assertEqual([(r["origin"], r["method"], r["status"]) for r in reqs],
                         [("hub", "GET", 302), ("cdn", "GET", 206)])
        self.assertEqual(reqs[0]["headers"]["Authorization"], f"Bearer {GOOD}")
        self.assertEqual(reqs[0]["headers"]["X-Probe"], "one")
        self.assertEqual(reqs[0]["path"], f"/{DEMO_REPO}/resolve/main/{path}")
        self.assertNotIn("Authorization", reqs[1]["headers"])
        self.assertEqual(reqs[1]["headers"]["Range"], "bytes=0-99")
        self.assertEqual(reqs[1]["bytes_sent"], 100)
        self.assertEqual(self.sim.requests("cdn"), reqs[1:])
        deadline = time.monotonic() + 5  # the file gets a line once the response is finished
        while True:
            with open(self.log_path) as f:
                lines = [json.loads(line) for line in f]
            if lines[-1]["path"] == reqs[1]["path"] or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(lines[-1]["path"], reqs[1]["path"])
        self.assertEqual(lines[-1]["bytes_sent"], 100)


class Faults(SimTest):
    path = "UD-IQ4_XS/part-3"

    def cdn_url(self):
        return request(self.resolve_url(self.path))[1]["Location"]

    def raw_get(self, url, headers=None, timeout=10):
        """GET returning (status, headers, bytes received, cleanly finished?)."""
        u = urllib.parse.urlsplit(url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
        try:
            conn.request("GET", u.path + "?" + u.query, headers=headers or {})
            try:
                r = conn.getresponse()
            except ConnectionResetError:  # an abortive close may take the headers with it
                return None, {}, b"", False
            got = b""
            try:
                while True:
                    block = r.read(4096)
                    if not block:
                        break
                    got += block
                return r.status, r.headers, got, len(got) == int(r.headers["Content-Length"])
            except http.client.IncompleteRead as e:
                return r.status, r.headers, got + e.partial, False
            except ConnectionResetError:
                return r.status, r.headers, got, False
        finally:
            conn.close()

    def test_close_mid_body_and_truncate(self):
        data = self.files[self.path]
        for kind in ("close_mid_body", "truncate"):
            self.sim.set_faults([{"kind": kind, "origin": "cdn", "at": 5000}])
            url = self.cdn_url()
            status, h, got, complete = self.raw_get(url)
            self.assertEqual((status, h["Content-Length"], complete), (200, str(len(data)), False))
            self.assertEqual(got, data[:5000])
            status, _, got, complete = self.raw_get(url)  # times: 1 -> spent
            self.assertEqual((got, complete), (data, True))

    def test_close_mid_body_with_reset(self):
        data = self.files[self.path]
        self.sim.set_faults([{"kind": "close_mid_body", "at": 5000, "reset": True}])
        status, h, got, complete = self.raw_get(self.cdn_url())
        self.assertIn(status, (200, None))
        self.assertFalse(complete)
        self.assertEqual(got, data[:len(got)])
        self.assertLessEqual(len(got), 5000)
        self.assertEqual(self.sim.faults()[0]["fired"], 1)

    def test_close_mid_body_on_a_range(self):
        data = self.files[self.path]
        self.sim.set_faults([{"kind": "close_mid_body", "at": 10}])
        status, h, got, complete = self.raw_get(self.cdn_url(), {"Range": "bytes=1000-"})
        self.assertEqual((status, got, complete), (206, data[1000:1010], False))

    def test_ignore_range(self):
        data = self.files[self.path]
        self.sim.set_faults([{"kind": "ignore_range", "origin": "cdn"}])
        url = self.cdn_url()
        status, h, body = request(url, headers={"Range": "bytes=100-"})
        self.assertEqual((status, body), (200, data))
        self.assertNotIn("Content-Range", h)
        status, h, body = request(url, headers={"Range": "bytes=100-"})
        self.assertEqual((status, body), (206, data[100:]))

    def test_wrong_bytes(self):
        data = self.files[self.path]
        self.sim.set_faults([{"kind": "wrong_bytes", "at": 1000, "count": 4}])
        status, h, body = request(self.cdn_url())
        self.assertEqual((status, len(body)), (200, len(data)))
        self.assertEqual(body[:1000], data[:1000])
        self.assertEqual(body[1004:], data[1004:])
        self.assertTrue(all(body[i] != data[i] for i in range(1000, 1004)))
        self.sim.set_faults([{"kind": "wrong_bytes", "origin": "hub", "path_contains": "config.json"}])
        body = request(self.resolve_url("config.json"))[2]
        self.assertNotEqual(body, self.files["config.json"])
        self.assertEqual(len(body), len(self.files["config.json"]))

    def test_status_burst_with_headers(self):
        self.sim.set_faults([{"kind": "status", "code": 503, "times": 2, "path_contains": "/resolve/",
                              "headers": {"Retry-After": "1"}}])
        url = self.resolve_url("config.json")
        for _ in range(2):
            status, h, _ = request(url)
            self.assertEqual((status, h["Retry-After"]), (503, "1"))
        self.assertEqual(request(url)[0], 200)
        rules = self.sim.faults()
        self.assertEqual((rules[0]["times"], rules[0]["fired"]), (0, 2))

    def test_status_forever_and_origin_filter(self):
        self.sim.set_faults([{"kind": "status", "code": 502, "origin": "cdn", "times": -1}])
        url = self.cdn_url()  # the hub is not affected
        for _ in range(3):
            self.assertEqual(request(url)[0], 502)
        self.assertEqual(request(self.resolve_url("config.json"))[0], 200)

    def test_rate_limit(self):
        self.sim.set_faults([{"kind": "rate_limit", "retry_after": 2, "ratelimit": '"resolvers";r=0;t=2',
                              "ratelimit_policy": '"fixed window";"resolvers";q=3000;w=300'}])
        status, h, _ = request(self.resolve_url("config.json"))
        self.assertEqual((status, h["Retry-After"], h["RateLimit"]), (429, "2", '"resolvers";r=0;t=2'))
        self.assertEqual(h["RateLimit-Policy"], '"fixed window";"resolvers";q=3000;w=300')
        self.assertEqual(request(self.resolve_url("config.json"))[0], 200)

    def test_headers_on_a_normal_answer(self):
        rl = '"api";r=0;t=2'
        self.sim.set_faults([{"kind": "headers", "path_contains": "/tree/", "headers": {"RateLimit": rl}}])
        status, h, _ = request(self.resolve_url("config.json"))  # another path: untouched
        self.assertEqual((status, h.get("RateLimit")), (200, None))
        status, h, body = request(f"{self.sim.hub}/api/models/{DEMO_REPO}/tree/{DEMO_SHA}")
        self.assertEqual((status, h["RateLimit"]), (200, rl))
        self.assertTrue(json.loads(body))  # the listing itself as usual
        status, h, _ = request(f"{self.sim.hub}/api/models/{DEMO_REPO}/tree/{DEMO_SHA}")
        self.assertEqual((status, h.get("RateLimit")), (200, None))  # times: 1

    def test_stall(self):
        data = self.files[self.path]
        self.sim.set_faults([{"kind": "stall", "at": 3000, "seconds": 1.5}])
        url = self.cdn_url()
        with self.assertRaises((socket.timeout, TimeoutError)):
            self.raw_get(url, timeout=0.5)
        began = time.monotonic()
        self.sim.set_faults([{"kind": "stall", "at": 3000, "seconds": 0.5}])
        status, _, got, complete = self.raw_get(url, timeout=5)
        self.assertEqual((got, complete), (data, True))  # the rest comes after the stall
        self.assertGreater(time.monotonic() - began, 0.45)

    def test_throttle(self):
        data = self.files[self.path]
        self.sim.set_faults([{"kind": "throttle", "bytes_per_second": 400_000}])
        began = time.monotonic()
        status, _, body = request(self.cdn_url())
        took = time.monotonic() - began
        self.assertEqual(body, data)
        self.assertGreater(took, len(data) / 400_000 * 0.8)

    def test_expire_url(self):
        self.sim.set_faults([{"kind": "expire_url", "times": 1}])
        url = self.cdn_url()
        status, h, body = request(url, headers={"Range": "bytes=0-9"})
        self.assertEqual(status, 403)
        self.assertIn(b"AccessDenied", body)
        self.assertEqual(request(url, headers={"Range": "bytes=0-9"})[0], 206)

    def test_redirect_loop(self):
        self.sim.set_faults([{"kind": "redirect_loop", "times": -1}])
        url = self.resolve_url("config.json")
        status, h, _ = request(url)
        self.assertEqual((status, h["Location"]), (302, url))

    def test_redirect_other_origin(self):
        data = self.files["config.json"]
        self.sim.set_faults([{"kind": "redirect_other_origin"}])
        status, h, _ = request(self.resolve_url("config.json"), headers={"Authorization": f"Bearer {GOOD}"})
        self.assertEqual((status, h["ETag"], h["X-Repo-Commit"]), (302, f'"{git_blob_id(data)}"', DEMO_SHA))
        self.assertTrue(h["Location"].startswith(self.sim.cdn + "/"))
        status, ch, body = request(h["Location"])
        self.assertEqual((status, body, ch["ETag"]), (200, data, f'"{git_blob_id(data)}"'))

    def test_relative_redirect(self):
        data = self.files["config.json"]
        self.sim.set_faults([{"kind": "relative_redirect"}])
        status, h, _ = request(self.resolve_url("config.json"))
        self.assertEqual(status, 307)
        self.assertTrue(h["Location"].startswith("/api/resolve-cache/models/"))
        status, h, body, _ = follow(self.resolve_url("config.json"))
        self.assertEqual((status, body, h["X-Repo-Commit"]), (200, data, DEMO_SHA))

    def test_bad_rules_refused(self):
        status, _, body = request(self.sim.hub + "/_sim/faults", "POST", {"Content-Type": "application/json"},
                                  json.dumps([{"kind": "no_such_kind"}]))
        self.assertEqual(status, 400)
        self.assertIn("no_such_kind", json.loads(body)["error"])


class ExpiredUrls(SimTest):
    url_ttl = -5  # every signed URL is born expired

    def test_expired_signature_is_403(self):
        status, h, _ = request(self.resolve_url("model-00001-of-00002.safetensors"))
        self.assertEqual(status, 302)
        status, _, body = request(h["Location"])
        self.assertEqual(status, 403)
        self.assertIn(b"AccessDenied", body)


class Lifecycle(unittest.TestCase):
    def test_stopped_even_on_exception_and_ready_file_contents(self):
        with tempfile.TemporaryDirectory() as d:
            repos = make_demo(d)
            try:
                with HubSim(repos) as sim:
                    proc = sim.proc
                    self.assertRegex(sim.hub, r"^http://127\.0\.0\.1:\d+$")
                    self.assertRegex(sim.cdn, r"^http://127\.0\.0\.2:\d+$")
                    raise KeyError("boom")
            except KeyError:
                pass
            self.assertIsNotNone(proc.poll(), "the simulator outlived its context")

    def test_reload_sees_a_new_commit(self):
        with tempfile.TemporaryDirectory() as d:
            old = make_repo(d, "org/moving", {"a.txt": b"one\n"})
            with HubSim(os.path.join(d, "repos.json")) as sim:
                new = make_repo(d, "org/moving", {"a.txt": b"two\n"})
                self.assertEqual(json.loads(request(f"{sim.hub}/api/models/org/moving/revision/main")[2])["sha"], old)
                sim.reload()
                self.assertEqual(json.loads(request(f"{sim.hub}/api/models/org/moving/revision/main")[2])["sha"], new)
                self.assertEqual(request(f"{sim.hub}/org/moving/resolve/{old}/a.txt")[2], b"one\n")
                self.assertEqual(request(f"{sim.hub}/org/moving/resolve/main/a.txt")[2], b"two\n")

    def test_external_cdn_template(self):
        with tempfile.TemporaryDirectory() as d:
            repos = make_demo(d)
            with HubSim(repos, extra_args=["--external-cdn", "http://127.0.0.3:8080/b/{type}/{repo}/{sha256}"]) as sim:
                status, h, _ = request(f"{sim.hub}/{DEMO_REPO}/resolve/main/UD-IQ4_XS/part-1", "HEAD")
                want = sha256(demo_files()[0]["UD-IQ4_XS/part-1"])
                self.assertEqual(status, 302)
                self.assertTrue(h["Location"].startswith(f"http://127.0.0.3:8080/b/model/{DEMO_REPO}/{want}?Expires="),
                                h["Location"])

    def test_bad_repos_json_fails_fast(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "repos.json")
            with open(p, "w") as f:
                json.dump({"repos": [{"id": "a/b", "commits": [{"sha": "xyz", "files": []}]}]}, f)
            with self.assertRaisesRegex(RuntimeError, "40 lowercase hex"):
                HubSim(p).start()


if __name__ == "__main__":
    unittest.main(verbosity=2)
