"""hf-fetch against the Hub simulator: --verify-only, manifest create and assembly, one behaviour per test function.

Run one: python3 test_verify_assembly.py TEST_NAME   (ctest runs each as its own test)
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main  # noqa: E402
from hf_fixtures import Repo, blob, file_entries, git_oid, hf_fetch, sha256  # noqa: E402
from hf_small import closed_port, fetch, small_repo  # noqa: E402


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


def test_damaged_assembly_stamp_is_stale_not_an_internal_error():
    """Issue 41: a damaged assembly stamp (its result's size past 2^64, cut short, or not a number) ended every
    later run in `internal error: stoull` (exit 3) until deleted by hand. It vouches for nothing: the output
    is assembled (verified) again and the stamp rewritten."""
    repo, parts, whole = assembly_repo()
    manifest = repo.write_manifest(file_entries(repo.files, repo.lfs), "asm.yaml",
                                   assemble=[{"output": "whole.gguf", "parts": parts, "sha256": sha256(whole)}])
    stamp = os.path.join(repo.repo_dir(), ".provkit", repo.sha, "assemble", "whole.gguf.stamp")
    with HubSim(repo.repos_json) as sim:
        base = ["--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache]
        check(hf_fetch(*base).rc == 0, "first fetch failed")
        with open(stamp) as f:
            good = f.read()
        head = good[:good.index("result ")]
        for damaged in (f"result {sha256(whole)} 99999999999999999999999\n", f"result {sha256(whole)} \n",
                        f"result {sha256(whole)} eleven\n", f"result {sha256(whole)[:50]}"):
            with open(stamp, "w") as f:
                f.write(head + damaged)
            r = hf_fetch(*base, "--json")
            check(r.rc == 0 and "internal error" not in r.out + r.err, f"{damaged!r}: {r}")
            check("assembled from 3 parts" in r.out, f"{damaged!r}: the output was not assembled again: {r}")
            with open(stamp) as f:
                check(f.read().endswith(f"result {sha256(whole)} {len(whole)}\n"), f"{damaged!r}: the stamp was not rewritten")
            again = hf_fetch(*base)
            check(again.rc == 0 and "parts unchanged" in again.out, f"{damaged!r}: the rewritten stamp is not trusted: {again}")
            with open(repo.snapshot("whole.gguf"), "rb") as f:
                check(f.read() == whole, "the output is wrong")


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


if __name__ == "__main__":
    main()
