"""Issue 20, the file system: a cache shared by several users or jobs, with links, FIFOs, device nodes and
oversized files planted where hf-fetch reads and writes (docs/reliability.md, "The file-system boundary").
Nothing may be written outside the cache, nothing may hang, and nothing unverified may be published. Also
issue 21's stamps: keyed on the file, not on the cache's spelling or its ctime; at most one .bad- copy.

Run one: python3 test_fs_boundary.py test_planted_partial_link_is_not_followed   (ctest runs each alone)
"""

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, tempdir  # noqa: E402
from hf_fixtures import HF_FETCH, Repo, blob, check_correct_or_absent, clean_env, hf_fetch, sha256  # noqa: E402

BIG = "big.safetensors"
CONFIG = b'{"model_type": "llama"}\n'


def repo_with_big(size=1 << 20, sub=False):
    files = {"config.json": CONFIG, BIG: blob(size, "big")}
    if sub:
        files["sub/tokenizer.json"] = b'{"version": "1.0"}\n'
    return Repo(files, lfs={BIG})


def fetch(repo, sim, *extra, cache=None, timeout=60):
    return hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", cache or repo.cache,
                    *extra, timeout=timeout)


def offline(repo, *extra, cache=None, timeout=30):
    return hf_fetch("--manifest", repo.manifest, "--offline", "--cache-dir", cache or repo.cache, *extra,
                    timeout=timeout)


def events(r):
    return [json.loads(line) for line in r.out.splitlines() if line.startswith("{")]


def stamp_of(repo, path):
    return os.path.join(repo.repo_dir(), ".provkit", repo.sha, "verified", path + ".stamp")


def outside_dir():
    d = tempdir("hf-fetch-outside-")
    victim = os.path.join(d, "victim")
    with open(victim, "wb") as f:
        f.write(b"not the cache's to touch\n")
    return d, victim


def untouched(victim_dir, victim):
    with open(victim, "rb") as f:
        check(f.read() == b"not the cache's to touch\n", f"{victim} was written through a planted link")
    names = sorted(os.listdir(victim_dir))
    check(names == ["victim"], f"files were created outside the cache: {names}")


def wait_for(cond, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not cond():
        check(time.monotonic() < deadline, f"timed out waiting for {what}")
        time.sleep(0.01)


# ---- links planted where hf-fetch writes ------------------------------------------------------------------

def test_planted_partial_link_is_not_followed():
    repo = repo_with_big()
    d, victim = outside_dir()
    os.makedirs(os.path.dirname(repo.blob(BIG)), exist_ok=True)
    os.symlink(victim, repo.blob(BIG) + ".provkit-partial.incomplete")
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
    untouched(d, victim)
    check(not os.path.islink(repo.blob(BIG)), f"the published blob is a link: {os.path.realpath(repo.blob(BIG))}")
    check(r.rc != 0 and "symbolic link" in r.all, f"the planted link should be refused, and said: {r}")
    check_correct_or_absent(repo)


def test_planted_lock_link_creates_nothing_outside():
    repo = repo_with_big()
    d, victim = outside_dir()
    locks = os.path.join(repo.cache, ".locks", "models--org--model")
    os.makedirs(locks)
    os.symlink(os.path.join(d, "created-by-hf-fetch"), os.path.join(locks, sha256(repo.files[BIG]) + ".lock"))
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
    untouched(d, victim)
    check(r.rc != 0 and "symbolic link" in r.all, f"the planted lock link should be refused, and said: {r}")
    check_correct_or_absent(repo)


def test_planted_snapshot_directory_link_is_not_followed():
    repo = repo_with_big(sub=True)
    d, victim = outside_dir()
    os.makedirs(repo.snapshot())
    os.symlink(d, repo.snapshot("sub"))
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
    untouched(d, victim)
    check(r.rc != 0 and "symbolic link" in r.all, f"the planted directory link should be refused, and said: {r}")


def test_planted_stamp_directory_link_is_not_followed():
    repo = repo_with_big(sub=True)
    d, victim = outside_dir()
    verified = os.path.dirname(stamp_of(repo, "config.json"))
    os.makedirs(verified)
    os.symlink(d, os.path.join(verified, "sub"))
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
    untouched(d, victim)
    # A stamp is an optimisation: one that cannot be written is a warning, and the run succeeds.
    check(r.rc == 0, f"a stamp that cannot be written must not fail the run: {r}")
    check("WARNING" in r.all and "stamp" in r.all, f"the unwritten stamp should be a warning: {r}")


def test_local_dir_directory_link_is_not_followed():
    repo = repo_with_big(sub=True)
    d, victim = outside_dir()
    local = os.path.join(repo.tmp, "local")
    os.makedirs(local)
    os.symlink(d, os.path.join(local, "sub"))
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--local-dir", local)
    untouched(d, victim)
    check(r.rc != 0 and "symbolic link" in r.all, f"the planted directory link should be refused, and said: {r}")


def test_local_dir_state_directory_link_is_not_followed():
    repo = repo_with_big()
    d, victim = outside_dir()
    local = os.path.join(repo.tmp, "local")
    os.makedirs(os.path.join(local, ".cache"))
    os.symlink(d, os.path.join(local, ".cache", "huggingface"))  # partials, locks, metadata, stamps all below it
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--local-dir", local)
    untouched(d, victim)
    check(r.rc != 0 and "symbolic link" in r.all, f"the planted state link should be refused, and said: {r}")


def test_bytes_renamed_onto_the_partial_are_never_published():
    repo = repo_with_big(size=4 << 20)
    partial = repo.blob(BIG) + ".provkit-partial.incomplete"
    forged = os.path.join(repo.tmp, "forged")
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 2 << 20, "times": -1}])
        p = subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache,
                              "--connections", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=clean_env())
        wait_for(lambda: os.path.exists(partial) and os.path.getsize(partial) > 0, "the partial file")
        # Someone with write access to the cache swaps in other bytes under the partial's name.
        with open(forged, "wb") as f:
            f.write(b"\0" * len(repo.files[BIG]))
        os.rename(forged, partial)
        out, err = p.communicate(timeout=60)
    check(p.returncode != 0, f"the run must fail, not publish what it did not hash: {out}\n{err}")
    check("replaced" in out + err, f"the sentence should say the partial file was replaced: {out}\n{err}")
    check_correct_or_absent(repo)


# ---- FIFOs, device nodes and oversized files where hf-fetch reads --------------------------------------------

def test_fifo_as_a_verified_stamp_never_hangs():
    repo = repo_with_big()
    with HubSim(repo.repos_json) as sim:
        check(fetch(repo, sim).rc == 0, "the first fetch failed")
    stamp = stamp_of(repo, BIG)
    os.unlink(stamp)
    os.mkfifo(stamp)
    r = offline(repo, "--json", timeout=20)
    check(r.rc == 0, f"a FIFO as a stamp must count as no stamp: {r}")
    check(stat.S_ISREG(os.lstat(stamp).st_mode), "the FIFO was not replaced by a stamp")


def test_fifo_as_refs_main_never_hangs():
    repo = repo_with_big()
    with HubSim(repo.repos_json) as sim:
        check(fetch(repo, sim).rc == 0, "the first fetch failed")
        ref = os.path.join(repo.repo_dir(), "refs", "main")
        os.unlink(ref)
        os.mkfifo(ref)
        r = fetch(repo, sim, timeout=20)
    check(r.rc == 0, f"a FIFO as refs/main must be replaced, never read: {r}")
    with open(ref) as f:
        check(f.read() == repo.sha, "refs/main does not name the commit")


def test_ranges_sidecar_linked_to_dev_zero_is_unreadable_not_endless():
    repo = repo_with_big(size=40 << 20)  # split into ranges: it has a sidecar
    partial = repo.blob(BIG) + ".provkit-partial.incomplete"
    os.makedirs(os.path.dirname(partial), exist_ok=True)
    with open(partial, "wb") as f:
        f.write(repo.files[BIG][: 1 << 20])
    os.symlink("/dev/zero", partial + ".ranges")
    # 2 GiB of address space: the old unbounded read dies of bad_alloc here instead of eating the machine.
    limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # noqa: E731
    with HubSim(repo.repos_json) as sim:
        p = subprocess.run([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache],
                           capture_output=True, text=True, env=clean_env(), timeout=60, preexec_fn=limit)
    check(p.returncode == 0, f"an unreadable sidecar means starting over, not failing: {p.stdout}\n{p.stderr}")
    check("RESTART" in p.stdout and "range record is unreadable" in p.stdout, f"the restart should be said: {p.stdout}")
    check_correct_or_absent(repo)
    check(not os.path.lexists(partial + ".ranges"), "the planted sidecar link is still there")


def test_wrong_file_in_place_that_is_a_fifo_is_moved_aside():
    repo = repo_with_big()
    os.makedirs(os.path.dirname(repo.blob(BIG)), exist_ok=True)
    os.mkfifo(repo.blob(BIG))
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim, timeout=30)
    check(r.rc == 0, f"a FIFO where the blob should be is no blob: {r}")
    check_correct_or_absent(repo)


# ---- two runs, one wrong copy ----------------------------------------------------------------------------------

def test_two_runs_with_a_wrong_copy_in_place_both_succeed():
    repo = repo_with_big(size=8 << 20)
    for trial in range(3):
        shutil.rmtree(repo.cache, ignore_errors=True)
        os.makedirs(os.path.dirname(repo.blob(BIG)))
        with open(repo.blob(BIG), "wb") as f:
            f.write(b"\1" * len(repo.files[BIG]))  # the right size, the wrong bytes
        with HubSim(repo.repos_json) as sim:
            runs = [subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir",
                                      repo.cache], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=clean_env()) for _ in range(2)]
            outs = [p.communicate(timeout=60) for p in runs]
        for p, (out, err) in zip(runs, outs):
            check(p.returncode == 0, f"trial {trial}: a run failed: rc={p.returncode}\n{out}\n{err}")
        check_correct_or_absent(repo)
        bad = [n for n in os.listdir(os.path.dirname(repo.blob(BIG))) if ".bad-" in n]
        check(bad == [], f"trial {trial}: rejected copies stay after a good one is published: {bad}")


# ---- stamps that mean what they say (issue 21 item 7) ---------------------------------------------------------

def test_stamps_survive_another_spelling_of_the_cache():
    files = {"model.gguf.part1": blob(300_000, "p1"), "model.gguf.part2": blob(200_000, "p2")}
    repo = Repo(files, lfs=set(files))
    whole = files["model.gguf.part1"] + files["model.gguf.part2"]
    manifest = repo.write_manifest(
        [{"path": p, "size": len(d), "sha256": sha256(d)} for p, d in files.items()], name="assemble.yaml",
        assemble=[{"output": "model.gguf", "parts": list(files), "sha256": sha256(whole)}])
    with HubSim(repo.repos_json) as sim:
        first = hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache)
    check(first.rc == 0, f"the first fetch failed: {first}")
    spelled = os.path.join(repo.tmp, ".", "cache", "..", "cache")
    relative = os.path.relpath(repo.cache)
    for cache in (spelled, relative):
        r = hf_fetch("--manifest", manifest, "--offline", "--cache-dir", cache, "--json")
        check(r.rc == 0, f"offline rerun with {cache}: {r}")
        by = {e["path"]: e.get("verified_by") for e in events(r) if e.get("event") == "file"}
        check(set(by.values()) == {"stamp"}, f"with {cache} the files were hashed again: {by}")
        check("parts unchanged since the last assembly" in r.out or
              any(e.get("event") == "assemble" and "unchanged" in json.dumps(e) for e in events(r)),
              f"with {cache} the assembly was done again: {r}")


def test_mirror_export_keeps_the_seed_stamps():
    repo = repo_with_big()
    with HubSim(repo.repos_json) as sim:
        check(fetch(repo, sim).rc == 0, "the first fetch failed")
    to = tempdir("hf-fetch-mirror-")
    shutil.rmtree(to)
    x = hf_fetch("mirror", "export", "--manifest", repo.manifest, "--cache-dir", repo.cache, "--to", to)
    check(x.rc == 0, f"mirror export failed: {x}")
    r = offline(repo, "--json")
    by = {e["path"]: e.get("verified_by") for e in events(r) if e.get("event") == "file"}
    check(r.rc == 0 and set(by.values()) == {"stamp"}, f"the export voided the seed's stamps: {by} {r}")


def test_one_bad_copy_per_blob_removed_once_a_good_one_is_published():
    repo = repo_with_big()
    blobs = os.path.dirname(repo.blob(BIG))
    with HubSim(repo.repos_json) as sim:
        for n in range(2):  # two wrong downloads: the second replaces the first's copy
            sim.set_faults([{"kind": "wrong_bytes", "origin": "cdn", "at": 1000 + n, "times": 1}])
            r = fetch(repo, sim)
            check(r.rc == 1, f"wrong bytes must fail the file: {r}")
        bad = [n for n in os.listdir(blobs) if ".bad-" in n]
        check(len(bad) == 1, f"one .bad- copy per blob at most: {bad}")
        sim.set_faults([])
        check(fetch(repo, sim).rc == 0, "the good retry failed")
    bad = [n for n in os.listdir(blobs) if ".bad-" in n]
    check(bad == [], f"the .bad- copy stays after a good retry: {bad}")
    check_correct_or_absent(repo)


# ---- a read-only cache (issue 21 item 9) -------------------------------------------------------------------------

def test_read_only_cache_verifies_offline_as_another_user():
    if not shutil.which("setpriv") or os.getuid() != 0:
        return  # needs root to become another user (CI runs as root)
    repo = repo_with_big()
    with HubSim(repo.repos_json) as sim:
        check(fetch(repo, sim).rc == 0, "the first fetch failed")
    for path in (BIG, "config.json"):  # no stamps: the other user must hash, and cannot write one
        os.unlink(stamp_of(repo, path))
    for root, dirs, names in os.walk(repo.tmp):
        for n in dirs + names:
            p = os.path.join(root, n)
            if not os.path.islink(p):
                os.chmod(p, 0o555 if os.path.isdir(p) else 0o444)
    os.chmod(repo.tmp, 0o555)
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", HF_FETCH, "--manifest",
                        repo.manifest, "--offline", "--cache-dir", repo.cache, "--json"], capture_output=True,
                       text=True, env=clean_env(HF_HOME="/nonexistent"), timeout=60)
    os.chmod(repo.tmp, 0o755)
    check(r.returncode == 0, f"a read-only cache must verify offline: {r.stdout}\n{r.stderr}")
    ev = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    check(any(e.get("event") == "warning" for e in ev), f"the unwritten stamps should be warnings: {r.stdout}")


if __name__ == "__main__":
    main()
