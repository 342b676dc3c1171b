#!/usr/bin/env python3
"""Self-test of the Hub simulator: its life (start, ready file, reload, stop) and --external-cdn, spoken to with plain http.client (no client library in
between).

Each test starts its own simulator (`with demo_sim(tmp) as sim:`, about a second), so no test sees
another's fault rules or requests.
Run one: python3 test_lifecycle.py TEST_NAME   (ctest runs each on its own)
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import DEMO_REPO, HubSim, check, main, make_demo, make_repo  # noqa: E402
from sim_fixtures import FILES, check_equal, request, sha256  # noqa: E402


# ---- the simulator's life --------------------------------------------------------------------

def test_stopped_even_on_exception_and_ready_file_contents(tmp):
    repos = make_demo(tmp)
    try:
        with HubSim(repos) as sim:
            proc = sim.proc
            check(re.search(r"^http://127\.0\.0\.1:\d+$", sim.hub), "the hub is not http://127.0.0.1:PORT", sim.hub)
            check(re.search(r"^http://127\.0\.0\.2:\d+$", sim.cdn), "the CDN is not http://127.0.0.2:PORT", sim.cdn)
            raise KeyError("boom")
    except KeyError:
        pass
    check(proc.poll() is not None, "the simulator outlived its context")


def test_reload_sees_a_new_commit(tmp):
    old = make_repo(tmp, "org/moving", {"a.txt": b"one\n"})
    with HubSim(os.path.join(tmp, "repos.json")) as sim:
        new = make_repo(tmp, "org/moving", {"a.txt": b"two\n"})
        check_equal(json.loads(request(f"{sim.hub}/api/models/org/moving/revision/main")[2])["sha"], old,
                    "main before reload")
        sim.reload()
        check_equal(json.loads(request(f"{sim.hub}/api/models/org/moving/revision/main")[2])["sha"], new,
                    "main after reload")
        check_equal(request(f"{sim.hub}/org/moving/resolve/{old}/a.txt")[2], b"one\n", "a.txt at the old commit")
        check_equal(request(f"{sim.hub}/org/moving/resolve/main/a.txt")[2], b"two\n", "a.txt on main")


def test_external_cdn_template(tmp):
    repos = make_demo(tmp)
    with HubSim(repos, extra_args=["--external-cdn", "http://127.0.0.3:8080/b/{type}/{repo}/{sha256}"]) as sim:
        status, h, _ = request(f"{sim.hub}/{DEMO_REPO}/resolve/main/UD-IQ4_XS/part-1", "HEAD")
    want = sha256(FILES["UD-IQ4_XS/part-1"])
    check_equal(status, 302, "status")
    check(h["Location"].startswith(f"http://127.0.0.3:8080/b/model/{DEMO_REPO}/{want}?Expires="),
          "the Location does not follow the --external-cdn template", h["Location"])


def test_bad_repos_json_fails_fast(tmp):
    p = os.path.join(tmp, "repos.json")
    with open(p, "w") as f:
        json.dump({"repos": [{"id": "a/b", "commits": [{"sha": "xyz", "files": []}]}]}, f)
    sim = HubSim(p)
    try:
        sim.start()
        error = None
    except RuntimeError as e:
        error = str(e)
    else:
        sim.stop()
    check(error is not None and re.search("40 lowercase hex", error),
          "a commit sha 'xyz' was not refused with RuntimeError naming '40 lowercase hex'", error)


if __name__ == "__main__":
    main()
