"""hf-fetch against the Hub simulator: where the files land and what a second run does, one behaviour per test function.

Run one: python3 test_hf_fetch.py TEST_NAME   (ctest runs each as its own test)
"""

import os
import sys
import subprocess

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, tempdir  # noqa: E402
from hf_fixtures import (Repo, blob, check_correct_or_absent, clean_env, git_oid, hf_fetch,  # noqa: E402
                         resolves, sha256)
from hf_small import fetch, small_repo  # noqa: E402


# ---- layouts -------------------------------------------------------------------------------

def test_cache_layout():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
    check(r.rc == 0, f"fetch failed: {r}")
    for path, data in repo.files.items():
        blob_path = repo.blob(path)
        check(os.path.isfile(blob_path) and not os.path.islink(blob_path), f"blob of {path} missing at {blob_path}")
        with open(blob_path, "rb") as f:
            check(f.read() == data, f"blob of {path} has the wrong content")
        link = repo.snapshot(path)
        check(os.path.islink(link), f"{link} is not a symlink")
        depth = path.count("/")
        want = "../../" + "../" * depth + "blobs/" + repo.etag(path)
        check(os.readlink(link) == want, f"{link} -> {os.readlink(link)}, want {want}")
    # LFS blobs are named by sha256, the others by git blob id, as huggingface_hub names them.
    check(os.path.exists(os.path.join(repo.repo_dir(), "blobs", sha256(repo.files["weights/model-00002-of-00002.safetensors"]))),
          "LFS blob not named by its sha256")
    check(os.path.exists(os.path.join(repo.repo_dir(), "blobs", git_oid(repo.files["config.json"]))),
          "non-LFS blob not named by its git oid")
    with open(os.path.join(repo.repo_dir(), "refs", "main")) as f:
        check(f.read() == repo.sha, "refs/main does not hold the pinned commit (without newline)")
    leftovers = [n for n in os.listdir(os.path.join(repo.repo_dir(), "blobs")) if "." in n]
    check(not leftovers, f"partial or rejected files left in blobs/: {leftovers}")


def test_identical_files_share_one_blob_and_one_download():
    same = blob(100_000, "same")
    files = {"a/weights.safetensors": same, "b/weights.safetensors": same, "config.json": b"{}\n"}
    repo = Repo(files, lfs={"a/weights.safetensors", "b/weights.safetensors"})
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
        cdn = [q for q in sim.requests(origin="cdn") if q["method"] == "GET"]
    check(r.rc == 0, f"fetch failed: {r}")
    check(len(cdn) == 1, f"the shared blob was downloaded {len(cdn)} times")
    for p in ("a/weights.safetensors", "b/weights.safetensors"):
        with open(repo.snapshot(p), "rb") as f:
            check(f.read() == same, f"{p} is wrong")


def test_cache_location_and_endpoint_from_environment():
    repo = small_repo()
    home = tempdir("hf-home-env-")
    hub_cache = os.path.join(repo.tmp, "hub-cache")
    folder = "models--" + repo.repo_id.replace("/", "--")
    with HubSim(repo.repos_json) as sim:
        # No --endpoint, no --cache-dir: HF_ENDPOINT and HF_HOME decide.
        r = hf_fetch("--manifest", repo.manifest, env=clean_env(HF_ENDPOINT=sim.hub, HF_HOME=home))
        check(r.rc == 0, f"fetch with HF_ENDPOINT/HF_HOME failed: {r}")
        check(os.path.islink(os.path.join(home, "hub", folder, "snapshots", repo.sha, "config.json")),
              "not fetched into $HF_HOME/hub")
        # HF_HUB_CACHE wins over HF_HOME.
        r = hf_fetch("--manifest", repo.manifest, env=clean_env(HF_ENDPOINT=sim.hub, HF_HOME=home, HF_HUB_CACHE=hub_cache))
        check(r.rc == 0, f"fetch with HF_HUB_CACHE failed: {r}")
        check(os.path.islink(os.path.join(hub_cache, folder, "snapshots", repo.sha, "config.json")),
              "not fetched into $HF_HUB_CACHE")


def test_local_dir_metadata_and_sha256sums():
    repo = small_repo()
    out = os.path.join(repo.tmp, "local")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--local-dir", out)
    check(r.rc == 0, f"fetch failed: {r}")
    for path, data in repo.files.items():
        with open(os.path.join(out, path), "rb") as f:
            check(f.read() == data, f"{path} has the wrong content")
        with open(os.path.join(out, ".cache", "huggingface", "download", path + ".metadata")) as f:
            lines = f.read().split("\n")
        check(lines[0] == repo.sha and lines[1] == repo.etag(path), f"metadata of {path}: {lines}")
        check(float(lines[2]) >= os.path.getmtime(os.path.join(out, path)) - 1, "metadata timestamp older than the file")
    with open(os.path.join(out, ".cache", "huggingface", ".gitignore")) as f:
        check(f.read().strip() == "*", ".gitignore should hold *")
    c = subprocess.run(["sha256sum", "-c", ".cache/huggingface/SHA256SUMS"], cwd=out, capture_output=True, text=True)
    check(c.returncode == 0, f"sha256sum -c failed: {c.stdout}{c.stderr}")
    check(c.stdout.count(": OK") == len(repo.files), f"sha256sum checked {c.stdout.count(': OK')} files: {c.stdout}")


def test_second_run_transfers_nothing():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        check(fetch(repo, sim).rc == 0, "first run failed")
        sim.clear_requests()
        r = fetch(repo, sim, "--json")
        reqs = sim.requests()
    check(r.rc == 0, f"second run failed: {r}")
    check(not resolves(reqs), f"second run requested files: {[q['path'] for q in resolves(reqs)]}")
    summary = r.json_events()[-1]
    check(summary["event"] == "summary" and summary["bytes_transferred"] == 0 and summary["present"] == len(repo.files),
          f"summary: {summary}")


def test_rerun_trusts_verified_stamps_but_sees_changes_in_place():
    repo = small_repo()
    path = "weights/model-00001-of-00002.safetensors"
    with HubSim(repo.repos_json) as sim:
        check(fetch(repo, sim).rc == 0, "first run failed")
        r = fetch(repo, sim, "--json")
        check(r.rc == 0, f"second run failed: {r}")
        files = {e["path"]: e for e in r.json_events() if e.get("event") == "file"}
        check(all(e.get("verified_by") == "stamp" for e in files.values()),
              f"a rerun read files its stamps vouch for: {files}")
        # Same size, same inode, one byte flipped in place: the mtime moves, the stamp no longer vouches.
        # (Stamps do not key on ctime, which a hard link moves too: issue 21. An mtime set back on purpose
        # is what --verify-only is for, checked below.)
        blob_path = repo.blob(path)
        with open(blob_path, "r+b") as f:
            f.seek(1000)
            b = f.read(1)
            f.seek(1000)
            f.write(bytes([b[0] ^ 0xFF]))
        sim.clear_requests()
        r = fetch(repo, sim, "--json")
        reqs = sim.requests()
    check(r.rc == 0, f"third run failed: {r}")
    hub_resolves = [q["path"] for q in resolves(reqs) if q["origin"] == "hub"]
    check(len(hub_resolves) == 1 and hub_resolves[0].endswith("/" + path),
          f"expected exactly the changed file fetched again: {hub_resolves}")
    check("kept at" in r.all and ".bad-" in r.all, f"the changed copy should be said to be kept aside: {r}")
    blobs = os.path.dirname(blob_path)
    bad = [n for n in os.listdir(blobs) if ".bad-" in n]
    check(bad == [], f"the kept-aside copy stays after the good one was published: {os.listdir(blobs)}")
    check_correct_or_absent(repo)
    # A byte flipped with the mtime set back: the stamp cannot see it, --verify-only (which trusts no stamp) does.
    st = os.stat(blob_path)
    with open(blob_path, "r+b") as f:
        f.seek(1000)
        b = f.read(1)
        f.seek(1000)
        f.write(bytes([b[0] ^ 0xFF]))
    os.utime(blob_path, ns=(st.st_atime_ns, st.st_mtime_ns))
    v = hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--verify-only")
    check(v.rc == 1 and "SHA256 MISMATCH" in v.all, f"--verify-only must see the flipped byte: {v}")


if __name__ == "__main__":
    main()
