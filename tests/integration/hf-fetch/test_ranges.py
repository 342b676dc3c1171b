"""Issue 6: a large file fetched as parallel byte ranges, under faults. A 32 MiB LFS file with
`--connections 4 --min-split-size 1M` is cut into several ranges that go over four connections into one
preallocated partial file, with a sidecar `<partial>.ranges` recording how far each range got.

What is asserted comes from the simulator's request log (which Range each request asked for, its status,
the body bytes it sent, its headers) and from the files on disk, not from hf-fetch's words. Every test ends
with check_correct_or_absent: each file correct at its final path or absent from it.

Run one: python3 test_ranges.py test_ranges_sigkill_at_50_percent_then_resume   (ctest runs each on its own)
"""

import os
import sys
import re
import signal
import subprocess
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main  # noqa: E402
from hf_fixtures import (HF_FETCH, TOKEN, Repo, blob, check_correct_or_absent, clean_env, header, hf_fetch,
                         sha256)  # noqa: E402

BIG = "model.safetensors"
SIZE = 32 << 20
CONNECTIONS = 4
SPLIT = ("--connections", str(CONNECTIONS), "--min-split-size", "1M")
RANGE = 2 << 20  # how hf-fetch cuts SIZE with SPLIT: about four ranges per connection, whole MiBs
RATE = 3 << 19  # bytes per second per request (1.5 MiB/s) while a test needs the file slow
SLOW = 1 << 20  # bytes per second per request (1 MiB/s) around the point where a client is killed
CRAWL = 64 << 10  # bytes per second per request past that point: the file cannot finish before the kill
# How far the sidecar may lag behind what the simulator sent when the client is killed, per connection:
# it is rewritten every 0.25 s (256 KiB of one connection at SLOW), plus twice that for bytes sent but
# still in socket buffers while the client waits for a CPU on a busy machine.
LAG_PER_CONNECTION = 3 << 18  # 768 KiB


def big_repo(**kw):
    files = {"config.json": b'{"model_type": "llama"}\n', BIG: blob(SIZE, "ranges")}
    return Repo(files, lfs={BIG}, **kw)


def key(repo):
    return sha256(repo.files[BIG])


def partial_path(repo):
    return repo.blob(BIG) + ".provkit-partial.incomplete"


def sidecar_path(repo):
    return partial_path(repo) + ".ranges"


def throttle(repo, rate=RATE, times=-1):
    return {"kind": "throttle", "origin": "cdn", "path_contains": key(repo), "bytes_per_second": rate,
            "times": times}


def absorb_first_body(repo):
    """A no-op body fault rule (throttle at 1 TB/s) put before another body fault of the same list: the
    first file request of the blob uses it up, so the next rule hits a later range, never the first."""
    return throttle(repo, rate=1 << 40, times=1)


def start(repo, sim, *extra, env=None):
    return subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir",
                             repo.cache, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env or clean_env(), stdin=subprocess.DEVNULL)


def fetch(repo, sim, *extra, env=None):
    return hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, *extra,
                    env=env, timeout=60)


def finish(p, timeout=60):
    """Waits for a started client (killed if it overruns) and returns (rc, stdout, stderr)."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise AssertionError(f"hf-fetch still running after {timeout} s\n{out}\n{err}")
    return p.returncode, out, err


def wait_for(cond, what, proc, timeout=30):
    deadline = time.monotonic() + timeout
    while not cond():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"hf-fetch exited (rc={proc.returncode}) before {what}\n{out}\n{err}")
        check(time.monotonic() < deadline, f"timed out waiting for {what}")
        time.sleep(0.02)


# ---- the request log --------------------------------------------------------------------------

def blob_gets(repo, reqs):
    """The CDN GETs for the big file's bytes, in order of arrival; each checked to carry a bounded Range."""
    gets = [q for q in reqs if q["origin"] == "cdn" and q["method"] == "GET" and key(repo) in q["path"]]
    for q in gets:
        check(re.fullmatch(r"bytes=\d+-\d+", header(q, "Range") or ""),
              f"a range request that is not bounded (bytes=A-B): Range {header(q, 'Range')!r}")
    return gets


def span(q):
    """(first, last) byte of the Range a request asked for, both inclusive."""
    a, b = re.fullmatch(r"bytes=(\d+)-(\d+)", header(q, "Range")).groups()
    return int(a), int(b)


def sent(gets, status=206):
    return sum(q["bytes_sent"] or 0 for q in gets if q["status"] == status)


def hub_resolves(reqs):
    return [q for q in reqs if q["origin"] == "hub" and "/resolve/" in q["path"] and q["path"].endswith("/" + BIG)]


def describe(gets):
    return [(q["status"], header(q, "Range"), q["bytes_sent"]) for q in gets]


def check_answers_partition_the_file(gets):
    """The 206 answers asked for disjoint ranges that cover the file once, each sent whole: nothing was
    fetched twice and nothing restarted from zero."""
    spans = sorted(span(q) for q in gets if q["status"] == 206)
    expect = 0
    for a, b in spans:
        check(a == expect, f"the ranges asked for overlap or leave a gap at byte {expect}: {describe(gets)}")
        expect = b + 1
    check(expect == SIZE, f"the ranges asked for end at {expect}, not at {SIZE}: {describe(gets)}")
    for q in gets:
        if q["status"] == 206:
            a, b = span(q)
            check(q["bytes_sent"] == b - a + 1, f"a range was not sent whole: {describe([q])}")


def check_in_place(repo):
    check_correct_or_absent(repo)
    check(os.path.exists(repo.snapshot(BIG)), f"{BIG} is not in place")
    for leftover in (partial_path(repo), sidecar_path(repo)):
        check(not os.path.exists(leftover), f"{leftover} left behind after the file was verified")


# ---- the sidecar ------------------------------------------------------------------------------

def read_sidecar(path):
    """[(start, end, done)] from a sidecar, checked line by line against the format."""
    check(os.path.isfile(path), f"no sidecar at {path}")
    with open(path) as f:
        lines = f.read().splitlines()
    check(lines[:2] == ["provkit-ranges 1", f"size {SIZE}"], f"bad sidecar header: {lines[:2]}")
    ranges = []
    expect = 0
    for line in lines[2:]:
        m = re.fullmatch(r"range (\d+) (\d+) (\d+)", line)
        check(m, f"bad sidecar line {line!r}")
        start, end, done = map(int, m.groups())
        check(start == expect and start < end and done <= end - start, f"ranges out of order or overfull: {lines}")
        ranges.append((start, end, done))
        expect = end
    check(expect == SIZE and len(ranges) > 1, f"the sidecar's ranges do not cover the file in pieces: {lines}")
    return ranges


def part_way(path):
    """Whether the sidecar at `path` (if any yet) records a range begun and not finished."""
    try:
        with open(path) as f:
            return any(0 < int(d) < int(e) - int(s) for _, s, e, d in
                       (line.split() for line in f if line.startswith("range ")))
    except (OSError, ValueError):
        return False


# ---- SIGKILL at 10%, 50%, 90% ------------------------------------------------------------------

def sigkill_at_then_resume(percent):
    repo = big_repo()
    at = SIZE * percent // 100
    with HubSim(repo.repos_json) as sim:
        # The ranges well below `at` go fast, the few around it slowly, the rest crawl (ranges are asked
        # for lowest first): the kill lands past `at` with ranges in flight, and the file cannot finish
        # first however late this process sees the request log (half a second and more on a busy machine).
        fast = max(0, at // RANGE - 2)
        slow = min(at // RANGE + 2, SIZE // RANGE - 1) - fast
        sim.set_faults([throttle(repo, rate=1 << 40, times=fast), throttle(repo, rate=SLOW, times=slow),
                        throttle(repo, rate=CRAWL)])
        p = start(repo, sim, *SPLIT)
        try:
            # Past `at`, and the sidecar shows a range part way: it is rewritten while bytes arrive, not
            # only when a range completes.
            wait_for(lambda: sent(blob_gets(repo, sim.requests())) >= at and part_way(sidecar_path(repo)),
                     f"{percent}% of the file to be sent and a range recorded part way in the sidecar", p)
        finally:
            p.send_signal(signal.SIGKILL)
            p.communicate()
        sent_before_kill = sent(blob_gets(repo, sim.requests()))
        check(not os.path.exists(repo.blob(BIG)), "the blob reached its final path unfinished")
        check(os.path.getsize(partial_path(repo)) == SIZE, "the partial file is not preallocated to the file's size")
        ranges = read_sidecar(sidecar_path(repo))
        done = sum(d for _, _, d in ranges)
        slack = CONNECTIONS * LAG_PER_CONNECTION
        print(f"killed past {percent}%: the sidecar records {done} of {SIZE} bytes in {len(ranges)} ranges "
              f"(at least {at - slack} expected); the simulator had sent {sent_before_kill}")
        check(done >= at - slack, f"the sidecar records {done} bytes; at least {at - slack} had arrived")
        check(done <= sent_before_kill, f"the sidecar records {done} bytes; the simulator sent {sent_before_kill}")
        check(done < SIZE, "the whole file was done before the kill: nothing tested")
        # Whatever the sidecar claims is really there.
        with open(partial_path(repo), "rb") as f:
            for s, e, d in ranges:
                f.seek(s)
                check(f.read(d) == repo.files[BIG][s:s + d], f"the sidecar claims bytes {s}-{s + d} that are wrong")

        sim.set_faults([])
        sim.clear_requests()
        r = fetch(repo, sim, *SPLIT)
        gets = blob_gets(repo, sim.requests())
    check(r.rc == 0, f"rerun after SIGKILL at {percent}% failed: {r}")
    check(sent(gets) == SIZE - done,
          f"the rerun was sent {sent(gets)} bytes; {SIZE - done} were missing: {describe(gets)}")
    check(all(q["status"] == 206 for q in gets), f"a rerun request was not answered 206: {describe(gets)}")
    asked = sorted(header(q, "Range") for q in gets)
    missing = sorted(f"bytes={s + d}-{e - 1}" for s, e, d in ranges if s + d < e)
    check(asked == missing, f"the rerun asked for {asked}; missing were {missing}")
    check_in_place(repo)


def test_ranges_sigkill_at_10_percent_then_resume():
    sigkill_at_then_resume(10)


def test_ranges_sigkill_at_50_percent_then_resume():
    sigkill_at_then_resume(50)


def test_ranges_sigkill_at_90_percent_then_resume():
    sigkill_at_then_resume(90)


# ---- faults on one range --------------------------------------------------------------------

def test_ranges_wrong_bytes_in_one_range_are_caught():
    repo = big_repo()
    at, count = 12_345, 16
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([absorb_first_body(repo),
                        {"kind": "wrong_bytes", "origin": "cdn", "path_contains": key(repo), "at": at, "count": count}])
        r = fetch(repo, sim, *SPLIT)
        gets = blob_gets(repo, sim.requests())
        check(r.rc == 1, f"expected exit 1 for a wrong byte in one range: {r}")
        check(not os.path.exists(repo.blob(BIG)) and not os.path.lexists(repo.snapshot(BIG)),
              "wrong bytes reached the final path")
        blobs = os.path.dirname(repo.blob(BIG))
        kept = [n for n in os.listdir(blobs) if n.startswith(key(repo) + ".bad-")]
        check(len(kept) == 1, f"expected the bytes kept aside as <blob>.bad-<sha256>: {os.listdir(blobs)}")
        with open(os.path.join(blobs, kept[0]), "rb") as f:
            bad = f.read()
        check(kept[0] == key(repo) + ".bad-" + sha256(bad), f"{kept[0]} is not named by its sha256")
        diff = [i for i in range(0, SIZE, 4096) if bad[i:i + 4096] != repo.files[BIG][i:i + 4096]]
        check(len(diff) in (1, 2), f"the kept file differs in {len(diff)} places")
        first = next(i for i in range(diff[0], diff[0] + 4096) if bad[i] != repo.files[BIG][i])
        starts = [span(q)[0] for q in gets]
        check(first - at in starts and first - at > 0,
              f"the wrong bytes at {first} are not where a later range's fault put them: {describe(gets)}")
        check(len(bad) == SIZE and bad[first:first + count] != repo.files[BIG][first:first + count] and
              bad[:first] + bad[first + count:] == repo.files[BIG][:first] + repo.files[BIG][first + count:],
              "the kept file is not the fetched bytes")
        check(not os.path.exists(partial_path(repo)) and not os.path.exists(sidecar_path(repo)),
              "the rejected file's partial file or sidecar was left to be resumed")
        check_correct_or_absent(repo)

        sim.set_faults([])
        sim.clear_requests()
        r = fetch(repo, sim, *SPLIT)
        gets = blob_gets(repo, sim.requests())
    check(r.rc == 0, f"the rerun without the fault failed: {r}")
    check_answers_partition_the_file(gets)
    check_in_place(repo)


def test_ranges_cdn_url_expiry_mid_file_resolves_again():
    repo = big_repo()
    # A third of RATE until the expiry has been seen: on a loaded machine the polling below can lag by
    # seconds, and the file must not be finished (no range left to refuse) by the time the URL expires.
    slow = throttle(repo, rate=RATE // 3)
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([slow])
        p = start(repo, sim, *SPLIT)
        try:
            def first_ranges_done():
                reqs = sim.requests()
                gets = blob_gets(repo, reqs)
                whole = [q for q in gets if q["status"] == 206 and q["bytes_sent"] == span(q)[1] - span(q)[0] + 1]
                # A second later than the first resolve, so that a fresh signed URL differs from the old one.
                return whole and sent(gets) >= SIZE // 4 and time.time() > hub_resolves(reqs)[0]["time"] + 1.1
            wait_for(first_ranges_done, "the first ranges to be done", p)
            old = re.search(r"Signature=([0-9a-f]+)", blob_gets(repo, sim.requests())[0]["path"]).group(1)
            # The signed URL expires: from now on every request with it is refused, as by the real CDN.
            expire = {"kind": "expire_url", "origin": "cdn", "path_contains": old, "times": -1}
            sim.set_faults([slow, expire])
            expired_at = time.time()
            # Once a range has been refused, the rest may go at full speed (the expiry stays).
            wait_for(lambda: any(q["status"] == 403 for q in blob_gets(repo, sim.requests())), "a refusal", p)
            sim.set_faults([expire])
            rc, out, err = finish(p)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        reqs = sim.requests()
    check(rc == 0, f"fetch failed: rc={rc}\n{out}\n{err}")
    gets = blob_gets(repo, reqs)
    refused = [q for q in gets if q["status"] == 403]
    check(refused, f"no range request was refused: the expiry never fired: {describe(gets)}")
    resolves = hub_resolves(reqs)
    again = [q for q in resolves if q["time"] >= expired_at]
    check(1 <= len(again) <= len(refused), f"{len(again)} resolves through the Hub after {len(refused)} refusals")
    check(all(old not in q["path"] for q in gets if q["status"] == 206 and q["time"] > refused[0]["time"] + 0.5),
          "the expired URL was still used after the file was resolved again")
    # Each refused range was asked for again from where it was, and nothing restarted from zero.
    for q in refused:
        check(any(header(g, "Range") == header(q, "Range") and g["status"] == 206 and g["time"] > q["time"] for g in gets),
              f"the range refused with {header(q, 'Range')} was not asked for again: {describe(gets)}")
    check_answers_partition_the_file(gets)
    check(sum(q["bytes_sent"] or 0 for q in gets if q["status"] != 403) == SIZE,
          f"{sent(gets)} file bytes sent for {SIZE}: {describe(gets)}")
    check_in_place(repo)


def test_ranges_200_answered_to_a_later_range():
    repo = big_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([throttle(repo)])
        p = start(repo, sim, *SPLIT)
        try:
            # Once the first range is answered 206 and the other connections are at work, the next range
            # request gets the whole file with 200.
            wait_for(lambda: len(blob_gets(repo, sim.requests())) >= CONNECTIONS, "the other connections", p)
            # Several connections at once: requests that have started and are not done yet.
            running = [q for q in blob_gets(repo, sim.requests()) if q["bytes_sent"] < span(q)[1] - span(q)[0] + 1]
            check(len(running) >= 2, f"the ranges did not go over several connections at once: {describe(running)}")
            sim.set_faults([throttle(repo), {"kind": "ignore_range", "origin": "cdn", "path_contains": key(repo)}])
            wait_for(lambda: any(q["status"] == 200 for q in blob_gets(repo, sim.requests())), "the 200", p)
            sim.set_faults([])
            rc, out, err = finish(p)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        gets = blob_gets(repo, sim.requests())
    check(rc == 0, f"fetch failed: rc={rc}\n{out}\n{err}")
    whole = [q for q in gets if q["status"] == 200]
    check(len(whole) == 1 and span(whole[0])[0] > 0, f"expected one later range answered 200: {describe(gets)}")
    # A correct file proves that the 200's bytes (the file from byte 0) were never written at that
    # range's offset: the sha256 covers every byte, and a wrong one would have ended in exit 1.
    check(sent(gets) + sent(gets, 200) <= 2 * SIZE, f"far more bytes than the file's: {describe(gets)}")
    check_in_place(repo)


def test_ranges_connection_closed_mid_range_resumes_that_range():
    repo = big_repo()
    with HubSim(repo.repos_json) as sim:
        # Two later ranges' connections closed (in order, FIN: every byte sent arrives), one after a
        # single byte, one in the middle.
        close = {"kind": "close_mid_body", "origin": "cdn", "path_contains": key(repo)}
        sim.set_faults([absorb_first_body(repo), dict(close, at=1), dict(close, at=700_000)])
        r = fetch(repo, sim, *SPLIT)
        gets = blob_gets(repo, sim.requests())
    check(r.rc == 0, f"fetch failed: {r}")
    cut = [q for q in gets if q["bytes_sent"] < span(q)[1] - span(q)[0] + 1]
    check(sorted(q["bytes_sent"] for q in cut) == [1, 700_000], f"the faults did not fire as set: {describe(gets)}")
    for q in cut:
        a, b = span(q)
        resumed = f"bytes={a + q['bytes_sent']}-{b}"
        check(any(header(g, "Range") == resumed and g["status"] == 206 and g["time"] > q["time"] for g in gets),
              f"the range cut at {a + q['bytes_sent']} was not resumed with {resumed}: {describe(gets)}")
    check(sum(q["bytes_sent"] for q in gets) == SIZE, f"bytes fetched twice: {describe(gets)}")
    check_in_place(repo)


# ---- connections and credentials --------------------------------------------------------------

def test_ranges_one_connection_is_one_stream():
    repo = big_repo()
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim, "--connections", "1", "--min-split-size", "1M")
        reqs = sim.requests()
    check(r.rc == 0, f"fetch failed: {r}")
    gets = blob_gets(repo, reqs)
    check(describe(gets) == [(206, f"bytes=0-{SIZE - 1}", SIZE)], f"expected one GET of the whole file: {describe(gets)}")
    check(len(hub_resolves(reqs)) == 1, "resolved more than once")
    check_in_place(repo)


def test_ranges_split_file_sends_no_token_to_the_cdn():
    repo = big_repo(gated=True, tokens=[TOKEN])
    with HubSim(repo.repos_json) as sim:
        # One refusal from the CDN first, so that a re-resolve through the Hub is covered too.
        sim.set_faults([{"kind": "expire_url", "origin": "cdn", "path_contains": key(repo)}])
        r = fetch(repo, sim, *SPLIT, env=clean_env(HF_TOKEN=TOKEN))
        reqs = sim.requests()
    check(r.rc == 0, f"fetch with a token failed: {r}")
    gets = blob_gets(repo, reqs)
    check(len([q for q in gets if q["status"] == 206]) > CONNECTIONS, f"the file was not split: {describe(gets)}")
    check(len(hub_resolves(reqs)) == 2 and gets[0]["status"] == 403, "the refusal did not lead to a second resolve")
    for q in reqs:
        if q["origin"] == "hub":
            check(header(q, "Authorization") == "Bearer " + TOKEN, f"a Hub request without the token: {q['path']}")
        else:
            check(header(q, "Authorization") is None, f"the token was sent to the CDN: {q['path']} {header(q, 'Range')}")
    check_answers_partition_the_file(gets)
    check_in_place(repo)


if __name__ == "__main__":
    main()
