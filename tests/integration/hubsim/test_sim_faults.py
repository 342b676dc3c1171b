#!/usr/bin/env python3
"""Self-test of the Hub simulator: every fault kind, spoken to with plain http.client (no client library in
between).

Each test starts its own simulator (`with demo_sim(tmp) as sim:`, about a second), so no test sees
another's fault rules or requests.
Run one: python3 test_sim_faults.py TEST_NAME   (ctest runs each on its own)
"""

import http.client
import json
import os
import socket
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import DEMO_REPO, DEMO_SHA, check, main  # noqa: E402
from sim_fixtures import (FILES, GOOD, check_equal, demo_sim, follow, git_blob_id, request,  # noqa: E402
                          resolve_url, shown)


# ---- faults ----------------------------------------------------------------------------------

FAULT_PATH = "UD-IQ4_XS/part-3"  # the LFS file the body faults are tried on


def cdn_url(sim):
    return request(resolve_url(sim, FAULT_PATH))[1]["Location"]


def raw_get(url, headers=None, timeout=10):
    """GET returning (status, headers, bytes received, cleanly finished?)."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request("GET", u.path + "?" + u.query, headers=headers or {})
        try:
            r = conn.getresponse()
        except ConnectionResetError:  # an abortive close may take the headers with it
            return None, {}, b"", False
        got = b""
        try:
            while True:
                block = r.read(4096)
                if not block:
                    break
                got += block
            return r.status, r.headers, got, len(got) == int(r.headers["Content-Length"])
        except http.client.IncompleteRead as e:
            return r.status, r.headers, got + e.partial, False
        except ConnectionResetError:
            return r.status, r.headers, got, False
    finally:
        conn.close()


def test_close_mid_body_and_truncate(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        for kind in ("close_mid_body", "truncate"):
            sim.set_faults([{"kind": kind, "origin": "cdn", "at": 5000}])
            url = cdn_url(sim)
            status, h, got, complete = raw_get(url)
            check_equal((status, h["Content-Length"], complete), (200, str(len(data)), False),
                        f"{kind}: (status, Content-Length, complete)")
            check_equal(got, data[:5000], f"{kind}: the bytes received")
            status, _, got, complete = raw_get(url)  # times: 1 -> spent
            check_equal((got, complete), (data, True), f"{kind} spent: (bytes received, complete)")


def test_close_mid_body_with_reset(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "close_mid_body", "at": 5000, "reset": True}])
        status, h, got, complete = raw_get(cdn_url(sim))
        check(status in (200, None), f"status {status}, not 200 or none (reset before the headers)")
        check(not complete, "the body came whole despite the reset")
        check_equal(got, data[:len(got)], "the bytes received are not the file's start")
        check(len(got) <= 5000, f"{len(got)} bytes received, more than the 5000 before the reset")
        check_equal(sim.faults()[0]["fired"], 1, "the rule's fired count")


def test_close_mid_body_on_a_range(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "close_mid_body", "at": 10}])
        status, h, got, complete = raw_get(cdn_url(sim), {"Range": "bytes=1000-"})
    check_equal((status, got, complete), (206, data[1000:1010], False), "(status, bytes received, complete)")


def test_ignore_range(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "ignore_range", "origin": "cdn"}])
        url = cdn_url(sim)
        status, h, body = request(url, headers={"Range": "bytes=100-"})
        check_equal((status, body), (200, data), "Range ignored: (status, body)")
        check("Content-Range" not in h, "Range ignored, yet a Content-Range", h)
        status, h, body = request(url, headers={"Range": "bytes=100-"})
        check_equal((status, body), (206, data[100:]), "the rule spent: (status, body)")


def test_wrong_bytes(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "wrong_bytes", "at": 1000, "count": 4}])
        status, h, body = request(cdn_url(sim))
        check_equal((status, len(body)), (200, len(data)), "(status, body length)")
        check_equal(body[:1000], data[:1000], "the bytes before the wrong ones")
        check_equal(body[1004:], data[1004:], "the bytes after the wrong ones")
        check(all(body[i] != data[i] for i in range(1000, 1004)), "bytes 1000-1003 are not all wrong",
              f"got {shown(body[1000:1004])}, the file has {shown(data[1000:1004])}")
        sim.set_faults([{"kind": "wrong_bytes", "origin": "hub", "path_contains": "config.json"}])
        body = request(resolve_url(sim, "config.json"))[2]
        check(body != FILES["config.json"], "wrong_bytes on the hub: config.json came right", shown(body))
        check_equal(len(body), len(FILES["config.json"]), "wrong_bytes on the hub: the body's length")


def test_status_burst_with_headers(tmp):
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "status", "code": 503, "times": 2, "path_contains": "/resolve/",
                         "headers": {"Retry-After": "1"}}])
        url = resolve_url(sim, "config.json")
        for i in range(2):
            status, h, _ = request(url)
            check_equal((status, h["Retry-After"]), (503, "1"), f"request {i + 1}: (status, Retry-After)")
        check_equal(request(url)[0], 200, "request 3 (the rule spent): status")
        rules = sim.faults()
        check_equal((rules[0]["times"], rules[0]["fired"]), (0, 2), "the rule's (times, fired)")


def test_status_forever_and_origin_filter(tmp):
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "status", "code": 502, "origin": "cdn", "times": -1}])
        url = cdn_url(sim)  # the hub is not affected
        for i in range(3):
            check_equal(request(url)[0], 502, f"CDN request {i + 1}: status")
        check_equal(request(resolve_url(sim, "config.json"))[0], 200, "a hub request: status")


def test_rate_limit(tmp):
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "rate_limit", "retry_after": 2, "ratelimit": '"resolvers";r=0;t=2',
                         "ratelimit_policy": '"fixed window";"resolvers";q=3000;w=300'}])
        status, h, _ = request(resolve_url(sim, "config.json"))
        check_equal((status, h["Retry-After"], h["RateLimit"]), (429, "2", '"resolvers";r=0;t=2'),
                    "(status, Retry-After, RateLimit)")
        check_equal(h["RateLimit-Policy"], '"fixed window";"resolvers";q=3000;w=300', "RateLimit-Policy")
        check_equal(request(resolve_url(sim, "config.json"))[0], 200, "the rule spent: status")


def test_headers_on_a_normal_answer(tmp):
    rl = '"api";r=0;t=2'
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "headers", "path_contains": "/tree/", "headers": {"RateLimit": rl}}])
        status, h, _ = request(resolve_url(sim, "config.json"))  # another path: untouched
        check_equal((status, h.get("RateLimit")), (200, None), "another path: (status, RateLimit)")
        status, h, body = request(f"{sim.hub}/api/models/{DEMO_REPO}/tree/{DEMO_SHA}")
        check_equal((status, h["RateLimit"]), (200, rl), "the tree: (status, RateLimit)")
        check(json.loads(body), "the tree listing is empty", shown(body))  # the listing itself as usual
        status, h, _ = request(f"{sim.hub}/api/models/{DEMO_REPO}/tree/{DEMO_SHA}")
        check_equal((status, h.get("RateLimit")), (200, None), "the rule spent: (status, RateLimit)")  # times: 1


def test_revision_sha(tmp):
    other = "b" * 40
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "revision_sha", "sha": other}])
        status, _, body = request(f"{sim.hub}/api/models/{DEMO_REPO}/revision/{DEMO_SHA}")
        check_equal((status, json.loads(body)["sha"]), (200, other), "the lie: (status, sha)")
        status, _, body = request(f"{sim.hub}/api/models/{DEMO_REPO}/revision/{DEMO_SHA}")
        check_equal((status, json.loads(body)["sha"]), (200, DEMO_SHA), "the rule spent: (status, sha)")


def test_stall(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "stall", "at": 3000, "seconds": 1.5}])
        url = cdn_url(sim)
        try:
            raw_get(url, timeout=0.5)
            timed_out = False
        except (socket.timeout, TimeoutError):
            timed_out = True
        check(timed_out, "a 1.5 s stall did not time out a 0.5 s read")
        began = time.monotonic()
        sim.set_faults([{"kind": "stall", "at": 3000, "seconds": 0.5}])
        status, _, got, complete = raw_get(url, timeout=5)
        check_equal((got, complete), (data, True), "(bytes received, complete)")  # the rest comes after the stall
        took = time.monotonic() - began
        check(took > 0.45, f"a 0.5 s stall took only {took:.2f} s")


def test_throttle(tmp):
    data = FILES[FAULT_PATH]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "throttle", "bytes_per_second": 400_000}])
        url = cdn_url(sim)
        began = time.monotonic()
        status, _, body = request(url)
        took = time.monotonic() - began
    check_equal(body, data, "the body")
    check(took > len(data) / 400_000 * 0.8,
          f"{len(data)} bytes at 400000 bytes/s took {took:.2f} s, under 80% of {len(data) / 400_000:.2f} s")


def test_expire_url(tmp):
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "expire_url", "times": 1}])
        url = cdn_url(sim)
        status, h, body = request(url, headers={"Range": "bytes=0-9"})
        check_equal(status, 403, "status")
        check(b"AccessDenied" in body, "the body does not say AccessDenied", shown(body))
        check_equal(request(url, headers={"Range": "bytes=0-9"})[0], 206, "the rule spent: status")


def test_redirect_loop(tmp):
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "redirect_loop", "times": -1}])
        url = resolve_url(sim, "config.json")
        status, h, _ = request(url)
    check_equal((status, h["Location"]), (302, url), "(status, Location)")


def test_redirect_other_origin(tmp):
    data = FILES["config.json"]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "redirect_other_origin"}])
        status, h, _ = request(resolve_url(sim, "config.json"), headers={"Authorization": f"Bearer {GOOD}"})
        check_equal((status, h["ETag"], h["X-Repo-Commit"]), (302, f'"{git_blob_id(data)}"', DEMO_SHA),
                    "the hub: (status, ETag, X-Repo-Commit)")
        check(h["Location"].startswith(sim.cdn + "/"), "the Location is not on the CDN", h["Location"])
        status, ch, body = request(h["Location"])
        check_equal((status, body, ch["ETag"]), (200, data, f'"{git_blob_id(data)}"'), "the CDN: (status, body, ETag)")


def test_relative_redirect(tmp):
    data = FILES["config.json"]
    with demo_sim(tmp) as sim:
        sim.set_faults([{"kind": "relative_redirect"}])
        status, h, _ = request(resolve_url(sim, "config.json"))
        check_equal(status, 307, "status")
        check(h["Location"].startswith("/api/resolve-cache/models/"),
              "the Location is not relative, under /api/resolve-cache/models/", h["Location"])
        status, h, body, _ = follow(resolve_url(sim, "config.json"))
        check_equal((status, body, h["X-Repo-Commit"]), (200, data, DEMO_SHA),
                    "followed: (status, body, X-Repo-Commit)")


def test_bad_rules_refused(tmp):
    with demo_sim(tmp) as sim:
        status, _, body = request(sim.hub + "/_sim/faults", "POST", {"Content-Type": "application/json"},
                                  json.dumps([{"kind": "no_such_kind"}]))
    check_equal(status, 400, "status")
    check("no_such_kind" in json.loads(body)["error"], "the error does not name the unknown kind", shown(body))


def test_expired_signature_is_403(tmp):
    with demo_sim(tmp, url_ttl=-5) as sim:  # every signed URL is born expired
        status, h, _ = request(resolve_url(sim, "model-00001-of-00002.safetensors"))
        check_equal(status, 302, "the hub: status")
        status, _, body = request(h["Location"])
    check_equal(status, 403, "the CDN: status")
    check(b"AccessDenied" in body, "the body does not say AccessDenied", shown(body))


if __name__ == "__main__":
    main()
