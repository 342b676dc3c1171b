"""hf-fetch against the Hub simulator: downloads: resume, restart, verification, one behaviour per test function.

Run one: python3 test_resume.py TEST_NAME   (ctest runs each as its own test)
"""

import os
import sys
import signal
import subprocess
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main  # noqa: E402
from hf_fixtures import (HF_FETCH, Repo, blob, body_bytes, check_correct_or_absent, clean_env,  # noqa: E402
                         header, sha256)
from hf_small import fetch, small_repo  # noqa: E402


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
        # On this file's body only: the files are fetched side by side, and another that reached byte 100000 first
        # would take the fault instead.
        sim.set_faults([{"kind": "close_mid_body", "origin": "cdn", "at": 100_000, "path_contains": sha256(repo.files[path])}])
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


if __name__ == "__main__":
    main()
