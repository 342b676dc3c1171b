"""hf-fetch against the Hub simulator: one behaviour of issue 2 per test function.

Run one: python3 test_hf_fetch.py test_cache_layout   (ctest runs each as its own test)
"""

import os
import sys
import signal
import socket
import subprocess
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, make_repo, tempdir  # noqa: E402
from hf_fixtures import (HF_FETCH, TOKEN, Repo, blob, body_bytes, check_correct_or_absent, clean_env,
                         file_entries, git_oid, header, hf_fetch, manifest_yaml, resolves, sha256)  # noqa: E402


def small_repo(**kw):
    files = {
        "config.json": b'{"model_type": "llama", "hidden_size": 64}\n',
        "tokenizer.json": b'{"version": "1.0"}\n',
        "weights/model-00001-of-00002.safetensors": blob(300_000, "w1"),
        "weights/model-00002-of-00002.safetensors": blob(200_000, "w2"),
    }
    return Repo(files, lfs={p for p in files if p.endswith(".safetensors")}, **kw)


def fetch(repo, sim, *extra, env=None):
    return hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, *extra, env=env)


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


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


# ---- downloads: resume, restart, verification --------------------------------------------------

def test_sigkill_mid_file_then_resume():
    size, at = 8 << 20, 3 << 20
    files = {"big.safetensors": blob(size, "big")}
    repo = Repo(files, lfs={"big.safetensors"})
    partial = repo.blob("big.safetensors") + ".provkit-partial.incomplete"
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "stall", "origin": "cdn", "at": at, "seconds": 60}])
        proc = subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=clean_env())
        try:
            deadline = time.monotonic() + 30
            while not (os.path.exists(partial) and os.path.getsize(partial) >= at):
                check(time.monotonic() < deadline and proc.poll() is None, "the partial file never reached the stall point")
                time.sleep(0.05)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        kept = os.path.getsize(partial)
        check(kept == at, f"partial holds {kept} bytes, expected {at}")
        check(not os.path.exists(repo.blob("big.safetensors")), "the blob reached its final path unfinished")
        sim.set_faults([])
        sim.clear_requests()
        r = fetch(repo, sim)
        check(r.rc == 0, f"resume run failed: {r}")
        reqs = sim.requests()
    cdn_gets = [q for q in reqs if q["origin"] == "cdn" and q["method"] == "GET"]
    check(len(cdn_gets) == 1 and header(cdn_gets[0], "Range") == f"bytes={at}-{size - 1}",
          f"expected one ranged GET from {at}: {[(q['status'], header(q, 'Range')) for q in cdn_gets]}")
    remaining, read_buffer = size - kept, 512 * 1024
    sent = body_bytes(reqs)
    check(sent < remaining + read_buffer, f"resume transferred {sent} bytes; {remaining} remained")
    with open(repo.blob("big.safetensors"), "rb") as f:
        check(sha256(f.read()) == sha256(files["big.safetensors"]), "resumed file is wrong")
    check("RESUME big.safetensors" in r.out, f"no RESUME line: {r}")
    check_correct_or_absent(repo)


def test_connection_closed_mid_body_resumes_within_the_run():
    repo = small_repo()
    path = "weights/model-00001-of-00002.safetensors"
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "close_mid_body", "origin": "cdn", "at": 100_000}])
        r = fetch(repo, sim)
        reqs = sim.requests(origin="cdn")
    check(r.rc == 0, f"fetch failed: {r}")
    ranges = [header(q, "Range") for q in reqs if q["method"] == "GET"]
    check(f"bytes=100000-{len(repo.files[path]) - 1}" in ranges, f"no ranged retry from byte 100000: {ranges}")
    with open(repo.blob(path), "rb") as f:
        check(f.read() == repo.files[path], "file assembled from two responses is wrong")
    check_correct_or_absent(repo)


def test_range_answered_with_200_starts_over():
    repo = small_repo()
    path = "weights/model-00001-of-00002.safetensors"
    partial = repo.blob(path) + ".provkit-partial.incomplete"
    with HubSim(repo.repos_json) as sim:
        # First run: the connection drops after 100000 bytes and retries are exhausted: a partial is kept.
        sim.set_faults([{"kind": "close_mid_body", "origin": "cdn", "at": 100_000, "path_contains": sha256(repo.files[path])}])
        r1 = fetch(repo, sim, "--retries", "1")
        check(r1.rc == 3, f"first run should fail with exit 3: {r1}")
        check(os.path.getsize(partial) == 100_000, "no partial file of 100000 bytes kept")
        sim.set_faults([{"kind": "ignore_range", "origin": "cdn"}])
        sim.clear_requests()
        r2 = fetch(repo, sim)
        reqs = sim.requests(origin="cdn")
    check(r2.rc == 0, f"second run failed: {r2}")
    ranged = [q for q in reqs if header(q, "Range")]
    check(ranged and ranged[0]["status"] == 200, f"the simulator did not answer the range with 200: {reqs}")
    check("RESTART " + path in r2.out, f"no RESTART line: {r2}")
    with open(repo.blob(path), "rb") as f:
        check(f.read() == repo.files[path], "the file was appended to instead of started over")
    check_correct_or_absent(repo)


def test_wrong_bytes_of_right_size_are_caught_and_kept_aside():
    repo = small_repo()
    path = "weights/model-00002-of-00002.safetensors"
    data = repo.files[path]
    at = len(data) // 2
    bad = bytearray(data)
    for i in range(at, at + 16):
        bad[i] ^= 0xFF
    bad_sha = sha256(bytes(bad))
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "wrong_bytes", "origin": "cdn", "path_contains": sha256(data)}])
        r = fetch(repo, sim)
    check(r.rc == 1, f"expected exit 1: {r}")
    check(not os.path.exists(repo.blob(path)), "wrong bytes reached the final blob path")
    check(not os.path.lexists(repo.snapshot(path)), "a snapshot link points at wrong bytes")
    kept = repo.blob(path) + ".bad-" + bad_sha
    check(os.path.isfile(kept), f"wrong bytes not kept aside at {kept}")
    check(sha256(data) in r.err and bad_sha in r.err, f"both hashes must be reported: {r}")
    check("SHA256 MISMATCH " + path in r.err, f"no SHA256 MISMATCH line: {r}")
    # The other files are verified and in place.
    check(os.path.islink(repo.snapshot("config.json")), "the good files were not published")
    check_correct_or_absent(repo)


def test_stalled_transfer_is_retried():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "stall", "origin": "cdn", "at": 50_000, "seconds": 6}])
        t = time.monotonic()
        r = fetch(repo, sim, "--stall-timeout", "2")
        took = time.monotonic() - t
    check(r.rc == 0, f"fetch failed: {r}")
    check("RETRY" in r.out and "stalled" in r.out, f"no retry for the stall: {r}")
    check(took < 20, f"the stall was waited out ({took:.1f} s) instead of detected")
    check_correct_or_absent(repo)


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


# ---- auth ---------------------------------------------------------------------------------

def test_token_goes_to_hub_origin_never_to_cdn():
    repo = small_repo(gated=True, tokens=[TOKEN])
    with HubSim(repo.repos_json) as sim:
        # Also a non-LFS file redirected to the other origin.
        sim.set_faults([{"kind": "redirect_other_origin", "path_contains": "config.json"}])
        r = fetch(repo, sim, env=clean_env(HF_TOKEN=TOKEN))
        reqs = sim.requests()
    check(r.rc == 0, f"fetch with token failed: {r}")
    hub = [q for q in reqs if q["origin"] == "hub"]
    cdn = [q for q in reqs if q["origin"] == "cdn"]
    check(hub and cdn, "expected requests on both origins")
    check(any(git_oid(repo.files["config.json"]) in q["path"] for q in cdn), "the redirect_other_origin fault did not fire")
    for q in hub:
        check(header(q, "Authorization") == "Bearer " + TOKEN, f"hub request without the token: {q['path']}")
    for q in cdn:
        check(header(q, "Authorization") is None, f"token sent to the CDN origin: {q['path']}")
    check_correct_or_absent(repo)


def test_token_sources():
    repo = small_repo(gated=True, tokens=[TOKEN])
    token_file = os.path.join(repo.tmp, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    home = tempdir("hf-home-with-token-")
    with open(os.path.join(home, "token"), "w") as f:
        f.write(TOKEN)
    with HubSim(repo.repos_json) as sim:
        for how, env, extra in [
            ("HF_TOKEN_PATH", clean_env(HF_TOKEN_PATH=token_file), []),
            ("$HF_HOME/token", clean_env(HF_HOME=home), []),
            ("--token-file", clean_env(), ["--token-file", token_file]),
        ]:
            r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--check-upstream", *extra, env=env)
            check(r.rc == 0, f"token from {how} not used: {r}")
        # huggingface_hub's order: the token given (--token-file) beats a stale HF_TOKEN, which beats the token
        # file; a refusal names the source of the token refused, never the token.
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--check-upstream", "--token-file", token_file,
                     env=clean_env(HF_TOKEN="hf_wrongStaleToken"))
        check(r.rc == 0, f"--token-file should beat HF_TOKEN: {r}")
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--check-upstream",
                     env=clean_env(HF_TOKEN="hf_wrongStaleToken", HF_TOKEN_PATH=token_file))
        check(r.rc == 4 and "the token from HF_TOKEN has no access" in r.err, f"HF_TOKEN should beat HF_TOKEN_PATH: {r}")
        check("hf_wrongStaleToken" not in r.all, f"the token was printed: {r}")
        wrong_file = os.path.join(repo.tmp, "wrong-token")
        with open(wrong_file, "w") as f:
            f.write("hf_wrongFileToken\n")
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--check-upstream", "--token-file", wrong_file,
                     env=clean_env(HF_TOKEN=TOKEN))
        check(r.rc == 4 and f"the token from --token-file {wrong_file} has no access" in r.err,
              f"the refusal should name --token-file: {r}")
        check("hf_wrongFileToken" not in r.all, f"the token was printed: {r}")


def test_token_never_printed():
    repo = small_repo(gated=True, tokens=[TOKEN])
    entries = file_entries(repo.files, repo.lfs)
    entries[0]["size"] += 1
    changed = repo.write_manifest(entries, "changed.yaml")
    env = clean_env(HF_TOKEN=TOKEN)
    runs = []
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "status", "code": 503, "times": 1, "path_contains": "/resolve/"}])
        runs.append(fetch(repo, sim, env=env))
        runs.append(fetch(repo, sim, "--json", env=env))
        runs.append(hf_fetch("--manifest", changed, "--endpoint", sim.hub, "--json", env=env))
        runs.append(hf_fetch("manifest", "create", repo.repo_id, "--endpoint", sim.hub, env=env))
        sim.set_faults([{"kind": "status", "code": 500, "times": -1}])
        runs.append(fetch(repo, sim, "--retries", "1", env=env))
    runs.append(hf_fetch("--manifest", repo.manifest, "--endpoint", f"http://127.0.0.1:{closed_port()}", "--retries", "1",
                         env=env))
    runs.append(hf_fetch("--manifest", repo.manifest, "--endpoint", f"http://user:{TOKEN}@127.0.0.1:{closed_port()}",
                         "--retries", "1", "--json", env=env))
    check(runs[0].rc == 0 and runs[4].rc == 3 and runs[5].rc == 3, f"unexpected exit codes: {[x.rc for x in runs]}")
    for x in runs:
        check(TOKEN not in x.all, f"the token was printed: {x}")
    for root, _, names in os.walk(repo.cache):
        for n in names:
            p = os.path.join(root, n)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as f:
                    check(TOKEN.encode() not in f.read(), f"the token was written to {p}")


def test_gated_repo_exits_4_with_sentence():
    repo = small_repo(gated=True, tokens=[TOKEN])
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
        r2 = fetch(repo, sim, env=clean_env(HF_TOKEN="hf_notTheRightOne"))
        reqs = sim.requests()
    check(r.rc == 4, f"expected exit 4 without a token: {r}")
    check("org/model is a gated repository" in r.err and "token" in r.err, f"no clear sentence: {r}")
    check(r2.rc == 4 and "org/model" in r2.err and "no access" in r2.err, f"wrong token: {r2}")
    check(not resolves(reqs), "files were requested from a gated repo without access")


def test_private_repo_exits_4():
    repo = small_repo(private=True, tokens=[TOKEN])
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
    check(r.rc == 4, f"expected exit 4: {r}")
    check("org/model" in r.err and "not found" in r.err and "token" in r.err, f"no clear sentence: {r}")


# ---- verify-only --------------------------------------------------------------------------

def test_verify_only_with_network_gone():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        check(fetch(repo, sim).rc == 0, "initial fetch failed")
    # The simulator is stopped: any network use would fail.
    dead = f"http://127.0.0.1:{closed_port()}"
    r = hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--endpoint", dead, "--verify-only")
    check(r.rc == 0, f"verify-only failed on good files: {r}")
    check(all(f"OK {p}" in r.out for p in repo.files), f"expected OK per file: {r}")
    os.remove(repo.blob("config.json"))
    with open(repo.blob("tokenizer.json"), "ab") as f:
        f.write(b"x")
    p = "weights/model-00001-of-00002.safetensors"
    with open(repo.blob(p), "r+b") as f:
        f.seek(1000)
        f.write(b"\0\0\0\0")
    r = hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--endpoint", dead, "--verify-only")
    check(r.rc == 1, f"expected exit 1: {r}")
    check("MISSING config.json" in r.err, f"{r}")
    check("SIZE MISMATCH tokenizer.json" in r.err, f"{r}")
    check("SHA256 MISMATCH " + p in r.err, f"{r}")
    check("OK weights/model-00002-of-00002.safetensors" in r.out, f"{r}")
    rj = hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--verify-only", "--json")
    states = {e["path"]: e["status"] for e in rj.json_events() if e["event"] == "verify"}
    # Files are verified in parallel; the lines still come in manifest order.
    with open(repo.manifest) as f:
        order = [line.split("path:", 1)[1].strip().strip("\"") for line in f if line.strip().startswith("- path:")]
    seen = [e["path"] for e in rj.json_events() if e["event"] == "verify"]
    check(seen == order, f"verify lines out of manifest order: {seen} vs {order}")
    check(states.get("config.json") == "MISSING" and states.get(p) == "SHA256 MISMATCH", f"json: {rj}")
    check(rj.json_events()[-1]["event"] == "summary" and rj.json_events()[-1]["exit_code"] == 1, f"json summary: {rj}")


# ---- manifest create, assembly ------------------------------------------------------------------

def test_manifest_create_round_trips_through_fetch():
    repo = small_repo()
    out = os.path.join(repo.tmp, "created.yaml")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("manifest", "create", f"{repo.repo_id}@main", "--endpoint", sim.hub, "--include", "*.json",
                     "--include", "weights/*", "--exclude", "tokenizer*", "-o", out)
        check(r.rc == 0, f"manifest create failed: {r}")
        with open(out) as f:
            text = f.read()
        check(f"revision: {repo.sha}" in text, "the revision was not pinned to the commit")
        check("tokenizer.json" not in text and "config.json" in text, f"include/exclude not applied:\n{text}")
        check(sha256(repo.files["config.json"]) in text and git_oid(repo.files["config.json"]) in text,
              "non-LFS file not hashed")
        check(sha256(repo.files["weights/model-00001-of-00002.safetensors"]) in text, "LFS sha256 missing")
        r2 = hf_fetch("--manifest", out, "--endpoint", sim.hub, "--cache-dir", repo.cache)
        # Without -o the manifest alone goes to stdout.
        r3 = hf_fetch("manifest", "create", f"{repo.repo_id}@main", "--endpoint", sim.hub, "--include", "*.json",
                      "--include", "weights/*", "--exclude", "tokenizer*")
    check(r2.rc == 0, f"fetching the created manifest failed: {r2}")
    check(r3.rc == 0 and r3.out == text, f"manifest on stdout differs from -o FILE: {r3}")
    check(os.path.islink(repo.snapshot("config.json")) and not os.path.lexists(repo.snapshot("tokenizer.json")),
          "the created manifest fetched the wrong files")


def assembly_repo():
    parts = {f"split/part-{i}": blob(50_000 + i, f"part{i}") for i in (1, 2, 3)}
    files = dict(parts, **{"config.json": b"{}\n"})
    repo = Repo(files, lfs=set(parts))
    whole = b"".join(parts[f"split/part-{i}"] for i in (1, 2, 3))
    return repo, list(parts), whole


def test_assembly_correct_and_skipped_when_unchanged():
    repo, parts, whole = assembly_repo()
    manifest = repo.write_manifest(file_entries(repo.files, repo.lfs), "asm.yaml",
                                   assemble=[{"output": "whole.gguf", "parts": parts, "sha256": sha256(whole)}])
    out = repo.snapshot("whole.gguf")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
        check(r.rc == 0, f"fetch failed: {r}")
        with open(out, "rb") as f:
            check(f.read() == whole, "assembled output is wrong")
        check("OK whole.gguf: assembled from 3 parts and verified" in r.out, f"{r}")
        mtime = os.stat(out).st_mtime_ns
        time.sleep(0.05)
        r2 = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
        check(r2.rc == 0 and "parts unchanged" in r2.out, f"second run re-assembled: {r2}")
        check(os.stat(out).st_mtime_ns == mtime, "the output was rewritten although nothing changed")
        # A damaged output (changed after the stamp) is assembled again.
        with open(out, "r+b") as f:
            f.write(b"XXXX")
        r3 = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
        check(r3.rc == 0 and "assembled from 3 parts" in r3.out, f"changed output not re-assembled: {r3}")
        with open(out, "rb") as f:
            check(f.read() == whole, "re-assembled output is wrong")
        r4 = hf_fetch("--manifest", manifest, "--cache-dir", repo.cache, "--verify-only")
        check(r4.rc == 0 and "OK whole.gguf" in r4.out, f"verify-only does not check the output: {r4}")


def test_assembly_wrong_sha256_fails():
    repo, parts, whole = assembly_repo()
    manifest = repo.write_manifest(file_entries(repo.files, repo.lfs), "asm.yaml",
                                   assemble=[{"output": "whole.gguf", "parts": parts, "sha256": "b" * 64}])
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
    check(r.rc == 1, f"expected exit 1: {r}")
    check("SHA256 MISMATCH whole.gguf" in r.err and sha256(whole) in r.err and "b" * 64 in r.err, f"{r}")
    check(not os.path.exists(repo.snapshot("whole.gguf")), "a wrong assembly reached the output path")
    check(os.path.exists(repo.snapshot("whole.gguf") + ".bad-" + sha256(whole)), "wrong assembly not kept aside")


# ---- retries, second run, exit codes ----------------------------------------------------------

def test_retries_on_5xx_burst():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "status", "code": 503, "times": 2, "path_contains": "/resolve/"},
                        {"kind": "status", "code": 502, "times": 1, "path_contains": "/tree/"}])
        r = fetch(repo, sim)
        reqs = sim.requests()
    check(r.rc == 0, f"fetch failed: {r}")
    statuses = [q["status"] for q in reqs if "/resolve/" in q["path"]]
    check(statuses[:2] == [503, 503], f"the burst did not happen: {statuses}")
    check(r.out.count("RETRY") >= 2, f"retries not reported: {r}")
    check_correct_or_absent(repo)


def test_retry_after_honoured_on_429():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "status", "code": 429, "times": 1, "path_contains": "/resolve/",
                         "headers": {"Retry-After": "2"}}])
        r = fetch(repo, sim)
        reqs = [q for q in sim.requests() if "/resolve/" in q["path"]]
    check(r.rc == 0, f"fetch failed: {r}")
    check(reqs[0]["status"] == 429, f"no 429 seen: {[q['status'] for q in reqs]}")
    retry = [q for q in reqs[1:] if q["path"] == reqs[0]["path"]][0]  # other files may run meanwhile (--jobs)
    gap = retry["time"] - reqs[0]["time"]
    check(gap >= 1.9, f"retried after {gap:.2f} s, Retry-After said 2")
    check_correct_or_absent(repo)


def test_5xx_until_retries_exhausted_exits_3():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "status", "code": 500, "times": -1, "path_contains": "/tree/"}])
        r = fetch(repo, sim, "--retries", "2")
        trees = [q for q in sim.requests() if "/tree/" in q["path"]]
    check(r.rc == 3, f"expected exit 3: {r}")
    check(len(trees) == 2, f"expected 2 attempts, saw {len(trees)}")
    check("HTTP 500" in r.err, f"{r}")
    check_correct_or_absent(repo)


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


def test_manifest_errors_exit_2_with_file_and_line():
    tmp = tempdir("hf-fetch-manifest-")
    good = "manifest: 1\nrepo: org/model\nrevision: " + "a" * 40 + "\nfiles:\n"
    cases = {
        "dup.yaml": (good + "  - path: a.bin\n    size: 1\n    sha256: " + "0" * 64 +
                     "\n  - path: a.bin\n    size: 1\n    sha256: " + "0" * 64 + "\n", 8, "listed twice"),
        "branch.yaml": ("manifest: 1\nrepo: org/model\nrevision: main\nfiles:\n  - path: a\n    size: 1\n    git_oid: " +
                        "1" * 40 + "\n", 3, "40-hex commit"),
        "dotdot.yaml": (good + "  - path: ../etc/passwd\n    size: 1\n    sha256: " + "0" * 64 + "\n", 5, "relative"),
        "version.yaml": ("manifest: 2\n" + good.split("\n", 1)[1] + "  - path: a\n    size: 1\n    sha256: " + "0" * 64 + "\n",
                         1, "version"),
        "nohash.yaml": (good + "  - path: a\n    size: 1\n", 5, "sha256 or git_oid"),
        "yaml.yaml": (good + "  - path: [unclosed\n", 6, "YAML"),
    }
    for name, (text, line, words) in cases.items():
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        r = hf_fetch("--manifest", path, "--endpoint", f"http://127.0.0.1:{closed_port()}")
        check(r.rc == 2, f"{name}: expected exit 2: {r}")
        check(f"{path}:{line}:" in r.err and words in r.err, f"{name}: expected '{path}:{line}: ...{words}': {r}")
    r = hf_fetch("--manifest", os.path.join(tmp, "nonexistent.yaml"))
    check(r.rc == 2, f"a missing manifest should exit 2: {r}")
    r = hf_fetch("--no-such-flag")
    check(r.rc == 2, f"a bad flag should exit 2: {r}")


def test_network_down_exits_3():
    repo = small_repo()
    port = closed_port()
    t = time.monotonic()
    r = hf_fetch("--manifest", repo.manifest, "--endpoint", f"http://127.0.0.1:{port}", "--retries", "2",
                 "--cache-dir", repo.cache)
    check(r.rc == 3, f"expected exit 3: {r}")
    check(f"127.0.0.1:{port}" in r.err and "after 2 attempts" in r.err, f"no clear sentence: {r}")
    check(time.monotonic() - t < 15, "took too long")


def test_redirect_loop_is_a_clear_error():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "redirect_loop", "times": -1}])
        r = fetch(repo, sim, "--retries", "1")
    check(r.rc == 3, f"expected exit 3: {r}")
    check("too many redirects" in r.err, f"{r}")
    check_correct_or_absent(repo)


def test_json_events_and_summary():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim, "--json")
    check(r.rc == 0, f"fetch failed: {r}")
    events = r.json_events()  # every stdout line must be JSON
    files = {e["path"]: e for e in events if e["event"] == "file" and e["status"] == "OK"}
    check(set(files) == set(repo.files), f"not one OK event per file: {sorted(files)}")
    check(all(files[p]["sha256"] == sha256(d) for p, d in repo.files.items()), "sha256 in events is wrong")
    s = events[-1]
    check(s["event"] == "summary" and s["exit_code"] == 0 and s["downloaded"] == len(repo.files), f"summary: {s}")


def test_terminal_shows_live_progress():
    import pty
    import select
    files = {"big.safetensors": blob(4 << 20, "tty"), "config.json": b"{}\n"}
    repo = Repo(files, lfs={"big.safetensors"})
    with HubSim(repo.repos_json) as sim:
        # Slow the big file down so that the display redraws while it streams.
        sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 4 << 20}])
        master, slave = pty.openpty()
        proc = subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache],
                                stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=clean_env())
        os.close(slave)
        out = b""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        proc.wait(10)
        os.close(master)
    text = out.decode(errors="replace")
    check(proc.returncode == 0, f"fetch failed on a terminal: {text}")
    redraws = text.count("\r\x1b[K[")
    check(redraws >= 3, f"expected a redrawn progress line, saw {redraws}: {text!r}")
    check("big.safetensors" in text and "B/s ETA" in text and "total" in text,
          f"progress line lacks file, rate, ETA or total: {text!r}")


def test_quiet_prints_only_problems():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim, "--quiet")
        check(r.rc == 0 and r.out == "" and r.err == "", f"--quiet printed on success: {r}")
        entries = file_entries(repo.files, repo.lfs)
        entries[0]["size"] += 1
        changed = repo.write_manifest(entries, "changed.yaml")
        r2 = hf_fetch("--manifest", changed, "--endpoint", sim.hub, "--quiet")
    check(r2.rc == 1 and "UPSTREAM CHANGED config.json" in r2.err, f"--quiet hid a problem: {r2}")


if __name__ == "__main__":
    main()
