#!/usr/bin/env python3
"""huggingface_hub (the Python client) against the Hub simulator: a transcript for docs/interop.md.

Not a ctest (huggingface_hub is not installed on CI); run it where huggingface_hub is, e.g. the GPU host:
    python3 tests/hubsim/check_python_client.py [--cache-dir DIR --repo ORG/NAME --revision SHA]
Without --cache-dir it starts the simulator with the demo and a gated repository, downloads both with
snapshot_download and checks the cache. With --cache-dir it only inspects a cache another tool wrote
(e.g. hf-fetch) for the demo repo: scan_cache_dir warnings, try_to_load_from_cache for every file, and
verify_repo_checksums against the simulator when this huggingface_hub has it. Exit 0 when all checks pass.
"""

import argparse
import hashlib
import os
import sys
import tempfile

# No real token, config or telemetry from this machine may reach the simulator or the checks.
for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE", "HF_ENDPOINT",
            "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
    os.environ.pop(var, None)
_home = tempfile.mkdtemp(prefix="hubsim-pyclient-home-")
os.environ["HF_HOME"] = _home
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["NO_PROXY"] = "127.0.0.1,127.0.0.2"

import huggingface_hub  # noqa: E402
from huggingface_hub import HfApi, hf_hub_download, scan_cache_dir, snapshot_download, try_to_load_from_cache  # noqa: E402
try:
    from huggingface_hub.errors import GatedRepoError  # noqa: E402
except ImportError:  # before 0.23
    from huggingface_hub.utils import GatedRepoError  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simctl import DEMO_REPO, DEMO_SHA, HubSim, demo_files, make_demo, make_repo  # noqa: E402

TOKEN = "hf_pyclient_token"
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def inspect_cache(cache_dir, repo, revision, files, lfs, sim):
    """The checks issue 6 names for a cache: scan_cache_dir, try_to_load_from_cache, verify."""
    info = scan_cache_dir(cache_dir)
    check(not info.warnings, f"scan_cache_dir: no warnings ({[str(w) for w in info.warnings]})")
    repos = {r.repo_id: r for r in info.repos}
    check(repo in repos, f"scan_cache_dir lists {repo}")
    if repo in repos:
        revs = {r.commit_hash: r for r in repos[repo].revisions}
        check(revision in revs, f"scan_cache_dir lists revision {revision}")
        if revision in revs:
            cached = {os.path.relpath(f.file_path, revs[revision].snapshot_path) for f in revs[revision].files}
            check(sorted(cached) == sorted(files), f"scan_cache_dir: files {sorted(cached)}")
    for path, data in sorted(files.items()):
        found = try_to_load_from_cache(repo, path, cache_dir=cache_dir, revision=revision)
        ok = isinstance(found, str) and open(found, "rb").read() == data
        check(ok, f"try_to_load_from_cache({path}) -> right bytes")
        blob = os.path.basename(os.path.realpath(found)) if isinstance(found, str) else None
        want = hashlib.sha256(data).hexdigest() if path in lfs else git_blob_id(data)
        check(blob == want, f"{path}: blob named {want}")
    api = HfApi(endpoint=sim.hub)
    if hasattr(api, "verify_repo_checksums"):
        try:
            result = api.verify_repo_checksums(repo_id=repo, revision=revision, cache_dir=cache_dir)
            mismatches = getattr(result, "mismatches", None)
            print(f"     verify_repo_checksums: {result!r}")
            check(not mismatches, "verify_repo_checksums: no mismatches")
        except Exception as e:  # report, do not hide: an API difference is worth knowing
            check(False, f"verify_repo_checksums raised {e!r}")
    else:
        print(f"     (huggingface_hub {huggingface_hub.__version__} has no verify_repo_checksums)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache-dir")
    ap.add_argument("--repo", default=DEMO_REPO)
    ap.add_argument("--revision", default=DEMO_SHA)
    args = ap.parse_args()
    print(f"huggingface_hub {huggingface_hub.__version__}, Python {sys.version.split()[0]}")
    files, lfs = demo_files()
    with tempfile.TemporaryDirectory(prefix="hubsim-pyclient-") as tmp:
        repos_json = make_demo(tmp)
        gated_files = {"config.json": b'{"gated": true}\n', "w/weights.bin": os.urandom(300_000)}
        gated_sha = make_repo(tmp, "org/gated", gated_files, lfs={"w/weights.bin"}, gated="manual", tokens=[TOKEN])
        with HubSim(repos_json, page_size=4) as sim:
            print(f"simulator: hub {sim.hub}, cdn {sim.cdn}")
            if args.cache_dir:
                inspect_cache(args.cache_dir, args.repo, args.revision, files, lfs, sim)
            else:
                for revision in (DEMO_SHA, "main"):
                    cache = os.path.join(tmp, f"cache-{revision[:8]}")
                    snap = snapshot_download(DEMO_REPO, revision=revision, cache_dir=cache, endpoint=sim.hub)
                    check(os.path.basename(snap) == DEMO_SHA, f"snapshot_download({revision}) -> {snap}")
                    inspect_cache(cache, DEMO_REPO, DEMO_SHA, files, lfs, sim)
                cache = os.path.join(tmp, "cache-gated")
                try:
                    hf_hub_download("org/gated", "config.json", cache_dir=cache, endpoint=sim.hub, token=False)
                    check(False, "gated repo without token refused")
                except GatedRepoError as e:
                    check(True, f"gated repo without token refused: GatedRepoError ({str(e).splitlines()[0]})")
                sim.clear_requests()
                snapshot_download("org/gated", cache_dir=cache, endpoint=sim.hub, token=TOKEN)
                inspect_cache(cache, "org/gated", gated_sha, gated_files, {"w/weights.bin"}, sim)
                reqs = sim.requests()
                check(any("Authorization" in r["headers"] for r in reqs if r["origin"] == "hub"),
                      "the token reached the Hub origin")
                cdn = [r for r in reqs if r["origin"] == "cdn"]
                check(cdn and not any("Authorization" in r["headers"] for r in cdn),
                      f"the CDN origin got {len(cdn)} request(s), none with the token")
    print(f"{len(failures)} failure(s)" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
