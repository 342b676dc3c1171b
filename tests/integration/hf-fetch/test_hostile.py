"""Issue 11, hf-fetch: a lying Hub, a hostile server and hostile names never cost a byte or a file
(docs/reliability.md, "Hostile inputs"). The lying and endless servers are hostile.py's; the rest is the Hub
simulator with its faults.

Run one: python3 test_hostile.py test_tree_oid_with_dot_dot_writes_nothing_outside   (ctest runs each alone)
"""

import json
import os
import sys
import subprocess
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, tempdir  # noqa: E402
from hf_fixtures import (Repo, blob, check_correct_or_absent, clean_env, git_oid, hf_fetch, manifest_yaml,
                         sha256)  # noqa: E402
from hostile import (HostileHub, repo_handler, send, send_chunks_forever, send_dripping, send_json, tree_entry)

SHA = "0123456789abcdef0123456789abcdef01234567"
CONFIG = b'{"model_type": "llama"}\n'
TOKENIZER = b'{"version": "1.0", "added_tokens": []}\n'
WEIGHTS = blob(300_000, "weights")


def lying_setup(entries, files):
    """A temporary directory with a manifest (sha256 only, as manifest create writes LFS files) for `files`,
    and a cache below it."""
    tmp = tempdir("hf-fetch-hostile-")
    manifest = os.path.join(tmp, "manifest.yaml")
    with open(manifest, "w") as f:
        f.write(manifest_yaml("org/model", SHA, entries))
    return tmp, manifest, os.path.join(tmp, "cache")


def sha_only(files):
    return [{"path": p, "size": len(d), "sha256": sha256(d)} for p, d in files.items()]


def snapshot(cache, path=""):
    return os.path.join(cache, "models--org--model", "snapshots", SHA, path)


def everything_under(d):
    out = set()
    for root, dirs, names in os.walk(d):
        for n in dirs + names:
            out.add(os.path.relpath(os.path.join(root, n), d))
    return out


def resolves(hub):
    return [r for r in hub.requests if "/resolve/" in r["path"]]


# ---- item 1: the tree's ids are names on disk --------------------------------------------------

def test_tree_oid_with_dot_dot_writes_nothing_outside():
    files = {"weights.bin": WEIGHTS}
    tmp, manifest, cache = lying_setup(sha_only(files), files)
    tree = [tree_entry("weights.bin", WEIGHTS, oid="../../../OUTSIDE")]  # no lfs: the oid names the blob
    with HostileHub(repo_handler(files, tree)) as hub:
        r = hf_fetch("--manifest", manifest, "--endpoint", hub.url, "--cache-dir", cache)
    check(r.rc == 3, f"a path as the tree's oid must be refused as a malformed answer (exit 3): {r}")
    check("oid" in r.err and "hex" in r.err, f"the sentence should say the oid is not an id: {r}")
    outside = [n for n in os.listdir(tmp) if n.startswith("OUTSIDE")]
    check(not outside, f"written outside the cache: {outside}")
    check(not resolves(hub), "a byte was asked for after a bad tree")


def test_tree_entry_without_oid_is_a_clear_error():
    files = {"weights.bin": WEIGHTS}
    tmp, manifest, cache = lying_setup(sha_only(files), files)
    with HostileHub(repo_handler(files, [tree_entry("weights.bin", WEIGHTS, oid=None)])) as hub:
        r = hf_fetch("--manifest", manifest, "--endpoint", hub.url, "--cache-dir", cache)
    check(r.rc == 3 and 'no "oid"' in r.err, f"a file entry without oid is a malformed listing: {r}")
    check(not resolves(hub), "a byte was asked for after a bad tree")


def test_tree_gives_a_file_the_sha256_of_another():
    # config.json, pinned by sha256 only, is given weights.bin's LFS oid as its git oid.
    files = {"config.json": CONFIG, "weights.bin": WEIGHTS}
    tmp, manifest, cache = lying_setup(sha_only(files), files)
    tree = [tree_entry("config.json", CONFIG, oid=sha256(WEIGHTS)),
            tree_entry("weights.bin", WEIGHTS, oid=git_oid(b"pointer"), lfs_oid=sha256(WEIGHTS))]
    with HostileHub(repo_handler(files, tree)) as hub:
        r = hf_fetch("--manifest", manifest, "--endpoint", hub.url, "--cache-dir", cache)
    check(r.rc == 3 and "config.json" in r.err, f"a 64-hex git oid is not a git oid: {r}")
    check(not os.path.lexists(snapshot(cache, "config.json")), "config.json was published")


def test_tree_gives_two_files_one_blob_name():
    # Both pinned by sha256 only; the tree gives config.json the git oid of tokenizer.json.
    files = {"config.json": CONFIG, "tokenizer.json": TOKENIZER}
    tmp, manifest, cache = lying_setup(sha_only(files), files)
    tree = [tree_entry("config.json", CONFIG, oid=git_oid(TOKENIZER)),
            tree_entry("tokenizer.json", TOKENIZER, oid=git_oid(TOKENIZER))]
    with HostileHub(repo_handler(files, tree)) as hub:
        r = hf_fetch("--manifest", manifest, "--endpoint", hub.url, "--cache-dir", cache)
    check(r.rc == 1 and "UPSTREAM CHANGED" in r.all, f"one blob name for two contents is upstream changed: {r}")
    check(not resolves(hub), "a byte was fetched although the pre-flight failed")
    for path, data in files.items():
        link = snapshot(cache, path)
        if os.path.lexists(link):
            with open(link, "rb") as f:
                check(f.read() == data, f"{path} holds another file's bytes")


def test_tree_oid_that_is_not_the_content_id_is_caught():
    # weights.bin, pinned by sha256 only, served as a plain git file under a made-up git oid: the name
    # must be the content's git blob id, so the download is checked against it before the rename.
    files = {"weights.bin": WEIGHTS}
    tmp, manifest, cache = lying_setup(sha_only(files), files)
    made_up = "ab" * 20
    with HostileHub(repo_handler(files, [tree_entry("weights.bin", WEIGHTS, oid=made_up)])) as hub:
        r = hf_fetch("--manifest", manifest, "--endpoint", hub.url, "--cache-dir", cache)
    check(r.rc == 1 and "git blob id mismatch" in r.all, f"a blob name that is not its content's id: {r}")
    blobs = os.path.join(cache, "models--org--model", "blobs")
    check(not os.path.exists(os.path.join(blobs, made_up)), "stored under a name its content does not have")
    check(not os.path.lexists(snapshot(cache, "weights.bin")), "published under a wrong name")
    # The same tree with the true id works.
    with HostileHub(repo_handler(files, [tree_entry("weights.bin", WEIGHTS, oid=git_oid(WEIGHTS))])) as hub:
        r = hf_fetch("--manifest", manifest, "--endpoint", hub.url, "--cache-dir", cache)
    check(r.rc == 0, f"the true git oid: {r}")
    with open(os.path.join(blobs, git_oid(WEIGHTS)), "rb") as f:
        check(f.read() == WEIGHTS, "wrong blob")


def test_tree_oid_taken_by_another_commits_blob_is_left_alone():
    # The cache holds config.json of one commit as blobs/<its git oid>. A lying tree of another commit gives
    # weights.bin (pinned by sha256 only) that name: the tree is refuted before any download, and the blob
    # of the first commit is neither moved aside nor overwritten.
    tmp, manifest, cache = lying_setup([{"path": "config.json", "size": len(CONFIG), "sha256": sha256(CONFIG),
                                         "git_oid": git_oid(CONFIG)}], {})
    with HostileHub(repo_handler({"config.json": CONFIG}, [tree_entry("config.json", CONFIG, git_oid(CONFIG))])) as hub:
        r = hf_fetch("--manifest", manifest, "--endpoint", hub.url, "--cache-dir", cache)
    check(r.rc == 0, f"the first commit: {r}")
    other = os.path.join(tmp, "other.manifest")
    with open(other, "w") as f:
        f.write(manifest_yaml("org/model", "f" * 40, sha_only({"weights.bin": WEIGHTS})))
    files = {"weights.bin": WEIGHTS}
    with HostileHub(repo_handler(files, [tree_entry("weights.bin", WEIGHTS, oid=git_oid(CONFIG))])) as hub:
        r = hf_fetch("--manifest", other, "--endpoint", hub.url, "--cache-dir", cache)
    check(r.rc == 1 and "UPSTREAM CHANGED" in r.all and "holds other content" in r.all, f"{r}")
    check(not resolves(hub), "a byte was fetched although the pre-flight failed")
    with open(snapshot(cache, "config.json"), "rb") as f:
        check(f.read() == CONFIG, "the first commit's config.json changed")
    blobs = os.listdir(os.path.join(cache, "models--org--model", "blobs"))
    check(blobs == [git_oid(CONFIG)], f"blobs: {blobs}")


# ---- item 2: exact size before the rename ------------------------------------------------------

def test_partial_longer_than_the_blob_is_never_published():
    big = "big.safetensors"
    repo = Repo({"config.json": CONFIG, big: blob(2 << 20, "big")}, lfs={big})
    data = repo.files[big]
    half = 1 << 20
    # What a run killed after the first range leaves, then grown by someone: a sidecar that says the first
    # range is done, and a partial file longer than the blob.
    partial = repo.blob(big) + ".provkit-partial.incomplete"
    os.makedirs(os.path.dirname(partial), exist_ok=True)
    with open(partial, "wb") as f:
        f.write(data[:half] + b"\0" * half + b"EXTRA BYTES" * 100)
    with open(partial + ".ranges", "w") as f:
        f.write(f"provkit-ranges 1\nsize {len(data)}\nrange 0 {half} {half}\nrange {half} {len(data)} 0\n")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache,
                     "--connections", "2", "--min-split-size", "1M")
    check(r.rc == 0, f"{r}")
    check(os.path.getsize(repo.blob(big)) == len(data), f"published with {os.path.getsize(repo.blob(big))} bytes")
    check_correct_or_absent(repo)


# ---- item 3: --local-dir never overwrites a repo file with hf-fetch's own ------------------------

def local_dir_collision(path):
    files = {"config.json": CONFIG, path: b"the repository's own file\n"}
    repo = Repo(files)
    local = os.path.join(repo.tmp, "local")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--local-dir", local)
        reqs = sim.requests()
    check(r.rc == 2, f"a repo path hf-fetch writes itself must be refused before any download: {r}")
    check(f"manifest.yaml:" in r.err and path in r.err, f"the sentence should name the line and path: {r}")
    check(not reqs, f"requests were made: {[q['path'] for q in reqs]}")
    check(not os.path.exists(os.path.join(local, path)) or open(os.path.join(local, path), "rb").read() ==
          files[path], "overwritten")
    # The cache has no such collision: the same manifest fetches.
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
    check(r.rc == 0, f"into the cache: {r}")
    check_correct_or_absent(repo)


def test_local_dir_repo_file_named_sha256sums_is_placed():
    """A repo that ships its own SHA256SUMS (many GGUF repos do) goes into a local dir as the repo has it;
    hf-fetch's own list is .cache/huggingface/SHA256SUMS, where no repo file can be."""
    theirs = b"0000000000000000000000000000000000000000000000000000000000000000  model.gguf\n"
    files = {"config.json": CONFIG, "SHA256SUMS": theirs}
    repo = Repo(files)
    local = os.path.join(repo.tmp, "local")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--local-dir", local)
    check(r.rc == 0, f"a repo's own SHA256SUMS was refused: {r}")
    with open(os.path.join(local, "SHA256SUMS"), "rb") as f:
        check(f.read() == theirs, "the repo's SHA256SUMS was overwritten")
    c = subprocess.run(["sha256sum", "-c", ".cache/huggingface/SHA256SUMS"], cwd=local, capture_output=True, text=True)
    check(c.returncode == 0 and c.stdout.count(": OK") == 2, f"hf-fetch's list: {c.stdout}{c.stderr}")


def test_local_dir_repo_file_under_cache_huggingface_is_refused():
    local_dir_collision(".cache/huggingface/download/config.json.metadata")


# ---- item 4: bounds on what a server may send ------------------------------------------------------

def bounded_run(handler, *extra, within=60):
    files = {"weights.bin": WEIGHTS}
    tmp, manifest, cache = lying_setup(sha_only(files), files)
    with HostileHub(handler) as hub:
        began = time.monotonic()
        r = hf_fetch("--manifest", manifest, "--endpoint", hub.url, "--cache-dir", cache, *extra, timeout=within)
        took = time.monotonic() - began
    check(r.rc == 3, f"exit 3 expected: {r}")
    check(len(r.err.strip().splitlines()) == 1, f"one sentence expected: {r}")
    return r, took, hub


def test_tree_body_that_never_ends_is_cut_off():
    entry = json.dumps(tree_entry("x", b"", oid="0" * 40)).encode() + b","
    r, took, _ = bounded_run(repo_handler({}, None, tree_answer=lambda h: send_chunks_forever(h, b"[", entry * 4096)))
    check("longer than" in r.err and "bytes allowed" in r.err, f"{r}")


def test_tree_pages_that_never_end_are_cut_off():
    def pages(h):
        n = int(h.path.rpartition("cursor=")[2]) if "cursor=" in h.path else 0
        base = h.path.split("&cursor=")[0]
        send_json(h, [], {"Link": f'<http://{h.headers["Host"]}{base}&cursor={n + 1}>; rel="next"'})
    r, took, hub = bounded_run(repo_handler({}, None, tree_answer=pages))
    check("2000 pages" in r.err, f"{r}")
    check(len(hub.requests) <= 2001, f"{len(hub.requests)} pages asked for")


def test_tree_listing_over_the_entry_cap_is_cut_off():
    # 26 pages of 20,000 small folder entries (about 1 MiB each): 520,000 entries, past the 500,000 that a run's
    # memory allows (docs/hf-fetch.md), within the page and byte bounds. Refused at the page that passes it.
    page = json.dumps([{"type": "directory", "path": f"d{i:06d}", "oid": "0" * 40, "size": 0}
                       for i in range(20000)]).encode()

    def pages(h):
        n = int(h.path.rpartition("cursor=")[2]) if "cursor=" in h.path else 0
        base = h.path.split("&cursor=")[0]
        send(h, 200, page, {"Content-Type": "application/json",
                            "Link": f'<http://{h.headers["Host"]}{base}&cursor={n + 1}>; rel="next"'})
    r, took, hub = bounded_run(repo_handler({}, None, tree_answer=pages))
    check("more than 500000 entries" in r.err, f"{r}")
    check(len(hub.requests) == 26, f"{len(hub.requests)} pages asked for, not 26")


def test_tree_body_at_one_byte_per_second_is_too_slow():
    body = json.dumps([tree_entry("weights.bin", WEIGHTS, oid=git_oid(WEIGHTS))]).encode()
    r, took, _ = bounded_run(repo_handler({}, None, tree_answer=lambda h: send_dripping(h, body)),
                             "--stall-timeout", "2", "--retries", "2", within=40)
    check("too slow" in r.err, f"{r}")
    check(took < 20, f"took {took:.1f} s")


def test_file_body_at_one_byte_per_second_is_too_slow():
    big = "big.safetensors"
    repo = Repo({big: blob(64 << 10, "drip")}, lfs={big})
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 1, "times": -1}])
        began = time.monotonic()
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache,
                     "--stall-timeout", "2", "--retries", "2", timeout=40)
        took = time.monotonic() - began
    check(r.rc == 3 and "too slow" in r.all, f"{r}")
    check(took < 20, f"took {took:.1f} s")
    check_correct_or_absent(repo)


# ---- item 5: names that fit NAME_MAX keep fitting with hf-fetch's suffixes ----------------------

LONG = "a" * 236 + ".bin"  # 240 bytes: legal (NAME_MAX is 255)


def test_file_name_of_240_bytes_in_the_cache():
    repo = Repo({"config.json": CONFIG, LONG: blob(5000, "long"), "sub/" + LONG: b"small\n"}, lfs={LONG})
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
        check(r.rc == 0, f"{r}")
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
        check(r.rc == 0 and "already in place" in r.out, f"the rerun: {r}")
    for path in repo.files:
        check(os.path.exists(repo.snapshot(path)), f"{path[:20]}...: no snapshot link")
    check_correct_or_absent(repo)


def test_file_name_of_240_bytes_in_a_local_dir():
    files = {"config.json": CONFIG, LONG: blob(5000, "long")}
    repo = Repo(files, lfs={LONG})
    local = os.path.join(repo.tmp, "local")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--local-dir", local)
    check(r.rc == 0, f"{r}")
    for path, data in files.items():
        with open(os.path.join(local, path), "rb") as f:
            check(f.read() == data, f"{path[:20]}...: wrong bytes")
    for name in everything_under(local):
        check(all(len(part.encode()) <= 255 for part in name.split("/")), f"a name past NAME_MAX: {name}")


# ---- item 6: a token is one header value --------------------------------------------------------

def test_token_with_a_line_break_is_refused_naming_its_source():
    repo = Repo({"config.json": CONFIG})
    injected = "hf_provkitTestToken0123\r\nX-Injected: yes"
    token_file = os.path.join(repo.tmp, "token")
    with open(token_file, "w") as f:
        f.write("hf_provkitTestToken0123\nX-Injected: yes\n")
    with HubSim(repo.repos_json) as sim:
        for env, source in ((clean_env(HF_TOKEN=injected), "HF_TOKEN"),
                            (clean_env(HF_TOKEN_PATH=token_file), token_file)):
            r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, env=env)
            check(r.rc == 2 and source in r.err, f"refused naming {source}: {r}")
            check("hf_provkitTestToken0123" not in r.all, f"the token is in the output: {r}")
        reqs = sim.requests()
    check(not reqs, f"requests were sent: {[(q['path'], q['headers']) for q in reqs]}")


if __name__ == "__main__":
    main()
