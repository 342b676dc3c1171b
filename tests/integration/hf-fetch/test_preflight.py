"""hf-fetch against the Hub simulator: the pre-flight against the live tree, one behaviour per test function.

Run one: python3 test_preflight.py TEST_NAME   (ctest runs each as its own test)
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, make_repo, tempdir  # noqa: E402
from hf_fixtures import blob, file_entries, hf_fetch, manifest_yaml, resolves, sha256  # noqa: E402
from hf_small import fetch, small_repo  # noqa: E402


# ---- pre-flight against the live tree ---------------------------------------------------------

def test_not_in_hub_tree_fails_before_any_download():
    repo = small_repo()
    entries = file_entries(repo.files, repo.lfs) + [{"path": "extra/missing.bin", "size": 5, "sha256": "0" * 64}]
    manifest = repo.write_manifest(entries, "missing.yaml")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
        reqs = sim.requests()
    check(r.rc == 1, f"expected exit 1: {r}")
    check("NOT IN HUB TREE extra/missing.bin" in r.err, f"no NOT IN HUB TREE line: {r}")
    check(not resolves(reqs), f"files were requested before the check failed: {[q['path'] for q in resolves(reqs)]}")
    check(not os.path.exists(os.path.join(repo.repo_dir(), "blobs")), "blobs written although the check failed")


def test_upstream_changed_fails_before_any_download():
    repo = small_repo()
    entries = file_entries(repo.files, repo.lfs)
    entries[0]["size"] += 1                     # config.json: size differs
    entries[2]["sha256"] = "a" * 64              # an LFS file: sha256 differs
    manifest = repo.write_manifest(entries, "changed.yaml")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
        reqs = sim.requests()
    check(r.rc == 1, f"expected exit 1: {r}")
    check(r.err.count("UPSTREAM CHANGED") == 2, f"expected two UPSTREAM CHANGED lines: {r}")
    check("UPSTREAM CHANGED config.json" in r.err and "UPSTREAM CHANGED " + entries[2]["path"] in r.err, f"{r}")
    check(not resolves(reqs), f"files were requested before the check failed: {[q['path'] for q in resolves(reqs)]}")


def test_files_upstream_not_in_manifest_are_ignored():
    repo = small_repo()
    entries = [e for e in file_entries(repo.files, repo.lfs) if e["path"] == "config.json"]
    manifest = repo.write_manifest(entries, "subset.yaml")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
        reqs = sim.requests()
    check(r.rc == 0, f"fetch failed: {r}")
    check("MISSING" not in r.all and "tokenizer" not in r.all, f"files outside the manifest were reported: {r}")
    paths = [q["path"] for q in resolves(reqs)]
    check(paths and all("config.json" in p for p in paths), f"requested files outside the manifest: {paths}")


def test_tree_listing_follows_link_pages():
    repo = small_repo()
    with HubSim(repo.repos_json, page_size=1) as sim:
        r = fetch(repo, sim)
        trees = [q for q in sim.requests() if "/tree/" in q["path"]]
    check(r.rc == 0, f"fetch failed over a paged tree: {r}")
    check(len(trees) >= 5, f"expected one request per page, saw {len(trees)}")


def test_unknown_commit_fails_with_exit_1():
    repo = small_repo()
    manifest = repo.write_manifest(file_entries(repo.files, repo.lfs), "gone.yaml", sha="f" * 40)
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
        reqs = sim.requests()
    check(r.rc == 1, f"expected exit 1: {r}")
    check("f" * 40 in r.err and "org/model" in r.err and "not in" in r.err, f"no clear sentence: {r}")
    check(not resolves(reqs), "files requested for an unknown commit")


def test_dataset_repository():
    files = {"data/train.parquet": blob(70_000, "train"), "README.md": b"# data\n"}
    tmp = tempdir("hf-fetch-dataset-")
    sha = make_repo(tmp, "org/data", files, lfs={"data/train.parquet"}, repo_type="dataset")
    manifest = os.path.join(tmp, "m.yaml")
    with open(manifest, "w") as f:
        f.write(manifest_yaml("org/data", sha, file_entries(files, {"data/train.parquet"}), repo_type="dataset"))
    cache = os.path.join(tmp, "cache")
    with HubSim(os.path.join(tmp, "repos.json")) as sim:
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", cache)
        paths = [q["path"] for q in sim.requests(origin="hub")]
    check(r.rc == 0, f"dataset fetch failed: {r}")
    check(any(p.startswith("/api/datasets/org/data/tree/") for p in paths), f"no dataset tree request: {paths}")
    check(any(p.startswith("/datasets/org/data/resolve/") for p in paths), f"no dataset resolve request: {paths}")
    link = os.path.join(cache, "datasets--org--data", "snapshots", sha, "data", "train.parquet")
    with open(link, "rb") as f:
        check(f.read() == files["data/train.parquet"], "dataset file wrong or missing")


def test_check_upstream_downloads_nothing():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim, "--check-upstream")
        reqs = sim.requests()
        entries = file_entries(repo.files, repo.lfs)
        entries[1]["size"] += 3
        changed = repo.write_manifest(entries, "changed.yaml")
        r2 = hf_fetch("--manifest", changed, "--endpoint", sim.hub, "--check-upstream")
    check(r.rc == 0, f"check-upstream failed: {r}")
    check(r.out.count("OK ") == len(repo.files), f"expected an OK line per file: {r}")
    check(not resolves(reqs), "check-upstream requested files")
    check(not os.path.exists(repo.cache), "check-upstream wrote to the cache")
    check(r2.rc == 1 and "UPSTREAM CHANGED tokenizer.json" in r2.err, f"changed manifest not reported: {r2}")



# ---- upstream moved on, the copy here still verifies: its own reason and exit status (issue 43 item 2) ---------

def hub_now(repo, files):
    """The repository as the Hub serves it now at the same commit: `files` (path -> bytes) instead of the
    manifest's (a file removed, or its content changed in a rewritten history)."""
    d = tempdir("hf-fetch-moved-")
    make_repo(d, repo.repo_id, files, lfs=repo.lfs & set(files), sha=repo.sha)
    return os.path.join(d, "repos.json")


def fetched_small_repo():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
    check(r.rc == 0, f"the first fetch failed: {r}", r)
    return repo


def test_file_gone_upstream_while_the_copy_here_verifies_is_exit_5():
    repo = fetched_small_repo()
    now = hub_now(repo, {p: v for p, v in repo.files.items() if p != "tokenizer.json"})
    with HubSim(now) as sim:
        r = fetch(repo, sim)
        j = fetch(repo, sim, "--json")
        reqs = sim.requests()
    check(r.rc == 5, f"upstream moved while the copy here verifies: exit 5, not {r.rc}", r)
    check("NOT IN HUB TREE tokenizer.json" in r.err and "the copy here verifies against the manifest" in r.err,
          "the NOT IN HUB TREE line must say the copy here still verifies", r)
    # The sentence: what is on disk, then what to do.
    check("verifies against the pinned manifest" in r.err and "--offline" in r.err and "--save-manifest" in r.err,
          "the sentence must say the copy here verifies and what to do (--offline, or pin anew)", r)
    check(not resolves(reqs), "files were requested although the pre-flight stopped the run", reqs)
    summary = j.json_events()[-1]
    check(j.rc == 5 and summary.get("reason") == "upstream_moved" and summary.get("local_copy_verifies") is True,
          f"--json: reason upstream_moved, local_copy_verifies: {summary}", j)
    upstream = [e for e in j.json_events() if e.get("event") == "upstream"]
    check([e.get("local_copy_verifies") for e in upstream] == [True], f"the upstream event: {upstream}", j)
    # What the sentence advises works: the copy here is served offline.
    off = fetch(repo, sim, "--offline")
    check(off.rc == 0, f"--offline after exit 5: {off}", off)


def test_file_changed_upstream_while_the_copy_here_verifies_is_exit_5():
    repo = fetched_small_repo()
    now = dict(repo.files)
    now["config.json"] = b'{"model_type": "llama", "hidden_size": 128}\n'  # its git oid and size differ now
    with HubSim(hub_now(repo, now)) as sim:
        r = fetch(repo, sim, "--json")
    summary = r.json_events()[-1]
    check(r.rc == 5 and summary.get("reason") == "upstream_moved", f"exit {r.rc}: {summary}", r)
    changed = [e for e in r.json_events() if e.get("event") == "upstream"]
    check(len(changed) == 1 and changed[0]["status"] == "UPSTREAM CHANGED" and changed[0]["path"] == "config.json"
          and "the copy here verifies" in changed[0].get("detail", ""), f"{changed}", r)


def test_upstream_moved_with_a_file_missing_here_stays_exit_1():
    repo = fetched_small_repo()
    os.remove(os.path.join(repo.repo_dir(), "blobs", sha256(repo.files["weights/model-00002-of-00002.safetensors"])))
    now = hub_now(repo, {p: v for p, v in repo.files.items() if p != "tokenizer.json"})
    with HubSim(now) as sim:
        r = fetch(repo, sim, "--json")
    summary = r.json_events()[-1]
    check(r.rc == 1 and summary.get("reason") == "upstream_changed" and summary.get("local_copy_verifies") is False,
          f"a copy here that is not whole cannot be served: exit 1, upstream_changed: {summary}", r)
    check("the copy here verifies" not in r.out, "it said the copy here verifies", r)


def test_check_upstream_compares_the_tree_alone():
    repo = fetched_small_repo()
    now = hub_now(repo, {p: v for p, v in repo.files.items() if p != "tokenizer.json"})
    with HubSim(now) as sim:
        r = fetch(repo, sim, "--check-upstream", "--json")
    summary = r.json_events()[-1]
    check(r.rc == 1 and summary.get("reason") == "upstream_changed" and "local_copy_verifies" not in summary,
          f"--check-upstream reads no local copy: exit 1, upstream_changed: {summary}", r)

if __name__ == "__main__":
    main()
