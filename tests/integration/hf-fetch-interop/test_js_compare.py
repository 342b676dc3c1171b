#!/usr/bin/env python3
"""Issue 6, real clients side by side: @huggingface/hub and hf-fetch write the same cache.

From one Hub simulator serving the demo repository, the official JS client (`snapshotDownload`, through
tests/integration/hubsim/js_snapshot.mjs) and `hf-fetch --manifest manifests/demo.manifest` each fill a fresh
cache for the same commit. For every file of the repository the two caches must hold the same blob name,
the same bytes (equal to the source) and the same snapshot symlink target; blobs/ and refs/ must list the
same names. The JS client does not assemble split parts, so hf-fetch's assembled output (the manifest's
`assemble` entry) is left out of the comparison, and only checked to be extra and correct.
Needs @huggingface/hub from the `hubsim_js_client` fixture (npm_install.sh) and hf-fetch in PROVKIT_BIN."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import (BUILD, DEMO_REPO, DEMO_SHA, SOURCE, Failed, HubSim, check, demo_files, main,  # noqa: E402
                    make_demo, tool)

HF_FETCH = tool("hf-fetch")
MODULE_DIR = os.environ.get("PROVKIT_HF_HUB_JS") or os.path.join(BUILD, "npm", "hf-hub")
JS_SNAPSHOT = os.path.join(SOURCE, "tests", "integration", "hubsim", "js_snapshot.mjs")
MANIFEST = os.path.join(SOURCE, "manifests", "demo.manifest")

ASSEMBLED = "model-UD-IQ4_XS.gguf"  # the demo manifest's assemble output: hf-fetch only
def clean_env():
    """No token, endpoint, cache setting or proxy from the machine running the test."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("HF_") and k.lower() not in ("http_proxy", "https_proxy", "hugging_face_hub_token")}


def run(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    if p.returncode != 0:
        raise Failed(f"{' '.join(cmd[:2])} exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
    return p.stdout


def tree(repo_dir):
    """relative path -> ('link', target) | ('file', sha256 of bytes) | ('dir', None), for the whole repo folder."""
    out = {}
    for root, dirs, files in os.walk(repo_dir):
        for name in dirs + files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, repo_dir)
            if os.path.islink(full):
                out[rel] = ("link", os.readlink(full))
            elif os.path.isdir(full):
                out[rel] = ("dir", None)
            else:
                with open(full, "rb") as fh:
                    out[rel] = ("file", hashlib.sha256(fh.read()).hexdigest())
    return out


def test_same_cache_as_huggingface_hub():
    for need in (HF_FETCH, os.path.join(MODULE_DIR, "node_modules", "@huggingface", "hub")):
        if not os.path.exists(need):
            raise Failed(f"{need} is missing (build hf-fetch; the hubsim_js_client fixture installs the JS client)")
    files, lfs = demo_files()
    repo_folder = "models--" + DEMO_REPO.replace("/", "--")
    with tempfile.TemporaryDirectory(prefix="hf-fetch-interop-") as tmp:
        repos_json = make_demo(os.path.join(tmp, "sim"))
        js_cache, hf_cache = os.path.join(tmp, "cache-js"), os.path.join(tmp, "cache-hf-fetch")
        env = clean_env()
        with HubSim(repos_json, page_size=4) as sim:  # small pages: both clients must follow Link
            js = json.loads(run(["node", JS_SNAPSHOT, "--module-dir", MODULE_DIR, "--hub", sim.hub,
                                 "--repo", DEMO_REPO, "--revision", DEMO_SHA, "--cache-dir", js_cache], env))
            print(f"@huggingface/hub {js['version']}: {len(js['files'])} files at {js['commit']}")
            run([HF_FETCH, "--manifest", MANIFEST, "--cache-dir", hf_cache, "--endpoint", sim.hub, "--quiet"], env)
            print(f"hf-fetch --manifest {os.path.relpath(MANIFEST, SOURCE)}: done")
            check(any(r["origin"] == "cdn" for r in sim.requests()), "no client reached the CDN origin")

        js_tree, hf_tree = tree(os.path.join(js_cache, repo_folder)), tree(os.path.join(hf_cache, repo_folder))
        snap = os.path.join("snapshots", DEMO_SHA)
        check(js["commit"] == DEMO_SHA, f"JS snapshot is {js['commit']}, not {DEMO_SHA}")
        check(sorted(f["path"] for f in js["files"]) == sorted(files),
              f"the JS client fetched {sorted(f['path'] for f in js['files'])}, the repo has {sorted(files)}")

        # File by file: same symlink target, same blob name, same bytes, equal to the source.
        for path, data in sorted(files.items()):
            rel = os.path.join(snap, path)
            j, h = js_tree.get(rel), hf_tree.get(rel)
            check(j is not None and j[0] == "link", f"{path}: JS snapshot entry is {j}")
            check(h is not None and h[0] == "link", f"{path}: hf-fetch snapshot entry is {h}")
            if not (j and h and j[0] == h[0] == "link"):
                continue
            check(h[1] == j[1], f"{path}: hf-fetch links to {h[1]}, the JS client to {j[1]}")
            want_blob = hashlib.sha256(data).hexdigest() if path in lfs else \
                hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
            check(os.path.basename(h[1]) == want_blob, f"{path}: blob {os.path.basename(h[1])}, want {want_blob}")
            for cache, who in ((js_cache, "JS client"), (hf_cache, "hf-fetch")):
                with open(os.path.join(cache, repo_folder, rel), "rb") as fh:
                    check(fh.read() == data, f"{path}: the {who}'s bytes differ from the source")
            blob_rel = os.path.normpath(os.path.join(os.path.dirname(rel), h[1]))
            check(js_tree.get(blob_rel, ("?",))[0] == hf_tree.get(blob_rel, ("?",))[0] == "file",
                  f"{path}: {blob_rel} is not a regular file in both caches")

        # The folders as a whole: the same blobs, refs and snapshot entries, but the assembled output.
        def names(t, top):
            return sorted(p for p in t if p.split(os.sep)[0] == top)
        check(names(js_tree, "blobs") == names(hf_tree, "blobs") or
              (set(names(hf_tree, "blobs")) - set(names(js_tree, "blobs")) == {_assembled_blob(hf_tree, snap)}
               and set(names(js_tree, "blobs")) <= set(names(hf_tree, "blobs"))),
              f"blobs/ differ: JS {names(js_tree, 'blobs')}, hf-fetch {names(hf_tree, 'blobs')}")
        # refs/: the JS client writes none for a commit revision; hf-fetch writes refs/main = the pinned
        # commit on purpose (docs/hf-fetch.md: loaders given the repo id alone offline find it).
        check(names(js_tree, "refs") == [], f"the JS client wrote refs for a commit: {names(js_tree, 'refs')}")
        check(names(hf_tree, "refs") == ["refs", os.path.join("refs", "main")],
              f"hf-fetch wrote refs {names(hf_tree, 'refs')}, want refs/main only")
        with open(os.path.join(hf_cache, repo_folder, "refs", "main")) as fh:
            check(fh.read().strip() == DEMO_SHA, "hf-fetch's refs/main is not the pinned commit")
        extra = set(names(hf_tree, "snapshots")) - set(names(js_tree, "snapshots"))
        check(extra == {os.path.join(snap, ASSEMBLED)},
              f"hf-fetch's snapshot differs from the JS client's by {sorted(extra)} "
              f"(missing: {sorted(set(names(js_tree, 'snapshots')) - set(names(hf_tree, 'snapshots')))})")
        parts = b"".join(files[f"UD-IQ4_XS/part-{i}"] for i in (1, 2, 3))
        with open(os.path.join(hf_cache, repo_folder, snap, ASSEMBLED), "rb") as fh:
            check(fh.read() == parts, f"hf-fetch's {ASSEMBLED} is not the concatenation of its parts")
        shutil.rmtree(js_cache, ignore_errors=True)
    print(f"OK: hf-fetch and @huggingface/hub {js['version']} wrote the same {len(files)} files, blobs and links")


def _assembled_blob(hf_tree, snap):
    """blobs/<name> of hf-fetch's assembled output when it is a symlink into blobs/ (else None)."""
    entry = hf_tree.get(os.path.join(snap, ASSEMBLED))
    if entry and entry[0] == "link":
        return os.path.normpath(os.path.join(snap, entry[1]))
    return None


if __name__ == "__main__":
    main()
