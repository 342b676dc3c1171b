#!/usr/bin/env python3
"""Interop: the official JS client (@huggingface/hub snapshotDownload) against the Hub simulator.

Downloads the demo repository by commit and by branch, and a gated repository with a token, then
checks the cache it wrote: blob names (sha256 for LFS files, git blob id for the rest), bytes equal
to the sources, relative snapshot symlinks, refs, and that the token reached the Hub but never the CDN.
Needs the package installed by npm_install.sh (the ctest fixture does that)."""

import hashlib
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import (BUILD, DEMO_REPO, DEMO_SHA, SOURCE, Failed, HubSim, check, demo_files, main,  # noqa: E402
                    make_demo, make_repo)

MODULE_DIR = os.path.join(BUILD, "npm", "hf-hub")
SCRIPT = os.path.join(SOURCE, "tests", "integration", "hubsim", "js_snapshot.mjs")
TOKEN = "hf_interop_token"
def js_snapshot(sim, repo, revision, cache_dir, token=None):
    cmd = ["node", SCRIPT, "--module-dir", MODULE_DIR, "--hub", sim.hub, "--repo", repo,
           "--revision", revision, "--cache-dir", cache_dir]
    if token:
        cmd += ["--token", token]
    env = dict(os.environ)
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "HF_TOKEN"):
        env.pop(proxy, None)  # loopback only, and no token but the one given
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    if p.returncode != 0:
        raise Failed(f"js_snapshot.mjs exited {p.returncode}:\n{p.stderr[-4000:]}")
    return json.loads(p.stdout)


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def check_cache(summary, cache_dir, repo, files, lfs, commit, label):
    repo_dir = os.path.join(cache_dir, "models--" + repo.replace("/", "--"))
    check(summary["commit"] == commit, f"{label}: snapshot commit {summary['commit']} != {commit}")
    got = {f["path"]: f for f in summary["files"]}
    check(sorted(got) == sorted(files), f"{label}: files {sorted(got)} != {sorted(files)}")
    for path, data in files.items():
        f = got.get(path)
        if not f:
            continue
        want_blob = hashlib.sha256(data).hexdigest() if path in lfs else git_blob_id(data)
        check(f["blob"] == want_blob, f"{label}: {path} blob {f['blob']} != {want_blob}")
        want_link = "../" * (2 + path.count("/")) + "blobs/" + want_blob
        check(f["link"] == want_link, f"{label}: {path} link {f['link']} != {want_link}")
        with open(os.path.join(repo_dir, "snapshots", commit, path), "rb") as fh:
            check(fh.read() == data, f"{label}: {path} bytes differ from the source")
    blobs = sorted(os.listdir(os.path.join(repo_dir, "blobs")))
    check(blobs == sorted(summary["blobs"]) and not any(b.endswith(".incomplete") for b in blobs),
          f"{label}: blobs/ holds {blobs}")


def test_huggingface_hub_snapshot_download_interop():
    with tempfile.TemporaryDirectory(prefix="hubsim-js-") as tmp:
        repos_json = make_demo(tmp)
        gated_files = {"config.json": b'{"gated": true}\n', "w/weights.bin": os.urandom(300_000)}
        gated_sha = make_repo(tmp, "org/gated", gated_files, lfs={"w/weights.bin"}, gated="manual",
                              tokens=[TOKEN])
        files, lfs = demo_files()
        with HubSim(repos_json, page_size=4) as sim:  # page_size 4: the JS client must follow Link pages
            cache = os.path.join(tmp, "cache-commit")
            s = js_snapshot(sim, DEMO_REPO, DEMO_SHA, cache)
            print(f"@huggingface/hub {s['version']}: {len(s['files'])} files by commit")
            check_cache(s, cache, DEMO_REPO, files, lfs, DEMO_SHA, "by commit")
            check(s["refs"] == {}, f"by commit: refs written: {s['refs']}")
            cdn = sim.requests("cdn")
            check(len(cdn) > 0, "the JS client never reached the CDN origin")
            tree_pages = [r for r in sim.requests("hub") if "/tree/" in r["path"] and "cursor=" in r["path"]]
            check(len(tree_pages) > 0, "the JS client never followed a tree Link page")

            cache = os.path.join(tmp, "cache-branch")
            s = js_snapshot(sim, DEMO_REPO, "main", cache)
            check_cache(s, cache, DEMO_REPO, files, lfs, DEMO_SHA, "by branch")
            check(s["refs"] == {"main": DEMO_SHA}, f"by branch: refs {s['refs']}")

            sim.clear_requests()
            cache = os.path.join(tmp, "cache-gated")
            s = js_snapshot(sim, "org/gated", "main", cache, token=TOKEN)
            check_cache(s, cache, "org/gated", gated_files, {"w/weights.bin"}, gated_sha, "gated")
            reqs = sim.requests()
            hub_auth = [r for r in reqs if r["origin"] == "hub" and "Authorization" in r["headers"]]
            cdn_reqs = [r for r in reqs if r["origin"] == "cdn"]
            check(len(hub_auth) > 0, "gated: the token never reached the Hub")
            check(len(cdn_reqs) > 0, "gated: the CDN was never asked")
            leaked = [r["path"] for r in cdn_reqs if "Authorization" in r["headers"]]
            check(not leaked, f"gated: the token was sent to the CDN: {leaked}")
            check(all(r["status"] < 400 for r in reqs), "gated: a request failed: " +
                  str([(r["path"], r["status"]) for r in reqs if r["status"] >= 400]))
    print("OK: @huggingface/hub snapshotDownload works against the simulator")


if __name__ == "__main__":
    main()
