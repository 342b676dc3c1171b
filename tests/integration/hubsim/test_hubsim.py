#!/usr/bin/env python3
"""Self-test of the Hub simulator: the protocol the clients rely on (revisions, trees, resolve, ranges, keep-alive), spoken to with plain http.client (no client library in
between).

Each test starts its own simulator (`with demo_sim(tmp) as sim:`, about a second), so no test sees
another's fault rules or requests.
Run one: python3 test_hubsim.py TEST_NAME   (ctest runs each on its own)
"""

import http.client
import json
import os
import re
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import DEMO_REPO, DEMO_SHA, check, demo_files, main  # noqa: E402
from sim_fixtures import (FILES, GOOD, LFS, PAGE_SIZE, PR_SHA, check_equal, demo_sim,  # noqa: E402
                          git_blob_id, list_tree, request, resolve_url, sha256, shown)


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


if __name__ == "__main__":
    main()
