#!/usr/bin/env python3
"""Hostile wheels and environments (issue 11, items 8-12): a RECORD pointing
outside the environment, links where RECORD has files, wheels writing over the
environment's skeleton, an interpreter swapped inside the environment, wheels
whose names lie, compression bombs and entries that conflict. Nothing outside
the environment is removed or written, and every refusal names the wheel and
the entry."""
import glob
import json
import os
import shutil
import struct
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, run, start_index, tempdir  # noqa: E402
from envbuild_fixtures import *  # noqa: E402,F401,F403
from make_wheels import pure_wheel, record_hash, write_wheel  # noqa: E402

tmp = tempdir("envbuild-hostile-")
cache = os.path.join(tmp, "cache")
wheels = os.path.join(tmp, "wheels")
os.makedirs(wheels)
DEMO = pure_wheel(wheels, "1.0")
demo_lock = write_lock(os.path.join(tmp, "demo.txt"), [DEMO])
FL = ["-f", wheels]
OK = {"hostile/__init__.py": b"X = 1\n"}


def site_of(env):
    return glob.glob(os.path.join(env, "lib", "python3.*", "site-packages"))[0]


def fresh_env(name, link_mode="copy"):
    env = os.path.join(tmp, name)
    envbuild(cache, "create", env, "--python", PYTHON, "--lock", demo_lock, *FL, "--link-mode", link_mode)
    return env


def refused(name, lock_wheels, *words, env=None):
    """create exits 1 naming every word; a new environment is not even started."""
    lock = write_lock(os.path.join(tmp, name + ".txt"), lock_wheels)
    target = env or os.path.join(tmp, "env-" + name)
    p = envbuild(cache, "create", target, "--python", PYTHON, "--lock", lock, *FL, expect=1)
    for w in words:
        check(w in p.stderr, f"{name}: {w!r} not in: {p.stderr}")
    if env is None:
        check(not os.path.exists(os.path.join(target, "pyvenv.cfg")), f"{name}: environment untouched")
    check(os.listdir(os.path.join(cache, "tmp")) == [], f"{name}: no work left in the cache's tmp")
    return p


def plant_evil(env):
    """An extra distribution whose RECORD names files outside the environment
    (../ past the root, an absolute path, a directory that is a link out) and
    one file of its own inside."""
    site = site_of(env)
    base = os.path.join(tmp, os.path.basename(env) + "-victims")
    outside = os.path.join(base, "outside-dir")
    os.makedirs(outside)
    victims = {"rel": os.path.join(tmp, os.path.basename(env) + "-VICTIM"),
               "abs": os.path.join(base, "VICTIM-abs"), "link": os.path.join(outside, "VICTIM-link")}
    for path in victims.values():
        open(path, "w").write("precious\n")
    os.symlink(outside, os.path.join(site, "evillink"))
    os.makedirs(os.path.join(site, "evil"))
    open(os.path.join(site, "evil", "__init__.py"), "w").write("own = 1\n")
    info = os.path.join(site, "evil-1.0.dist-info")
    os.makedirs(info)
    metadata = b"Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n\n"
    open(os.path.join(info, "METADATA"), "wb").write(metadata)
    rel_up = os.path.relpath(victims["rel"], site)  # ../../../../<env>-VICTIM
    check(rel_up.startswith("../../../../"), rel_up)
    h = record_hash(b"precious\n")
    rows = [f"{rel_up},{h},9", f"{victims['abs']},{h},9", f"evillink/VICTIM-link,{h},9",
            f"evil/__init__.py,{record_hash(b'own = 1' + chr(10).encode())},8",
            f"evil-1.0.dist-info/METADATA,{record_hash(metadata)},{len(metadata)}", "evil-1.0.dist-info/RECORD,,"]
    open(os.path.join(info, "RECORD"), "w").write("\n".join(rows) + "\n")
    return victims, rel_up, info


def test_create_never_removes_outside_the_environment():
    # Item 8: removing that distribution touches only its file inside.
    env = fresh_env("env-remove")
    victims, rel_up, info = plant_evil(env)
    p = envbuild(cache, "create", env, "--python", PYTHON, "--lock", demo_lock, *FL, "--link-mode", "copy")
    check("- evil==1.0" in p.stdout, p.stdout)
    for name, path in victims.items():
        check(os.path.exists(path) and open(path).read() == "precious\n", f"{name} victim was removed through RECORD")
    check("3 paths outside the environment or through a link, left alone" in p.stderr, p.stderr)
    site = site_of(env)
    check(not os.path.exists(os.path.join(site, "evil")), "the distribution's own file inside is removed")
    check(not os.path.exists(info), "its dist-info is removed")
    check(os.path.islink(os.path.join(site, "evillink")), "the link itself is not RECORD's to remove")
    envbuild(cache, "verify", env, "--lock", demo_lock)


def test_verify_never_reads_outside_the_environment():
    # Item 9: the same RECORD makes verify report where it points, reading nothing there.
    env = fresh_env("env-outside")
    victims, rel_up, info = plant_evil(env)
    p = envbuild(cache, "verify", env, "--json", expect=1)
    evil = [d for d in json.loads(p.stdout)["distributions"] if d["name"] == "evil"][0]
    check(evil.get("outside") == [rel_up, victims["abs"]], f"outside: {evil}")
    check(evil["modified"] == ["evillink/VICTIM-link"], f"through a link: {evil}")
    check(evil["missing"] == [] and evil["unlisted"] == [], f"evil: {evil}")
    p = envbuild(cache, "verify", env, expect=1)
    check(f"outside   {rel_up}" in p.stdout, p.stdout)


def test_verify_reports_links_as_drift():
    # Item 9: a file replaced by a link whose target string has the recorded
    # size, and a package directory replaced by a link to a copy outside.
    env = fresh_env("env-links")
    site = site_of(env)
    envbuild(cache, "verify", env)
    table = os.path.join(site, "demopure", "data", "table.txt")
    size = os.path.getsize(table)
    shutil.copy(table, os.path.join(site, "c8"))
    target = "../../c8"
    check(len(target) == size == 8, f"link target {target!r} has the file's size {size}")
    os.rename(table, table + ".orig")
    os.symlink(target, table)
    check(open(table, "rb").read() == open(table + ".orig", "rb").read(), "the link reads the same bytes")
    os.remove(table + ".orig")
    p = envbuild(cache, "verify", env, "--json", expect=1)
    demo = [d for d in json.loads(p.stdout)["distributions"] if d["name"] == "demopure"][0]
    check(demo["modified"] == ["demopure/data/table.txt"], f"file link: {demo}")
    os.remove(table)
    shutil.copy(os.path.join(site, "c8"), table)
    os.remove(os.path.join(site, "c8"))
    envbuild(cache, "verify", env)

    copy = os.path.join(tmp, "outside-copy")
    shutil.move(os.path.join(site, "demopure"), os.path.join(copy, "demopure"))
    os.symlink(os.path.join(copy, "demopure"), os.path.join(site, "demopure"))
    p = envbuild(cache, "verify", env, "--json", expect=1)
    demo = [d for d in json.loads(p.stdout)["distributions"] if d["name"] == "demopure"][0]
    check("demopure/__init__.py" in demo["modified"] and "demopure/data/table.txt" in demo["modified"],
          f"directory link: {demo}")
    check(demo["unlisted"] == [], f"the link's target is not walked: {demo}")
    p = envbuild(cache, "verify", env, expect=1)
    check("modified  demopure/__init__.py" in p.stdout and "has drifted" in p.stdout, p.stdout)


def test_wheel_may_not_replace_the_skeleton():
    # Item 10: .data/scripts/python, .data/data/pyvenv.cfg, bin/activate and a
    # console script named python3 would each take over the environment.
    evil_python = (b"#!/bin/sh\necho pwned\n", 0o755)
    cases = [
        ("skelpy", {"skelpy-1.0.data/scripts/python": evil_python}, {}, "skelpy-1.0.data/scripts/python", "bin/python"),
        ("skelcfg", {"skelcfg-1.0.data/data/pyvenv.cfg": b"home = /tmp/evil\n"}, {}, "skelcfg-1.0.data/data/pyvenv.cfg",
         "pyvenv.cfg"),
        ("skelact", {"skelact-1.0.data/data/bin/activate": b"echo pwned\n"}, {}, "skelact-1.0.data/data/bin/activate",
         "bin/activate"),
        ("skelep", {}, {"entry_points": "[console_scripts]\npython3 = hostile:main\n"}, "entry point 'python3'",
         "bin/python3"),
    ]
    for name, extra, kw, what, skeleton in cases:
        w = write_wheel(wheels, f"{name}-1.0-py3-none-any.whl", name, "1.0", {**OK, **extra}, **kw)
        refused(name, [w], f"{name}-1.0-py3-none-any.whl", what, "would replace the environment's own " + skeleton)
    # Into an existing environment: refused before anything there changes.
    env = fresh_env("env-skeleton")
    before = {f: os.lstat(os.path.join(env, f)).st_ino for f in tree_files(env)}
    refused("skelpy-into", [DEMO, os.path.join(wheels, "skelpy-1.0-py3-none-any.whl")], "bin/python", env=env)
    check(os.path.realpath(os.path.join(env, "bin", "python")) == PYTHON, "bin/python still the interpreter")
    check({f: os.lstat(os.path.join(env, f)).st_ino for f in tree_files(env)} == before, "environment unchanged")


def test_verify_lock_never_runs_the_environments_python():
    # Item 10: verify --lock asks the interpreter pyvenv.cfg's home names.
    env = fresh_env("env-swapped")
    marker = os.path.join(tmp, "ran-env-python")
    py = os.path.join(env, "bin", "python")
    os.remove(py)
    open(py, "w").write(f"#!/bin/sh\ntouch {marker}\nexec {PYTHON} \"$@\"\n")
    os.chmod(py, 0o755)
    p = envbuild(cache, "verify", env, "--lock", demo_lock)
    check("verifies clean" in p.stdout, p.stdout)
    check(not os.path.exists(marker), "verify --lock ran the environment's bin/python")
    # A home inside the environment is refused, not run.
    home = os.path.join(env, "fakehome")
    os.makedirs(home)
    xy = "%d.%d" % sys.version_info[:2]
    shutil.copy(py, os.path.join(home, "python" + xy))
    cfg = os.path.join(env, "pyvenv.cfg")
    text = open(cfg).read()
    open(cfg, "w").write("\n".join(f"home = {home}" if line.startswith("home =") else line
                                   for line in text.splitlines()) + "\n")
    p = envbuild(cache, "verify", env, "--lock", demo_lock, expect=2)
    check("lies inside the environment" in p.stderr, p.stderr)
    check(not os.path.exists(marker), "verify --lock ran a file inside the environment")


def test_wheel_must_be_what_its_name_says():
    # Item 11: the file name, the .dist-info and METADATA must agree (the lock
    # entry is matched against the file name).
    w = write_wheel(wheels, "liar-1.0-py3-none-any.whl", "other", "9.9", OK)
    refused("liar", [w], "liar-1.0-py3-none-any.whl", "holds other-9.9.dist-info", "liar 1.0")
    w = write_wheel(wheels, "liarver-1.0-py3-none-any.whl", "liarver", "2.0", OK)
    refused("liarver", [w], "holds liarver-2.0.dist-info")
    w = write_wheel(wheels, "mdliar-1.0-py3-none-any.whl", "mdliar", "1.0", OK, metadata_name="other")
    refused("mdliar", [w], "mdliar-1.0.dist-info/METADATA names other 1.0")
    # A second .dist-info, all of it listed in RECORD.
    w = write_wheel(wheels, "twoinfo-1.0-py3-none-any.whl", "twoinfo", "1.0",
                    {**OK, "other-9.9.dist-info/METADATA": b"Metadata-Version: 2.1\nName: other\nVersion: 9.9\n\n"})
    refused("twoinfo", [w], "twoinfo-1.0-py3-none-any.whl", "more than one .dist-info directory",
            "other-9.9.dist-info", "twoinfo-1.0.dist-info")
    # Names normalised the way real wheels write them still match.
    w = write_wheel(wheels, "Mixed_Case-1.0-py3-none-any.whl", "mixed_case", "1.0", OK, metadata_name="Mixed.Case")
    lock = write_lock(os.path.join(tmp, "mixed.txt"), [w])
    p = envbuild(cache, "create", os.path.join(tmp, "env-mixed"), "--python", PYTHON, "--lock", lock, *FL)
    check("+ Mixed_Case==1.0" in p.stdout, p.stdout)


def patch_sizes(path, member, declared):
    """Rewrites `member`'s uncompressed size in both the local header and the
    central directory, leaving the deflated data as it is."""
    data = bytearray(open(path, "rb").read())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    struct.pack_into("<I", data, info.header_offset + 22, declared)
    pos = 0
    while True:
        pos = data.find(b"PK\x01\x02", pos)
        if pos < 0:
            break
        name_len = struct.unpack_from("<H", data, pos + 28)[0]
        if data[pos + 46:pos + 46 + name_len].decode() == member:
            struct.pack_into("<I", data, pos + 24, declared)
        pos += 4
    open(path, "wb").write(bytes(data))


def test_bombs_are_refused_before_writing():
    # Item 12: 256 MiB of zeros deflate to about 250 KiB.
    zeros = b"\0" * (256 << 20)
    w = write_wheel(wheels, "bomb-1.0-py3-none-any.whl", "bomb", "1.0", {**OK, "bomb/zeros.bin": zeros})
    check(os.path.getsize(w) < (1 << 20), f"bomb is {os.path.getsize(w)} bytes")
    start = time.monotonic()
    refused("bomb", [w], "bomb-1.0-py3-none-any.whl", "unpacks to 256.0 MiB", "compression bomb")
    check(time.monotonic() - start < 20, "refused from the central directory, not after unpacking")
    # The same data declared as 1,000 bytes: caught while streaming, at the first block past it.
    w = write_wheel(wheels, "liesize-1.0-py3-none-any.whl", "liesize", "1.0", {**OK, "liesize/zeros.bin": zeros})
    patch_sizes(w, "liesize/zeros.bin", 1000)
    refused("liesize", [w], "liesize-1.0-py3-none-any.whl", "entry 'liesize/zeros.bin' holds more than its declared 1000 bytes")
    del zeros


def test_conflicting_entries_are_named():
    # Item 12: demo/x as a file and as a directory.
    w = write_wheel(wheels, "conflict-1.0-py3-none-any.whl", "conflict", "1.0",
                    {**OK, "conflict/x": b"file\n", "conflict/x/y": b"under it\n"})
    p = refused("conflict", [w], "conflict-1.0-py3-none-any.whl", "entries 'conflict/x' and 'conflict/x/y' conflict")
    check("filesystem error" not in p.stderr, p.stderr)


main()
