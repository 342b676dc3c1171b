"""hf-fetch against the Hub simulator: tokens, gated and private repositories, one behaviour per test function.

Run one: python3 test_auth.py TEST_NAME   (ctest runs each as its own test)
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, tempdir  # noqa: E402
from hf_fixtures import (TOKEN, check_correct_or_absent, clean_env, file_entries, git_oid,  # noqa: E402
                         header, hf_fetch, resolves)
from hf_small import closed_port, fetch, small_repo  # noqa: E402


# ---- auth ---------------------------------------------------------------------------------

def test_token_goes_to_hub_origin_never_to_cdn():
    repo = small_repo(gated=True, tokens=[TOKEN])
    with HubSim(repo.repos_json) as sim:
        # Also a non-LFS file redirected to the other origin.
        sim.set_faults([{"kind": "redirect_other_origin", "path_contains": "config.json"}])
        r = fetch(repo, sim, env=clean_env(HF_TOKEN=TOKEN))
        reqs = sim.requests()
    check(r.rc == 0, f"fetch with token failed: {r}")
    hub = [q for q in reqs if q["origin"] == "hub"]
    cdn = [q for q in reqs if q["origin"] == "cdn"]
    check(hub and cdn, "expected requests on both origins")
    check(any(git_oid(repo.files["config.json"]) in q["path"] for q in cdn), "the redirect_other_origin fault did not fire")
    for q in hub:
        check(header(q, "Authorization") == "Bearer " + TOKEN, f"hub request without the token: {q['path']}")
    for q in cdn:
        check(header(q, "Authorization") is None, f"token sent to the CDN origin: {q['path']}")
    check_correct_or_absent(repo)


def test_token_sources():
    repo = small_repo(gated=True, tokens=[TOKEN])
    token_file = os.path.join(repo.tmp, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    home = tempdir("hf-home-with-token-")
    with open(os.path.join(home, "token"), "w") as f:
        f.write(TOKEN)
    with HubSim(repo.repos_json) as sim:
        for how, env, extra in [
            ("HF_TOKEN_PATH", clean_env(HF_TOKEN_PATH=token_file), []),
            ("$HF_HOME/token", clean_env(HF_HOME=home), []),
            ("--token-file", clean_env(), ["--token-file", token_file]),
        ]:
            r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--check-upstream", *extra, env=env)
            check(r.rc == 0, f"token from {how} not used: {r}")
        # huggingface_hub's order: the token given (--token-file) beats a stale HF_TOKEN, which beats the token
        # file; a refusal names the source of the token refused, never the token.
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--check-upstream", "--token-file", token_file,
                     env=clean_env(HF_TOKEN="hf_wrongStaleToken"))
        check(r.rc == 0, f"--token-file should beat HF_TOKEN: {r}")
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--check-upstream",
                     env=clean_env(HF_TOKEN="hf_wrongStaleToken", HF_TOKEN_PATH=token_file))
        check(r.rc == 4 and "the token from HF_TOKEN has no access" in r.err, f"HF_TOKEN should beat HF_TOKEN_PATH: {r}")
        check("hf_wrongStaleToken" not in r.all, f"the token was printed: {r}")
        wrong_file = os.path.join(repo.tmp, "wrong-token")
        with open(wrong_file, "w") as f:
            f.write("hf_wrongFileToken\n")
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--check-upstream", "--token-file", wrong_file,
                     env=clean_env(HF_TOKEN=TOKEN))
        check(r.rc == 4 and f"the token from {wrong_file} has no access" in r.err,
              f"the refusal should name the token file: {r}")
        check("hf_wrongFileToken" not in r.all, f"the token was printed: {r}")


def test_token_never_printed():
    repo = small_repo(gated=True, tokens=[TOKEN])
    entries = file_entries(repo.files, repo.lfs)
    entries[0]["size"] += 1
    changed = repo.write_manifest(entries, "changed.yaml")
    env = clean_env(HF_TOKEN=TOKEN)
    runs = []
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "status", "code": 503, "times": 1, "path_contains": "/resolve/"}])
        runs.append(fetch(repo, sim, env=env))
        runs.append(fetch(repo, sim, "--json", env=env))
        runs.append(hf_fetch("--manifest", changed, "--endpoint", sim.hub, "--json", env=env))
        runs.append(hf_fetch("manifest", "create", repo.repo_id, "--endpoint", sim.hub, env=env))
        sim.set_faults([{"kind": "status", "code": 500, "times": -1}])
        # A run that needs the files fails with the Hub's sentence; a complete rerun serves the copy here with a
        # warning quoting it (docs/hf-fetch.md, "A rerun when nothing answers"): neither prints the token.
        runs.append(hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir",
                             os.path.join(repo.tmp, "empty-cache"), "--retries", "1", env=env))
        runs.append(fetch(repo, sim, "--retries", "1", env=env))
    runs.append(hf_fetch("--manifest", repo.manifest, "--endpoint", f"http://127.0.0.1:{closed_port()}", "--retries", "1",
                         env=env))
    runs.append(hf_fetch("--manifest", repo.manifest, "--endpoint", f"http://user:{TOKEN}@127.0.0.1:{closed_port()}",
                         "--retries", "1", "--json", env=env))
    check(runs[0].rc == 0 and runs[4].rc == 3 and runs[5].rc == 0 and "HTTP 500" in runs[5].err and runs[6].rc == 3,
          f"unexpected exit codes: {[x.rc for x in runs]}")
    for x in runs:
        check(TOKEN not in x.all, f"the token was printed: {x}")
    for root, _, names in os.walk(repo.cache):
        for n in names:
            p = os.path.join(root, n)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as f:
                    check(TOKEN.encode() not in f.read(), f"the token was written to {p}")


def test_gated_repo_exits_4_with_sentence():
    repo = small_repo(gated=True, tokens=[TOKEN])
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
        r2 = fetch(repo, sim, env=clean_env(HF_TOKEN="hf_notTheRightOne"))
        reqs = sim.requests()
    check(r.rc == 4, f"expected exit 4 without a token: {r}")
    check("org/model is a gated repository" in r.err and "token" in r.err, f"no clear sentence: {r}")
    # The library's sentence names where it looks for a token; the tool adds its own flag, only when no token
    # was found (with one, the sentence names the token that has no access).
    check("(HF_TOKEN or HF_TOKEN_PATH); or give one in a file with --token-file FILE" in r.err, f"no way to a token: {r}")
    check(r2.rc == 4 and "org/model" in r2.err and "no access" in r2.err, f"wrong token: {r2}")
    check("--token-file" not in r2.err, f"the flag offered though a token was given: {r2}")
    check(not resolves(reqs), "files were requested from a gated repo without access")
    with HubSim(repo.repos_json) as sim:
        j = fetch(repo, sim, "--json")
    s = j.json()
    check(j.rc == 4 and s["reason"] == "auth" and s["message"].endswith("--token-file FILE"), "--json summary", s)


def test_private_repo_exits_4():
    repo = small_repo(private=True, tokens=[TOKEN])
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim)
    check(r.rc == 4, f"expected exit 4: {r}")
    check("org/model" in r.err and "not found" in r.err and "token" in r.err, f"no clear sentence: {r}")


if __name__ == "__main__":
    main()
