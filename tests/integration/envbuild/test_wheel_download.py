#!/usr/bin/env python3
"""Wheels and interpreter archives fetched through the download engine (issue 22, item 3), served by the Hub
simulator (tests/hubsim: ranges, a request log, fault knobs) as plain files of a repository at their resolve
URLs: a wheel resumed with a range request after the connection is cut mid-file and after envbuild is killed,
a large wheel fetched in byte ranges, a wheel whose bytes are wrong refused with nothing left in the cache, a
wheel an index offers without hash or size (its size learned first), and a standalone interpreter archive."""
import http.server
import os
import random
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import SOURCE, HubSim, check, main, make_repo, run  # noqa: E402
from envbuild_fixtures import *  # noqa: E402,F401,F403
from make_wheels import write_wheel  # noqa: E402

REPO = "org/wheels"


def payload_wheel(d, name, size, seed=1):
    """A pure wheel holding `size` bytes of incompressible data (so the wheel is about that large)."""
    data = random.Random(seed).randbytes(size)
    return write_wheel(d, f"{name}-1.0-py3-none-any.whl", name, "1.0",
                       {f"{name}/__init__.py": b"OK = 1\n", f"{name}/blob.bin": data})


def serve(tmp, wheels):
    """The wheels as plain (non-LFS) files of REPO: (repos.json, {file name: resolve path})."""
    files = {os.path.basename(w): open(w, "rb").read() for w in wheels}
    make_repo(tmp, REPO, files)
    return os.path.join(tmp, "repos.json")


def url_of(sim, wheel):
    return f"{sim.hub}/{REPO}/resolve/main/{os.path.basename(wheel)}"


def pylock(tmp, sim, wheels, sha=None):
    """A pylock.toml naming each wheel by its URL on the simulator, with its size and sha256."""
    body = 'lock-version = "1.0"\ncreated-by = "test"\n\n'
    for w in wheels:
        name, version = os.path.basename(w).split("-")[:2]
        body += (f'[[packages]]\nname = "{name}"\nversion = "{version}"\n'
                 f'wheels = [{{ url = "{url_of(sim, w)}", size = {os.path.getsize(w)}, '
                 f'hashes = {{ sha256 = "{sha or sha256(w)}" }} }}]\n\n')
    d = os.path.join(tmp, "lock")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "pylock.toml")
    with open(path, "w") as f:
        f.write(body)
    return path


def wheel_gets(sim, wheel):
    """The simulator's GETs of the wheel's file, in order: [(Range header or None, status, bytes sent)]."""
    name = os.path.basename(wheel)
    return [(r["headers"].get("Range"), r["status"], r["bytes_sent"]) for r in sim.requests()
            if r["method"] == "GET" and r["path"].endswith("/" + name)]


def range_start(header):
    return int(header.split("=")[1].split("-")[0])


def cache_files(cache):
    """Every file of the cache's wheels/, tmp/ and unpacked/, relative."""
    out = []
    for dirpath, _, names in [w for sub in ("wheels", "tmp", "unpacked") for w in os.walk(os.path.join(cache, sub))]:
        out += [os.path.relpath(os.path.join(dirpath, n), cache) for n in names]
    return sorted(out)


def test_wheel_resumed_after_the_connection_is_cut_mid_file(tmp):
    wheel = payload_wheel(tmp, "cutwheel", 3 << 20)
    size = os.path.getsize(wheel)
    with HubSim(serve(tmp, [wheel])) as sim:
        sim.set_faults([{"kind": "close_mid_body", "path_contains": "cutwheel", "at": size // 2}])
        lock = pylock(tmp, sim, [wheel])
        cache = os.path.join(tmp, "cache")
        p = envbuild(cache, "create", os.path.join(tmp, "env"), "--python", PYTHON, "--lock", lock)
        check("1 installed" in p.stdout, p.stdout + p.stderr)
        gets = wheel_gets(sim, wheel)
        check(len(gets) == 2 and range_start(gets[0][0]) == 0 and gets[0][2] == size // 2, str(gets))
        # The second asks from where the first was cut: the first half is not fetched again.
        check(gets[1][0] is not None and range_start(gets[1][0]) == size // 2 and gets[1][1] == 206, str(gets))
        check(sha256(os.path.join(cache, "wheels", sha256(wheel) + ".whl")) == sha256(wheel), "the wheel as published")


def test_wheel_resumed_after_envbuild_is_killed(tmp):
    wheel = payload_wheel(tmp, "killwheel", 4 << 20)
    with HubSim(serve(tmp, [wheel])) as sim:
        sim.set_faults([{"kind": "throttle", "path_contains": "killwheel", "bytes_per_second": 1 << 20,
                         "times": 1}])
        lock = pylock(tmp, sim, [wheel])
        cache = os.path.join(tmp, "cache")
        args = [ENVBUILD, "--cache-dir", cache, "create", os.path.join(tmp, "env"), "--python", PYTHON,
                "--lock", lock]
        partial = os.path.join(cache, "tmp", sha256(wheel) + ".whl.partial")
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (not os.path.exists(partial) or os.path.getsize(partial) < (1 << 20)):
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kept = os.path.getsize(partial)
        check(0 < kept < os.path.getsize(wheel), f"partial file of {kept} bytes after the kill")
        p = envbuild(cache, "create", os.path.join(tmp, "env"), "--python", PYTHON, "--lock", lock)
        check("1 installed" in p.stdout, p.stdout + p.stderr)
        last = wheel_gets(sim, wheel)[-1]
        check(last[0] is not None and range_start(last[0]) > 0 and last[1] == 206, str(last))
        check(last[2] == os.path.getsize(wheel) - range_start(last[0]), f"only the rest was sent: {last}")
        check(not os.path.exists(partial), "the partial file became the wheel")


def test_progress_lines_on_stderr_while_a_wheel_downloads(tmp):
    # A deploy log sees a wheel that takes a while: a line every --progress-interval seconds, one when it is in;
    # --progress none keeps stderr for the sentences that matter.
    wheel = payload_wheel(tmp, "slowwheel", 3 << 20)
    name = os.path.basename(wheel)
    with HubSim(serve(tmp, [wheel])) as sim:
        sim.set_faults([{"kind": "throttle", "path_contains": "slowwheel", "bytes_per_second": 1 << 20}])
        lock = pylock(tmp, sim, [wheel])
        p = envbuild(os.path.join(tmp, "cache"), "create", os.path.join(tmp, "env"), "--python", PYTHON,
                     "--lock", lock, "--progress-interval", "1")
        check("1 installed" in p.stdout, p.stdout + p.stderr)
        lines = p.stderr.splitlines()
        during = [ln for ln in lines if ln.startswith(f"envbuild: {name}: ") and " of 3.0 MiB (" in ln]
        check(len(during) >= 1 and all(ln.endswith("/s") for ln in during), p.stderr)
        done = [ln for ln in lines if ln.startswith(f"envbuild: downloaded {name} (3.0 MiB, ")]
        check(len(done) == 1, p.stderr)
        q = envbuild(os.path.join(tmp, "cache2"), "create", os.path.join(tmp, "env2"), "--python", PYTHON,
                     "--lock", lock, "--progress", "none", "--progress-interval", "1")
        check("1 installed" in q.stdout and name not in q.stderr, q.stdout + q.stderr)
    # The page a user reads says so too (issue 43 item 11: its Limits said no progress is shown).
    with open(os.path.join(SOURCE, "docs", "envbuild.md")) as f:
        limits = f.read().split("## Limits", 1)[1].split("\n## ", 1)[0]
    check("progress" not in limits.lower(), "docs/envbuild.md's Limits deny the progress lines", limits)


def test_large_wheel_is_fetched_in_byte_ranges(tmp):
    wheel = payload_wheel(tmp, "bigwheel", 40 << 20)
    with HubSim(serve(tmp, [wheel])) as sim:
        lock = pylock(tmp, sim, [wheel])
        cache = os.path.join(tmp, "cache")
        p = envbuild(cache, "create", os.path.join(tmp, "env"), "--python", PYTHON, "--lock", lock)
        check("1 installed" in p.stdout, p.stdout + p.stderr)
        gets = wheel_gets(sim, wheel)
        check(len(gets) >= 2 and all(g[0] is not None and g[1] == 206 for g in gets), str(gets))
        check(sum(g[2] for g in gets) == os.path.getsize(wheel), f"each byte once: {gets}")
        check(run([os.path.join(tmp, "env", "bin", "python"), "-c", "import bigwheel; print(bigwheel.OK)"]).out.strip()
              == "1", "installed from the ranged download")


def test_wrong_bytes_are_refused_and_nothing_is_left_in_the_cache(tmp):
    wheel = payload_wheel(tmp, "badbytes", 1 << 20)
    with HubSim(serve(tmp, [wheel])) as sim:
        sim.set_faults([{"kind": "wrong_bytes", "path_contains": "badbytes"}])
        lock = pylock(tmp, sim, [wheel])
        cache = os.path.join(tmp, "cache")
        env = os.path.join(tmp, "env")
        p = envbuild(cache, "create", env, "--python", PYTHON, "--lock", lock, expect=1)
        check("sha256" in p.stderr and sha256(wheel) in p.stderr and "badbytes" in p.stderr, p.stderr)
        check(cache_files(cache) == [], f"left in the cache: {cache_files(cache)}")
        check(not os.path.exists(env), "the environment was not made")
        # A lock whose hash is not the wheel's: the same.
        lock = pylock(tmp, sim, [wheel], sha="3" * 64)
        p = envbuild(cache, "create", env, "--python", PYTHON, "--lock", lock, expect=1)
        check("3" * 64 in p.stderr, p.stderr)
        check(cache_files(cache) == [], f"left in the cache: {cache_files(cache)}")


class _NoHashIndex(http.server.BaseHTTPRequestHandler):
    """A PEP 503 page without hash fragments (or sizes) whose links lead to the simulator."""
    links = {}

    def log_message(self, *args):
        pass

    def do_GET(self):
        project = [p for p in self.path.split("/") if p][-1]
        body = "".join(f'<a href="{u}">{n}</a>\n' for n, u in self.links.get(project, [])).encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_unhashed_wheel_has_its_size_learned_first_and_is_resumed(tmp):
    wheel = payload_wheel(tmp, "nohashwheel", 2 << 20)
    size = os.path.getsize(wheel)
    with HubSim(serve(tmp, [wheel])) as sim:
        _NoHashIndex.links = {"nohashwheel": [(os.path.basename(wheel), url_of(sim, wheel))]}
        index = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NoHashIndex)
        threading.Thread(target=index.serve_forever, daemon=True).start()
        try:
            sim.set_faults([{"kind": "close_mid_body", "path_contains": "nohashwheel", "at": size // 3,
                             "method": "GET", "times": 2}])  # the first is the size's request (one byte)
            lock = write_lock(os.path.join(tmp, "lock.txt"), [wheel])
            cache = os.path.join(tmp, "cache")
            p = envbuild(cache, "create", os.path.join(tmp, "env"), "--python", PYTHON, "--lock", lock,
                         "--index-url", f"http://127.0.0.1:{index.server_address[1]}/simple")
        finally:
            index.shutdown()
        check("1 installed" in p.stdout, p.stdout + p.stderr)
        gets = wheel_gets(sim, wheel)
        # Its first byte (for the size), then the file, cut at a third and asked for again from there.
        check(gets[0][0] == "bytes=0-0", str(gets))
        check(len(gets) == 3 and range_start(gets[1][0]) == 0 and gets[1][2] == size // 3, str(gets))
        check(range_start(gets[2][0]) == size // 3 and gets[2][2] == size - size // 3, str(gets))
        check(os.path.exists(os.path.join(cache, "wheels", sha256(wheel) + ".whl")), "known by its sha256 now")


def test_interpreter_archive_is_downloaded_through_the_engine(tmp):
    archive = make_standalone_archive(os.path.join(tmp, "cpython-standalone"), "gz")
    size = os.path.getsize(archive)
    with HubSim(serve(tmp, [archive])) as sim:
        url = url_of(sim, archive)
        pythons = os.path.join(tmp, "pythons")
        p = run([ENVBUILD, "--python-dir", pythons, "python", "install", url, "--sha256", "0" * 64], expect=1)
        check("0" * 64 in p.stderr and sha256(archive) in p.stderr, p.stderr)
        check(os.listdir(os.path.join(pythons, ".tmp")) == [], "nothing of the wrong archive is kept")
        sim.clear_requests()
        # Cut 1 MiB into the first range (an archive this large is fetched in ranges).
        sim.set_faults([{"kind": "close_mid_body", "path_contains": os.path.basename(archive), "at": 1 << 20,
                         "method": "GET", "times": 2}])  # the first is the size's request (one byte)
        p = run([ENVBUILD, "--python-dir", pythons, "python", "install", url, "--sha256", sha256(archive)])
        check("installed at" in p.stdout, p.stdout + p.stderr)
        gets = wheel_gets(sim, archive)
        check(gets[0][0] == "bytes=0-0" and range_start(gets[1][0]) == 0 and gets[1][2] == 1 << 20, str(gets))
        check(any(range_start(g[0]) == 1 << 20 and g[1] == 206 for g in gets[2:]), str(gets))
        check(sum(g[2] for g in gets[1:]) == size, f"each byte of {size} once: {gets}")
        check(os.listdir(os.path.join(pythons, ".tmp")) == [], "no work left behind")
        xy = "%d.%d" % sys.version_info[:2]
        found = run([ENVBUILD, "--python-dir", pythons, "python", "find", xy]).stdout.strip()
        check(found.startswith(pythons), found)


main()
