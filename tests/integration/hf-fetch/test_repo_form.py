"""Issue 21: hf-fetch used as `hf download` users use it. The positional REPO[@REV] form with
--include/--exclude and --save-manifest, --dry-run and the disk gate, refs as huggingface_hub writes them,
what an interrupted fetch leaves, CACHEDIR.TAG, --progress lines and SIGTERM/SIGINT.

Run one: python3 test_repo_form.py test_repo_form_selects_with_globs   (ctest runs each as its own test)
"""

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, make_repo, tempdir  # noqa: E402
from hf_fixtures import HF_FETCH, Repo, blob, clean_env, hf_fetch, resolves, sha256  # noqa: E402
from test_faults import tmpfs, wait_for  # noqa: E402

TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
       "# This file is a cache directory tag created by huggingface_hub.\n")


def gguf_repo(**kw):
    files = {
        "README.md": b"# a model\n",
        "config.json": b'{"model_type": "llama"}\n',
        "Q4_K_M/model-Q4_K_M-00001-of-00002.gguf": blob(400_000, "p1"),
        "Q4_K_M/model-Q4_K_M-00002-of-00002.gguf": blob(300_000, "p2"),
        "Q8_0/model-Q8_0.gguf": blob(500_000, "q8"),
        "mmproj-F16.gguf": blob(100_000, "mm"),
    }
    return Repo(files, lfs={p for p in files if p.endswith(".gguf")}, **kw)


def fetch_repo(repo, sim, *extra, env=None):
    return hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--cache-dir", repo.cache, *extra, env=env)


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def blob_requests(reqs):
    return [r for r in resolves(reqs)]


# ---- 1: REPO[@REV], --include/--exclude, --save-manifest ---------------------------------------------

def test_repo_form_selects_with_globs():
    repo = gguf_repo()
    saved = os.path.join(repo.tmp, "pinned.yaml")
    with HubSim(repo.repos_json) as sim:
        r = fetch_repo(repo, sim, "--include", "Q4_K_M/*", "--include", "*.json", "--exclude", "*-00002-of-*",
                       "--save-manifest", saved, "--json")
        reqs = sim.requests()
    check(r.rc == 0, f"REPO form failed: {r}")
    got = {e["path"] for e in json_lines(r.out) if e.get("event") == "file" and e.get("status") == "OK"}
    check(got == {"config.json", "Q4_K_M/model-Q4_K_M-00001-of-00002.gguf"}, f"selected {got}")
    for path in got:
        with open(repo.snapshot(path), "rb") as f:
            check(f.read() == repo.files[path], f"{path}: wrong bytes")
    check(not os.path.exists(repo.snapshot("Q8_0/model-Q8_0.gguf")), "an excluded file was fetched")
    fetched = {q["path"] for q in blob_requests(reqs)}
    check(not any("Q8_0" in p or "-00002-of" in p or "mmproj" in p for p in fetched), f"unselected files asked: {fetched}")
    with open(saved) as f:
        text = f.read()
    check(f"revision: {repo.sha}" in text and "ref: \"main\"" in text and "Q8_0" not in text, f"saved manifest:\n{text}")
    # The saved manifest pins the next run: it fetches the same files by --manifest, nothing new.
    with HubSim(repo.repos_json) as sim:
        again = hf_fetch("--manifest", saved, "--endpoint", sim.hub, "--cache-dir", repo.cache)
    check(again.rc == 0 and "2 already in place" in again.out, f"pinned rerun: {again}")


def test_repo_form_revision_and_no_match():
    repo = gguf_repo()
    with HubSim(repo.repos_json) as sim:
        none = fetch_repo(repo, sim, "--include", "*.safetensors")
        bad = hf_fetch(repo.repo_id + "@nope", "--endpoint", sim.hub, "--cache-dir", repo.cache)
        short = hf_fetch(f"{repo.repo_id}@{repo.sha[:7]}", "--endpoint", sim.hub, "--cache-dir", repo.cache)
        both = hf_fetch(repo.repo_id, "--manifest", repo.manifest, "--endpoint", sim.hub)
        ok = hf_fetch(f"{repo.repo_id}@{repo.sha}", "--endpoint", sim.hub, "--cache-dir", repo.cache,
                      "--include", "config.json")
    check(none.rc == 2 and "matches the --include/--exclude patterns" in none.err, f"no match: {none}")
    check(bad.rc == 1 and "revision" in bad.err and "40-hex" not in bad.err, f"unknown revision: {bad}")
    # An abbreviated commit (issue 43 item 11): what to give instead, not only "not in REPO".
    check(short.rc == 1 and "the revision is not in" in short.err and
          f"if {repo.sha[:7]} is a commit, give the 40-hex commit" in short.err, f"a short commit id: {short}")
    check(both.rc == 2 and "not both" in both.err, f"REPO and --manifest: {both}")
    check(ok.rc == 0, f"REPO@commit: {ok}")
    # A commit is no name: no ref is written for it (huggingface_hub writes none either) ...
    check(os.listdir(os.path.join(repo.repo_dir(), "refs")) == ["main"], "a ref named by a commit")


def pins(path):
    """A manifest's files: path -> its entry (sha256, git_oid, size)."""
    import yaml
    with open(path) as f:
        return {e["path"]: e for e in yaml.safe_load(f)["files"]}


def test_saved_manifest_pins_sha256_as_manifest_create_does():
    """Issue 41 (11): --save-manifest pinned the non-LFS files (config.json, README.md) by their SHA-1 git
    id alone, so a node fetching by it through a --mirror trusted SHA-1. Every written manifest pins each
    file by sha256 (non-LFS files by git_oid as well), the same entries `manifest create` writes, and a
    dry run's saved manifest too."""
    repo = gguf_repo()
    saved, planned, created = (os.path.join(repo.tmp, n) for n in ("saved.yaml", "planned.yaml", "created.yaml"))
    select = ("--include", "*.json", "--include", "README.md", "--include", "mmproj*")
    with HubSim(repo.repos_json) as sim:
        r = fetch_repo(repo, sim, *select, "--save-manifest", saved)
        d = fetch_repo(repo, sim, *select, "--dry-run", "--save-manifest", planned)
        c = hf_fetch("manifest", "create", repo.repo_id, *select, "-o", created, "--endpoint", sim.hub)
    for run_, what in ((r, "the fetch"), (d, "the dry run"), (c, "manifest create")):
        check(run_.rc == 0, f"{what}: {run_}")
    want = {p: repo.files[p] for p in ("README.md", "config.json", "mmproj-F16.gguf")}
    for path in (saved, planned, created):
        got = pins(path)
        check(set(got) == set(want), f"{path}: files {sorted(got)}")
        for name, data in want.items():
            check(got[name].get("sha256") == sha256(data), f"{path}: {name} is not pinned by its sha256: {got[name]}")
        for name in ("README.md", "config.json"):
            check(got[name].get("git_oid") == repo.etag(name), f"{path}: {name} lost its git oid: {got[name]}")
    check(pins(saved) == pins(created) == pins(planned), "--save-manifest and manifest create pin differently")


def test_repo_at_a_commit_resolves_to_that_commit():
    """Issue 41 (13): REPO@<40-hex commit> took whatever commit the revision answer named, fetched it and
    saved it in the manifest (exit 0). A full commit id resolves to itself, or nothing is fetched: exit 3,
    reason network, a sentence naming both commits; the same for manifest create and inspect."""
    repo = gguf_repo()
    other = make_repo(repo.tmp, repo.repo_id, dict(repo.files, **{"config.json": b'{"model_type": "mistral"}\n'}),
                      lfs=repo.lfs)
    saved, created = os.path.join(repo.tmp, "saved.yaml"), os.path.join(repo.tmp, "created.yaml")
    asked = f"{repo.repo_id}@{repo.sha}"
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "revision_sha", "sha": other, "times": -1}])
        r = hf_fetch(asked, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--include", "*.json",
                     "--save-manifest", saved, "--json")
        c = hf_fetch("manifest", "create", asked, "--endpoint", sim.hub, "-o", created)
        i = hf_fetch("inspect", asked, "--endpoint", sim.hub)
        reqs = sim.requests()
        sim.set_faults([])
        honest = hf_fetch(asked, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--include", "*.json")
    check(r.rc == 3, f"a commit resolved to another: {r}")
    summary = json_lines(r.out)[-1]
    check(summary["event"] == "summary" and summary["reason"] == "network" and other in summary["message"]
          and repo.sha in summary["message"] and "resolve to itself" in summary["message"], f"summary: {summary}")
    for run_, what in ((c, "manifest create"), (i, "inspect")):
        check(run_.rc == 3 and other in run_.err, f"{what} took the other commit: {run_}")
    check(not os.path.exists(saved) and not os.path.exists(created), "a manifest of the other commit was written")
    check(not resolves(reqs) and not any("/tree/" in q["path"] for q in reqs), f"asked past the answer: {reqs}")
    check(not os.path.exists(os.path.join(repo.repo_dir(), "snapshots", other)), "the other commit was fetched")
    check(honest.rc == 0 and os.path.exists(repo.snapshot("config.json")), f"the honest answer: {honest}")


# ---- 2: --dry-run and the disk gate ---------------------------------------------------------------

def test_dry_run_plans_without_blob_requests():
    repo = gguf_repo()
    part = "Q4_K_M/model-Q4_K_M-00001-of-00002.gguf"
    with HubSim(repo.repos_json) as sim:
        check(fetch_repo(repo, sim, "--include", "config.json").rc == 0, "first fetch")
        sim.clear_requests()
        r = fetch_repo(repo, sim, "--dry-run", "--json", "--exclude", "Q8_0/*")
        reqs = sim.requests()
    check(r.rc == 0, f"dry run: {r}")
    check(not blob_requests(reqs), f"a dry run asked for bytes: {blob_requests(reqs)}")
    plan = {e["path"]: e for e in json_lines(r.out) if e.get("event") == "plan"}
    check(plan["config.json"]["status"] == "IN PLACE" and plan[part]["status"] == "FETCH", f"plan: {plan}")
    summary = json_lines(r.out)[-1]
    want = sum(len(v) for k, v in repo.files.items() if not k.startswith("Q8_0") and k != "config.json")
    check(summary["mode"] == "dry-run" and summary["to_fetch_bytes"] == want and summary["fits"] is True
          and summary["free_bytes"] > 0 and summary["bytes_transferred"] == 0, f"summary: {summary}")
    check(not os.path.exists(repo.snapshot(part)), "a dry run wrote a file")


def test_disk_gate_counts_partials_and_assembly():
    """A small file system: the gate refuses before any byte when parts plus assembly cannot fit, and lets a
    resume through whose preallocated partial already holds its bytes."""
    files = {"config.json": b"{}\n", "big.gguf": blob(6 << 20, "big"),
             "p/part-1": blob(3 << 20, "a"), "p/part-2": blob(3 << 20, "b")}
    repo = Repo(files, lfs={"big.gguf", "p/part-1", "p/part-2"})
    whole = files["p/part-1"] + files["p/part-2"]
    with tmpfs("10m") as d, HubSim(repo.repos_json) as sim:
        cache = os.path.join(d, "cache")
        # Parts (6 MiB) + their assembly (6 MiB) do not fit in 10 MiB: refused, nothing asked.
        r = hf_fetch("manifest", "create", repo.repo_id, "--endpoint", sim.hub, "--include", "p/*", "--include",
                     "*.json", "--assemble", "whole.bin=p/part-1,p/part-2:" + sha256(whole), "-o",
                     os.path.join(repo.tmp, "asm.yaml"))
        check(r.rc == 0, f"manifest create: {r}")
        sim.clear_requests()
        r = hf_fetch("--manifest", os.path.join(repo.tmp, "asm.yaml"), "--endpoint", sim.hub, "--cache-dir", cache,
                     "--json")
        reqs = sim.requests()
        check(r.rc == 1 and "not enough space" in r.all and "assembly outputs" in r.all, f"gate: {r}")
        check(not blob_requests(reqs), f"bytes were asked before the gate refused: {blob_requests(reqs)}")
        # A 6 MiB file fits; interrupted half way, its preallocated partial holds the whole size: the resume
        # is let through, though free space is now less than the file.
        sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 2 << 20, "times": -1}])
        p = subprocess.Popen([HF_FETCH, repo.repo_id, "--endpoint", sim.hub, "--cache-dir", cache, "--include",
                              "big.gguf", "--connections", "4", "--min-split-size", "1M"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=clean_env())
        partial = os.path.join(cache, "models--org--model", "blobs", sha256(files["big.gguf"]) +
                               ".provkit-partial.incomplete")
        wait_for(lambda: os.path.exists(partial) and os.path.getsize(partial) == len(files["big.gguf"]), "the preallocated partial")
        time.sleep(0.5)
        p.kill()
        p.wait()
        # Fill the disk so that less than the whole file is free, but what is missing still fits.
        st = os.statvfs(d)
        filler = os.path.join(d, "filler")
        with open(filler, "wb") as f:
            f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - (1 << 20)))
        sim.set_faults([])
        r = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--cache-dir", cache, "--include", "big.gguf", "--json",
                     "--connections", "4", "--min-split-size", "1M")
    check(r.rc == 0, f"the resume was refused: {r}")


# ---- 6: --assemble OUT=GLOB (natural order), :SHA256SUMS, --local-dir of a repo with its own SHA256SUMS --------

def test_assemble_glob_and_repo_sha256sums_into_local_dir():
    parts = {f"Q4/m.gguf.part{i}of11": blob(20_000 + i, f"part{i}") for i in range(1, 12)}
    whole = b"".join(parts[f"Q4/m.gguf.part{i}of11"] for i in range(1, 12))  # natural order: 2 before 10
    files = dict(parts)
    files["config.json"] = b"{}\n"
    files["SHA256SUMS"] = f"{sha256(whole)}  m.gguf\n{'0' * 64}  other.gguf\n".encode()
    repo = Repo(files, lfs=set(parts))
    local = tempdir("hf-fetch-local-")
    saved = os.path.join(repo.tmp, "m.yaml")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--local-dir", local, "--assemble",
                     "m.gguf=Q4/m.gguf.part*:SHA256SUMS", "--save-manifest", saved, "--json")
        bad = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--local-dir", local, "--assemble",
                       "x.gguf=Q4/*:SHA256SUMS")
    check(r.rc == 0, f"assemble from a glob: {r}")
    with open(os.path.join(local, "m.gguf"), "rb") as f:
        check(f.read() == whole, "the assembly is not the parts in natural order")
    with open(saved) as f:
        text = f.read()
    check(f"sha256: {sha256(whole)}" in text, f"the repo's checksum is not in the manifest:\n{text}")
    with open(os.path.join(local, "SHA256SUMS"), "rb") as f:
        check(f.read() == files["SHA256SUMS"], "the repo's SHA256SUMS was not placed as the repo has it")
    c = subprocess.run(["sha256sum", "-c", "SHA256SUMS", "--ignore-missing"], cwd=local, capture_output=True, text=True)
    check(c.returncode == 0 and "m.gguf: OK" in c.stdout, f"the repo's own list: {c.stdout}{c.stderr}")
    check(bad.rc == 2 and "hf-fetch: --assemble x.gguf: the repo's SHA256SUMS has no line for it" in bad.err,
          f"no line for the output: {bad}")


def test_repo_sha256sums_full_path_before_basename():
    """Issue 41: a repo's SHA256SUMS listing BF16/model.gguf before Q8_0/model.gguf; the Q8_0 output took the
    first line with its basename, BF16's sum, and its right parts failed. The full relative path decides
    (as `sha256sum -c` reads the list); a basename alone only when one line has it, else exit 2 naming them."""
    q8 = {f"Q8_0/model.gguf.part{i}of2": blob(30_000 + i, f"q8-{i}") for i in (1, 2)}
    bf16 = {f"BF16/model.gguf.part{i}of2": blob(40_000 + i, f"bf16-{i}") for i in (1, 2)}
    q8_whole = b"".join(q8[f"Q8_0/model.gguf.part{i}of2"] for i in (1, 2))
    bf16_whole = b"".join(bf16[f"BF16/model.gguf.part{i}of2"] for i in (1, 2))
    files = {**q8, **bf16, "config.json": b"{}\n",
             "SHA256SUMS": f"{sha256(bf16_whole)}  BF16/model.gguf\n{sha256(q8_whole)}  Q8_0/model.gguf\n".encode()}
    repo = Repo(files, lfs=set(q8) | set(bf16))
    local = tempdir("hf-fetch-local-")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--local-dir", local, "--include", "Q8_0/*",
                     "--include", "SHA256SUMS", "--assemble", "Q8_0/model.gguf=Q8_0/model.gguf.part*:SHA256SUMS")
        ambiguous = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--local-dir", tempdir("hf-fetch-local-"),
                             "--include", "Q8_0/*", "--assemble", "model.gguf=Q8_0/model.gguf.part*:SHA256SUMS")
    check(r.rc == 0, f"Q8_0/model.gguf against its own line: {r}")
    c = subprocess.run(["sha256sum", "-c", "SHA256SUMS", "--ignore-missing"], cwd=local, capture_output=True, text=True)
    check(c.returncode == 0 and "Q8_0/model.gguf: OK" in c.stdout, f"sha256sum -c of the repo's list: {c.stdout}{c.stderr}")
    check(ambiguous.rc == 2 and "BF16/model.gguf, Q8_0/model.gguf" in ambiguous.err,
          f"a basename two lines have must be refused naming both: {ambiguous}")


# ---- 4: mirrors with fallback --------------------------------------------------------------------

def test_mirrors_fall_back_and_wrong_bytes_have_their_own_status():
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()
    files = {"config.json": b"{}\n", "a.gguf": blob(300_000, "a"), "b.gguf": blob(200_000, "b")}
    repo = Repo(files, lfs={"a.gguf", "b.gguf"})
    with HubSim(repo.repos_json) as mirror, HubSim(repo.repos_json) as hub:
        # The mirror serves a.gguf wrong; b.gguf and config.json right. The dead mirror is left at once.
        mirror.set_faults([{"kind": "wrong_bytes", "at": 1000, "times": -1, "path_contains": sha256(files["a.gguf"])}])
        t0 = time.monotonic()
        r = hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--mirror", dead, "--mirror", mirror.hub,
                     "--endpoint", hub.hub, "--json", env=clean_env(HF_TOKEN="hf_secretTokenForTheHubOnly"))
        took = time.monotonic() - t0
        mirror_reqs, hub_reqs = mirror.requests(), hub.requests()
    check(r.rc == 0, f"fallback failed: {r}")
    check(took < 10, f"a dead mirror cost {took:.1f} s (retries?)")
    events = json_lines(r.out)
    skipped = [e for e in events if e.get("status") == "MIRROR SKIPPED"]
    check(skipped and skipped[0]["path"] == dead, f"the dead mirror was not reported: {events}")
    wrong = [e for e in events if e.get("status") == "MIRROR WRONG BYTES"]
    check([e["path"] for e in wrong] == ["a.gguf"] and not any(e.get("status") == "UPSTREAM CHANGED" for e in events),
          f"wrong bytes status: {events}")
    ok = {e["path"]: e["source"] for e in events if e.get("event") == "file" and e.get("status") == "OK"}
    check(ok.get("b.gguf") == mirror.hub and ok.get("a.gguf") == hub.hub, f"sources: {ok}")
    for q in mirror_reqs:
        check(not any(k.lower() == "authorization" for k in q["headers"]), "the token was sent to a mirror")
    check(any(sha256(files["a.gguf"]) in q["path"] or "a.gguf" in q["path"] for q in resolves(hub_reqs)),
          "a.gguf was not fetched from the Hub")
    for path, data in files.items():
        with open(repo.snapshot(path), "rb") as f:
            check(f.read() == data, f"{path}: wrong bytes")


# ---- 9: refs, an interrupted fetch, CACHEDIR.TAG ---------------------------------------------------

def test_refs_as_huggingface_hub_writes_them():
    repo = gguf_repo()
    old_sha = repo.sha
    # A newer main; the old commit keeps the tag v1.
    new_files = dict(repo.files)
    new_files["config.json"] = b'{"model_type": "llama", "v": 2}\n'
    new_sha = make_repo(repo.tmp, repo.repo_id, new_files, lfs={p for p in new_files if p.endswith(".gguf")})
    make_repo(repo.tmp, repo.repo_id, repo.files, lfs={p for p in repo.files if p.endswith(".gguf")}, sha=old_sha,
              refs=("v1",))
    refs = os.path.join(repo.repo_dir(), "refs")

    def ref(name):
        with open(os.path.join(refs, name)) as f:
            return f.read()

    with HubSim(repo.repos_json) as sim:
        check(fetch_repo(repo, sim, "--include", "*.json").rc == 0, "fetch main")
        check(ref("main") == new_sha, "refs/main is not main's commit")
        r = hf_fetch(repo.repo_id + "@v1", "--endpoint", sim.hub, "--cache-dir", repo.cache, "--include", "*.json")
        check(r.rc == 0, f"fetch v1: {r}")
        check(ref("v1") == old_sha and ref("main") == new_sha, f"refs: main={ref('main')} v1={ref('v1')}")
        # manifest create REPO@v1 records the name; its fetch writes refs/v1 and leaves refs/main alone,
        # also over a refs/main huggingface_hub wrote (no trailing newline).
        m = os.path.join(repo.tmp, "v1.yaml")
        check(hf_fetch("manifest", "create", repo.repo_id + "@v1", "--endpoint", sim.hub, "--include", "*.json",
                       "-o", m).rc == 0, "manifest create")
        with open(m) as f:
            check('ref: "v1"' in f.read(), "manifest create did not record the ref")
        os.remove(os.path.join(refs, "v1"))
        with open(os.path.join(refs, "main"), "w") as f:
            f.write(new_sha)
        check(hf_fetch("--manifest", m, "--endpoint", sim.hub, "--cache-dir", repo.cache).rc == 0, "fetch by manifest")
        check(ref("v1") == old_sha and ref("main") == new_sha, "a manifest of v1 moved refs/main")
        # A manifest naming no ref, of an older commit: refs/main stays.
        check(hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache).rc == 0,
              "fetch old manifest")
        check(ref("main") == new_sha, "refs/main moved to an older commit")
    # Offline, with no refs/main at all, one is written (offline loading by repo id keeps working).
    cache2 = tempdir("hf-fetch-cache2-")
    with HubSim(repo.repos_json) as sim:
        check(hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", cache2).rc == 0, "fetch")
    refs2 = os.path.join(cache2, "models--org--model", "refs")
    check(not os.path.exists(refs2) or os.listdir(refs2) == [], f"refs/main written for an older commit: {refs2}")
    r = hf_fetch("--manifest", repo.manifest, "--cache-dir", cache2, "--offline")
    check(r.rc == 0 and os.listdir(refs2) == ["main"], f"offline with no refs/main: {r} {os.listdir(refs2)}")


def test_interrupted_fetch_leaves_what_scan_cache_dir_counts():
    files = {"config.json": b"{}\n", "big.gguf": blob(8 << 20, "big")}
    repo = Repo(files, lfs={"big.gguf"})
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 1 << 20, "times": -1}])
        p = subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env())
        blobs = os.path.join(repo.repo_dir(), "blobs")
        big_partial = os.path.join(blobs, sha256(files["big.gguf"]) + ".provkit-partial.incomplete")
        wait_for(lambda: os.path.exists(big_partial) and os.path.getsize(big_partial) > 0, "the big file's partial")
        p.kill()
        p.wait()
    # huggingface_hub's scan_cache_dir: repos are the snapshots/ folders; incomplete files are */blobs/*.incomplete.
    check(os.path.isdir(repo.snapshot()), "no snapshots/<commit>/ after an interrupted fetch")
    incomplete = [n for n in os.listdir(blobs) if n.endswith(".incomplete")]
    check(sha256(files["big.gguf"]) + ".provkit-partial.incomplete" in incomplete, f"blobs: {os.listdir(blobs)}")
    with open(os.path.join(repo.cache, "CACHEDIR.TAG")) as f:
        check(f.read().startswith(TAG), "CACHEDIR.TAG is not huggingface_hub's")


def test_cachedir_tag_in_local_dir():
    repo = gguf_repo()
    local = tempdir("hf-fetch-local-")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--local-dir", local, "--include", "*.json")
    check(r.rc == 0, f"local dir: {r}")
    with open(os.path.join(local, ".cache", "huggingface", "CACHEDIR.TAG")) as f:
        check(f.read().startswith(TAG), "no CACHEDIR.TAG in .cache/huggingface")
    check(not os.path.exists(os.path.join(local, "CACHEDIR.TAG")), "CACHEDIR.TAG among the repo's files")


# ---- 5: --progress lines, SIGTERM / SIGINT ----------------------------------------------------------

def test_progress_lines_and_sigterm_summary():
    files = {"config.json": b"{}\n", "big.gguf": blob(8 << 20, "big")}
    repo = Repo(files, lfs={"big.gguf"})
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        with HubSim(repo.repos_json) as sim:
            sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 1 << 20, "times": -1}])
            p = subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir",
                                  repo.cache, "--json", "--progress", "lines", "--progress-interval", "1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(), text=True)
            time.sleep(3)
            p.send_signal(sig)
            out, err = p.communicate(timeout=30)
        check(p.returncode == code, f"{sig.name}: exit {p.returncode}, not {code}\n{out}\n{err}")
        lines = [x for x in err.splitlines() if x.startswith("hf-fetch: ") and " files, " in x]
        check(len(lines) >= 2 and "ETA" in lines[-1] and "/s" in lines[-1], f"progress lines: {err}")
        summary = json_lines(out)[-1]
        check(summary["event"] == "summary" and summary["exit_code"] == code and summary["reason"] == "interrupted"
              and summary["signal"] == sig.name, f"summary: {summary}")
        partial = repo.blob("big.gguf") + ".provkit-partial.incomplete"
        check(os.path.exists(partial), "the partial was not kept")
    # The next run resumes it.
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
    check(r.rc == 0 and "RESUME" in r.out, f"no resume after the signal: {r}")
    # Plain text on a pipe: the summary sentence.
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 1 << 20, "times": -1}])
        os.remove(repo.blob("big.gguf"))
        p = subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(), text=True)
        time.sleep(1.5)
        p.terminate()
        out, err = p.communicate(timeout=30)
    check(p.returncode == 143 and "interrupted by SIGTERM" in err and "resumes them" in err, f"plain: {out}\n{err}")


if __name__ == "__main__":
    main()
