"""`hf-fetch --debug` on a ranged fetch from the Hub simulator: the trace (stderr) shows every range request
(file, range, attempt, the URL without its query), every ramp step (connections before and after, why),
the publish of the verified file, and the engine's decisions (a fresh start, a resume from N bytes, a start
over for a bad sidecar, leaving ranges for a server that ignores them). What the trace says is checked
against the simulator's request log and the files on disk; without --debug, none of it is printed.

Run one: python3 test_debug_trace.py test_debug_trace_of_a_ranged_fetch   (ctest runs each on its own)
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main  # noqa: E402
from hf_fixtures import Repo, blob, check_correct_or_absent, clean_env, header, hf_fetch, sha256  # noqa: E402

BIG = "model.safetensors"
SIZE = 16 << 20
SPLIT = ("--connections", "4", "--min-split-size", "1M")
RATE = 4 << 20  # bytes per second per request: slow enough for the ramp to measure, capped per connection
PREFIX = "hf-fetch: debug: "
RANGE_LINE = re.compile(r"hf-fetch: debug: download: " + re.escape(BIG) +
                        r": range (\d+)/(\d+) bytes=(\d+)-(\d+) attempt (\d+): GET (\S+)$")
RAMP_LINE = re.compile(r"hf-fetch: debug: download: ramp: (\d+) -> (\d+) connections \((.+)\)$")


def big_repo():
    return Repo({"config.json": b'{"model_type": "llama"}\n', BIG: blob(SIZE, "trace")}, lfs={BIG})


def key(repo):
    return sha256(repo.files[BIG])


def partial_path(repo):
    return repo.blob(BIG) + ".provkit-partial.incomplete"


def throttle(repo, rate=RATE):
    return {"kind": "throttle", "origin": "cdn", "path_contains": key(repo), "bytes_per_second": rate, "times": -1}


def fetch(repo, sim, *extra, env=None):
    env = env or clean_env()
    env.pop("PROVKIT_LOG", None)
    return hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, *SPLIT, *extra,
                    env=env, timeout=120)


def trace(r):
    return [line for line in r.err.splitlines() if line.startswith(PREFIX)]


def lines_of(lines, domain, text=""):
    return [line for line in lines if line.startswith(PREFIX + domain + ": ") and text in line]


def range_requests(lines):
    """[(range, of, first, last, attempt, url)] from the trace's range lines."""
    out = []
    for line in lines:
        m = RANGE_LINE.match(line)
        if m:
            i, n, a, b, attempt = map(int, m.groups()[:5])
            out.append((i, n, a, b, attempt, m.group(6)))
    return out


def blob_gets(repo, reqs):
    return [q for q in reqs if q["origin"] == "cdn" and q["method"] == "GET" and key(repo) in q["path"]]


def check_range_lines_match_the_requests(repo, lines, gets):
    """Every range request the simulator received is one range line of the trace (same bytes), and the other
    way round; each line's URL is the CDN's path with no query."""
    traced = range_requests(lines)
    check(traced, "no range request in the trace", "\n".join(lines))
    asked = sorted(header(q, "Range") for q in gets)
    said = sorted(f"bytes={a}-{b}" for _, _, a, b, _, _ in traced)
    check(said == asked, "the trace's range requests are not the ones the simulator received",
          f"trace: {said}\nsimulator: {asked}")
    for *_, url in traced:
        check("?" not in url and (key(repo) in url or url.endswith(f"/resolve/{repo.sha}/{BIG}")),
              f"a range line's URL is not the file's resolve URL or CDN path, without its query: {url}")
    return traced



def test_debug_trace_of_a_ranged_fetch():
    repo = big_repo()
    with HubSim(repo.repos_json) as sim:
        close = {"kind": "close_mid_body", "origin": "cdn", "path_contains": key(repo), "at": 100_000}
        # The first body of the file goes at full speed past the close rule (a no-op throttle), the next one
        # is cut after 100000 bytes and asked for again; every request is throttled after that.
        sim.set_faults([{"kind": "throttle", "origin": "cdn", "path_contains": key(repo),
                         "bytes_per_second": 1 << 40, "times": 1}, close, throttle(repo)])
        r = fetch(repo, sim, "--debug")
        gets = blob_gets(repo, sim.requests())
    check(r.rc == 0, f"fetch failed: {r}")
    check_correct_or_absent(repo)
    lines = trace(r)

    # The decision at the start, and the state changes up to the end.
    check(lines_of(lines, "download", f"{BIG}: no bytes yet: a fresh start in "),
          "no line for the fresh start", "\n".join(lines))
    for change in ("queued -> probing (opened split)", "probing -> ranged (range honoured)",
                   "ranged -> done (verified)"):
        check(lines_of(lines, "download", f"{BIG}: {change}"), f"no state change {change!r} in the trace",
              "\n".join(lines))

    # Every range request, with its range and attempt; the cut one asked for again from where it was cut.
    traced = check_range_lines_match_the_requests(repo, lines, gets)
    n = traced[0][1]
    check(n > 1 and all(t[1] == n for t in traced), f"the range lines disagree on the number of ranges: {traced}")
    check(sorted({t[0] for t in traced}) == list(range(1, n + 1)), f"not every range was traced: {traced}")
    cut = [q for q in gets if q["bytes_sent"] == 100_000]
    check(len(cut) == 1, f"the close rule did not fire once: {[(header(q, 'Range'), q['bytes_sent']) for q in gets]}")
    a, b = map(int, re.fullmatch(r"bytes=(\d+)-(\d+)", header(cut[0], "Range")).groups())
    again = [t for t in traced if t[2] == a + 100_000 and t[3] == b]
    check(again and again[0][4] == 2, f"the range cut at {a + 100_000} is not traced as attempt 2: {traced}")
    first = [t for t in traced if t[2] == a and t[3] == b]
    check(first and first[0][4] == 1 and first[0][0] == again[0][0],
          f"the cut range's first request is not attempt 1 of the same range: {traced}")

    # The HTTP layer's own lines: the request with its Range, and the answer.
    check(lines_of(lines, "http", f"GET {sim.hub}") and lines_of(lines, "http", "Range: bytes=0-"),
          "no http request line with its Range", "\n".join(lines_of(lines, "http")))
    check(lines_of(lines, "http", "HTTP 206 from ") and lines_of(lines, "http", "HTTP 302 from "),
          "no http answer lines (302 from the Hub, 206 from the CDN)", "\n".join(lines_of(lines, "http")))

    # The ramp: each step doubles (or goes back), within --connections, with its measured reason.
    steps = [tuple(map(int, m.groups()[:2])) + (m.group(3),) for m in map(RAMP_LINE.match, lines) if m]
    check(steps and steps[0][:2] == (1, 2), f"the ramp's first step is not 1 -> 2: {steps}", "\n".join(lines))
    for before, after, why in steps:
        check(after <= 4 and (after == 2 * before or after * 2 == before or after == 4),
              f"a ramp step that is not a doubling or a step back within 4: {before} -> {after}")
        check(re.search(r"\d+\.\d MB/s with \d+", why), f"a ramp step without its measured rate: {why}")

    # The verified file published from the partial file to its blob (the fs trace), once.
    check(lines_of(lines, "download", f"{BIG}: verified (sha256 {key(repo)}): publishing at {repo.blob(BIG)}"),
          "no verified line with the sha256 and the blob path", "\n".join(lines))
    published = lines_of(lines, "fs", f"publish {partial_path(repo)} -> {repo.blob(BIG)}")
    check(len(published) == 1, "the publish of the partial file to its blob is not traced once",
          "\n".join(lines_of(lines, "fs")))


def test_debug_trace_resume_from_the_sidecar_and_start_over_for_a_bad_one():
    repo = big_repo()
    quarter = SIZE // 4
    os.makedirs(os.path.dirname(partial_path(repo)), exist_ok=True)
    with open(partial_path(repo), "wb") as f:
        f.write(repo.files[BIG][:quarter])
        f.truncate(SIZE)
    sidecar = partial_path(repo) + ".ranges"
    with open(sidecar, "w") as f:
        f.write(f"provkit-ranges 1\nsize {SIZE}\n" +
                "".join(f"range {i * quarter} {(i + 1) * quarter} {quarter if i == 0 else 0}\n" for i in range(4)))
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim, "--debug")
        gets = blob_gets(repo, sim.requests())
    check(r.rc == 0, f"resumed fetch failed: {r}")
    check_correct_or_absent(repo)
    lines = trace(r)
    check(lines_of(lines, "download", f"{BIG}: resume from {quarter} bytes (the sidecar: 1 of 4 ranges complete)"),
          "no line for the resume from the sidecar", "\n".join(lines))
    traced = check_range_lines_match_the_requests(repo, lines, gets)
    check(all(t[1] == 4 and t[0] > 1 and t[2] >= quarter for t in traced),
          f"the complete first range was asked for again: {traced}")

    # A sidecar that does not describe the file: the partial file starts over, and the trace says why.
    repo = big_repo()
    os.makedirs(os.path.dirname(partial_path(repo)), exist_ok=True)
    with open(partial_path(repo), "wb") as f:
        f.write(repo.files[BIG][:quarter])
    with open(partial_path(repo) + ".ranges", "w") as f:
        f.write("provkit-ranges 1\nsize 12\n")
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim, "--debug")
    check(r.rc == 0, f"fetch after a bad sidecar failed: {r}")
    check_correct_or_absent(repo)
    lines = trace(r)
    check(lines_of(lines, "download", f"{BIG}: start over: the partial file's range record is unreadable in "),
          "no line for the start over", "\n".join(lines))
    check(min(t[2] for t in range_requests(lines)) == 0, "the start over did not ask from byte 0")


def test_debug_trace_leaving_ranges_for_a_server_that_ignores_them():
    repo = big_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "ignore_range", "origin": "cdn", "path_contains": key(repo), "times": -1}])
        r = fetch(repo, sim, "--debug")
    check(r.rc == 0, f"fetch failed: {r}")
    check_correct_or_absent(repo)
    lines = trace(r)
    for text in (f"{BIG}: range 1 answered with the whole file: leaving ranges",
                 f"{BIG}: probing -> leaving ranges (whole file answered to a range)",
                 f"{BIG}: leaving ranges -> streaming (ranges left)",
                 f"{BIG}: one stream from byte 0 ", f"{BIG}: streaming -> done (verified)"):
        check(lines_of(lines, "download", text), f"no line {text!r} in the trace", "\n".join(lines))


def test_no_trace_without_debug():
    repo = big_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([throttle(repo)])
        r = fetch(repo, sim)
    check(r.rc == 0, f"fetch failed: {r}")
    check_correct_or_absent(repo)
    check(not trace(r) and "debug:" not in r.err and "range 1/" not in r.err and "ramp:" not in r.err,
          "trace lines on stderr without --debug", r.err)


if __name__ == "__main__":
    main()
