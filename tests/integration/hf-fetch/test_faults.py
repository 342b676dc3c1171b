"""The fault matrix of issue 6 rows that test_hf_fetch.py does not already cover (docs/reliability.md
lists every row and its test). Each test ends with check_correct_or_absent: every file correct at its final
path or absent from it.

Run one: python3 test_faults.py test_two_clients_at_once   (ctest runs each as its own test)
"""

import contextlib
import os
import sys
import signal
import subprocess
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, tempdir  # noqa: E402
from hf_fixtures import HF_FETCH, Repo, blob, check_correct_or_absent, clean_env, header, hf_fetch, sha256  # noqa: E402

BIG = "big.safetensors"


def repo_with_big(size=2 << 20):
    files = {"config.json": b'{"model_type": "llama"}\n', "tokenizer.json": b'{"version": "1.0"}\n',
             BIG: blob(size, "big")}
    return Repo(files, lfs={BIG})


def fetch(repo, sim, *extra, env=None, cache=None):
    return hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", cache or repo.cache, *extra,
                    env=env)


def start(repo, sim, *extra, cache=None):
    return subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir",
                             cache or repo.cache, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=clean_env())


def wait_for(cond, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not cond():
        check(time.monotonic() < deadline, f"timed out waiting for {what}")
        time.sleep(0.02)


@contextlib.contextmanager
def tmpfs(size, options=""):
    """A small tmpfs (root only), unmounted however the test ends."""
    d = tempdir("hf-fetch-tmpfs-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}" + (f",{options}" if options else ""), "tmpfs", d],
                   check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", d], check=False)


def big_bytes_sent(repo, reqs):
    key = sha256(repo.files[BIG])
    return sum(q.get("bytes_sent") or 0 for q in reqs if q["origin"] == "cdn" and key in q["path"])


# ---- concurrency ----------------------------------------------------------------------------

def test_two_clients_at_once():
    repo = repo_with_big()
    size = len(repo.files[BIG])
    with HubSim(repo.repos_json) as sim:
        # Slow enough that the two runs overlap on the big file.
        sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 2 << 20, "times": -1}])
        a = start(repo, sim)
        b = start(repo, sim)
        outs = [p.communicate(timeout=60) for p in (a, b)]
        reqs = sim.requests()
    for p, (out, err) in zip((a, b), outs):
        check(p.returncode == 0, f"a client failed: rc={p.returncode}\n{out}\n{err}")
    check_correct_or_absent(repo)
    for path in repo.files:
        check(os.path.exists(repo.snapshot(path)), f"{path} missing after both runs")
    # The lock makes the second client wait and find the blob in place, not fetch it a second time
    # into the same partial file.
    sent = big_bytes_sent(repo, reqs)
    check(sent <= size + (512 << 10), f"the big blob was sent {sent} bytes for {size}: both clients fetched it")
    lock = os.path.join(repo.cache, ".locks", "models--org--model", sha256(repo.files[BIG]) + ".lock")
    check(os.path.isfile(lock), f"no lock file at huggingface_hub's place {lock}")


def test_lock_left_by_killed_process_does_not_block():
    repo = repo_with_big()
    partial = repo.blob(BIG) + ".provkit-partial.incomplete"
    lock = os.path.join(repo.cache, ".locks", "models--org--model", sha256(repo.files[BIG]) + ".lock")
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 1 << 20, "times": -1}])
        p = start(repo, sim)
        try:
            wait_for(lambda: os.path.exists(partial) and os.path.getsize(partial) > 0, "the first run to write")
        finally:
            p.send_signal(signal.SIGKILL)
            p.communicate()
        check(os.path.isfile(lock), "the killed run left no lock file (nothing tested)")
        sim.set_faults([])
        t = time.monotonic()
        r = fetch(repo, sim)
        took = time.monotonic() - t
    check(r.rc == 0, f"rerun after SIGKILL failed: {r}")
    check(took < 20, f"the rerun waited {took:.1f} s on the dead process's lock")
    check("RESUME " + BIG in r.out, f"the rerun did not resume the killed run's partial file: {r}")
    check_correct_or_absent(repo)


# ---- broken bodies --------------------------------------------------------------------------

def test_connection_closed_mid_body_at_several_offsets():
    repo = repo_with_big(300_000)
    for at, reset in ((1, False), (65_536, True), (299_999, False)):
        cache = tempdir("hf-fetch-cache-")
        with HubSim(repo.repos_json) as sim:
            sim.set_faults([{"kind": "close_mid_body", "origin": "cdn", "at": at, "reset": reset}])
            r = fetch(repo, sim, cache=cache)
            gets = [q for q in sim.requests(origin="cdn") if q["method"] == "GET"]
        check(r.rc == 0, f"close at {at} (reset={reset}): {r}")
        check(len(gets) >= 2, f"close at {at}: the fault never fired: {gets}")
        with open(os.path.join(cache, "models--org--model", "blobs", sha256(repo.files[BIG])), "rb") as f:
            check(f.read() == repo.files[BIG], f"close at {at} (reset={reset}): wrong file")


def test_truncated_body_with_correct_content_length():
    repo = repo_with_big(300_000)
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "truncate", "origin": "cdn", "at": 120_000}])
        r = fetch(repo, sim)
        gets = [q for q in sim.requests(origin="cdn") if q["method"] == "GET"]
    check(r.rc == 0, f"fetch failed: {r}")
    ranges = [header(q, "Range") for q in gets]
    check(ranges[1:] == ["bytes=120000-299999"], f"expected one resumed range from 120000: {ranges}")
    check_correct_or_absent(repo)
    check(os.path.exists(repo.snapshot(BIG)), "the file is not in place")


def test_stale_partial_larger_than_blob_starts_over():
    repo = repo_with_big(300_000)
    partial = repo.blob(BIG) + ".provkit-partial.incomplete"
    os.makedirs(os.path.dirname(partial))
    with open(partial, "wb") as f:
        f.write(blob(400_000, "stale"))
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
        gets = [q for q in sim.requests(origin="cdn") if q["method"] == "GET"]
    check(r.rc == 0, f"fetch failed: {r}")
    check([q["status"] for q in gets] == [206] and header(gets[0], "Range") == "bytes=0-299999",
          f"expected one GET from byte 0, never a range past the end (416): {[(q['status'], header(q, 'Range')) for q in gets]}")
    check("RESTART " + BIG in r.out, f"no RESTART line: {r}")
    check_correct_or_absent(repo)


def test_cdn_url_expiry_mid_file_resolves_again_and_carries_on():
    repo = repo_with_big(2 << 20)
    at = 1 << 20
    partial = repo.blob(BIG) + ".provkit-partial.incomplete"
    with HubSim(repo.repos_json) as sim:
        # The CDN stops sending at 1 MiB (the client's stall timeout ends that request); by then the
        # signed URL has "expired": the next CDN request gets 403.
        sim.set_faults([{"kind": "stall", "origin": "cdn", "at": at, "seconds": 10}])
        p = start(repo, sim, "--stall-timeout", "1")
        try:
            wait_for(lambda: os.path.exists(partial) and os.path.getsize(partial) >= at, "the first MiB")
            sim.set_faults([{"kind": "expire_url", "origin": "cdn"}])
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        reqs = sim.requests()
    check(p.returncode == 0, f"fetch failed: rc={p.returncode}\n{out}\n{err}")
    cdn = [(q["status"], header(q, "Range")) for q in reqs if q["origin"] == "cdn" and q["method"] == "GET"]
    end = (2 << 20) - 1
    check(cdn == [(206, f"bytes=0-{end}"), (403, f"bytes={at}-{end}"), (206, f"bytes={at}-{end}")],
          f"expected a stall, a 403 and a resume from {at}: {cdn}")
    resolves_big = [q for q in reqs if q["origin"] == "hub" and q["path"].endswith("/" + BIG)]
    # Once at the start; the retry after the stall reuses the CDN URL it led to; once more after the 403.
    check(len(resolves_big) == 2, f"the file was not resolved again through the Hub: {len(resolves_big)} resolves")
    size = len(repo.files[BIG])
    sent = big_bytes_sent(repo, reqs)
    check(sent <= size + (512 << 10), f"{sent} bytes sent for a {size}-byte file: restarted from zero?")
    check("resolving it again" in out, f"no RETRY line for the expiry: {out}")
    check_correct_or_absent(repo)
    check(os.path.exists(repo.snapshot(BIG)), "the file is not in place")


# ---- target directory ----------------------------------------------------------------------

def test_full_target_dir_stops_clearly_and_resumes():
    repo = repo_with_big(3 << 20)
    with tmpfs("8m") as cache:
        with HubSim(repo.repos_json) as sim:
            # The disk gate lets the run start (there is room); the disk fills up under it (another writer).
            sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 1 << 20, "times": -1}])
            p = start(repo, sim, cache=cache)
            partial = os.path.join(cache, "models--org--model", "blobs", sha256(repo.files[BIG]) + ".provkit-partial.incomplete")
            wait_for(lambda: os.path.exists(partial) and os.path.getsize(partial) > 0, "the partial")
            st = os.statvfs(cache)
            with open(os.path.join(cache, "filler"), "wb") as f:
                try:
                    f.write(b"\0" * (st.f_bavail * st.f_frsize))
                except OSError:
                    pass
            out, err = p.communicate(timeout=60)
            sim.set_faults([])
            r1 = types.SimpleNamespace(rc=p.returncode, out=out, err=err)
            check(r1.rc != 0, f"a run into a full disk succeeded: {r1}")
            check(partial in r1.err and "no space left" in r1.err and "more bytes are needed" in r1.err,
                  f"no clear sentence naming the path and the bytes needed: {r1}")
            kept = os.path.getsize(partial)
            check(0 < kept < len(repo.files[BIG]), f"partial holds {kept} bytes")
            small = Repo.__new__(Repo)  # the finished small files are intact at their blob paths
            small.__dict__.update(repo.__dict__, cache=cache)
            for path in ("config.json", "tokenizer.json"):
                with open(small.blob(path), "rb") as f:
                    check(f.read() == repo.files[path], f"finished file {path} damaged")
            check(not os.path.exists(small.blob(BIG)), "an unfinished blob reached its final path")
            # Space is back: the rerun resumes and fetches only what is missing.
            os.remove(os.path.join(cache, "filler"))
            sim.clear_requests()
            r2 = fetch(repo, sim, cache=cache)
            sent = big_bytes_sent(repo, sim.requests())
            check(r2.rc == 0, f"rerun with space failed: {r2}")
            check(sent <= len(repo.files[BIG]) - kept + (512 << 10), f"rerun fetched {sent} bytes, {kept} were kept")
            check_correct_or_absent(small)
            check(os.path.exists(small.snapshot(BIG)), "file not in place after the rerun")


def test_full_disk_shows_at_the_start_of_a_split_file():
    # A split file is preallocated: a disk without room for it stops the run before its bytes are fetched.
    repo = repo_with_big(3 << 20)
    split = ("--connections", "4", "--min-split-size", "256K")
    with tmpfs("2m") as cache:
        with HubSim(repo.repos_json) as sim:
            r1 = fetch(repo, sim, *split, cache=cache)
            sent = big_bytes_sent(repo, sim.requests())
            check(r1.rc == 1, f"expected exit 1 for a full disk: {r1}")
            partial = os.path.join(cache, "models--org--model", "blobs", sha256(repo.files[BIG]) + ".provkit-partial.incomplete")
            # Since issue 21 the disk gate refuses before the first byte, naming the file system and the bytes.
            check("not enough space on the file system of" in r1.err and "nothing was downloaded" in r1.err,
                  f"no clear sentence naming the path and the bytes needed: {r1}")
            check(sent == 0, f"{sent} bytes of the big file were fetched into a disk without room for it")
            small = Repo.__new__(Repo)
            small.__dict__.update(repo.__dict__, cache=cache)
            check(not os.path.exists(small.blob(BIG)), "an unfinished blob reached its final path")
            subprocess.run(["mount", "-o", "remount,size=16m", cache], check=True)
            r2 = fetch(repo, sim, *split, cache=cache)
            check(r2.rc == 0, f"rerun with space failed: {r2}")
            check("in 12 ranges" in r2.out, f"the rerun did not split the file: {r2.out}")
            check_correct_or_absent(small)
            check(os.path.exists(small.snapshot(BIG)), "file not in place after the rerun")
            check(not os.path.exists(partial + ".ranges"), "the range sidecar outlived its file")


def test_read_only_target_dir_fails_clearly():
    repo = repo_with_big(100_000)
    with tmpfs("1m", "ro") as cache:
        with HubSim(repo.repos_json) as sim:
            r = fetch(repo, sim, cache=cache)
            gets = [q for q in sim.requests(origin="cdn") if q["method"] == "GET"]
    check(r.rc != 0, f"a run into a read-only directory succeeded: {r}")
    check(cache in r.err and "Read-only file system" in r.err, f"no sentence naming the path and the cause: {r}")
    check(not gets, "bytes were fetched although nothing can be written")


# ---- rate limits --------------------------------------------------------------------------

def rate_limit_holds_back_the_whole_run(fault):
    files = {f"config-{i}.json": b'{"n": %d}\n' % i for i in range(12)}
    repo = Repo(files)
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([dict(fault, kind="rate_limit", path_contains="config-1.json", times=1)])
        r = fetch(repo, sim, "--jobs", "3")
        reqs = [q for q in sim.requests() if "/resolve/" in q["path"]]
    check(r.rc == 0, f"fetch failed: {r}")
    limited = [q for q in reqs if q["status"] == 429]
    check(len(limited) == 1, f"the rate limit did not fire: {[q['status'] for q in reqs]}")
    t = limited[0]["time"]
    # Requests already on their way when the 429 was sent are fine; after that, none for 2 s, from any connection.
    early = [q["path"].rsplit("/", 1)[1] for q in reqs if t + 0.2 < q["time"] < t + 1.9]
    check(not early, f"requests went on during the rate limit's 2 s: {early}")
    check(len(reqs) == len(files) + 1, f"expected one retry only: {len(reqs)} resolves for {len(files)} files")
    check_correct_or_absent(repo)


def test_429_retry_after_slows_the_whole_run():
    rate_limit_holds_back_the_whole_run({"retry_after": 2})


def test_429_ratelimit_header_slows_the_whole_run():
    rate_limit_holds_back_the_whole_run({"ratelimit": '"resolvers";r=0;t=2',
                                         "ratelimit_policy": '"fixed window";"resolvers";q=3000;w=300'})


if __name__ == "__main__":
    main()
