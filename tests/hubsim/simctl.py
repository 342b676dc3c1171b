"""Start and drive the Hub simulator from Python tests (standard library only).

    from simctl import HubSim, make_repo
    make_repo(tmp, "org/name", {"config.json": b"{}", "w.safetensors": data}, lfs={"w.safetensors"})
    with HubSim(os.path.join(tmp, "repos.json")) as sim:
        sim.hub, sim.cdn                      # base URLs
        sim.set_faults([{"kind": "status", "code": 503, "times": 2}])
        sim.requests()                        # what both origins saw
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
HUBSIM = os.path.join(HERE, "hubsim.py")
sys.path.insert(0, HERE)
import hubsim  # noqa: E402  (demo constants and helpers)

DEMO_REPO = hubsim.DEMO_REPO
DEMO_SHA = hubsim.DEMO_SHA

# Control requests go straight to loopback, never through a proxy from the environment.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _die_with_parent():
    """In the child: get SIGTERM when the test process dies, even by SIGKILL (a ctest timeout)."""
    try:
        import ctypes
        import signal
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class HubSim:
    """The simulator as a subprocess: started on enter, killed on exit (also on exceptions)."""

    def __init__(self, repos_json, page_size=None, url_ttl=None, log=None, hub_port=0, cdn_port=0,
                 timeout=20, extra_args=()):
        self.repos_json = repos_json
        self.args = ["--hub-port", str(hub_port), "--cdn-port", str(cdn_port)]
        if page_size is not None:
            self.args += ["--page-size", str(page_size)]
        if url_ttl is not None:
            self.args += ["--url-ttl", str(url_ttl)]
        if log is not None:
            self.args += ["--log", log]
        self.args += list(extra_args)
        self.timeout = timeout
        self.proc = None
        self.hub = self.cdn = None
        self._tmp = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="hubsim-")
        ready = os.path.join(self._tmp.name, "ready.json")
        self._stderr = open(os.path.join(self._tmp.name, "stderr"), "w+")
        self.proc = subprocess.Popen(
            [sys.executable, HUBSIM, "--repos", self.repos_json, "--ready-file", ready] + self.args,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + self.timeout
        try:
            while not os.path.exists(ready):
                if self.proc.poll() is not None:
                    self._stderr.seek(0)
                    raise RuntimeError(f"hubsim exited with {self.proc.returncode}: {self._stderr.read()}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"hubsim not ready after {self.timeout} s")
                time.sleep(0.02)
            with open(ready) as f:
                info = json.load(f)
        except BaseException:
            self.stop()
            raise
        self.hub, self.cdn, self.pid = info["hub"], info["cdn"], info["pid"]
        return self

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self._tmp is not None:
            self._stderr.close()
            self._tmp.cleanup()
            self._tmp = None

    # -- control ------------------------------------------------------------------------------
    def _call(self, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.hub + path, data=data, method="GET" if body is None else "POST",
                                     headers={"Content-Type": "application/json"})
        with _opener.open(req, timeout=10) as r:
            return json.load(r)

    def set_faults(self, rules):
        """Replace the fault rules (see README.md); [] clears them."""
        return self._call("/_sim/faults", rules)

    def faults(self):
        """The current rules with their remaining `times` and `fired` counts."""
        return self._call("/_sim/faults")

    def requests(self, origin=None):
        """Every request both origins saw (control requests excepted), in arrival order."""
        reqs = self._call("/_sim/requests")
        return [r for r in reqs if origin is None or r["origin"] == origin]

    def clear_requests(self):
        return self._call("/_sim/requests/clear", {})

    def reload(self):
        """Re-read repos.json (e.g. after make_repo added a commit); ports and faults stay."""
        return self._call("/_sim/reload", {})


def make_repo(directory, repo_id, files, lfs=(), sha=None, refs=("main",), gated=False, private=False,
              tokens=(), repo_type="model", append=True):
    """Write `files` (path -> bytes) under DIRECTORY/files/<repo_id>/<sha>/ and add the repo to
    DIRECTORY/repos.json (kept: other repos already there, unless append=False). Paths in `lfs`
    are served as LFS files. Returns the commit sha (derived from the contents when not given).
    Calling it again for the same repo id adds another commit (refs move to the newest)."""
    if sha is None:
        h = hashlib.sha1(repo_id.encode())
        for path in sorted(files):
            h.update(path.encode() + b"\0" + hashlib.sha256(files[path]).digest())
        sha = h.hexdigest()
    root = os.path.join(directory, "files", repo_id, sha)
    entries = []
    for path, data in files.items():
        dest = os.path.join(root, path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
        entries.append({"path": path, "source": os.path.relpath(dest, directory), "lfs": path in set(lfs)})
    repos_json = os.path.join(directory, "repos.json")
    repos = []
    if append and os.path.exists(repos_json):
        with open(repos_json) as f:
            repos = json.load(f)["repos"]
    commit = {"sha": sha, "refs": list(refs), "files": entries}
    for repo in repos:
        if repo["id"] == repo_id and repo.get("type", "model") == repo_type:
            for c in repo["commits"]:
                c["refs"] = [r for r in c.get("refs", []) if r not in refs]
            repo["commits"] = [c for c in repo["commits"] if c["sha"] != sha] + [commit]
            repo.update(gated=gated, private=private, tokens=list(tokens))
            break
    else:
        repos.append({"id": repo_id, "type": repo_type, "gated": gated, "private": private,
                      "tokens": list(tokens), "commits": [commit]})
    hubsim.write_repos_json(directory, repos)
    return sha


def make_demo(directory):
    """The demo repository (provkit/demo-model at DEMO_SHA) in DIRECTORY; returns repos.json's path."""
    os.makedirs(directory, exist_ok=True)
    return hubsim.make_demo(directory)["repos_json"]


def demo_files():
    """path -> bytes and the LFS path set of the demo repository, as make_demo writes them."""
    return hubsim.demo_files()
