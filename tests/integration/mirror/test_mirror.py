"""The fleet mirror across hosts: hf-fetch fills a cache from the Hub simulator, `hf-fetch mirror export`
writes the static tree, nginx serves it in one network namespace, three clients in three other namespaces
fetch at once over veth pairs. Every client's files must verify, the access log must show each file read
exactly once per client and nothing from anywhere else; a corrupted exported blob must be caught by a client.
Namespaces and veths exist only inside this test (10.213.K.0/24 between its own veths) and are removed on exit."""

import atexit
import collections
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "hf-fetch")]
from common import Failed, HubSim, check, demo_files, main, make_demo, tempdir  # noqa: E402
from hf_fixtures import HF_FETCH, clean_env  # noqa: E402

TAG = "pkm%d" % (os.getpid() % 100000)
MIRROR_NS = TAG + "-mirror"
CLIENTS = 3
PORT = 8080
created = []


def sh(*cmd, ns=None, **kw):
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    return subprocess.run(full, capture_output=True, text=True, timeout=60, **kw)


def must(*cmd, ns=None):
    r = sh(*cmd, ns=ns)
    check(r.returncode == 0, "%s: %s" % (" ".join(cmd), (r.stderr or r.stdout).strip()))
    return r


def cleanup():
    for ns in reversed(created):  # deleting a namespace deletes the veth ends in it
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def make_network():
    atexit.register(cleanup)
    r = sh("ip", "netns", "add", MIRROR_NS)
    if r.returncode != 0:
        raise Failed("this test needs network namespaces (root, CAP_SYS_ADMIN); `ip netns add` said: "
                         + r.stderr.strip())
    created.append(MIRROR_NS)
    must("ip", "link", "set", "lo", "up", ns=MIRROR_NS)
    for k in range(CLIENTS):
        ns = "%s-c%d" % (TAG, k)
        must("ip", "netns", "add", ns)
        created.append(ns)
        m_end, c_end = "%sm%d" % (TAG, k), "%sc%d" % (TAG, k)
        # Both ends are created inside namespaces: nothing touches the host's own network.
        must("ip", "link", "add", m_end, "netns", MIRROR_NS, "type", "veth", "peer", "name", c_end, "netns", ns)
        must("ip", "addr", "add", "10.213.%d.1/24" % k, "dev", m_end, ns=MIRROR_NS)
        must("ip", "link", "set", m_end, "up", ns=MIRROR_NS)
        must("ip", "addr", "add", "10.213.%d.2/24" % k, "dev", c_end, ns=ns)
        must("ip", "link", "set", c_end, "up", ns=ns)
        must("ip", "link", "set", "lo", "up", ns=ns)


def start_nginx(export_dir, work):
    conf = os.path.join(work, "nginx.conf")
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)
    with open(conf, "w") as f:
        f.write(f"""user root;
worker_processes 2;
pid {work}/nginx.pid;
error_log {work}/logs/error.log;
events {{ worker_connections 256; }}
http {{
  log_format provkit '$remote_addr "$request_method $uri" $status $body_bytes_sent "$http_range"';
  access_log {work}/logs/access.log provkit;
  sendfile on;
  client_body_temp_path {work}/body; proxy_temp_path {work}/proxy; fastcgi_temp_path {work}/fcgi;
  uwsgi_temp_path {work}/uwsgi; scgi_temp_path {work}/scgi;
  server {{
    listen {PORT};
    include {export_dir}/nginx-provkit-mirror.conf;
  }}
}}
""")
    proc = subprocess.Popen(["ip", "netns", "exec", MIRROR_NS, "nginx", "-c", conf, "-p", work, "-g", "daemon off;"])
    atexit.register(lambda: (proc.terminate(), proc.wait(10)))
    for _ in range(100):
        if sh("bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/%d" % PORT, ns=MIRROR_NS).returncode == 0:
            return proc, os.path.join(work, "logs", "access.log")
        time.sleep(0.1)
    raise Failed("nginx did not start: " + open(os.path.join(work, "logs", "error.log")).read())


def read_log(path):
    out = []
    for line in open(path):
        ip, rest = line.split(" ", 1)
        req, status, nbytes, rng = rest.rsplit(" ", 3)
        method, uri = req.strip('"').split(" ", 1)
        out.append((ip, method, uri, int(status), int(nbytes), rng.strip().strip('"')))
    return out


def run_clients(manifest, caches, extra=()):
    procs = []
    for k, cache in enumerate(caches):
        cmd = ["ip", "netns", "exec", "%s-c%d" % (TAG, k), HF_FETCH, "--manifest", manifest, "--cache-dir", cache,
               "--endpoint", "http://10.213.%d.1:%d" % (k, PORT), "--retries", "2", "--json", *extra]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env()))
    return [(p.wait(120), p.stdout.read(), p.stderr.read()) for p in procs]


def test_three_namespaced_clients_from_one_nginx():
    tmp = tempdir("provkit-mirror-")
    make_demo(os.path.join(tmp, "hub"))
    manifest = os.path.join(tmp, "hub", "demo.manifest")
    origin_cache = os.path.join(tmp, "origin-cache")
    with HubSim(os.path.join(tmp, "hub", "repos.json")) as sim:
        r = subprocess.run([HF_FETCH, "--manifest", manifest, "--cache-dir", origin_cache, "--endpoint", sim.hub],
                           capture_output=True, text=True, env=clean_env(), timeout=60)
        check(r.returncode == 0, "filling the origin cache failed: " + r.stderr)
        import urllib.request
        from simctl import DEMO_SHA
        with urllib.request.urlopen("%s/api/models/provkit/demo-model/tree/%s?recursive=true" % (sim.hub, DEMO_SHA)) as u:
            hub_tree = {e["path"]: e for e in json.load(u) if e["type"] == "file"}

    export = os.path.join(tmp, "export")
    r = subprocess.run([HF_FETCH, "mirror", "export", "--manifest", manifest, "--to", export, "--cache-dir",
                        origin_cache, "--json"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "mirror export failed: %s %s" % (r.stdout, r.stderr))
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    files, lfs = demo_files()
    check(summary["files"] == len(files), "export summary: %r" % summary)
    check(summary["linked"] == len(files), "blobs were not hard-linked from the cache: %r" % summary)
    # The exported tree lists the manifest's files exactly as the Hub does (pointer oids of LFS files included).
    with open(os.path.join(export, "root", "api", "models", "provkit", "demo-model", "tree", DEMO_SHA)) as f:
        mirror_tree = {e["path"]: e for e in json.load(f)}
    check(set(mirror_tree) == set(files), "exported tree paths: %r" % sorted(mirror_tree))
    for path, e in mirror_tree.items():
        check(e == hub_tree[path], "tree entry of %s differs from the Hub's: %r vs %r" % (path, e, hub_tree[path]))

    # Refusals: a file the cache lacks, a cache blob that is wrong (the earlier export stays as it was),
    # a directory that is not an export.
    def export_to(to, cache):
        return subprocess.run([HF_FETCH, "mirror", "export", "--manifest", manifest, "--to", to, "--cache-dir", cache],
                              capture_output=True, text=True, timeout=60)
    # A newline in --to would end the configuration's comment line and make what follows live directives.
    forged = os.path.join(tmp, "x\nlocation /etc/ { root /; }\n#")
    r = export_to(forged, origin_cache)
    check(r.returncode == 2 and "newline or control byte" in r.stderr and not os.path.exists(forged),
          "a --to holding a newline: %d %s" % (r.returncode, r.stderr))
    r = export_to(os.path.join(tmp, "export-empty"), os.path.join(tmp, "no-cache"))
    check(r.returncode == 1 and "not in the cache" in r.stderr, "export from an empty cache: %d %s" % (r.returncode, r.stderr))
    broken = os.path.join(tmp, "broken-cache")
    subprocess.run(["cp", "-a", origin_cache, broken], check=True)
    bdir = os.path.join(broken, "models--provkit--demo-model", "blobs")
    victim_blob = os.path.join(bdir, sorted(os.listdir(bdir))[0])
    with open(victim_blob, "r+b") as f:
        f.seek(5)
        f.write(b"X")
    before = sorted(os.listdir(os.path.join(export, "root")))
    r = export_to(export, broken)
    check(r.returncode == 1 and "is wrong" in r.stderr, "export of a corrupted cache: %d %s" % (r.returncode, r.stderr))
    check(sorted(os.listdir(os.path.join(export, "root"))) == before, "a refused export changed the earlier one")
    foreign = os.path.join(tmp, "foreign")
    os.makedirs(foreign)
    open(os.path.join(foreign, "keep.txt"), "w").close()
    r = export_to(foreign, origin_cache)
    check(r.returncode == 2 and "not empty" in r.stderr, "export into a foreign directory: %d %s" % (r.returncode, r.stderr))
    print("ok: export refuses a missing or wrong cache file and a foreign directory")

    make_network()
    _, log = start_nginx(export, os.path.join(tmp, "nginx"))

    caches = [os.path.join(tmp, "client%d" % k) for k in range(CLIENTS)]
    results = run_clients(manifest, caches)
    for k, (rc, out, err) in enumerate(results):
        check(rc == 0, "client %d failed (exit %d): %s %s" % (k, rc, out[-2000:], err[-2000:]))
        v = subprocess.run([HF_FETCH, "--manifest", manifest, "--cache-dir", caches[k], "--verify-only"],
                           capture_output=True, text=True, timeout=60)
        check(v.returncode == 0, "client %d's files do not verify: %s" % (k, v.stdout + v.stderr))
        snap = os.path.join(caches[k], "models--provkit--demo-model", "snapshots")
        commit = os.listdir(snap)[0]
        for path, data in files.items():
            with open(os.path.join(snap, commit, path), "rb") as f:
                check(f.read() == data, "client %d: %s differs from the Hub's bytes" % (k, path))

    # The resolve answers carry the Hub's headers, and Range works (checked from client 0 with curl).
    commit0 = os.listdir(os.path.join(caches[0], "models--provkit--demo-model", "snapshots"))[0]
    lfs_path = sorted(lfs)[0]
    url = "http://10.213.0.1:%d/provkit/demo-model/resolve/%s/%s" % (PORT, commit0, lfs_path)
    h = must("curl", "-sS", "-D", "-", "-o", "/dev/null", "-r", "0-9", url, ns="%s-c0" % TAG).stdout.lower()
    from hashlib import sha256 as _sha
    want = _sha(files[lfs_path]).hexdigest()
    for needle in (" 206 ", "content-range: bytes 0-9/%d" % len(files[lfs_path]), "x-repo-commit: " + commit0,
                   'x-linked-etag: "%s"' % want, "x-linked-size: %d" % len(files[lfs_path]), 'etag: "%s"' % want,
                   ):
        check(needle in h, "resolve answer lacks %r:\n%s" % (needle, h))
    head = must("curl", "-sS", "-I", url, ns="%s-c0" % TAG).stdout.lower()
    check(" 200 " in head and "accept-ranges: bytes" in head and "content-length: %d" % len(files[lfs_path]) in head,
          "HEAD of a resolve URL: " + head)
    miss = must("curl", "-sS", "-D", "-", "-o", "/dev/null", url + ".not-exported", ns="%s-c0" % TAG).stdout.lower()
    check(" 404 " in miss and "x-error-code: entrynotfound" in miss, "a file not exported: " + miss)

    # The access log: each file's bytes exactly once per client, only from the three clients.
    entries = [e for e in read_log(log) if not e[2].endswith(".not-exported") and e[5] != "bytes=0-9" and e[1] != "HEAD"]
    client_ips = {"10.213.%d.2" % k for k in range(CLIENTS)}
    strangers = {e[0] for e in entries} - client_ips
    check(not strangers, "requests from outside the clients: %r" % strangers)
    got = collections.Counter()
    gets = collections.Counter()
    for ip, method, uri, status, nbytes, _ in entries:
        if "/resolve/" in uri and method == "GET":
            check(status in (200, 206), "unexpected status in the log: %r" % ((ip, uri, status),))
            got[(ip, uri.rsplit("/resolve/", 1)[1].split("/", 1)[1])] += nbytes
            gets[(ip, uri)] += 1
    for ip in client_ips:
        for path, data in files.items():
            check(got[(ip, path)] == len(data),
                  "%s read %d bytes of %s, expected %d (once)" % (ip, got[(ip, path)], path, len(data)))
    check(all(n == 1 for n in gets.values()), "a file was requested more than once by a client: %r" % gets)
    check(len(got) == len(client_ips) * len(files), "files outside the manifest were read: %r" % sorted(got))
    print("ok: %d clients x %d files, %d log lines, all verified" % (CLIENTS, len(files), len(entries)))

    # A mirror that serves a wrong byte is caught: corrupt one exported LFS file (a new inode, so the
    # origin cache stays intact), a client must fail verification and not place it.
    victim = sorted(lfs)[0]
    commit = os.listdir(os.path.join(origin_cache, "models--provkit--demo-model", "snapshots"))[0]
    served = os.path.join(export, "root", "provkit", "demo-model", "resolve", commit, victim)
    bad = bytearray(files[victim])
    bad[len(bad) // 2] ^= 0xFF
    with open(served + ".tmp", "wb") as f:
        f.write(bad)
    os.rename(served + ".tmp", served)
    fresh = os.path.join(tmp, "client-after-corruption")
    rc, out, err = run_clients(manifest, [fresh])[0]
    check(rc == 1, "a corrupted mirror file did not fail the client (exit %d): %s" % (rc, out[-2000:]))
    check("SHA256 MISMATCH" in out, "no SHA256 MISMATCH reported: " + out[-2000:])
    link = os.path.join(fresh, "models--provkit--demo-model", "snapshots", commit, victim)
    check(not os.path.exists(link), "the corrupted file was placed at " + link)
    blobs = os.listdir(os.path.join(fresh, "models--provkit--demo-model", "blobs"))
    check(any(".bad-" in b for b in blobs), "the wrong bytes were not kept aside: %r" % blobs)
    from hashlib import sha256
    check(sha256(files[victim]).hexdigest() not in blobs, "a blob was placed under the right name: %r" % blobs)
    # The origin cache was not touched by the corruption, and a re-export restores the mirror.
    v = subprocess.run([HF_FETCH, "--manifest", manifest, "--cache-dir", origin_cache, "--verify-only"],
                       capture_output=True, text=True, timeout=60)
    check(v.returncode == 0, "the origin cache changed: " + v.stdout)
    print("ok: a corrupted mirror file was caught and not placed")


if __name__ == "__main__":
    main()
