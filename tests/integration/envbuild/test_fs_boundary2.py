#!/usr/bin/env python3
"""Issue 20, the file system, for envbuild's writes and RECORD reads: links planted in a shared wheel cache
(unpacked/ or tmp/ a link out, an entry that is a link to a tree elsewhere), in an environment's
site-packages (a package directory, a RECORD, a file RECORD lists), and a FIFO as RECORD. Nothing outside
the cache or the environment is written, read into an environment or packed into a wheel, nothing hangs,
and a refusal is exit 1 or 2 with one sentence (util::Root below the cache, the environment and the prefix)."""
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, tempdir  # noqa: E402
from envbuild_fixtures import ENVBUILD, PYTHON, sha256, write_lock  # noqa: E402
from make_wheels import pure_wheel  # noqa: E402

tmp = tempdir("envbuild-fs2-")
wheels = os.path.join(tmp, "wheels")
os.makedirs(wheels)
DEMO = pure_wheel(wheels, "1.0")
DEMO2 = pure_wheel(wheels, "2.0")
LOCK = write_lock(os.path.join(tmp, "demo.txt"), [DEMO])
LOCK2 = write_lock(os.path.join(tmp, "demo2.txt"), [DEMO2])
INIT_1 = b'VERSION = "1.0"\n\ndef main():\n    print("demopure 1.0 ok")\n    return 0\n'


def envbuild(*args, timeout=60):
    """envbuild, failed (not hung) if it does not return within `timeout`."""
    try:
        return subprocess.run([ENVBUILD, *args], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        check(False, f"envbuild {' '.join(args)} did not return within {timeout} s (a FIFO read?)")


def create(cache, env, lock=LOCK, expect=0):
    p = envbuild("--cache-dir", cache, "create", env, "--python", PYTHON, "--lock", lock, "-f", wheels,
                 "--link-mode", "copy")
    if expect is not None:
        check(p.returncode == expect, f"create {env}: exit {p.returncode}, expected {expect}", f"{p.stdout}{p.stderr}")
    return p


def refused_in_one_sentence(p, *words):
    check(p.returncode in (1, 2), f"exit {p.returncode}, expected 1 or 2", f"{p.stdout}{p.stderr}")
    lines = p.stderr.strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith("envbuild: "), "not one sentence on stderr", p.stderr)
    for w in words:
        check(w in p.stderr, f"{w!r} not in the sentence", p.stderr)


def tree(d):
    """Every path below d with its bytes (None for a directory, the target for a link)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(d):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, d)
            if os.path.islink(p):
                out[rel] = "-> " + os.readlink(p)
            elif os.path.isdir(p):
                out[rel] = None
            else:
                out[rel] = hashlib.sha256(open(p, "rb").read()).hexdigest()
    return out


def outside_dir(name, files=None):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    for rel, data in (files or {"precious": b"precious\n"}).items():
        os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
        open(os.path.join(d, rel), "wb").write(data)
    return d


def site_of(env):
    return glob.glob(os.path.join(env, "lib", "python3.*", "site-packages"))[0]


# ---- the wheel cache ------------------------------------------------------------------------------------------

def test_cache_unpacked_dir_that_is_a_link_moves_no_entry_outside():
    cache = os.path.join(tmp, "cache-unpacked-link")
    os.makedirs(cache)
    outside = outside_dir("outside-unpacked")
    before = tree(outside)
    os.symlink(outside, os.path.join(cache, "unpacked"))
    p = create(cache, os.path.join(tmp, "env-unpacked-link"), expect=None)
    refused_in_one_sentence(p, "symbolic link")
    check(tree(outside) == before, "an entry was published into the directory unpacked/ points at", tree(outside))


def test_cache_tmp_dir_that_is_a_link_unpacks_nothing_outside():
    cache = os.path.join(tmp, "cache-tmp-link")
    os.makedirs(cache)
    outside = outside_dir("outside-tmp")
    before = tree(outside)
    os.symlink(outside, os.path.join(cache, "tmp"))
    p = create(cache, os.path.join(tmp, "env-tmp-link"), expect=None)
    refused_in_one_sentence(p, "symbolic link")
    check(tree(outside) == before, "a wheel was unpacked into the directory tmp/ points at", tree(outside))


def test_cache_entry_that_is_a_link_is_replaced_not_used():
    # A verified entry, moved out of the cache and edited there (same size, same mtime: files.json still
    # matches), then linked back in its place: its bytes must never reach an environment.
    cache = os.path.join(tmp, "cache-entry-link")
    create(cache, os.path.join(tmp, "env-entry-first"))
    entry = os.path.join(cache, "unpacked", sha256(DEMO))
    check(os.path.isfile(os.path.join(entry, "files.json")), "no entry for the wheel", os.listdir(cache))
    planted = os.path.join(tmp, "outside-entry")
    shutil.move(entry, planted)
    init = os.path.join(planted, "tree", "demopure", "__init__.py")
    st = os.stat(init)
    evil = INIT_1.replace(b"1.0 ok", b"6.6 !!")
    check(len(evil) == st.st_size, "the edit keeps the size")
    open(init, "wb").write(evil)
    os.utime(init, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.symlink(planted, entry)
    before = tree(planted)
    env = os.path.join(tmp, "env-entry-link")
    create(cache, env)
    got = open(os.path.join(site_of(env), "demopure", "__init__.py"), "rb").read()
    check(got == INIT_1, "the environment holds the bytes of a tree outside the cache", got)
    check(tree(planted) == before, "the tree the link pointed at was changed", tree(planted))
    check(not os.path.islink(entry) and os.path.isfile(os.path.join(entry, "files.json")),
          "the link was not replaced by a fresh entry")


# ---- an environment's site-packages --------------------------------------------------------------------------

def test_package_dir_that_is_a_link_gets_no_write_outside():
    cache = os.path.join(tmp, "cache-env-link")
    env = os.path.join(tmp, "env-pkg-link")
    create(cache, env)
    site = site_of(env)
    outside = outside_dir("outside-pkg", {"__init__.py": b"precious\n"})
    before = tree(outside)
    shutil.rmtree(os.path.join(site, "demopure"))
    os.symlink(outside, os.path.join(site, "demopure"))
    p = create(cache, env, lock=LOCK2, expect=None)  # the upgrade writes demopure/ again
    refused_in_one_sentence(p, "symbolic link")
    check(tree(outside) == before, "the upgrade wrote through site-packages/demopure", tree(outside))


def test_record_that_is_a_link_is_not_read():
    cache = os.path.join(tmp, "cache-record-link")
    env = os.path.join(tmp, "env-record-link")
    create(cache, env)
    record = os.path.join(site_of(env), "demopure-1.0.dist-info", "RECORD")
    copy = os.path.join(outside_dir("outside-record"), "RECORD")
    shutil.copy(record, copy)  # the same rows: following the link, verify would say clean
    os.unlink(record)
    os.symlink(copy, record)
    for args in (["verify", env], ["capture", env, "--wheelhouse", os.path.join(tmp, "house-record-link"),
                                   "--lock", os.path.join(tmp, "record-link.txt")]):
        p = envbuild(*args)
        refused_in_one_sentence(p, "symbolic link", "RECORD")


def test_file_recorded_that_is_a_link_is_not_captured():
    cache = os.path.join(tmp, "cache-capture-link")
    env = os.path.join(tmp, "env-capture-link")
    create(cache, env)
    secret = b"a,b\n6,6\n"  # the size of table.txt: only the link tells them apart
    target = os.path.join(outside_dir("outside-capture", {"secret": secret}), "secret")
    table = os.path.join(site_of(env), "demopure", "data", "table.txt")
    os.unlink(table)
    os.symlink(target, table)
    house = os.path.join(tmp, "house-capture-link")
    p = envbuild("capture", env, "--wheelhouse", house, "--lock", os.path.join(tmp, "capture-link.txt"))
    refused_in_one_sentence(p, "symbolic link", "table.txt")
    for w in glob.glob(os.path.join(house, "*.whl")):
        check(secret not in open(w, "rb").read(), f"{w} holds the bytes of a file outside the environment")


def test_record_that_is_a_fifo_never_hangs():
    cache = os.path.join(tmp, "cache-record-fifo")
    env = os.path.join(tmp, "env-record-fifo")
    create(cache, env)
    record = os.path.join(site_of(env), "demopure-1.0.dist-info", "RECORD")
    os.unlink(record)
    os.mkfifo(record)
    runs = {"verify": ["verify", env], "verify --json": ["verify", env, "--json"],
            "capture": ["capture", env, "--wheelhouse", os.path.join(tmp, "house-fifo"), "--lock",
                        os.path.join(tmp, "fifo.txt")],
            "create (upgrade)": ["--cache-dir", cache, "create", env, "--python", PYTHON, "--lock", LOCK2, "-f",
                                 wheels]}
    for what, args in runs.items():
        p = envbuild(*args, timeout=30)
        if what == "verify --json":
            summary = json.loads(p.stdout.strip().splitlines()[-1])
            check(p.returncode in (1, 2) and summary["exit_code"] == p.returncode, f"{what}: {p.stdout}{p.stderr}")
            check("not a regular file" in summary.get("message", ""), f"{what}: the message", summary)
            continue
        check(p.returncode in (1, 2), f"{what}: exit {p.returncode}", f"{p.stdout}{p.stderr}")
        check("not a regular file" in p.stderr and "RECORD" in p.stderr, f"{what}: the sentence", p.stderr)


if __name__ == "__main__":
    main()
