#!/usr/bin/env python3
"""Self-test of the Hub simulator: the protocol the clients rely on, every fault kind, the request
log and access control, spoken to with plain http.client (no client library in between).

Each test starts its own simulator (`with demo_sim(tmp) as sim:`, about a second) over the demo and a
few small repos, so no test sees another's fault rules or requests.
Run one: python3 test_hubsim.py test_ranges   (ctest runs each on its own)
"""

import contextlib
import hashlib
import http.client
import json
import os
import re
import socket
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import DEMO_REPO, DEMO_SHA, HubSim, check, demo_files, main, make_demo, make_repo  # noqa: E402

GOOD = "hf_good_token"
BAD = "hf_other_token"
PR_SHA = "1" * 40
PAGE_SIZE = 3  # tree listings come in pages this long, so the demo's listing takes several
REDIRECTS = (301, 302, 307, 308)
FILES, LFS = demo_files()  # the demo repo's files {path: bytes} and the set of its LFS paths


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def shown(value, limit=300):
    """repr(value), cut short: a failed check shows file contents without printing megabytes."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def check_equal(got, want, what):
    """check(got == want, what), showing both values when they differ."""
    check(got == want, what, f"got:  {shown(got)}\nwant: {shown(want)}")


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
        check(status == 200, f"tree page {url}: status {status}, not 200", shown(body))
        entries += json.loads(body)
        pages += 1
        link = h.get("Link")
        m = re.fullmatch(r'<(http://[^>]+)>; rel="next"', link) if link else None
        check(not link or m, f"Link header {link!r} is not '<ABSOLUTE-URL>; rel=\"next\"'")
        url = m.group(1) if m else None
    return entries, pages


def follow(url, headers=None, limit=5):
    """GET following redirects (relative ones too); returns the last (status, headers, body, url)."""
    for _ in range(limit):
        status, h, body = request(url, headers=headers)
        if status not in REDIRECTS:
            break
        url = urllib.parse.urljoin(url, h["Location"])
    check(status not in REDIRECTS, f"still redirected after {limit} redirects", url)
    return status, h, body, url


def resolve_url(sim, path, rev="main", repo=DEMO_REPO):
    return f"{sim.hub}/{repo}/resolve/{urllib.parse.quote(rev, safe='')}/{path}"


def log_path(tmp):
    return os.path.join(tmp, "requests.jsonl")


@contextlib.contextmanager
def demo_sim(tmp, url_ttl=None):
    """The simulator over the demo (with a refs/pr/1 commit), a gated, a private and a dataset repo
    made in `tmp`, writing its request log to log_path(tmp); stopped when the block ends."""
    repos_json = make_demo(tmp)
    make_repo(tmp, "provkit/demo-model", {"config.json": b'{"pr": 1}\n'}, sha=PR_SHA, refs=["refs/pr/1"])
    make_repo(tmp, "org/gated", {"a.txt": b"gated\n", "w.bin": b"W" * 5000}, lfs={"w.bin"}, gated="manual",
              tokens=[GOOD])
    make_repo(tmp, "org/private", {"a.txt": b"private\n"}, private=True, tokens=[GOOD])
    make_repo(tmp, "org/data", {"d/x.csv": b"a,b\n1,2\n"}, repo_type="dataset")
    with HubSim(repos_json, page_size=PAGE_SIZE, url_ttl=url_ttl, log=log_path(tmp)) as sim:
        yield sim


# ---- the protocol ----------------------------------------------------------------------------

def test_revision_by_branch_sha_and_encoded_ref(tmp):
    with demo_sim(tmp) as sim:
        for rev in ("main", DEMO_SHA):
            status, h, body = request(f"{sim.hub}/api/models/{DEMO_REPO}/revision/{rev}")
            check_equal(status, 200, f"revision {rev}: status")
            info = json.loads(body)
            check_equal(info["sha"], DEMO_SHA, f"revision {rev}: sha")
            check_equal(info["id"], DEMO_REPO, f"revision {rev}: id")
            check_equal(sorted(s["rfilename"] for s in info["siblings"]), sorted(FILES),
                        f"revision {rev}: siblings")
        status, _, body = request(f"{sim.hub}/api/models/{DEMO_REPO}/revision/refs%2Fpr%2F1")
        check_equal((status, json.loads(body)["sha"]), (200, PR_SHA), "revision refs%2Fpr%2F1: (status, sha)")


def test_revision_blobs(tmp):
    with demo_sim(tmp) as sim:
        _, _, body = request(f"{sim.hub}/api/models/{DEMO_REPO}/revision/main?blobs=true")
    sib = {s["rfilename"]: s for s in json.loads(body)["siblings"]}
    check_equal(sib["config.json"]["blobId"], git_blob_id(FILES["config.json"]), "config.json blobId")
    shard = "model-00001-of-00002.safetensors"
    check_equal(sib[shard]["lfs"]["sha256"], sha256(FILES[shard]), f"{shard} lfs.sha256")
    check_equal(sib[shard]["size"], len(FILES[shard]), f"{shard} size")


def test_unknown_revision(tmp):
    with demo_sim(tmp) as sim:
        status, h, body = request(f"{sim.hub}/api/models/{DEMO_REPO}/revision/nope")
    check_equal((status, h["X-Error-Code"]), (404, "RevisionNotFound"), "revision nope: (status, X-Error-Code)")
    check("nope" in json.loads(body)["error"], "the error does not name the revision", shown(body))


def test_tree_pages_follow_link_and_cover_everything(tmp):
    with demo_sim(tmp) as sim:
        entries, pages = list_tree(f"{sim.hub}/api/models/{DEMO_REPO}/tree/{DEMO_SHA}?recursive=true&expand=false")
    check_equal(pages, -(-len(entries) // PAGE_SIZE), f"pages for {len(entries)} entries of {PAGE_SIZE} a page")
    files = {e["path"]: e for e in entries if e["type"] == "file"}
    dirs = [e for e in entries if e["type"] == "directory"]
    check_equal(sorted(files), sorted(FILES), "the files listed")
    check_equal([d["path"] for d in dirs], ["UD-IQ4_XS"], "the directories listed")
    check(re.search(r"^[0-9a-f]{40}$", dirs[0]["oid"]), "a directory's oid is not 40 hex digits", dirs[0])
    for path, data in FILES.items():
        e = files[path]
        check_equal(e["size"], len(data), f"{path}: size")
        if path in LFS:
            pointer = (f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256(data)}\n"
                       f"size {len(data)}\n").encode()
            check_equal(e["lfs"], {"oid": sha256(data), "size": len(data), "pointerSize": len(pointer)},
                        f"{path}: lfs")
            check_equal(e["oid"], git_blob_id(pointer), f"{path}: oid (of the LFS pointer)")
        else:
            check("lfs" not in e, f"{path}: a plain file has lfs", e)
            check_equal(e["oid"], git_blob_id(data), f"{path}: oid")
        check("xetHash" not in e, f"{path}: has xetHash", e)


def test_tree_non_recursive_subpath_and_recursive_1(tmp):
    with demo_sim(tmp) as sim:
        _, _, body = request(f"{sim.hub}/api/models/{DEMO_REPO}/tree/main")
        top = [e["path"] for e in json.loads(body)]
        check("UD-IQ4_XS" in top, "the top level does not list the directory", top)
        check("UD-IQ4_XS/part-1" not in top, "the top level lists a file inside a directory", top)
        status, _, body = request(f"{sim.hub}/api/models/{DEMO_REPO}/tree/main/UD-IQ4_XS?recursive=1")
        check_equal([e["path"] for e in json.loads(body)],
                    ["UD-IQ4_XS/part-1", "UD-IQ4_XS/part-2", "UD-IQ4_XS/part-3"], "tree/main/UD-IQ4_XS")
        status, h, _ = request(f"{sim.hub}/api/models/{DEMO_REPO}/tree/main/nope")
        check_equal((status, h["X-Error-Code"]), (404, "EntryNotFound"), "tree/main/nope: (status, X-Error-Code)")


def test_dataset_tree_and_resolve(tmp):
    with demo_sim(tmp) as sim:
        status, _, body = request(f"{sim.hub}/api/datasets/org/data/tree/main?recursive=true")
        check_equal([e["path"] for e in json.loads(body)], ["d", "d/x.csv"], "the dataset's tree")
        status, h, body = request(f"{sim.hub}/datasets/org/data/resolve/main/d/x.csv")
        check_equal((status, body), (200, b"a,b\n1,2\n"), "dataset resolve: (status, body)")
        status, h, _ = request(f"{sim.hub}/api/models/org/data/tree/main")
        check_equal((status, h["X-Error-Code"]), (401, "RepoNotFound"),
                    "the dataset asked for as a model: (status, X-Error-Code)")


def test_paths_info_json_and_form(tmp):
    with demo_sim(tmp) as sim:
        url = f"{sim.hub}/api/models/{DEMO_REPO}/paths-info/{DEMO_SHA}"
        status, _, body = request(url, "POST", {"Content-Type": "application/json"},
                                  json.dumps({"paths": ["config.json", "UD-IQ4_XS", "missing"], "expand": True}))
        out = {e["path"]: e for e in json.loads(body)}
        check_equal(sorted(out), ["UD-IQ4_XS", "config.json"], "paths-info (JSON body): the paths answered")
        check_equal(out["config.json"]["lastCommit"]["id"], DEMO_SHA, "paths-info expand=True: lastCommit.id")
        status, _, body = request(url, "POST", {"Content-Type": "application/x-www-form-urlencoded"},
                                  "paths=UD-IQ4_XS%2Fpart-2&paths=README.md&expand=false")
        out = {e["path"]: e for e in json.loads(body)}
        check_equal(out["UD-IQ4_XS/part-2"]["lfs"]["oid"], sha256(FILES["UD-IQ4_XS/part-2"]),
                    "paths-info (form body): lfs.oid")
        check("lastCommit" not in out["README.md"], "paths-info expand=false has lastCommit", out["README.md"])


def test_resolve_plain_file(tmp):
    data = FILES["config.json"]
    with demo_sim(tmp) as sim:
        for method in ("HEAD", "GET"):
            status, h, body = request(resolve_url(sim, "config.json"), method)
            check_equal(status, 200, f"{method}: status")
            check_equal(h["ETag"], f'"{git_blob_id(data)}"', f"{method}: ETag")
            check_equal(h["X-Repo-Commit"], DEMO_SHA, f"{method}: X-Repo-Commit")
            check_equal(h["Content-Length"], str(len(data)), f"{method}: Content-Length")
            check_equal(h["Accept-Ranges"], "bytes", f"{method}: Accept-Ranges")
            check_equal(body, data if method == "GET" else b"", f"{method}: body")


def test_resolve_lfs_redirects_to_signed_cdn_url(tmp):
    path = "model-00001-of-00002.safetensors"
    data = FILES[path]
    with demo_sim(tmp) as sim:
        for method in ("HEAD", "GET"):
            status, h, _ = request(resolve_url(sim, path), method, {"Authorization": f"Bearer {GOOD}"})
            check_equal(status, 302, f"{method}: status")
            check_equal(h["X-Linked-Etag"], f'"{sha256(data)}"', f"{method}: X-Linked-Etag")
            check_equal(h["X-Linked-Size"], str(len(data)), f"{method}: X-Linked-Size")
            check_equal(h["X-Repo-Commit"], DEMO_SHA, f"{method}: X-Repo-Commit")
            check(h["ETag"].startswith('"'), f"{method}: the ETag is not quoted", h["ETag"])
            loc = urllib.parse.urlsplit(h["Location"])
            check_equal(f"{loc.scheme}://{loc.netloc}", sim.cdn, f"{method}: the Location's origin")
            check_equal(loc.hostname, "127.0.0.2", f"{method}: the Location's host")
            q = urllib.parse.parse_qs(loc.query)
            check(int(q["Expires"][0]) > time.time() + 60, f"{method}: Expires is less than a minute ahead",
                  h["Location"])
            check("Signature" in q, f"{method}: the Location has no Signature", h["Location"])
        # The CDN needs no token: the signature is the credential.
        status, ch, body = request(h["Location"])
        check_equal((status, body), (200, data), "CDN: (status, body)")
        check_equal(ch["ETag"], f'"{sha256(data)}"', "CDN: ETag")
        check("X-Repo-Commit" not in ch, "the CDN sends X-Repo-Commit (the real CDN does not)", ch)
        # A tampered signature or path is refused like an expired one.
        check_equal(request(h["Location"].replace("Signature=", "Signature=0"))[0], 403,
                    "a tampered Signature: status")
        check_equal(request(h["Location"].replace("Expires=", "Expires=1"))[0], 403, "a tampered Expires: status")


def test_ranges(tmp):
    path = "UD-IQ4_XS/part-2"
    data = FILES[path]
    with demo_sim(tmp) as sim:
        cdn_url = request(resolve_url(sim, path))[1]["Location"]
        for where, url, d in (("CDN", cdn_url, data),
                              ("hub", resolve_url(sim, "tokenizer.json"), FILES["tokenizer.json"])):
            status, h, body = request(url, headers={"Range": "bytes=0-0"})
            check_equal((status, body, h["Content-Range"]), (206, d[:1], f"bytes 0-0/{len(d)}"),
                        f"{where} bytes=0-0: (status, body, Content-Range)")
            check("ETag" in h, f"{where} bytes=0-0: no ETag", h)
            status, h, body = request(url, headers={"Range": "bytes=100-"})
            check_equal((status, body, h["Content-Range"]), (206, d[100:], f"bytes 100-{len(d) - 1}/{len(d)}"),
                        f"{where} bytes=100-: (status, body, Content-Range)")
            status, h, body = request(url, headers={"Range": "bytes=10-19"})
            check_equal((status, body, h["Content-Length"]), (206, d[10:20], "10"),
                        f"{where} bytes=10-19: (status, body, Content-Length)")
            status, h, body = request(url, headers={"Range": "bytes=-5"})
            check_equal((status, body), (206, d[-5:]), f"{where} bytes=-5: (status, body)")
            status, h, body = request(url, headers={"Range": f"bytes={len(d) + 10}-"})
            check_equal((status, h["Content-Range"]), (416, f"bytes */{len(d)}"),
                        f"{where} bytes=SIZE+10-: (status, Content-Range)")
            status, h, body = request(url, headers={"Range": f"bytes=5-{len(d) + 1000}"})
            check_equal((status, body), (206, d[5:]), f"{where} bytes=5-SIZE+1000: (status, body)")


def test_resolve_errors(tmp):
    with demo_sim(tmp) as sim:
        status, h, body = request(resolve_url(sim, "nope.bin"))
        check_equal((status, h["X-Error-Code"], h["X-Repo-Commit"]), (404, "EntryNotFound", DEMO_SHA),
                    "a missing file: (status, X-Error-Code, X-Repo-Commit)")
        check(h["X-Error-Message"], "a missing file: no X-Error-Message", h)
        status, h, _ = request(resolve_url(sim, "config.json", rev="nope"))
        check_equal((status, h["X-Error-Code"]), (404, "RevisionNotFound"),
                    "a missing revision: (status, X-Error-Code)")
        status, h, _ = request(resolve_url(sim, "config.json", repo="org/missing"))
        check_equal((status, h["X-Error-Code"]), (401, "RepoNotFound"),
                    "a missing repo without a token: (status, X-Error-Code)")
        status, h, _ = request(resolve_url(sim, "config.json", repo="org/missing"),
                               headers={"Authorization": f"Bearer {GOOD}"})
        check_equal((status, h["X-Error-Code"]), (404, "RepoNotFound"),
                    "a missing repo with a token: (status, X-Error-Code)")
        status, h, body = request(resolve_url(sim, "config.json", rev="refs/pr/1"))
        check_equal((status, body, h["X-Repo-Commit"]), (200, b'{"pr": 1}\n', PR_SHA),
                    "rev refs/pr/1: (status, body, X-Repo-Commit)")


def test_keep_alive(tmp):
    with demo_sim(tmp) as sim:
        u = urllib.parse.urlsplit(sim.hub)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        try:
            conn.request("GET", f"/{DEMO_REPO}/resolve/main/config.json")
            r = conn.getresponse()
            r.read()
            sock = conn.sock
            conn.request("HEAD", f"/{DEMO_REPO}/resolve/main/README.md")
            r = conn.getresponse()
            r.read()
            check_equal(r.status, 200, "the second request on the connection: status")
            check(conn.sock is sock, "the server closed a keep-alive connection")
        finally:
            conn.close()


def test_demo_repo_contents():
    for path in ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"):
        data = FILES[path]
        n = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + n])
        tensors = {k: v for k, v in header.items() if k != "__metadata__"}
        end = max(v["data_offsets"][1] for v in tensors.values())
        check_equal(8 + n + end, len(data), f"{path}: header length + tensor data end vs the file's size")
        check(len(data) > 100_000, f"{path}: only {len(data)} bytes, not over 100000")
    gguf = b"".join(FILES[f"UD-IQ4_XS/part-{i}"] for i in (1, 2, 3))
    check(gguf.startswith(b"GGUF"), "the joined parts do not start with GGUF", shown(gguf[:16]))
    check(FILES == demo_files()[0], "the demo is not deterministic")


def test_demo_manifest_matches_the_tree(tmp):
    with demo_sim(tmp) as sim:
        with open(os.path.join(tmp, "demo.manifest")) as f:
            text = f.read()
        check(f"revision: {DEMO_SHA}\n" in text, f"the manifest has no 'revision: {DEMO_SHA}'", text)
        blocks = re.findall(r"  - path: (\S+)\n    size: (\d+)\n    sha256: (\w+)\n(?:    git_oid: (\w+)\n)?", text)
        check_equal(sorted(b[0] for b in blocks), sorted(FILES), "the manifest's paths")
        entries, _ = list_tree(f"{sim.hub}/api/models/{DEMO_REPO}/tree/{DEMO_SHA}?recursive=1")
    tree = {e["path"]: e for e in entries}
    for path, size, digest, git_oid in blocks:
        e = tree[path]
        check_equal(int(size), e["size"], f"{path}: the manifest's size vs the tree's")
        if "lfs" in e:
            check_equal((digest, git_oid), (e["lfs"]["oid"], ""), f"{path} (LFS): the manifest's (sha256, git_oid)")
        else:
            check_equal((digest, git_oid), (sha256(FILES[path]), e["oid"]), f"{path}: the manifest's (sha256, git_oid)")
    gguf = b"".join(FILES[f"UD-IQ4_XS/part-{i}"] for i in (1, 2, 3))
    check(f"    sha256: {sha256(gguf)}\n    size: {len(gguf)}\n" in text,
          "the manifest has no sha256 and size of the joined GGUF parts", text)


# ---- access control --------------------------------------------------------------------------

def test_gated_repo(tmp):
    with demo_sim(tmp) as sim:
        url = resolve_url(sim, "a.txt", repo="org/gated")
        tree = f"{sim.hub}/api/models/org/gated/tree/main"
        for u in (url, tree):
            status, h, body = request(u)
            check_equal((status, h["X-Error-Code"]), (401, "GatedRepo"), f"{u} without a token: (status, X-Error-Code)")
            check("error" in json.loads(body), f"{u} without a token: no error in the body", shown(body))
            status, h, _ = request(u, headers={"Authorization": f"Bearer {BAD}"})
            check_equal((status, h["X-Error-Code"]), (403, "GatedRepo"),
                        f"{u} with a token not granted: (status, X-Error-Code)")
            status, h, _ = request(u, headers={"Authorization": f"Bearer {GOOD}"})
            check_equal(status, 200, f"{u} with a granted token: status")
        status, h, _ = request(f"{sim.hub}/api/models/org/gated/revision/main",
                               headers={"Authorization": f"Bearer {GOOD}"})
        check_equal(status, 200, "the gated revision with a granted token: status")


def test_gated_lfs_cdn_needs_no_token(tmp):
    with demo_sim(tmp) as sim:
        status, h, _ = request(resolve_url(sim, "w.bin", repo="org/gated"), headers={"Authorization": f"Bearer {GOOD}"})
        check_equal(status, 302, "the gated LFS file with a granted token: status")
        status, _, body = request(h["Location"])
        check_equal((status, body), (200, b"W" * 5000), "its CDN URL without a token: (status, body)")


def test_private_repo(tmp):
    with demo_sim(tmp) as sim:
        url = resolve_url(sim, "a.txt", repo="org/private")
        status, h, _ = request(url)
        check_equal((status, h["X-Error-Code"]), (401, "RepoNotFound"), "without a token: (status, X-Error-Code)")
        status, h, _ = request(url, headers={"Authorization": f"Bearer {BAD}"})
        check_equal((status, h["X-Error-Code"]), (404, "RepoNotFound"),
                    "with a token not granted: (status, X-Error-Code)")
        status, h, body = request(url, headers={"Authorization": f"Bearer {GOOD}"})
        check_equal((status, body), (200, b"private\n"), "with a granted token: (status, body)")


# ---- the request log -------------------------------------------------------------------------

def test_request_log_both_origins(tmp):
    path = "model-00002-of-00002.safetensors"
    with demo_sim(tmp) as sim:
        sim.clear_requests()
        check_equal(sim.requests(), [], "the requests after clear_requests")
        status, h, _ = request(resolve_url(sim, path), headers={"Authorization": f"Bearer {GOOD}",
                                                                "X-Probe": "one"})
        request(h["Location"], headers={"Range": "bytes=0-99"})
        reqs = sim.requests()
        check_equal([(r["origin"], r["method"], r["status"]) for r in reqs],
                    [("hub", "GET", 302), ("cdn", "GET", 206)], "the requests logged: (origin, method, status)")
        check_equal(reqs[0]["headers"]["Authorization"], f"Bearer {GOOD}", "the hub request's Authorization")
        check_equal(reqs[0]["headers"]["X-Probe"], "one", "the hub request's X-Probe")
        check_equal(reqs[0]["path"], f"/{DEMO_REPO}/resolve/main/{path}", "the hub request's path")
        check("Authorization" not in reqs[1]["headers"], "the CDN request has an Authorization", reqs[1])
        check_equal(reqs[1]["headers"]["Range"], "bytes=0-99", "the CDN request's Range")
        check_equal(reqs[1]["bytes_sent"], 100, "the CDN request's bytes_sent")
        check_equal(sim.requests("cdn"), reqs[1:], "requests('cdn')")
        deadline = time.monotonic() + 5  # the file gets a line once the response is finished
        while True:
            with open(log_path(tmp)) as f:
                lines = [json.loads(line) for line in f]
            if lines[-1]["path"] == reqs[1]["path"] or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        check_equal(lines[-1]["path"], reqs[1]["path"], "the log file's last line: path")
        check_equal(lines[-1]["bytes_sent"], 100, "the log file's last line: bytes_sent")


# ---- faults ----------------------------------------------------------------------------------

FAULT_PATH = "UD-IQ4_XS/part-3"  # the LFS file the body faults are tried on


def cdn_url(sim):
    return request(resolve_url(sim, FAULT_PATH))[1]["Location"]


def raw_get(url, headers=None, timeout=10):
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


def test_close_mid_body_and_truncate(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        for kind in ("close_mid_body", "truncate"):
            sim.set_faults([{"kind": kind, "origin": "cdn", "at": 5000}])
            url = cdn_url(sim)
            status, h, got, complete = raw_get(url)
            check_equal((status, h["Content-Length"], complete), (200, str(len(data)), False),
                        f"{kind}: (status, Content-Length, complete)")
            check_equal(got, data[:5000], f"{kind}: the bytes received")
            status, _, got, complete = raw_get(url)  # times: 1 -> spent
            check_equal((got, complete), (data, True), f"{kind} spent: (bytes received, complete)")


def test_close_mid_body_with_reset(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "close_mid_body", "at": 5000, "reset": True}])
        status, h, got, complete = raw_get(cdn_url(sim))
        check(status in (200, None), f"status {status}, not 200 or none (reset before the headers)")
        check(not complete, "the body came whole despite the reset")
        check_equal(got, data[:len(got)], "the bytes received are not the file's start")
        check(len(got) <= 5000, f"{len(got)} bytes received, more than the 5000 before the reset")
        check_equal(sim.faults()[0]["fired"], 1, "the rule's fired count")


def test_close_mid_body_on_a_range(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "close_mid_body", "at": 10}])
        status, h, got, complete = raw_get(cdn_url(sim), {"Range": "bytes=1000-"})
    check_equal((status, got, complete), (206, data[1000:1010], False), "(status, bytes received, complete)")


def test_ignore_range(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "ignore_range", "origin": "cdn"}])
        url = cdn_url(sim)
        status, h, body = request(url, headers={"Range": "bytes=100-"})
        check_equal((status, body), (200, data), "Range ignored: (status, body)")
        check("Content-Range" not in h, "Range ignored, yet a Content-Range", h)
        status, h, body = request(url, headers={"Range": "bytes=100-"})
        check_equal((status, body), (206, data[100:]), "the rule spent: (status, body)")


def test_wrong_bytes(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "wrong_bytes", "at": 1000, "count": 4}])
        status, h, body = request(cdn_url(sim))
        check_equal((status, len(body)), (200, len(data)), "(status, body length)")
        check_equal(body[:1000], data[:1000], "the bytes before the wrong ones")
        check_equal(body[1004:], data[1004:], "the bytes after the wrong ones")
        check(all(body[i] != data[i] for i in range(1000, 1004)), "bytes 1000-1003 are not all wrong",
              f"got {shown(body[1000:1004])}, the file has {shown(data[1000:1004])}")
        sim.set_faults([{"kind": "wrong_bytes", "origin": "hub", "path_contains": "config.json"}])
        body = request(resolve_url(sim, "config.json"))[2]
        check(body != FILES["config.json"], "wrong_bytes on the hub: config.json came right", shown(body))
        check_equal(len(body), len(FILES["config.json"]), "wrong_bytes on the hub: the body's length")


def test_status_burst_with_headers(tmp):
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "status", "code": 503, "times": 2, "path_contains": "/resolve/",
                         "headers": {"Retry-After": "1"}}])
        url = resolve_url(sim, "config.json")
        for i in range(2):
            status, h, _ = request(url)
            check_equal((status, h["Retry-After"]), (503, "1"), f"request {i + 1}: (status, Retry-After)")
        check_equal(request(url)[0], 200, "request 3 (the rule spent): status")
        rules = sim.faults()
        check_equal((rules[0]["times"], rules[0]["fired"]), (0, 2), "the rule's (times, fired)")


def test_status_forever_and_origin_filter(tmp):
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "status", "code": 502, "origin": "cdn", "times": -1}])
        url = cdn_url(sim)  # the hub is not affected
        for i in range(3):
            check_equal(request(url)[0], 502, f"CDN request {i + 1}: status")
        check_equal(request(resolve_url(sim, "config.json"))[0], 200, "a hub request: status")


def test_rate_limit(tmp):
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "rate_limit", "retry_after": 2, "ratelimit": '"resolvers";r=0;t=2',
                         "ratelimit_policy": '"fixed window";"resolvers";q=3000;w=300'}])
        status, h, _ = request(resolve_url(sim, "config.json"))
        check_equal((status, h["Retry-After"], h["RateLimit"]), (429, "2", '"resolvers";r=0;t=2'),
                    "(status, Retry-After, RateLimit)")
        check_equal(h["RateLimit-Policy"], '"fixed window";"resolvers";q=3000;w=300', "RateLimit-Policy")
        check_equal(request(resolve_url(sim, "config.json"))[0], 200, "the rule spent: status")


def test_headers_on_a_normal_answer(tmp):
    rl = '"api";r=0;t=2'
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "headers", "path_contains": "/tree/", "headers": {"RateLimit": rl}}])
        status, h, _ = request(resolve_url(sim, "config.json"))  # another path: untouched
        check_equal((status, h.get("RateLimit")), (200, None), "another path: (status, RateLimit)")
        status, h, body = request(f"{sim.hub}/api/models/{DEMO_REPO}/tree/{DEMO_SHA}")
        check_equal((status, h["RateLimit"]), (200, rl), "the tree: (status, RateLimit)")
        check(json.loads(body), "the tree listing is empty", shown(body))  # the listing itself as usual
        status, h, _ = request(f"{sim.hub}/api/models/{DEMO_REPO}/tree/{DEMO_SHA}")
        check_equal((status, h.get("RateLimit")), (200, None), "the rule spent: (status, RateLimit)")  # times: 1


def test_stall(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "stall", "at": 3000, "seconds": 1.5}])
        url = cdn_url(sim)
        try:
            raw_get(url, timeout=0.5)
            timed_out = False
        except (socket.timeout, TimeoutError):
            timed_out = True
        check(timed_out, "a 1.5 s stall did not time out a 0.5 s read")
        began = time.monotonic()
        sim.set_faults([{"kind": "stall", "at": 3000, "seconds": 0.5}])
        status, _, got, complete = raw_get(url, timeout=5)
        check_equal((got, complete), (data, True), "(bytes received, complete)")  # the rest comes after the stall
        took = time.monotonic() - began
        check(took > 0.45, f"a 0.5 s stall took only {took:.2f} s")


def test_throttle(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "throttle", "bytes_per_second": 400_000}])
        url = cdn_url(sim)
        began = time.monotonic()
        status, _, body = request(url)
        took = time.monotonic() - began
    check_equal(body, data, "the body")
    check(took > len(data) / 400_000 * 0.8,
          f"{len(data)} bytes at 400000 bytes/s took {took:.2f} s, under 80% of {len(data) / 400_000:.2f} s")


def test_expire_url(tmp):
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "expire_url", "times": 1}])
        url = cdn_url(sim)
        status, h, body = request(url, headers={"Range": "bytes=0-9"})
        check_equal(status, 403, "status")
        check(b"AccessDenied" in body, "the body does not say AccessDenied", shown(body))
        check_equal(request(url, headers={"Range": "bytes=0-9"})[0], 206, "the rule spent: status")


def test_redirect_loop(tmp):
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "redirect_loop", "times": -1}])
        url = resolve_url(sim, "config.json")
        status, h, _ = request(url)
    check_equal((status, h["Location"]), (302, url), "(status, Location)")


def test_redirect_other_origin(tmp):
    data = FILES["config.json"]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "redirect_other_origin"}])
        status, h, _ = request(resolve_url(sim, "config.json"), headers={"Authorization": f"Bearer {GOOD}"})
        check_equal((status, h["ETag"], h["X-Repo-Commit"]), (302, f'"{git_blob_id(data)}"', DEMO_SHA),
                    "the hub: (status, ETag, X-Repo-Commit)")
        check(h["Location"].startswith(sim.cdn + "/"), "the Location is not on the CDN", h["Location"])
        status, ch, body = request(h["Location"])
        check_equal((status, body, ch["ETag"]), (200, data, f'"{git_blob_id(data)}"'), "the CDN: (status, body, ETag)")


def test_relative_redirect(tmp):
    data = FILES["config.json"]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "relative_redirect"}])
        status, h, _ = request(resolve_url(sim, "config.json"))
        check_equal(status, 307, "status")
        check(h["Location"].startswith("/api/resolve-cache/models/"),
              "the Location is not relative, under /api/resolve-cache/models/", h["Location"])
        status, h, body, _ = follow(resolve_url(sim, "config.json"))
        check_equal((status, body, h["X-Repo-Commit"]), (200, data, DEMO_SHA),
                    "followed: (status, body, X-Repo-Commit)")


def test_bad_rules_refused(tmp):
    with demo_sim(tmp) as sim:
        status, _, body = request(sim.hub + "/_sim/faults", "POST", {"Content-Type": "application/json"},
                                  json.dumps([{"kind": "no_such_kind"}]))
    check_equal(status, 400, "status")
    check("no_such_kind" in json.loads(body)["error"], "the error does not name the unknown kind", shown(body))


def test_expired_signature_is_403(tmp):
    with demo_sim(tmp, url_ttl=-5) as sim:  # every signed URL is born expired
        status, h, _ = request(resolve_url(sim, "model-00001-of-00002.safetensors"))
        check_equal(status, 302, "the hub: status")
        status, _, body = request(h["Location"])
    check_equal(status, 403, "the CDN: status")
    check(b"AccessDenied" in body, "the body does not say AccessDenied", shown(body))


# ---- the simulator's life --------------------------------------------------------------------

def test_stopped_even_on_exception_and_ready_file_contents(tmp):
    repos = make_demo(tmp)
    try:
        with HubSim(repos) as sim:
            proc = sim.proc
            check(re.search(r"^http://127\.0\.0\.1:\d+$", sim.hub), "the hub is not http://127.0.0.1:PORT", sim.hub)
            check(re.search(r"^http://127\.0\.0\.2:\d+$", sim.cdn), "the CDN is not http://127.0.0.2:PORT", sim.cdn)
            raise KeyError("boom")
    except KeyError:
        pass
    check(proc.poll() is not None, "the simulator outlived its context")


def test_reload_sees_a_new_commit(tmp):
    old = make_repo(tmp, "org/moving", {"a.txt": b"one\n"})
    with HubSim(os.path.join(tmp, "repos.json")) as sim:
        new = make_repo(tmp, "org/moving", {"a.txt": b"two\n"})
        check_equal(json.loads(request(f"{sim.hub}/api/models/org/moving/revision/main")[2])["sha"], old,
                    "main before reload")
        sim.reload()
        check_equal(json.loads(request(f"{sim.hub}/api/models/org/moving/revision/main")[2])["sha"], new,
                    "main after reload")
        check_equal(request(f"{sim.hub}/org/moving/resolve/{old}/a.txt")[2], b"one\n", "a.txt at the old commit")
        check_equal(request(f"{sim.hub}/org/moving/resolve/main/a.txt")[2], b"two\n", "a.txt on main")


def test_external_cdn_template(tmp):
    repos = make_demo(tmp)
    with HubSim(repos, extra_args=["--external-cdn", "http://127.0.0.3:8080/b/{type}/{repo}/{sha256}"]) as sim:
        status, h, _ = request(f"{sim.hub}/{DEMO_REPO}/resolve/main/UD-IQ4_XS/part-1", "HEAD")
    want = sha256(FILES["UD-IQ4_XS/part-1"])
    check_equal(status, 302, "status")
    check(h["Location"].startswith(f"http://127.0.0.3:8080/b/model/{DEMO_REPO}/{want}?Expires="),
          "the Location does not follow the --external-cdn template", h["Location"])


def test_bad_repos_json_fails_fast(tmp):
    p = os.path.join(tmp, "repos.json")
    with open(p, "w") as f:
        json.dump({"repos": [{"id": "a/b", "commits": [{"sha": "xyz", "files": []}]}]}, f)
    sim = HubSim(p)
    try:
        sim.start()
        error = None
    except RuntimeError as e:
        error = str(e)
    else:
        sim.stop()
    check(error is not None and re.search("40 lowercase hex", error),
          "a commit sha 'xyz' was not refused with RuntimeError naming '40 lowercase hex'", error)


if __name__ == "__main__":
    main()
