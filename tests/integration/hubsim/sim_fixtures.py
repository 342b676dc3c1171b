"""What the Hub simulator's self-tests share: the demo simulator with a gated, a private and a dataset
repository beside it, and plain http.client requests to it."""

import contextlib
import hashlib
import http.client
import json
import os
import re
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import DEMO_REPO, HubSim, check, demo_files, make_demo, make_repo  # noqa: E402


GOOD = "hf_good_token"
BAD = "hf_other_token"
PR_SHA = "1" * 40
PAGE_SIZE = 3  # tree listings come in pages this long, so the demo's listing takes several
REDIRECTS = (301, 302, 307, 308)
FILES, LFS = demo_files()  # the demo repo's files {path: bytes} and the set of its LFS paths


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def shown(value, limit=300):
    """repr(value), cut short: a failed check shows file contents without printing megabytes."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def check_equal(got, want, what):
    """check(got == want, what), showing both values when they differ."""
    check(got == want, what, f"got:  {shown(got)}\nwant: {shown(want)}")


def request(url, method="GET", headers=None, body=None, timeout=10):
    """(status, headers as a case-insensitive message, body bytes) for one request, no redirects."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request(method, u.path + ("?" + u.query if u.query else ""), body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.headers, resp.read()
    finally:
        conn.close()


def list_tree(url):
    """Every entry of a tree listing, following Link pages; also returns the number of pages."""
    entries, pages = [], 0
    while url:
        status, h, body = request(url)
        check(status == 200, f"tree page {url}: status {status}, not 200", shown(body))
        entries += json.loads(body)
        pages += 1
        link = h.get("Link")
        m = re.fullmatch(r'<(http://[^>]+)>; rel="next"', link) if link else None
        check(not link or m, f"Link header {link!r} is not '<ABSOLUTE-URL>; rel=\"next\"'")
        url = m.group(1) if m else None
    return entries, pages


def follow(url, headers=None, limit=5):
    """GET following redirects (relative ones too); returns the last (status, headers, body, url)."""
    for _ in range(limit):
        status, h, body = request(url, headers=headers)
        if status not in REDIRECTS:
            break
        url = urllib.parse.urljoin(url, h["Location"])
    check(status not in REDIRECTS, f"still redirected after {limit} redirects", url)
    return status, h, body, url


def resolve_url(sim, path, rev="main", repo=DEMO_REPO):
    return f"{sim.hub}/{repo}/resolve/{urllib.parse.quote(rev, safe='')}/{path}"


def log_path(tmp):
    return os.path.join(tmp, "requests.jsonl")


@contextlib.contextmanager
def demo_sim(tmp, url_ttl=None):
    """The simulator over the demo (with a refs/pr/1 commit), a gated, a private and a dataset repo
    made in `tmp`, writing its request log to log_path(tmp); stopped when the block ends."""
    repos_json = make_demo(tmp)
    make_repo(tmp, "provkit/demo-model", {"config.json": b'{"pr": 1}\n'}, sha=PR_SHA, refs=["refs/pr/1"])
    make_repo(tmp, "org/gated", {"a.txt": b"gated\n", "w.bin": b"W" * 5000}, lfs={"w.bin"}, gated="manual",
              tokens=[GOOD])
    make_repo(tmp, "org/private", {"a.txt": b"private\n"}, private=True, tokens=[GOOD])
    make_repo(tmp, "org/data", {"d/x.csv": b"a,b\n1,2\n"}, repo_type="dataset")
    with HubSim(repos_json, page_size=PAGE_SIZE, url_ttl=url_ttl, log=log_path(tmp)) as sim:
        yield sim
