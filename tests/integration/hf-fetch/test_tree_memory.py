"""What holding a large tree costs (issue 41, item 7): hf-fetch's peak memory per selected file, for a dry run
and for a fetch up to its first request for bytes, against the Hub simulator serving a wide tree of LFS
files (paths like the Hub's large trees, "shard-00042/part-000123.safetensors"). The cost per file is the
difference of two runs' peak RSS (the child's own, from wait4, as GNU time reports it) over the difference
of their file counts, so the binary's own size and the libraries cancel out.

Before (e51331b and 05723a5): about 6.6 KB a file for the dry run (every file's planned job, six
std::filesystem::paths, held from the plan to the end of the run); the fetch of 50,000 files failed at once,
"Too many open files" (a transfer per file made before the first request, each holding its directory open).
The bound is what docs/hf-fetch.md states for the listing cap: 500,000 files within 1 GiB.

Run one: python3 test_tree_memory.py TEST_NAME   (ctest runs each as its own test)
"""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main  # noqa: E402
from hf_fixtures import HF_FETCH, clean_env  # noqa: E402

SMALL, LARGE = 2000, 50000
MAX_PER_FILE = 2048  # bytes: 500,000 files (the listing cap) in 1 GiB
SHA = "ab" * 20


def wide_repos(tmp):
    """repos.json with org/small (SMALL files) and org/large (LARGE files), all LFS entries of one 1-byte
    source whose sha256 is given (the simulator does not hash 50,000 files)."""
    os.makedirs(os.path.join(tmp, "files"), exist_ok=True)
    with open(os.path.join(tmp, "files", "one"), "wb") as f:
        f.write(b"x")
    one = hashlib.sha256(b"x").hexdigest()

    def repo(repo_id, n):
        files = [{"path": f"shard-{i // 1000:05d}/part-{i % 1000:06d}.safetensors", "source": "files/one",
                  "lfs": True, "sha256": one} for i in range(n)]
        return {"id": repo_id, "type": "model", "commits": [{"sha": SHA, "refs": ["main"], "files": files}]}

    path = os.path.join(tmp, "repos.json")
    with open(path, "w") as f:
        json.dump({"repos": [repo("org/small", SMALL), repo("org/large", LARGE)]}, f)
    return path


def peak_rss(argv, out_path, stop=None):
    """(exit status, peak RSS in bytes, stdout) of one run of `argv`; `stop()`, when given, is polled while it
    runs, and it is sent SIGTERM once that returns true."""
    with open(out_path, "wb") as out:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.DEVNULL, env=clean_env())
    ended = None
    deadline = time.monotonic() + 240
    while stop and ended is None and time.monotonic() < deadline:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            ended = (status, usage)
        elif stop():
            p.send_signal(signal.SIGTERM)
            break
        else:
            time.sleep(0.1)
    if ended is None:
        _, status, usage = os.wait4(p.pid, 0)
        ended = (status, usage)
    p.returncode = os.waitstatus_to_exitcode(ended[0])  # reaped here: Popen must not wait for it again
    with open(out_path) as f:
        return p.returncode, ended[1].ru_maxrss * 1024, f.read()


def per_file(tmp, run):
    """The cost per file of `run(repo, cache) -> (rc, rss, out)` between org/small and org/large."""
    got = {}
    for repo, n in (("org/small", SMALL), ("org/large", LARGE)):
        rc, rss, out = run(repo, os.path.join(tmp, "cache-" + repo.replace("/", "-")))
        got[n] = (rc, rss, out[-400:])
    cost = (got[LARGE][1] - got[SMALL][1]) / (LARGE - SMALL)
    print(f"peak RSS {got[SMALL][1] >> 20} MiB for {SMALL} files, {got[LARGE][1] >> 20} MiB for {LARGE}: "
          f"{cost:.0f} bytes per file")
    return got, cost


def test_dry_run_of_a_wide_tree_holds_little_per_file(tmp):
    with HubSim(wide_repos(tmp), timeout=600) as sim:
        def dry_run(repo, cache):
            return peak_rss([HF_FETCH, repo, "--dry-run", "--json", "--endpoint", sim.hub, "--cache-dir", cache],
                            cache + ".out")
        got, cost = per_file(tmp, dry_run)
    for n, (rc, _, out) in got.items():
        check(rc == 0 and '"mode":"dry-run"' in out.replace(" ", ""), f"{n} files: dry run exit {rc}: {out}")
    check(cost < MAX_PER_FILE, f"a dry run holds {cost:.0f} bytes per file, over {MAX_PER_FILE}")


def test_fetch_of_a_wide_tree_holds_little_per_file_at_its_first_request(tmp):
    with HubSim(wide_repos(tmp), timeout=600) as sim:
        def fetch_start(repo, cache):
            sim.clear_requests()

            def asked_for_bytes():
                return any("/resolve/" in q["path"] for q in sim.requests())
            return peak_rss([HF_FETCH, repo, "--json", "--progress", "none", "--jobs", "1", "--endpoint", sim.hub,
                             "--cache-dir", cache], cache + ".out", stop=asked_for_bytes)
        got, cost = per_file(tmp, fetch_start)
    for n, (rc, _, out) in got.items():
        check(rc == 143, f"{n} files: the fetch was not stopped at its first request (exit {rc}): {out}")
    check(cost < MAX_PER_FILE, f"a fetch holds {cost:.0f} bytes per file at its first request, over {MAX_PER_FILE}")


if __name__ == "__main__":
    main()
