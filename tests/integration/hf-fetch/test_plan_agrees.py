"""Issue 44, the edges of a fetch: what a --dry-run says is what the fetch then does. One resume rule (the
download engine's, which hub's plan asks), one disk-gate reason (`no_space`, with the same figures in the
dry run and in the fetch it stops), and size flags read with the command line, so that a malformed one is
refused naming its flag before any request. Each against the Hub simulator and its request log.

Run one: python3 test_plan_agrees.py TEST_NAME   (ctest runs each as its own test)
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, check_json_lines, main  # noqa: E402
from hf_fixtures import Repo, blob, hf_fetch, resolves, sha256  # noqa: E402
from test_faults import tmpfs  # noqa: E402

MiB = 1 << 20


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def fetch_repo(repo, sim, *extra, cache=None):
    return hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--cache-dir", cache or repo.cache, *extra)


def partial_of(repo, path):
    return repo.blob(path) + ".provkit-partial.incomplete"


def served(repo, path, reqs):
    """The bytes of `path`'s content the simulator sent (its CDN serves each blob under its sha256)."""
    key = sha256(repo.files[path])
    return sum(q.get("bytes_sent") or 0 for q in resolves(reqs) if key in q["path"])


def test_dry_run_and_fetch_agree_on_resume():
    """Partial downloads the engine will not resume as they claim: a dry run says what the fetch then
    transfers, file by file, counted by the simulator (before: "RESUME, 0 to fetch", then the whole file)."""
    files = {"long.bin": blob(300_000, "long"), "cut.bin": blob(4 * MiB, "cut"), "prefix.bin": blob(200_000, "pre")}
    repo = Repo(files, lfs=set(files))
    os.makedirs(os.path.dirname(repo.blob("long.bin")), exist_ok=True)
    # Longer than the file and no range record: the engine starts over.
    with open(partial_of(repo, "long.bin"), "wb") as f:
        f.write(b"\0" * (len(files["long.bin"]) + 100))
    # A range record saying every byte is there over a partial file cut to 1 MiB: only that MiB is kept.
    with open(partial_of(repo, "cut.bin"), "wb") as f:
        f.write(files["cut.bin"][:MiB])
    with open(partial_of(repo, "cut.bin") + ".ranges", "w") as f:
        f.write(f"provkit-ranges 1\nsize {4 * MiB}\nrange 0 {2 * MiB} {2 * MiB}\n"
                f"range {2 * MiB} {4 * MiB} {2 * MiB}\n")
    # A single stream's prefix: both sides agreed on this one already.
    with open(partial_of(repo, "prefix.bin"), "wb") as f:
        f.write(files["prefix.bin"][:50_000])
    with HubSim(repo.repos_json) as sim:
        dry = fetch_repo(repo, sim, "--dry-run", "--json")
        check(dry.rc == 0, f"dry run: {dry}")
        check(not resolves(sim.requests()), f"a dry run asked for bytes: {resolves(sim.requests())}")
        sim.clear_requests()
        real = fetch_repo(repo, sim, "--json")
        reqs = sim.requests()
    check(real.rc == 0, f"fetch: {real}")
    plan = {e["path"]: e for e in json_lines(dry.out) if e.get("event") == "plan"}
    for path, data in files.items():
        p = plan[path]
        said = p["size"] - p["have"]
        check(p["status"] == ("RESUME" if p["have"] else "FETCH"), f"{path}: {p}")
        check(said == served(repo, path, reqs),
              f"{path}: the dry run said {p['status']} with {said} bytes to fetch, the fetch transferred "
              f"{served(repo, path, reqs)}", p)
        with open(repo.snapshot(path), "rb") as f:
            check(f.read() == data, f"{path}: wrong bytes")
    check(plan["long.bin"]["status"] == "FETCH" and plan["cut.bin"]["have"] == MiB
          and plan["prefix.bin"]["have"] == 50_000, f"plan: {plan}")
    summary = json_lines(dry.out)[-1]
    check(summary["to_fetch_bytes"] == sum(served(repo, p, reqs) for p in files), f"summary: {summary}")


def test_disk_gate_is_one_reason_in_the_dry_run_and_the_fetch():
    """A file that does not fit: the dry run and the fetch both end with reason no_space, exit 1, and the
    same figures (before: verification_failed with a plan in the dry run, check_failed and a sentence alone
    in the fetch)."""
    files = {"big.bin": blob(6 * MiB, "big")}
    repo = Repo(files, lfs=set(files))
    with tmpfs("4m") as d, HubSim(repo.repos_json) as sim:
        cache = os.path.join(d, "cache")
        dry = fetch_repo(repo, sim, "--dry-run", "--json", cache=cache)
        sim.clear_requests()
        real = fetch_repo(repo, sim, "--json", cache=cache)
        reqs = sim.requests()
        plain = fetch_repo(repo, sim, cache=cache)
    check(not resolves(reqs), f"bytes were asked before the gate refused: {resolves(reqs)}")
    check_json_lines(json_lines(dry.out), dry)  # docs/json.md's schema: no_space is a reason it names
    check_json_lines(json_lines(real.out), real)
    a, b = json_lines(dry.out)[-1], json_lines(real.out)[-1]
    check(dry.rc == 1 and real.rc == 1 and plain.rc == 1, f"exit codes: {dry.rc} {real.rc} {plain.rc}", (dry, real))
    check(a["reason"] == "no_space" and b["reason"] == "no_space", f"reasons: {a} / {b}")
    check(a["mode"] == "dry-run" and b["mode"] == "fetch", f"modes: {a} / {b}")
    check(a["detail"] == b["detail"], f"the figures differ: {a['detail']} / {b['detail']}")
    detail = a["detail"]
    check(detail["needed_bytes"] == 6 * MiB and detail["free_bytes"] < detail["needed_bytes"]
          and detail["target"] == a["target"], f"detail: {detail}")
    check(b["plan_needed_bytes"] == a["needed_bytes"] and b["plan_fits"] is False, f"fetch summary: {b}")
    check("not enough space" in b.get("message", "") and "not enough space" in plain.err, f"sentence: {b}", plain)


def test_malformed_size_flag_is_refused_before_any_request_naming_the_flag():
    """A size flag that is not a size is a command-line mistake: exit 2 naming the flag, whatever the mode,
    and the Hub is never asked (before: --min-split-size was read after the tree was listed, without its
    name, and not at all under --verify-only)."""
    repo = Repo({"w.bin": blob(1000, "w")}, lfs={"w.bin"})
    cache = ["--cache-dir", repo.cache]
    cases = [
        ("--min-split-size", "lots", [repo.repo_id, *cache]),
        ("--min-split-size", "lots", ["--manifest", repo.manifest, "--verify-only", *cache]),
        ("--min-split-size", "0", [repo.repo_id, *cache]),
        ("--max-rate", "lots", [repo.repo_id, "--dry-run", *cache]),
        ("--max-rate", "0", ["--manifest", repo.manifest, *cache]),
        ("--gpu-memory", "lots", ["inspect", repo.repo_id, "--gpus", "1"]),
    ]
    with HubSim(repo.repos_json) as sim:
        for flag, value, rest in cases:
            sim.clear_requests()
            r = hf_fetch(*rest, "--endpoint", sim.hub, flag, value, "--json")
            reqs = sim.requests()
            summary = json_lines(r.out)[-1] if json_lines(r.out) else {}
            check(r.rc == 2 and summary.get("reason") == "usage", f"{flag} {value} {rest}: exit {r.rc}", r)
            check(flag in summary.get("message", ""), f"{flag} {value}: the flag is not named", summary)
            check(not reqs, f"{flag} {value} {rest}: the Hub was asked first: {[q['path'] for q in reqs]}")
        # A good value still works, read as bytes.
        r = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--min-split-size", "1M",
                     "--max-rate", "50M")
    check(r.rc == 0, f"good sizes refused: {r}")


if __name__ == "__main__":
    main()
