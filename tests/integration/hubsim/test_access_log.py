#!/usr/bin/env python3
"""Self-test of the Hub simulator: access control (gated, private) and the request log, spoken to with plain http.client (no client library in
between).

Each test starts its own simulator (`with demo_sim(tmp) as sim:`, about a second), so no test sees
another's fault rules or requests.
Run one: python3 test_access_log.py TEST_NAME   (ctest runs each on its own)
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import DEMO_REPO, check, main  # noqa: E402
from sim_fixtures import BAD, GOOD, check_equal, demo_sim, log_path, request, resolve_url, shown  # noqa: E402


# ---- access control --------------------------------------------------------------------------

def test_gated_repo(tmp):
    with demo_sim(tmp) as sim:
        url = resolve_url(sim, "a.txt", repo="org/gated")
        tree = f"{sim.hub}/api/models/org/gated/tree/main"
        for u in (url, tree):
            status, h, body = request(u)
            check_equal((status, h["X-Error-Code"]), (401, "GatedRepo"), f"{u} without a token: (status, X-Error-Code)")
            check("error" in json.loads(body), f"{u} without a token: no error in the body", shown(body))
            status, h, _ = request(u, headers={"Authorization": f"Bearer {BAD}"})
            check_equal((status, h["X-Error-Code"]), (403, "GatedRepo"),
                        f"{u} with a token not granted: (status, X-Error-Code)")
            status, h, _ = request(u, headers={"Authorization": f"Bearer {GOOD}"})
            check_equal(status, 200, f"{u} with a granted token: status")
        status, h, _ = request(f"{sim.hub}/api/models/org/gated/revision/main",
                               headers={"Authorization": f"Bearer {GOOD}"})
        check_equal(status, 200, "the gated revision with a granted token: status")


def test_gated_lfs_cdn_needs_no_token(tmp):
    with demo_sim(tmp) as sim:
        status, h, _ = request(resolve_url(sim, "w.bin", repo="org/gated"), headers={"Authorization": f"Bearer {GOOD}"})
        check_equal(status, 302, "the gated LFS file with a granted token: status")
        status, _, body = request(h["Location"])
        check_equal((status, body), (200, b"W" * 5000), "its CDN URL without a token: (status, body)")


def test_private_repo(tmp):
    with demo_sim(tmp) as sim:
        url = resolve_url(sim, "a.txt", repo="org/private")
        status, h, _ = request(url)
        check_equal((status, h["X-Error-Code"]), (401, "RepoNotFound"), "without a token: (status, X-Error-Code)")
        status, h, _ = request(url, headers={"Authorization": f"Bearer {BAD}"})
        check_equal((status, h["X-Error-Code"]), (404, "RepoNotFound"),
                    "with a token not granted: (status, X-Error-Code)")
        status, h, body = request(url, headers={"Authorization": f"Bearer {GOOD}"})
        check_equal((status, body), (200, b"private\n"), "with a granted token: (status, body)")


# ---- the request log -------------------------------------------------------------------------

def test_request_log_both_origins(tmp):
    path = "model-00002-of-00002.safetensors"
    with demo_sim(tmp) as sim:
        sim.clear_requests()
        check_equal(sim.requests(), [], "the requests after clear_requests")
        status, h, _ = request(resolve_url(sim, path), headers={"Authorization": f"Bearer {GOOD}",
                                                                "X-Probe": "one"})
        request(h["Location"], headers={"Range": "bytes=0-99"})
        reqs = sim.requests()
        check_equal([(r["origin"], r["method"], r["status"]) for r in reqs],
                    [("hub", "GET", 302), ("cdn", "GET", 206)], "the requests logged: (origin, method, status)")
        check_equal(reqs[0]["headers"]["Authorization"], f"Bearer {GOOD}", "the hub request's Authorization")
        check_equal(reqs[0]["headers"]["X-Probe"], "one", "the hub request's X-Probe")
        check_equal(reqs[0]["path"], f"/{DEMO_REPO}/resolve/main/{path}", "the hub request's path")
        check("Authorization" not in reqs[1]["headers"], "the CDN request has an Authorization", reqs[1])
        check_equal(reqs[1]["headers"]["Range"], "bytes=0-99", "the CDN request's Range")
        check_equal(reqs[1]["bytes_sent"], 100, "the CDN request's bytes_sent")
        check_equal(sim.requests("cdn"), reqs[1:], "requests('cdn')")
        # The file gets a line once each response is finished: in the order the handlers finish, which under
        # load need not be the order the client saw the answers (the hub's thread may write its line after the
        # CDN's), so the CDN request's line is found by its origin.
        deadline = time.monotonic() + 5
        while True:
            with open(log_path(tmp)) as f:
                lines = [json.loads(line) for line in f]
            cdn = [line for line in lines if line["origin"] == "cdn"]
            if cdn or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        check_equal([line["path"] for line in cdn], [reqs[1]["path"]], "the log file's CDN lines: path")
        check_equal(cdn[0]["bytes_sent"], 100, "the log file's CDN line: bytes_sent")


if __name__ == "__main__":
    main()
