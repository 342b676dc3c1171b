"""hf-fetch against the Hub simulator: retries, exit codes and the output modes, one behaviour per test function.

Run one: python3 test_errors_output.py TEST_NAME   (ctest runs each as its own test)
"""

import os
import sys
import subprocess
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, tempdir  # noqa: E402
from hf_fixtures import (HF_FETCH, Repo, blob, check_correct_or_absent, clean_env, file_entries,  # noqa: E402
                         hf_fetch, sha256)
from hf_small import closed_port, fetch, small_repo  # noqa: E402


# ---- retries, second run, exit codes ----------------------------------------------------------

def test_retries_on_5xx_burst():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "status", "code": 503, "times": 2, "path_contains": "/resolve/"},
                        {"kind": "status", "code": 502, "times": 1, "path_contains": "/tree/"}])
        r = fetch(repo, sim)
        reqs = sim.requests()
    check(r.rc == 0, f"fetch failed: {r}")
    statuses = [q["status"] for q in reqs if "/resolve/" in q["path"]]
    check(statuses[:2] == [503, 503], f"the burst did not happen: {statuses}")
    check(r.out.count("RETRY") >= 2, f"retries not reported: {r}")
    check_correct_or_absent(repo)


def test_retry_after_honoured_on_429():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "status", "code": 429, "times": 1, "path_contains": "/resolve/",
                         "headers": {"Retry-After": "2"}}])
        r = fetch(repo, sim)
        reqs = [q for q in sim.requests() if "/resolve/" in q["path"]]
    check(r.rc == 0, f"fetch failed: {r}")
    check(reqs[0]["status"] == 429, f"no 429 seen: {[q['status'] for q in reqs]}")
    retry = [q for q in reqs[1:] if q["path"] == reqs[0]["path"]][0]  # other files may run meanwhile (--jobs)
    gap = retry["time"] - reqs[0]["time"]
    check(gap >= 1.9, f"retried after {gap:.2f} s, Retry-After said 2")
    check_correct_or_absent(repo)


def test_5xx_until_retries_exhausted_exits_3():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "status", "code": 500, "times": -1, "path_contains": "/tree/"}])
        r = fetch(repo, sim, "--retries", "2")
        trees = [q for q in sim.requests() if "/tree/" in q["path"]]
    check(r.rc == 3, f"expected exit 3: {r}")
    check(len(trees) == 2, f"expected 2 attempts, saw {len(trees)}")
    check("HTTP 500" in r.err, f"{r}")
    check_correct_or_absent(repo)


def bad_manifests():
    """Manifests each refused for one reason: {path: (line, words in the sentence, ManifestRefusal name or None
    for a YAML syntax error)}."""
    tmp = tempdir("hf-fetch-manifest-")
    good = "manifest: 1\nrepo: org/model\nrevision: " + "a" * 40 + "\nfiles:\n"
    cases = {
        "dup.yaml": (good + "  - path: a.bin\n    size: 1\n    sha256: " + "0" * 64 +
                     "\n  - path: a.bin\n    size: 1\n    sha256: " + "0" * 64 + "\n", 8, "listed twice", "duplicate"),
        "branch.yaml": ("manifest: 1\nrepo: org/model\nrevision: main\nfiles:\n  - path: a\n    size: 1\n    git_oid: " +
                        "1" * 40 + "\n", 3, "40-hex commit", "not_pinned"),
        "dotdot.yaml": (good + "  - path: ../etc/passwd\n    size: 1\n    sha256: " + "0" * 64 + "\n", 5, "relative",
                        "unsafe_path"),
        "version.yaml": ("manifest: 2\n" + good.split("\n", 1)[1] + "  - path: a\n    size: 1\n    sha256: " + "0" * 64 + "\n",
                         1, "version", "unsupported_version"),
        "nohash.yaml": (good + "  - path: a\n    size: 1\n", 5, "sha256 or git_oid", "unhashed"),
        "yaml.yaml": (good + "  - path: [unclosed\n", 6, "YAML", None),
    }
    out = {}
    for name, (text, line, words, refusal) in cases.items():
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        out[path] = (line, words, refusal)
    return out


def test_manifest_errors_exit_2_with_file_and_line():
    tmp = tempdir("hf-fetch-manifest-")
    for path, (line, words, _) in bad_manifests().items():
        name = os.path.basename(path)
        r = hf_fetch("--manifest", path, "--endpoint", f"http://127.0.0.1:{closed_port()}")
        check(r.rc == 2, f"{name}: expected exit 2: {r}")
        check(f"{path}:{line}:" in r.err and words in r.err, f"{name}: expected '{path}:{line}: ...{words}': {r}")
    r = hf_fetch("--manifest", os.path.join(tmp, "nonexistent.yaml"))
    check(r.rc == 2, f"a missing manifest should exit 2: {r}")
    r = hf_fetch("--no-such-flag")
    check(r.rc == 2, f"a bad flag should exit 2: {r}")


def test_manifest_errors_json_name_the_refusal():
    # reason stays the shared invalid_input; detail.refusal says which (docs/json.md), for scripts to branch on.
    for path, (_, _, refusal) in bad_manifests().items():
        name = os.path.basename(path)
        r = hf_fetch("--manifest", path, "--endpoint", f"http://127.0.0.1:{closed_port()}", "--json")
        s = r.json_events()[-1]
        check(r.rc == 2 and s["event"] == "summary" and s["reason"] == "invalid_input", f"{name}: summary: {r}")
        if refusal is None:  # a YAML syntax error is no manifest refusal
            check("detail" not in s, f"{name}: no detail: {s}")
        else:
            check(s.get("detail") == {"refusal": refusal}, f"{name}: detail.refusal {refusal}: {s}")


def test_network_down_exits_3():
    repo = small_repo()
    port = closed_port()
    t = time.monotonic()
    r = hf_fetch("--manifest", repo.manifest, "--endpoint", f"http://127.0.0.1:{port}", "--retries", "2",
                 "--cache-dir", repo.cache)
    check(r.rc == 3, f"expected exit 3: {r}")
    check(f"127.0.0.1:{port}" in r.err and "after 2 attempts" in r.err, f"no clear sentence: {r}")
    check(time.monotonic() - t < 15, "took too long")


def test_redirect_loop_is_a_clear_error():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "redirect_loop", "times": -1}])
        r = fetch(repo, sim, "--retries", "1")
    check(r.rc == 3, f"expected exit 3: {r}")
    check("too many redirects" in r.err, f"{r}")
    check_correct_or_absent(repo)


def test_json_events_and_summary():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim, "--json")
    check(r.rc == 0, f"fetch failed: {r}")
    events = r.json_events()  # every stdout line must be JSON
    files = {e["path"]: e for e in events if e["event"] == "file" and e["status"] == "OK"}
    check(set(files) == set(repo.files), f"not one OK event per file: {sorted(files)}")
    check(all(files[p]["sha256"] == sha256(d) for p, d in repo.files.items()), "sha256 in events is wrong")
    s = events[-1]
    check(s["event"] == "summary" and s["exit_code"] == 0 and s["downloaded"] == len(repo.files), f"summary: {s}")


def test_terminal_shows_live_progress():
    import pty
    import select
    files = {"big.safetensors": blob(4 << 20, "tty"), "config.json": b"{}\n"}
    repo = Repo(files, lfs={"big.safetensors"})
    with HubSim(repo.repos_json) as sim:
        # Slow the big file down so that the display redraws while it streams.
        sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 4 << 20}])
        master, slave = pty.openpty()
        proc = subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache],
                                stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=clean_env())
        os.close(slave)
        out = b""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        proc.wait(10)
        os.close(master)
    text = out.decode(errors="replace")
    check(proc.returncode == 0, f"fetch failed on a terminal: {text}")
    redraws = text.count("\r\x1b[K[")
    check(redraws >= 3, f"expected a redrawn progress line, saw {redraws}: {text!r}")
    check("big.safetensors" in text and "B/s ETA" in text and "total" in text,
          f"progress line lacks file, rate, ETA or total: {text!r}")


def test_quiet_prints_only_problems():
    repo = small_repo()
    with HubSim(repo.repos_json) as sim:
        r = fetch(repo, sim, "--quiet")
        check(r.rc == 0 and r.out == "" and r.err == "", f"--quiet printed on success: {r}")
        entries = file_entries(repo.files, repo.lfs)
        entries[0]["size"] += 1
        changed = repo.write_manifest(entries, "changed.yaml")
        r2 = hf_fetch("--manifest", changed, "--endpoint", sim.hub, "--quiet")
    check(r2.rc == 1 and "UPSTREAM CHANGED config.json" in r2.err, f"--quiet hid a problem: {r2}")


if __name__ == "__main__":
    main()
