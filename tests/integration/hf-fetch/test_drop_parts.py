"""--drop-parts: once an assembly output verifies against its sha256, the parts it was made from are removed
(the cache: the snapshot link, and the blob when no other link names it; a local dir: the part files), a record
of each stays beside the stamps, and later runs take the parts as dropped, not missing. The disk gate counts
the peak of one assembly, not parts plus every output.

Run one: python3 test_drop_parts.py test_drop_parts_in_the_cache   (ctest runs each as its own test)
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, make_repo, tempdir  # noqa: E402
from hf_fixtures import HF_FETCH, Repo, blob, clean_env, file_entries, hf_fetch, resolves, sha256  # noqa: E402
from test_faults import tmpfs  # noqa: E402

PARTS = ["p/model.gguf.part1of2", "p/model.gguf.part2of2"]


def split_repo(part_sizes=(300_000, 200_000), extra=None):
    files = {"config.json": b'{"model_type": "llama"}\n'}
    for path, n in zip(PARTS, part_sizes):
        files[path] = blob(n, path)
    files.update(extra or {})
    repo = Repo(files, lfs={p for p in files if p != "config.json"})
    whole = b"".join(files[p] for p in PARTS)
    return repo, whole


def assembly_manifest(repo, whole, output="model.gguf", sha=None, name="asm.yaml"):
    return repo.write_manifest(file_entries(repo.files, repo.lfs), name=name,
                               assemble=[{"output": output, "parts": PARTS, "sha256": sha or sha256(whole)}])


def events(r):
    return [json.loads(line) for line in r.out.splitlines() if line.startswith("{")]


def summary(r):
    return events(r)[-1]


def record(repo, part):
    return os.path.join(repo.repo_dir(), ".provkit", repo.sha, "dropped", part + ".stamp")


def test_drop_parts_in_the_cache():
    repo, whole = split_repo()
    manifest = assembly_manifest(repo, whole)
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--drop-parts", "--json")
        check(r.rc == 0, f"fetch with --drop-parts: {r}")
        with open(repo.snapshot("model.gguf"), "rb") as f:
            check(f.read() == whole, "the output is not the parts joined")
        dropped = [e for e in events(r) if e.get("event") == "drop"]
        check(sorted(e["path"] for e in dropped) == PARTS and all(e["status"] == "DROPPED" and
              e["dropped_into"] == "model.gguf" and e["freed_bytes"] >= len(repo.files[e["path"]]) for e in dropped),
              f"drop events: {dropped}")
        s = summary(r)
        check(s["dropped"] == 2 and s["freed_bytes"] == sum(e["freed_bytes"] for e in dropped) and s["assembled"] == 1,
              f"summary: {s}")
        for part in PARTS:
            check(not os.path.lexists(repo.snapshot(part)), f"{part}: the snapshot link is still there")
            check(not os.path.exists(repo.blob(part)), f"{part}: the blob is still there")
            with open(record(repo, part)) as f:
                text = f.read()
            check("output model.gguf" in text and sha256(whole) in text, f"{part}: record {text!r}")
        check(os.path.exists(repo.snapshot("config.json")), "a file that is no part was removed")
        with open(os.path.join(repo.repo_dir(), "refs", "main")) as f:
            check(f.read() == repo.sha, "refs/main was not written")

        # A rerun with --drop-parts: everything in place, no file asked (the tree listing as any rerun).
        sim.clear_requests()
        again = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--drop-parts",
                         "--json")
        reqs = sim.requests()
        check(again.rc == 0, f"rerun: {again}")
        check(not resolves(reqs), f"the rerun asked for files: {resolves(reqs)}")
        parts = {e["path"]: e for e in events(again) if e.get("event") == "file"}
        check(all(parts[p]["status"] == "OK" and parts[p]["dropped_into"] == "model.gguf" for p in PARTS),
              f"rerun file events: {parts}")
        s = summary(again)
        check(s["downloaded"] == 0 and s["bytes_transferred"] == 0 and s["dropped"] == 0 and s["failed"] == 0, f"{s}")
        asm = [e for e in events(again) if e.get("event") == "assemble"]
        check(asm and asm[0]["status"] == "OK" and asm[0].get("parts_dropped") is True, f"assemble: {asm}")

        # The dry run of that rerun: nothing to fetch, the parts in place as dropped.
        dry = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--drop-parts",
                       "--dry-run", "--json")
        plan = {e["path"]: e for e in events(dry) if e.get("event") == "plan"}
        check(dry.rc == 0 and all(plan[p]["status"] == "IN PLACE" and plan[p]["dropped_into"] == "model.gguf"
                                  for p in PARTS) and plan["model.gguf"]["status"] == "IN PLACE", f"dry run: {dry}")
        check(summary(dry)["to_fetch_bytes"] == 0, f"dry run summary: {summary(dry)}")

    # No server at all: --verify-only and --offline pass, the parts DROPPED, not MISSING.
    v = hf_fetch("--manifest", manifest, "--cache-dir", repo.cache, "--verify-only", "--json")
    check(v.rc == 0, f"--verify-only of a snapshot with dropped parts: {v}")
    status = {e["path"]: e["status"] for e in events(v) if e.get("event") == "verify"}
    check(all(status[p] == "DROPPED" for p in PARTS) and status["model.gguf"] == "OK", f"verify: {status}")
    off = hf_fetch("--manifest", manifest, "--cache-dir", repo.cache, "--offline", "--drop-parts")
    check(off.rc == 0 and "already in place" in off.out, f"offline rerun: {off}")

    # The output spoilt: its parts are wanted again, fetched, assembled, verified and dropped again.
    os.chmod(repo.snapshot("model.gguf"), 0o644)
    with open(repo.snapshot("model.gguf"), "r+b") as f:
        f.seek(1000)
        f.write(b"\xff" * 16)
    bad = hf_fetch("--manifest", manifest, "--cache-dir", repo.cache, "--verify-only")
    check(bad.rc == 1, f"--verify-only did not see the spoilt output: {bad}")
    with HubSim(repo.repos_json) as sim:
        heal = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--drop-parts",
                        "--json")
        reqs = sim.requests()
    check(heal.rc == 0 and summary(heal)["downloaded"] == 2 and summary(heal)["dropped"] == 2, f"heal: {heal}")
    check(len([q for q in resolves(reqs) if q["origin"] == "hub"]) == 2, f"heal requests: {resolves(reqs)}")
    with open(repo.snapshot("model.gguf"), "rb") as f:
        check(f.read() == whole, "the output was not assembled again")


def test_a_rerun_with_nothing_to_do_says_so():
    # Issue 43 item 11: a no-op --drop-parts rerun said "fetching 3 files" and "1 assembled", and the parts'
    # folder stayed behind empty.
    repo, whole = split_repo()
    manifest = assembly_manifest(repo, whole)
    local = tempdir("hf-fetch-local-")
    with HubSim(repo.repos_json) as sim:
        for where in (["--cache-dir", repo.cache], ["--local-dir", local]):
            first = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, *where, "--drop-parts")
            check(first.rc == 0 and "1 assembled" in first.out and "2 parts dropped" in first.out, f"first: {first}")
            again = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, *where, "--drop-parts")
            check(again.rc == 0, f"rerun: {again}")
            check("fetching" not in again.out and "assembled" not in again.out.split("\n")[-2],
                  "the rerun says it fetches or assembles", again.out)
            check("checking 1 file in place" in again.out and
                  "all 3 files verified (0 downloaded, 1 already in place, 2 parts dropped earlier, 1 output unchanged) in"
                  in again.out, "the rerun's summary", again.out)
        top = repo.snapshot("model.gguf").rsplit("/", 1)[0]
        check(not os.path.exists(os.path.join(top, "p")), "the cache's snapshot keeps the empty parts folder",
              os.listdir(top))
        check(not os.path.exists(os.path.join(local, "p")), "the local dir keeps the empty parts folder",
              os.listdir(local))


def test_without_the_flag_parts_come_back():
    repo, whole = split_repo()
    manifest = assembly_manifest(repo, whole)
    with HubSim(repo.repos_json) as sim:
        check(hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache,
                       "--drop-parts").rc == 0, "fetch with --drop-parts")
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--json")
    check(r.rc == 0 and summary(r)["downloaded"] == 2, f"a fetch that keeps parts fetches them again: {r}")
    for part in PARTS:
        with open(repo.snapshot(part), "rb") as f:
            check(f.read() == repo.files[part], f"{part}: not back")
        check(not os.path.exists(record(repo, part)), f"{part}: the record stayed once the part was back")
    v = hf_fetch("--manifest", manifest, "--cache-dir", repo.cache, "--verify-only", "--json")
    status = {e["path"]: e["status"] for e in events(v) if e.get("event") == "verify"}
    check(v.rc == 0 and all(status[p] == "OK" for p in PARTS), f"verify: {status}")


def test_an_output_that_fails_keeps_its_parts():
    repo, whole = split_repo()
    manifest = assembly_manifest(repo, whole, sha="0" * 64)
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--drop-parts", "--json")
    check(r.rc == 1, f"a wrong output must fail the run: {r}")
    check(not any(e.get("event") == "drop" for e in events(r)) and summary(r)["dropped"] == 0, f"dropped: {r}")
    for part in PARTS:
        with open(repo.snapshot(part), "rb") as f:
            check(f.read() == repo.files[part], f"{part}: the parts of a failed output must stay")
        check(not os.path.exists(record(repo, part)), f"{part}: a record for a part kept")


def test_a_blob_another_link_names_stays():
    """Two paths with the content of the first part: its snapshot link goes, the blob the other path names stays."""
    first = blob(300_000, PARTS[0])
    repo, whole = split_repo(extra={"copy/first.bin": first})
    manifest = assembly_manifest(repo, whole)
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--drop-parts", "--json")
    check(r.rc == 0, f"fetch: {r}")
    freed = {e["path"]: e["freed_bytes"] for e in events(r) if e.get("event") == "drop"}
    check(freed[PARTS[0]] == 0 and freed[PARTS[1]] >= len(repo.files[PARTS[1]]), f"freed: {freed}")
    check(not os.path.lexists(repo.snapshot(PARTS[0])), "the part's link is still there")
    with open(repo.snapshot("copy/first.bin"), "rb") as f:
        check(f.read() == first, "the other path lost its blob")
    check(not os.path.exists(repo.blob(PARTS[1])), "the second part's blob is still there")


def test_drop_parts_in_a_local_dir():
    repo, whole = split_repo()
    manifest = assembly_manifest(repo, whole)
    local = tempdir("hf-fetch-local-")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--local-dir", local, "--drop-parts", "--json")
        check(r.rc == 0 and summary(r)["dropped"] == 2, f"local dir fetch: {r}")
        for part in PARTS:
            check(not os.path.exists(os.path.join(local, part)), f"{part}: the part file is still there")
            check(not os.path.exists(os.path.join(local, ".cache", "huggingface", "download", part + ".metadata")),
                  f"{part}: its metadata is still there")
            check(os.path.exists(os.path.join(local, ".cache", "huggingface", "provkit", "dropped", part + ".stamp")),
                  f"{part}: no record")
        with open(os.path.join(local, "model.gguf"), "rb") as f:
            check(f.read() == whole, "the output is wrong")
        with open(os.path.join(local, ".cache", "huggingface", "SHA256SUMS")) as f:
            sums = f.read()
        check("model.gguf" in sums and not any(p in sums for p in PARTS), f"SHA256SUMS lists dropped parts:\n{sums}")
        c = subprocess.run(["sha256sum", "-c", ".cache/huggingface/SHA256SUMS"], cwd=local, capture_output=True,
                           text=True)
        check(c.returncode == 0, f"sha256sum -c: {c.stdout}{c.stderr}")
        sim.clear_requests()
        again = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--local-dir", local, "--drop-parts", "--json")
        reqs = sim.requests()
    check(again.rc == 0 and not resolves(reqs) and summary(again)["downloaded"] == 0, f"local rerun: {again}")
    v = hf_fetch("--manifest", manifest, "--local-dir", local, "--verify-only", "--json")
    check(v.rc == 0 and summary(v)["failed"] == 0, f"verify-only of the local dir: {v}")


def test_the_disk_gate_counts_one_assembly_at_its_peak():
    """Two outputs of 4 MiB from 2 x 2 MiB parts each: parts (8 MiB) plus both outputs (8 MiB) do not fit in
    14 MiB, but with --drop-parts the peak is the parts plus one output (12 MiB)."""
    mib = 1 << 20
    files = {"config.json": b"{}\n"}
    for name in ("a", "b"):
        for i in (1, 2):
            files[f"{name}/part{i}"] = blob(2 * mib, f"{name}{i}")
    repo = Repo(files, lfs={p for p in files if p != "config.json"})
    outs = {name: files[f"{name}/part1"] + files[f"{name}/part2"] for name in ("a", "b")}
    manifest = repo.write_manifest(file_entries(files, repo.lfs), name="two.yaml", assemble=[
        {"output": f"{name}.gguf", "parts": [f"{name}/part1", f"{name}/part2"], "sha256": sha256(outs[name])}
        for name in ("a", "b")])
    with tmpfs("14m") as d, HubSim(repo.repos_json) as sim:
        cache = os.path.join(d, "cache")
        base = ["--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", cache, "--json"]
        dry = hf_fetch(*base, "--dry-run", "--drop-parts")
        s = summary(dry)
        parts_bytes = 8 * mib + len(files["config.json"])
        check(s["to_fetch_bytes"] == parts_bytes and s["assembly_bytes"] == 8 * mib and s["drop_parts"] is True
              and s["drop_bytes"] == 8 * mib and s["needed_bytes"] == parts_bytes + 4 * mib, f"dry run: {s}")
        keep = hf_fetch(*base)
        check(keep.rc == 1 and "not enough space" in keep.all, f"without --drop-parts it must not fit: {keep}")
        check(not resolves(sim.requests()), "bytes were asked before the gate refused")
        r = hf_fetch(*base, "--drop-parts")
        check(r.rc == 0 and summary(r)["dropped"] == 4, f"with --drop-parts it fits: {r}")
        for name, data in outs.items():
            with open(os.path.join(cache, "models--org--model", "snapshots", repo.sha, name + ".gguf"), "rb") as f:
                check(f.read() == data, f"{name}.gguf is wrong")


def test_drop_parts_races_another_commit_linking_the_same_blobs():
    """Issue 41: run A drops the parts of commit 1 while run B fetches commit 2, which has the same parts
    (the same blobs), on the same cache. B once exited 0 "verified" with snapshot links to blobs A had just
    removed (about 6 in 40 trials). Now B either has every link resolving to the right bytes, or refuses
    naming the blob that went (a rerun fetches it); A always succeeds. A bounded loop of real runs."""
    repo, whole = split_repo()
    sha2 = make_repo(repo.tmp, repo.repo_id, {**repo.files, "config.json": b'{"model_type": "llama", "v": 2}\n'},
                     lfs=repo.lfs)
    files2 = {**repo.files, "config.json": b'{"model_type": "llama", "v": 2}\n'}
    m1 = assembly_manifest(repo, whole, name="c1.yaml")
    m2 = repo.write_manifest(file_entries(files2, repo.lfs), name="c2.yaml", sha=sha2)
    refused = 0
    with HubSim(repo.repos_json) as sim:
        for trial in range(24):
            cache = tempdir("drop-race-")
            base = ["--endpoint", sim.hub, "--cache-dir", cache, "--json", "--progress", "none"]
            first = hf_fetch("--manifest", m1, *base)
            check(first.rc == 0, f"trial {trial}: the first fetch of commit 1: {first}")
            a = subprocess.Popen([HF_FETCH, "--manifest", m1, *base, "--drop-parts"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=clean_env())
            b = subprocess.Popen([HF_FETCH, "--manifest", m2, *base], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=clean_env())
            a_out, a_err = a.communicate(timeout=120)
            b_out, b_err = b.communicate(timeout=120)
            check(a.returncode == 0, f"trial {trial}: run A (--drop-parts) failed: {a_out}{a_err}")
            snap2 = os.path.join(repo.repo_dir().replace(repo.cache, cache), "snapshots", sha2)
            if b.returncode == 0:
                for path, data in files2.items():
                    link = os.path.join(snap2, path)
                    check(os.path.exists(link), f"trial {trial}: B exited 0 but {path} links to a removed blob "
                                                f"({os.readlink(link) if os.path.islink(link) else 'no link'})")
                    with open(link, "rb") as f:
                        check(f.read() == data, f"trial {trial}: B's {path} is wrong")
            else:
                refused += 1
                check(b.returncode == 1 and "was removed after it was verified" in b_out + b_err,
                      f"trial {trial}: B failed without the clear refusal: rc {b.returncode} {b_out}{b_err}")
                again = hf_fetch("--manifest", m2, *base)
                check(again.rc == 0 and all(os.path.exists(os.path.join(snap2, p)) for p in files2),
                      f"trial {trial}: the rerun of B did not fetch the dropped blobs again: {again}")
    print(f"{refused} of 24 trials: B refused (A dropped first); the others linked correct blobs")


if __name__ == "__main__":
    main()
