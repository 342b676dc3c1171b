"""What a run may spend and how polite it is to the Hub (issue 6): --max-rate (one bandwidth budget for the
whole run), pacing by the Hub's RateLimit headers before any 429, and --offline / HF_HUB_OFFLINE.

Times asserted here are lower bounds only (a cap or a wait that must have happened), never speed.

Run one: python3 test_spend.py test_max_rate_caps_one_file   (ctest runs each as its own test)
"""

import os
import sys
import socket
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main  # noqa: E402
from hf_fixtures import Repo, blob, check_correct_or_absent, clean_env, file_entries, hf_fetch, sha256  # noqa: E402

MiB = 1 << 20


def fetch(repo, sim_or_url, *extra, env=None, manifest=None):
    endpoint = sim_or_url if isinstance(sim_or_url, str) else sim_or_url.hub
    return hf_fetch("--manifest", manifest or repo.manifest, "--endpoint", endpoint, "--cache-dir", repo.cache,
                    *extra, env=env)


def timed(fn):
    began = time.monotonic()
    result = fn()
    return result, time.monotonic() - began


def dead_endpoint():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def check_all_in_place(repo):
    check_correct_or_absent(repo)
    for path in repo.files:
        check(os.path.exists(repo.snapshot(path)), f"{path} is not in the snapshot")


# ---- --max-rate -------------------------------------------------------------------------------

def test_max_rate_caps_one_file():
    repo = Repo({"big.safetensors": blob(6 * MiB, "rate1")}, lfs={"big.safetensors"})
    with HubSim(repo.repos_json) as sim:
        r, took = timed(lambda: fetch(repo, sim, "--max-rate", "2M"))
    check(r.rc == 0, f"fetch failed: {r}")
    check_all_in_place(repo)
    # 6 MiB at 2 MiB/s, less the bucket's 100 ms burst and one read: at least ~2.8 s (unthrottled: well under 1 s).
    check(took >= 2.5, f"6 MiB with --max-rate 2M took only {took:.2f} s")


def test_max_rate_is_one_budget_for_all_files():
    files = {f"model-0000{i}-of-00003.safetensors": blob(2 * MiB, f"rate-{i}") for i in range(1, 4)}
    repo = Repo(files, lfs=set(files))
    with HubSim(repo.repos_json) as sim:
        r, took = timed(lambda: fetch(repo, sim, "--max-rate", "2M", "--jobs", "3"))
    check(r.rc == 0, f"fetch failed: {r}")
    check_all_in_place(repo)
    # Three files at once share the 2 MiB/s: 6 MiB take ~3 s. A cap per transfer would let them through in ~1 s.
    check(took >= 2.5, f"3 x 2 MiB at --jobs 3 with --max-rate 2M took only {took:.2f} s: the cap is not shared")


def test_max_rate_is_one_budget_for_all_connections_of_a_file():
    repo = Repo({"big.safetensors": blob(6 * MiB, "rate-conn")}, lfs={"big.safetensors"})
    with HubSim(repo.repos_json) as sim:
        r, took = timed(lambda: fetch(repo, sim, "--max-rate", "2M", "--connections", "4", "--min-split-size", "1M"))
        ranged = [q for q in sim.requests("cdn") if any(k.lower() == "range" for k in q["headers"])]
    check(r.rc == 0, f"fetch failed: {r}")
    check_all_in_place(repo)
    check(len(ranged) >= 4, f"expected the file in several ranges, got {len(ranged)} range requests")
    check(took >= 2.5, f"6 MiB over 4 connections with --max-rate 2M took only {took:.2f} s: the cap is not shared")


def test_max_rate_pause_is_not_a_stall():
    # Four transfers share 8 KiB/s: each waits seconds for its turn, longer than the 1 s stall timeout.
    files = {f"shard-{i}.bin": blob(24 * 1024, f"pause-{i}") for i in range(4)}
    repo = Repo(files, lfs=set(files))
    with HubSim(repo.repos_json) as sim:
        r, took = timed(lambda: fetch(repo, sim, "--max-rate", "8K", "--jobs", "4", "--stall-timeout", "1"))
        gets = [q for q in sim.requests("cdn") if q["method"] == "GET"]
    check(r.rc == 0, f"fetch failed: {r}")
    check_all_in_place(repo)
    check("stalled" not in r.all, f"a transfer paused by the cap was taken for a stall: {r}")
    check(len(gets) == len(files), f"expected one GET per file and no retries, got {len(gets)}")
    # 96 KiB at 8 KiB/s, less the 64 KiB burst and one 16 KiB read: at least 2 s.
    check(took >= 1.8, f"96 KiB at 8 KiB/s took only {took:.2f} s")


def test_max_rate_bad_value_is_a_usage_error():
    repo = Repo({"config.json": b"{}\n"})
    for value in ("lots", "0", "5X"):
        r = fetch(repo, dead_endpoint(), "--max-rate", value)
        check(r.rc == 2, f"--max-rate {value}: expected exit 2: {r}")
        check("--max-rate" in r.err, f"--max-rate {value}: the message does not name the flag: {r}")


# ---- RateLimit pacing -------------------------------------------------------------------------

def small_repo(n=3):
    files = {"config.json": b'{"model_type": "llama"}\n'}
    files.update({f"model-{i}.safetensors": blob(50_000, f"pace-{i}") for i in range(1, n)})
    return Repo(files, lfs={p for p in files if p.endswith(".safetensors")})


def test_ratelimit_none_left_holds_back_the_next_request():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        # The tree listing answers 200, but says the "api" limit has nothing left for 2 s (as the real Hub
        # sends RateLimit on every answer).
        sim.set_faults([{"kind": "headers", "path_contains": "/tree/",
                         "headers": {"RateLimit": '"api";r=0;t=2',
                                     "RateLimit-Policy": '"fixed window";"api";q=500;w=300'}}])
        r = fetch(repo, sim, "--jobs", "3")
        hub = sim.requests("hub")
    check(r.rc == 0, f"fetch failed: {r}")
    check_all_in_place(repo)
    check(all(q["status"] != 429 for q in hub), "a 429 was needed")
    tree = [i for i, q in enumerate(hub) if "/tree/" in q["path"]]
    check(len(tree) == 1 and tree[0] + 1 < len(hub), f"expected a tree listing and then resolves: {hub}")
    gap = hub[tree[0] + 1]["time"] - hub[tree[0]]["time"]
    check(gap >= 1.95, f"the next request to the Hub came {gap:.2f} s after the listing that said to wait 2 s")


def test_ratelimit_few_left_spaces_requests_out():
    repo = small_repo(4)
    with HubSim(repo.repos_json) as sim:
        # Every Hub answer: 2 requests left of a 100-per-window quota, reset in 2 s: one per second.
        sim.set_faults([{"kind": "headers", "origin": "hub", "times": -1,
                         "headers": {"RateLimit": '"resolvers";r=2;t=2',
                                     "RateLimit-Policy": '"fixed window";"resolvers";q=100;w=300'}}])
        r = fetch(repo, sim, "--jobs", "4")
        hub = sim.requests("hub")
    check(r.rc == 0, f"fetch failed: {r}")
    check_all_in_place(repo)
    # After the files, one question about main (is it the pinned commit? then refs/main may point there).
    check([q["path"] for q in hub if "/revision/" in q["path"]] == [f"/api/models/{repo.repo_id}/revision/main"],
          f"expected one revision request, for main: {[q['path'] for q in hub]}")
    hub = [q for q in hub if "/revision/" not in q["path"]]
    check(len(hub) == 1 + len(repo.files), f"expected the listing and one resolve per file: {len(hub)}")
    gaps = [b["time"] - a["time"] for a, b in zip(hub, hub[1:])]
    # Without pacing the four resolves leave together, within milliseconds.
    check(min(gaps) >= 0.95, f"requests to the Hub not spaced ~1 s apart: gaps {[round(g, 2) for g in gaps]}")


# ---- --offline ----------------------------------------------------------------------------------

def assembly_repo():
    parts = {f"split/part-{i}": blob(40_000, f"part-{i}") for i in range(1, 4)}
    files = {"config.json": b'{"model_type": "llama"}\n', "tokenizer.json": b'{"version": "1.0"}\n',
             "model.safetensors": blob(100_000, "offline-w"), **parts}
    repo = Repo(files, lfs={p for p in files if not p.endswith(".json")})
    whole = b"".join(files[p] for p in sorted(parts))
    repo.manifest = repo.write_manifest(file_entries(files, repo.lfs), "asm.yaml",
                                        assemble=[{"output": "whole.gguf", "parts": sorted(parts),
                                                   "sha256": sha256(whole)}])
    return repo, whole


def test_offline_after_a_fetch_needs_no_network():
    repo, whole = assembly_repo()
    refs_main = os.path.join(repo.repo_dir(), "refs", "main")
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
        check(r.rc == 0, f"fetch failed: {r}")
        # What a normal fetch writes after the downloads is written again offline: a snapshot link, the ref,
        # an assembled output.
        os.unlink(repo.snapshot("config.json"))
        os.unlink(refs_main)
        os.unlink(repo.snapshot("whole.gguf"))
        sim.clear_requests()
        r = fetch(repo, sim, "--offline")
        seen = sim.requests()
    check(r.rc == 0, f"offline run failed: {r}")
    check(seen == [], f"the offline run made {len(seen)} requests: {[q['path'] for q in seen]}")
    check_all_in_place(repo)
    with open(refs_main) as f:
        check(f.read() == repo.sha, "refs/main not written offline")
    with open(repo.snapshot("whole.gguf"), "rb") as f:
        check(f.read() == whole, "whole.gguf not assembled offline")
    check("offline" in r.out, f"the summary does not say it was offline: {r}")
    # With the simulator gone, too.
    r = fetch(repo, dead_endpoint(), "--offline", "--json")
    check(r.rc == 0, f"offline run with the Hub gone failed: {r}")
    summary = r.json_events()[-1]
    check(summary.get("offline") is True and summary.get("present") == len(repo.files), f"summary: {summary}")


def test_offline_local_dir():
    repo, whole = assembly_repo()
    local = os.path.join(repo.tmp, "local")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--local-dir", local)
        check(r.rc == 0, f"fetch failed: {r}")
    os.unlink(os.path.join(local, ".cache", "huggingface", "SHA256SUMS"))
    r = hf_fetch("--manifest", repo.manifest, "--endpoint", dead_endpoint(), "--local-dir", local, "--offline")
    check(r.rc == 0, f"offline run failed: {r}")
    with open(os.path.join(local, ".cache", "huggingface", "SHA256SUMS")) as f:
        sums = f.read()
    check(f"{sha256(whole)}  whole.gguf" in sums and f"{sha256(repo.files['config.json'])}  config.json" in sums,
          f"SHA256SUMS not written offline: {sums}")


def test_offline_missing_or_wrong_file_fails_naming_it():
    repo, _ = assembly_repo()
    with HubSim(repo.repos_json) as sim:
        check(fetch(repo, sim).rc == 0, "fetch failed")
    os.unlink(repo.blob("tokenizer.json"))
    bad = repo.blob("model.safetensors")
    with open(bad, "r+b") as f:  # same size, other bytes
        f.seek(1000)
        f.write(b"\0" * 16)
    r = fetch(repo, dead_endpoint(), "--offline")
    check(r.rc == 1, f"expected exit 1: {r}")
    check("MISSING tokenizer.json" in r.err, f"the missing file is not named: {r}")
    check("SHA256 MISMATCH model.safetensors" in r.err, f"the damaged file is not named: {r}")
    check("config.json" not in r.err, f"a file in place was reported: {r}")
    check("offline" in r.all and "without --offline" in r.all, f"the summary does not say what to do: {r}")
    # Nothing was assembled from a run with files missing; nothing downloaded either.
    check(not os.path.exists(repo.blob("tokenizer.json")), "a missing file appeared")


def test_offline_fresh_cache_every_file_missing():
    repo, _ = assembly_repo()
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim, "--offline")
        seen = sim.requests()
    check(r.rc == 1, f"expected exit 1: {r}")
    check(seen == [], f"the offline run made requests: {seen}")
    for path in repo.files:
        check(f"MISSING {path}" in r.err, f"{path} not reported missing: {r}")
    # Nothing is in place, so nothing is said to be verified (issue 43 item 11: "the others are verified").
    n = len(repo.files)
    check(f"{n} of {n + 1} files failed; none verified in" in r.all and "others are verified" not in r.all,
          "the summary says none is verified", r)


def test_hf_hub_offline_environment_means_offline():
    repo, _ = assembly_repo()
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim, env=clean_env(HF_HUB_OFFLINE="1"))
        check(r.rc == 1 and sim.requests() == [], f"HF_HUB_OFFLINE=1 went to the network or passed: {r}")
        check("HF_HUB_OFFLINE" in r.all, f"the summary does not name HF_HUB_OFFLINE: {r}")
        check(fetch(repo, sim, env=clean_env(HF_HUB_OFFLINE="0")).rc == 0, "HF_HUB_OFFLINE=0 is not online")
        sim.clear_requests()
        r = fetch(repo, sim, env=clean_env(HF_HUB_OFFLINE="true"))
        check(r.rc == 0 and sim.requests() == [], f"HF_HUB_OFFLINE=true after a fetch: {r}")


def test_offline_with_check_upstream_is_a_usage_error():
    repo, _ = assembly_repo()
    r = fetch(repo, dead_endpoint(), "--offline", "--check-upstream")
    check(r.rc == 2 and "--offline" in r.err and "--check-upstream" in r.err, f"{r}")
    r = fetch(repo, dead_endpoint(), "--check-upstream", env=clean_env(HF_HUB_OFFLINE="1"))
    check(r.rc == 2 and "HF_HUB_OFFLINE" in r.err and "--check-upstream" in r.err, f"{r}")


if __name__ == "__main__":
    main()
