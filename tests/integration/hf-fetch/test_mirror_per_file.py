"""Mirror fallback per file: a mirror that lacks a file, serves it wrong or refuses it still serves the others,
and only that file is asked of the next source; a mirror that cannot be reached is left at once for the rest
of the run. --json says which source delivered each file.

Run one: python3 test_mirror_per_file.py test_each_file_from_the_first_source_that_serves_it_right
"""

import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, make_repo, tempdir  # noqa: E402
from hf_fixtures import Repo, blob, clean_env, hf_fetch, resolves, sha256  # noqa: E402

FILES = {
    "config.json": b'{"model_type": "llama"}\n',
    "a.gguf": blob(300_000, "a"),
    "b.gguf": blob(200_000, "b"),
    "c.gguf": blob(100_000, "c"),
}
LFS = {p for p in FILES if p.endswith(".gguf")}


def events(r):
    return [json.loads(line) for line in r.out.splitlines() if line.startswith("{")]


def sources(r):
    return {e["path"]: e["source"] for e in events(r) if e.get("event") == "file" and e.get("status") == "OK"}


def partial_mirror(repo, leave_out):
    """The repository at the same commit without `leave_out`: a mirror exported from a smaller manifest, whose
    tree does not list the file and which answers 404 for it."""
    d = tempdir("hf-fetch-mirror-")
    make_repo(d, repo.repo_id, {p: v for p, v in repo.files.items() if p not in leave_out}, lfs=repo.lfs,
              sha=repo.sha)
    return os.path.join(d, "repos.json")


def asked(reqs, path):
    """Requests of one file: its resolve URL on the Hub origin, or its sha256 on the CDN."""
    return [q for q in resolves(reqs) if ("/resolve/" in q["path"] and q["path"].endswith("/" + path))
            or (q["origin"] == "cdn" and sha256(FILES[path]) in q["path"])]


def test_each_file_from_the_first_source_that_serves_it_right():
    repo = Repo(FILES, lfs=LFS)
    with HubSim(partial_mirror(repo, {"c.gguf"})) as first, HubSim(repo.repos_json) as second, \
            HubSim(repo.repos_json) as hub:
        # The first mirror lacks c.gguf and serves a.gguf wrong; the second 404s c.gguf.
        first.set_faults([{"kind": "wrong_bytes", "at": 1000, "times": -1, "path_contains": sha256(FILES["a.gguf"])}])
        second.set_faults([{"kind": "status", "code": 404, "times": -1, "path_contains": "/resolve/" + repo.sha +
                            "/c.gguf", "headers": {"X-Error-Code": "EntryNotFound"}}])
        r = hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--mirror", first.hub, "--mirror",
                     second.hub, "--endpoint", hub.hub, "--json", env=clean_env(HF_TOKEN="hf_onlyForTheHub0123456789"))
        first_reqs, second_reqs, hub_reqs = first.requests(), second.requests(), hub.requests()
    check(r.rc == 0, f"fetch through two mirrors: {r}")
    got = sources(r)
    check(got == {"config.json": first.hub, "b.gguf": first.hub, "a.gguf": second.hub, "c.gguf": hub.hub},
          f"each file's source: {got}")
    ev = events(r)
    check([e["path"] for e in ev if e.get("status") == "MIRROR WRONG BYTES"] == ["a.gguf"], f"wrong bytes: {ev}")
    check([e["path"] for e in ev if e.get("status") == "NOT ON MIRROR"] == ["c.gguf"], f"not on mirror: {ev}")
    check([e["path"] for e in ev if e.get("status") == "MIRROR FAILED"] == ["c.gguf"], f"refused: {ev}")
    check(not any(e.get("status") == "MIRROR SKIPPED" for e in ev), f"a mirror serving files was skipped: {ev}")
    # Only the file a source failed is asked of the next one.
    check(not asked(second_reqs, "config.json") and not asked(second_reqs, "b.gguf"), "the second mirror was asked "
          f"for files the first served: {[q['path'] for q in resolves(second_reqs)]}")
    check([q["path"] for q in resolves(hub_reqs) if q["origin"] == "hub"] ==
          [q["path"] for q in asked(hub_reqs, "c.gguf") if q["origin"] == "hub"] and asked(hub_reqs, "c.gguf"),
          f"the Hub was asked for more than c.gguf: {[q['path'] for q in resolves(hub_reqs)]}")
    check(not asked(first_reqs, "c.gguf"), "a file not in the mirror's tree was asked of it")
    for q in first_reqs + second_reqs:
        check(not any(k.lower() == "authorization" for k in q["headers"]), "the token was sent to a mirror")
    for path, data in FILES.items():
        with open(repo.snapshot(path), "rb") as f:
            check(f.read() == data, f"{path}: wrong bytes")
    s = events(r)[-1]
    check(s["downloaded"] == 4 and s["present"] == 0 and s["failed"] == 0, f"summary: {s}")


def test_a_mirror_that_serves_everything_needs_no_hub():
    """The first mirror lacks a file, the second has it: the run ends without asking the Hub for any file."""
    repo = Repo(FILES, lfs=LFS)
    with HubSim(partial_mirror(repo, {"b.gguf"})) as first, HubSim(repo.repos_json) as second, \
            HubSim(repo.repos_json) as hub:
        r = hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--mirror", first.hub, "--mirror",
                     second.hub, "--endpoint", hub.hub, "--json")
        second_reqs, hub_reqs = second.requests(), hub.requests()
        # The dry run through the same mirrors: what the first one lacks is in place all the same.
        dry = hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--mirror", first.hub, "--mirror",
                       second.hub, "--endpoint", hub.hub, "--json", "--dry-run")
    check(r.rc == 0, f"fetch: {r}")
    plan = {e["path"]: e["status"] for e in events(dry) if e.get("event") == "plan"}
    check(dry.rc == 0 and set(plan.values()) == {"IN PLACE"} and events(dry)[-1]["to_fetch_bytes"] == 0,
          f"dry run through a mirror that lacks a file: {plan} {events(dry)[-1]}")
    got = sources(r)
    check(got == {"config.json": first.hub, "a.gguf": first.hub, "c.gguf": first.hub, "b.gguf": second.hub},
          f"sources: {got}")
    check([q["path"] for q in resolves(second_reqs) if q["origin"] == "hub"] ==
          [q["path"] for q in asked(second_reqs, "b.gguf") if q["origin"] == "hub"], "the second mirror was asked "
          f"for more than b.gguf: {[q['path'] for q in resolves(second_reqs)]}")
    check(not resolves(hub_reqs), f"the Hub was asked for files: {resolves(hub_reqs)}")


def test_an_unreachable_mirror_is_left_at_once():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()  # nothing listens there: connection refused
    repo = Repo(FILES, lfs=LFS)
    with HubSim(partial_mirror(repo, {"a.gguf"})) as mirror, HubSim(repo.repos_json) as hub:
        t0 = time.monotonic()
        r = hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--mirror", dead, "--mirror", mirror.hub,
                     "--endpoint", hub.hub, "--json", "--retries", "5")
        took = time.monotonic() - t0
        hub_reqs = hub.requests()
    check(r.rc == 0, f"fetch: {r}")
    check(took < 10, f"the dead mirror cost {took:.1f} s (retried?)")
    ev = events(r)
    skipped = [e for e in ev if e.get("status") == "MIRROR SKIPPED"]
    check([e["path"] for e in skipped] == [dead], f"the dead mirror is left once, as a whole: {skipped}")
    check(not any(e.get("source") == dead and e.get("event") == "file" for e in ev), f"a file event from it: {ev}")
    got = sources(r)
    check(got == {"config.json": mirror.hub, "b.gguf": mirror.hub, "c.gguf": mirror.hub, "a.gguf": hub.hub},
          f"sources: {got}")
    check(not asked(hub_reqs, "b.gguf") and not asked(hub_reqs, "config.json"), "the Hub was asked for files the "
          f"mirror served: {[q['path'] for q in resolves(hub_reqs)]}")



def test_check_upstream_compares_with_the_hub_only():
    repo = Repo(FILES, lfs=LFS)
    with HubSim(partial_mirror(repo, {"a.gguf"})) as mirror, HubSim(repo.repos_json) as hub:
        r = hf_fetch("--manifest", repo.manifest, "--cache-dir", repo.cache, "--mirror", mirror.hub, "--endpoint",
                     hub.hub, "--check-upstream", "--json")
        mirror_reqs, hub_reqs = mirror.requests(), hub.requests()
    check(r.rc == 0 and events(r)[-1]["mode"] == "check-upstream", f"check-upstream: {r}")
    check(not mirror_reqs, f"the mirror was asked: {[q['path'] for q in mirror_reqs]}")
    check(not resolves(hub_reqs) and not os.path.exists(repo.snapshot()), "check-upstream fetched files")

if __name__ == "__main__":
    main()
