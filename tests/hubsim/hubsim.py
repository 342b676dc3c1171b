#!/usr/bin/env python3
"""Hub simulator: the Hugging Face Hub's download protocol on loopback, for tests.

Two origins, each its own ThreadingHTTPServer: the Hub (API, resolve) and the "CDN"
(signed URLs for LFS blobs) on another loopback address, as on the real Hub.
Standard library only. See README.md beside this file for the contract.
"""

import argparse
import hashlib
import hmac
import http.server
import json
import os
import secrets
import signal
import sys
import threading
import time
import urllib.parse

# The simulator's parts, each in its own module beside this file; every name stays importable as hubsim.NAME.
from hubsim_repos import (CHUNK, FIXED_DATE, LFS_POINTER, PLURAL_TYPE, RESOLVE_PREFIX, TYPE_PLURAL,  # noqa: F401
                          Commit, Repo, RepoFile, git_blob_id, hash_file, load_repos, write_atomic)
from hubsim_faults import FAULT_KINDS, Faults, RequestLog  # noqa: F401
from hubsim_http import CdnHandler, ClientGone, Handler, HubHandler, parse_range  # noqa: F401
from hubsim_demo import (DEMO_REPO, DEMO_SHA, demo_files, demo_manifest, deterministic_bytes,  # noqa: F401
                         make_demo, safetensors_bytes, write_repos_json)


class Simulator:
    def __init__(self, repos_json, page_size, url_ttl, log_path, external_cdn=None):
        self.repos_json = repos_json
        self.external_cdn = external_cdn
        self.page_size = page_size
        self.url_ttl = url_ttl
        self.secret = secrets.token_bytes(32)
        self.faults = Faults()
        self.log = RequestLog(log_path)
        self.hub_url = self.cdn_url = None
        self.load()

    def load(self):
        """(Re)reads repos.json; requests in flight keep the repositories they started with."""
        repos = load_repos(self.repos_json)
        # CDN path -> (source file, size, etag): LFS blobs by sha256, and plain files by git oid for
        # the redirect_other_origin fault.
        cdn_blobs = {}
        for repo in repos.values():
            for c in repo.commits:
                for f in c.files.values():
                    if f.lfs:
                        cdn_blobs[f"/repos/{repo.type}s/{repo.id}/{f.sha256}"] = (f.source, f.size, f.sha256)
                    else:
                        cdn_blobs[f"/raw/{repo.type}s/{repo.id}/{f.git_oid}"] = (f.source, f.size, f.git_oid)
        self.repos, self.cdn_blobs = repos, cdn_blobs

    def lfs_location(self, rtype, repo_id, sha256):
        """Where the Hub redirects an LFS download: our CDN origin, or --external-cdn (e.g. nginx
        serving the blobs for a benchmark), with a signed expiry either way."""
        if self.external_cdn:
            url = urllib.parse.urlsplit(self.external_cdn.format(sha256=sha256, repo=repo_id, type=rtype))
            return self.sign(f"{url.scheme}://{url.netloc}", url.path)
        return self.sign(self.cdn_url, f"/repos/{rtype}s/{repo_id}/{sha256}")

    def _mac(self, path, expires):
        return hmac.new(self.secret, f"{path}\n{expires}".encode(), hashlib.sha256).hexdigest()

    def sign(self, origin_url, path):
        expires = int(time.time()) + self.url_ttl
        return f"{origin_url}{path}?Expires={expires}&Signature={self._mac(path, expires)}"

    def signature_ok(self, path, expires, signature):
        if not expires.isdigit() or int(expires) < time.time():
            return False
        return hmac.compare_digest(self._mac(path, expires), signature)


def make_server(host, port, handler_base, sim):
    handler = type(handler_base.__name__, (handler_base,), {"sim": sim})

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128

    return Server((host, port), handler)



def serve(args):
    sim = Simulator(args.repos, args.page_size, args.url_ttl, args.log, args.external_cdn)
    hub = make_server(args.hub_host, args.hub_port, HubHandler, sim)
    cdn = make_server(args.cdn_host, args.cdn_port, CdnHandler, sim)
    sim.hub_url = f"http://{args.hub_host}:{hub.server_address[1]}"
    sim.cdn_url = f"http://{args.cdn_host}:{cdn.server_address[1]}"
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    for server in (hub, cdn):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    if args.ready_file:
        write_atomic(args.ready_file, json.dumps({"hub": sim.hub_url, "cdn": sim.cdn_url, "pid": os.getpid()}))
    print(f"hubsim: hub {sim.hub_url} cdn {sim.cdn_url}", file=sys.stderr, flush=True)
    while not stop.wait(0.5):
        pass
    # Stalled handlers are daemon threads: leave without waiting for them.
    os._exit(0)



def main(argv):
    if argv and argv[0] == "make-demo":
        if len(argv) != 2:
            print("usage: hubsim.py make-demo OUTDIR", file=sys.stderr)
            return 2
        os.makedirs(argv[1], exist_ok=True)
        print(json.dumps(make_demo(argv[1]), indent=2))
        return 0
    ap = argparse.ArgumentParser(description="Hugging Face Hub simulator (see README.md)")
    ap.add_argument("--repos", required=True)
    ap.add_argument("--ready-file")
    ap.add_argument("--log")
    ap.add_argument("--hub-host", default="127.0.0.1")
    ap.add_argument("--cdn-host", default="127.0.0.2")
    ap.add_argument("--hub-port", type=int, default=0)
    ap.add_argument("--cdn-port", type=int, default=0)
    ap.add_argument("--page-size", type=int, default=1000)
    ap.add_argument("--url-ttl", type=int, default=3600, help="seconds a signed CDN URL stays valid")
    ap.add_argument("--external-cdn", help="redirect LFS downloads here instead of our CDN origin: a URL "
                    "template with {sha256}, {repo}, {type}, e.g. http://127.0.0.2:8080/blobs/{sha256}")
    args = ap.parse_args(argv)
    try:
        serve(args)
    except (OSError, ValueError, KeyError) as e:
        print(f"hubsim: cannot start: {e!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
