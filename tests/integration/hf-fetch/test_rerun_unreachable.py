"""A rerun that needs nothing it already has (issue 43 item 1): every file of the manifest in place and verified,
the Hub and every mirror unreachable. The run serves the verified local copy as --offline would (exit 0, a
warning that says so, "sources_unreachable" in the JSON summary), asking each source once within the connect
timeout instead of retrying; a rerun that lacks a file still fails as before (exit 3).

Run one: python3 test_rerun_unreachable.py test_complete_rerun_with_every_source_down_serves_the_local_copy
"""

import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main  # noqa: E402
from hf_fixtures import hf_fetch, sha256  # noqa: E402
from hf_small import closed_port, fetch, small_repo  # noqa: E402


def complete_cache():
    """The small repository fetched once: every file in place and verified. Returns (repo, the Hub's URL, now
    closed)."""
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
        hub = sim.hub
    check(r.rc == 0, f"the first fetch failed: {r}", r)
    return repo, hub


def rerun(repo, hub, *extra):
    mirror = f"http://127.0.0.1:{closed_port()}"
    return hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--endpoint", hub, "--mirror", mirror,
                    *extra, timeout=60)


def tree_attempts(r):
    """The attempts of the tree listing, from the --debug trace's http lines ("http: GET URL ... (attempt N")."""
    return [line for line in r.err.splitlines() if "debug: http: GET" in line and "/tree/" in line]


def test_complete_rerun_with_every_source_down_serves_the_local_copy():
    repo, hub = complete_cache()
    t = time.monotonic()
    r = rerun(repo, hub, "--debug")
    took = time.monotonic() - t
    check(r.rc == 0, f"a complete rerun with the Hub and the mirror down must succeed: exit {r.rc}", r)
    check("WARNING" in r.err and "could not be reached" in r.err and "--offline" in r.err,
          "no warning that the sources could not be reached and the local copy was served as --offline would", r)
    check(r.out.count("OK ") + r.err.count("OK ") >= len(repo.files), "the files were not reported in place", r)
    check("offline" in r.out, "the summary does not say the run was offline", r)
    # One attempt per source (the mirror is asked once already): the Hub's tree asked once, not --retries times.
    hub_tree = [line for line in tree_attempts(r) if hub.split("//")[1] in line]
    check(len(hub_tree) == 1, f"the Hub's tree was asked {len(hub_tree)} times; once is enough with every file here",
          r)
    # Bounded: the retries with their backoff took 15 s (1 + 2 + 4 + 8) before a connection refused became exit 3.
    check(took < 10, f"took {took:.1f} s", r)
    with open(os.path.join(repo.repo_dir(), "refs", "main")) as f:
        check(f.read() == repo.sha, "refs/main not kept")


def test_json_summary_says_the_sources_were_unreachable():
    repo, hub = complete_cache()
    r = rerun(repo, hub, "--json")
    check(r.rc == 0, f"exit {r.rc}", r)
    lines = r.json_events()
    summary = lines[-1]
    unreachable = summary.get("sources_unreachable")
    check(summary.get("offline") is True and isinstance(unreachable, list) and len(unreachable) == 2,
          f"the summary must say it served offline because both sources were unreachable: {summary}", r)
    check([u["source"] for u in unreachable][1] == hub and all(u.get("error") for u in unreachable),
          f"each unreachable source with its error, the Hub last: {unreachable}", r)
    check(summary.get("present") == len(repo.files) and summary.get("downloaded") == 0, f"{summary}", r)
    warnings = [e for e in lines if e.get("event") == "warning"]
    check(len(warnings) == 1 and "--offline" in warnings[0].get("detail", ""), f"one warning event: {warnings}", r)


def test_incomplete_rerun_with_every_source_down_still_exits_3():
    repo, hub = complete_cache()
    blob = os.path.join(repo.repo_dir(), "blobs", sha256(repo.files["weights/model-00002-of-00002.safetensors"]))
    os.remove(blob)
    r = rerun(repo, hub, "--retries", "2", "--debug")
    check(r.rc == 3, f"a rerun that lacks a file must fail as the network failure it is (exit 3): {r.rc}", r)
    check("could not be reached" not in r.all and "sources_unreachable" not in r.all, "the local copy was served", r)
    hub_tree = [line for line in tree_attempts(r) if hub.split("//")[1] in line]
    check(len(hub_tree) == 2, f"the Hub's tree must be retried (--retries 2) when a file is needed: {len(hub_tree)}",
          r)


def test_wrong_local_copy_with_every_source_down_still_exits_3():
    repo, hub = complete_cache()
    blob = os.path.join(repo.repo_dir(), "blobs", sha256(repo.files["weights/model-00001-of-00002.safetensors"]))
    data = bytearray(open(blob, "rb").read())
    data[100] ^= 1
    os.chmod(blob, 0o644)
    with open(blob, "wb") as f:
        f.write(bytes(data))
    r = rerun(repo, hub, "--retries", "1")
    check(r.rc == 3, f"a wrong copy here is no copy to serve: exit {r.rc}", r)
    check("could not be reached" not in r.all, "the wrong copy was served", r)


def test_connect_timeout_bounds_a_source_that_never_answers():
    """A Hub whose SYNs are dropped (a partition, a host gone): a listening socket with a full accept queue. Each
    source is given --connect-timeout seconds once, then the verified copy is served."""
    repo, _ = complete_cache()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    filler = socket.create_connection(listener.getsockname())  # takes the one place in the accept queue
    try:
        t = time.monotonic()
        r = hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--endpoint",
                     "http://127.0.0.1:%d" % listener.getsockname()[1], "--connect-timeout", "2", timeout=60)
        took = time.monotonic() - t
    finally:
        filler.close()
        listener.close()
    check(r.rc == 0 and "could not be reached" in r.err, f"exit {r.rc}", r)
    # One connect timeout of 2 s; the default (10 s, and retries) would take far longer.
    check(1.5 < took < 8, f"took {took:.1f} s with --connect-timeout 2", r)


if __name__ == "__main__":
    main()
