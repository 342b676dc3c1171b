#!/usr/bin/env python3
"""envbuild create/verify against wheels the tests build and Debian's real pip
and setuptools wheels: interop with pip, file set equal to pip's, refused
wheels, drift, and re-create making an environment match its lock.

Each test is its own ctest (its own process, its own temporary directory): a test that needs the
environment test_create_and_use makes calls made_env(). Run one: python3 test_install.py test_NAME"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, run, start_index, tempdir  # noqa: E402
from envbuild_fixtures import *  # noqa: E402,F401,F403

tmp = tempdir("envbuild-install-")
cache = os.path.join(tmp, "cache")
wheels = os.path.join(tmp, "wheels")
run([sys.executable, os.path.join(HERE, "make_wheels.py"), wheels])


def W(prefix):
    return [os.path.join(wheels, n) for n in sorted(os.listdir(wheels)) if n.startswith(prefix)][0]


GOOD = [W("demopure-1.0-"), W("demoplat-")] + debian_wheels()
good_lock = write_lock(os.path.join(tmp, "good.txt"), GOOD)
FL = ["-f", wheels, "-f", DEBIAN_WHEELS]
env = os.path.join(tmp, "env")


def made_env():
    """The environment test_create_and_use makes (hardlinked from the cache), made now if this process has not
    made it yet: each test is its own ctest, and may run alone."""
    if not os.path.exists(os.path.join(env, "pyvenv.cfg")):
        envbuild(cache, "create", env, "--python", PYTHON, "--lock", good_lock, *FL)
    return env


def test_create_and_use():
    p = envbuild(cache, "create", env, "--python", PYTHON, "--lock", good_lock, *FL)
    check("4 installed" in p.stdout, p.stdout)
    py = os.path.join(env, "bin", "python")
    cfg = open(os.path.join(env, "pyvenv.cfg")).read()
    for key in ("home = ", "implementation = CPython", "version_info = ", "include-system-site-packages = false",
                "envbuild = "):
        check(key in cfg, f"pyvenv.cfg lacks {key!r}:\n{cfg}")
    check(os.path.islink(os.path.join(env, "lib64")) and os.readlink(os.path.join(env, "lib64")) == "lib", "lib64 -> lib")
    xy = "%d.%d" % sys.version_info[:2]
    for link in ("python3", "python" + xy):
        check(os.path.realpath(os.path.join(env, "bin", link)) == PYTHON, f"bin/{link} points at the interpreter")
    # The environment is the interpreter's own: sys.prefix, no system site-packages.
    out = run([py, "-c", "import sys, site; print(sys.prefix); print(sys.prefix != sys.base_prefix)"]).stdout.split()
    check(out == [env, "True"], f"sys.prefix {out}")
    check(run([py, "-c", "import demoplat; print(demoplat.add(2, 40))"]).stdout.strip() == "42", "extension module")
    check(run([os.path.join(env, "bin", "demopure")]).stdout.strip() == "demopure 1.0 ok", "console script")
    check(run([os.path.join(env, "bin", "demo-script")]).stdout.strip() == "script 1.0", "#!python script rewritten")
    first = open(os.path.join(env, "bin", "demo-script")).readline().strip()
    check(first == "#!" + py, f"shebang {first}")
    check(os.path.exists(os.path.join(env, "share", "demopure", "readme.txt")), ".data/data at the root")
    check(os.path.exists(os.path.join(env, "include", "site", "python" + xy, "demopure", "demopure.h")), ".data/headers")
    check(not [f for f in tree_files(env, skip_bytecode=False) if f.endswith(".pyc")], "no bytecode by default")
    # activate works in bash.
    out = run(["bash", "-c", f". {env}/bin/activate && command -v python && echo $VIRTUAL_ENV && deactivate && echo ${{VIRTUAL_ENV:-gone}}"]).stdout.split()
    check(out == [py, env, "gone"], f"activate: {out}")


def test_pip_accepts_it():
    made_env()
    py = os.path.join(env, "bin", "python")
    listing = run([py, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"]).stdout
    names = {d["name"].lower(): d["version"] for d in json.loads(listing)}
    check(names.get("demopure") == "1.0" and names.get("demoplat") == "1.0" and "pip" in names, f"pip list: {names}")
    p = run([py, "-m", "pip", "check", "--disable-pip-version-check"])
    check("No broken requirements" in p.stdout, p.stdout)
    p = run([py, "-m", "pip", "show", "-f", "demopure", "--disable-pip-version-check"])
    check("Location: " + os.path.join(env, "lib") in p.stdout and "demopure/__init__.py" in p.stdout, p.stdout)
    check(run([os.path.join(env, "bin", "pip"), "--version"]).stdout.startswith("pip "), "pip's own launcher runs")


def test_verify_clean_then_drift():
    made_env()
    p = envbuild(cache, "verify", env, "--json")
    report = json.loads(p.stdout)
    check(report["clean"] and len(report["distributions"]) == 4, p.stdout)
    # Drift in a copied (not hardlinked) environment, so the cache stays intact.
    env2 = os.path.join(tmp, "env-copy")
    envbuild(cache, "create", env2, "--python", PYTHON, "--lock", good_lock, *FL, "--link-mode", "copy")
    envbuild(cache, "verify", env2)
    site = [os.path.join(env2, "lib", d, "site-packages") for d in os.listdir(os.path.join(env2, "lib"))][0]
    target = os.path.join(site, "demopure", "data", "table.txt")
    data = bytearray(open(target, "rb").read())
    data[0] ^= 1  # one byte, same size
    open(target, "wb").write(bytes(data))
    os.remove(os.path.join(site, "demopure", "sub", "__init__.py"))
    open(os.path.join(site, "demopure", "added.py"), "w").write("x = 1\n")
    os.makedirs(os.path.join(site, "demopure", "__pycache__"), exist_ok=True)
    open(os.path.join(site, "demopure", "__pycache__", "x.cpython-311.pyc"), "wb").write(b"bytecode is not drift")
    p = envbuild(cache, "verify", env2, "--json", expect=1)
    report = json.loads(p.stdout)
    demo = [d for d in report["distributions"] if d["name"] == "demopure"][0]
    check(demo["modified"] == ["demopure/data/table.txt"], f"modified: {demo}")
    check(demo["missing"] == ["demopure/sub/__init__.py"], f"missing: {demo}")
    check(demo["unlisted"] == ["demopure/added.py"], f"unlisted: {demo}")
    others = [d for d in report["distributions"] if d["name"] != "demopure"]
    check(all(d["clean"] for d in others) and not report["clean"], p.stdout)
    p = envbuild(cache, "verify", env2, expect=1)
    check("modified  demopure/data/table.txt" in p.stdout and "has drifted" in p.stdout, p.stdout)
    # The original (hardlinked) environment and the cache were not touched.
    envbuild(cache, "verify", env)
    # create repairs the drifted distribution and leaves the others alone.
    p = envbuild(cache, "create", env2, "--python", PYTHON, "--lock", good_lock, *FL, "--link-mode", "copy")
    check("+ demopure==1.0" in p.stdout and "3 unchanged" in p.stdout, p.stdout)
    # The unlisted file is not the distribution's: create leaves it, verify still reports it.
    p = envbuild(cache, "verify", env2, "--json", expect=1)
    report = json.loads(p.stdout)
    demo = [d for d in report["distributions"] if d["name"] == "demopure"][0]
    check(demo["modified"] == [] and demo["missing"] == [] and demo["unlisted"] == ["demopure/added.py"],
          f"after repair: {demo}")
    os.remove(os.path.join(site, "demopure", "added.py"))
    envbuild(cache, "verify", env2)


def test_verify_against_lock():
    made_env()
    envbuild(cache, "verify", env, "--lock", good_lock)
    lock = write_lock(os.path.join(tmp, "other.txt"), [W("demopure-1.1-"), W("badhash-")] + debian_wheels())
    p = envbuild(cache, "verify", env, "--lock", lock, "--json", expect=1)
    r = json.loads(p.stdout)["lock"]
    check(r["missing"] == ["badhash==1.0"], r)
    check(r["extra"] == ["demoplat==1.0"], r)
    check(r["other_version"] == [{"name": "demopure", "installed": "1.0", "locked": "1.1"}], r)


def test_recreate_matches_lock():
    env3 = os.path.join(tmp, "env-sync")
    envbuild(cache, "create", env3, "--python", PYTHON, "--lock", good_lock, *FL)
    before = {f: os.stat(os.path.join(env3, f)).st_ino for f in tree_files(env3)}
    p = envbuild(cache, "create", env3, "--python", PYTHON, "--lock", good_lock, *FL)
    check("already matches the lock (4 distributions)" in p.stdout, p.stdout)
    after = {f: os.stat(os.path.join(env3, f)).st_ino for f in tree_files(env3)}
    check(before == after, "a matching environment is left exactly as it was")
    # New lock: demopure 1.1 (replace), demoplat dropped (remove), setuptools kept.
    lock = write_lock(os.path.join(tmp, "next.txt"), [W("demopure-1.1-")] + debian_wheels())
    p = envbuild(cache, "create", env3, "--python", PYTHON, "--lock", lock, *FL)
    check("- demoplat==1.0" in p.stdout and "+ demopure==1.1" in p.stdout and "2 unchanged" in p.stdout, p.stdout)
    check(run([os.path.join(env3, "bin", "demopure")]).stdout.strip() == "demopure 1.1 ok", "new version runs")
    files = tree_files(env3)
    check(not [f for f in files if "demoplat" in f], f"demoplat left files: {[f for f in files if 'demoplat' in f]}")
    envbuild(cache, "verify", env3, "--lock", lock)


def test_hardlink_edit_is_repaired():
    # An in-place edit through a hardlink changes the cache's copy too: create
    # must notice, unpack the wheel afresh and relink.
    env4 = os.path.join(tmp, "env-hard")
    p = envbuild(cache, "create", env4, "--python", PYTHON, "--lock", good_lock, *FL, "--link-mode", "hardlink", "--json")
    result = json.loads(p.stdout)
    check(result["link_mode"] == "hardlink" and len(result["installed"]) == 4 and result["removed"] == [], result)
    site = [os.path.join(env4, "lib", d, "site-packages") for d in os.listdir(os.path.join(env4, "lib"))][0]
    target = os.path.join(site, "demopure", "__init__.py")
    check(os.stat(target).st_nlink >= 2, "hardlinked to the cache")
    with open(target, "r+b") as f:
        f.write(b"#")
    envbuild(cache, "verify", env4, expect=1)
    p = envbuild(cache, "create", env4, "--python", PYTHON, "--lock", good_lock, *FL, "--link-mode", "hardlink")
    check("+ demopure==1.0" in p.stdout, p.stdout)
    envbuild(cache, "verify", env4)
    env5 = os.path.join(tmp, "env-hard2")
    envbuild(cache, "create", env5, "--python", PYTHON, "--lock", good_lock, *FL)
    envbuild(cache, "verify", env5)


def test_hardlink_hotfix_does_not_reach_the_next_environment():
    # Issue 22, Why 6: a `>>` hotfix into one hardlinked environment changed the cache,
    # and the next environment built from it got the tampered file, exit 0.
    c = cache + "-hotfix"
    env_a, env_b = os.path.join(tmp, "env-hotfix-a"), os.path.join(tmp, "env-hotfix-b")
    envbuild(c, "create", env_a, "--python", PYTHON, "--lock", good_lock, *FL, "--link-mode", "hardlink")
    site = [os.path.join(env_a, "lib", d, "site-packages") for d in os.listdir(os.path.join(env_a, "lib"))][0]
    target = os.path.join(site, "demopure", "__init__.py")
    check(os.stat(target).st_nlink >= 2, "hardlinked to the cache")
    with open(target, "ab") as f:
        f.write(b"HOTFIX = 1\n")
    p = envbuild(c, "create", env_b, "--python", PYTHON, "--lock", good_lock, *FL, "--link-mode", "hardlink")
    check("changed since it was unpacked" in p.stderr + p.stdout and "demopure/__init__.py" in p.stderr + p.stdout,
          p.stdout + p.stderr)
    envbuild(c, "verify", env_b)  # clean: the cache entry was unpacked again from the verified wheel
    site_b = [os.path.join(env_b, "lib", d, "site-packages") for d in os.listdir(os.path.join(env_b, "lib"))][0]
    check(b"HOTFIX" not in open(os.path.join(site_b, "demopure", "__init__.py"), "rb").read(), "no hotfix in B")
    p = envbuild(c, "verify", env_a, expect=1)  # the edited environment reports its drift
    check("demopure" in p.stdout + p.stderr, p.stdout + p.stderr)


def test_compile_option():
    env6 = os.path.join(tmp, "env-compiled")
    envbuild(cache, "create", env6, "--python", PYTHON, "--lock", good_lock, *FL, "--compile")
    pyc = [f for f in tree_files(env6, skip_bytecode=False) if f.endswith(".pyc") and "/demopure/" in f]
    check(pyc, "bytecode written with --compile")
    envbuild(cache, "verify", env6)


def test_same_files_as_pip():
    made_env()
    ref = os.path.join(tmp, "ref")
    run([PYTHON, "-m", "venv", "--without-pip", ref])
    pip = [f for f in debian_wheels() if os.path.basename(f).startswith("pip-")][0]
    names = ["==".join(os.path.basename(w).split("-")[:2]) for w in GOOD]
    run([os.path.join(ref, "bin", "python"), os.path.join(pip, "pip"), "install", "--no-index", "--find-links", wheels,
         "--find-links", DEBIAN_WHEELS, "--no-compile", "--disable-pip-version-check", *names])
    skeleton = is_venv_skeleton
    ours = {f for f in tree_files(env) if not skeleton(f)}
    theirs = {f for f in tree_files(ref) if not skeleton(f)}
    check(ours == theirs, f"only envbuild: {sorted(ours - theirs)[:20]}\nonly pip: {sorted(theirs - ours)[:20]}")
    # Same bytes too, once each environment's own path is taken out (shebangs).
    for f in sorted(ours):
        if f.endswith("/INSTALLER"):
            continue
        a = open(os.path.join(env, f), "rb").read().replace(env.encode(), b"ENV")
        b = open(os.path.join(ref, f), "rb").read().replace(ref.encode(), b"ENV")
        if f.endswith("/RECORD"):
            # Launcher hashes depend on the environment's path (same length here: env, ref).
            rows = lambda data: {(r.rsplit(",", 2)[0], r.rsplit(",", 2)[2]) if "/bin/" in r else r
                                 for r in data.decode().splitlines() if "/INSTALLER," not in r and r}
            check(rows(a) == rows(b), f"{f} rows differ:\n{sorted(rows(a) ^ rows(b))}")
        else:
            check(a == b, f"{f} differs from pip's")


def test_pip_uninstall_removes_everything():
    made_env()
    py = os.path.join(env, "bin", "python")
    before = tree_files(env)
    run([py, "-m", "pip", "uninstall", "-y", "--disable-pip-version-check", "demopure"])
    left = [f for f in tree_files(env) if "demopure" in f or f.startswith("bin/demo") or f.startswith("bin/plain-tool")]
    check(not left, f"pip uninstall left: {left}")
    check(len(before - tree_files(env)) >= 10, "files were removed")
    envbuild(cache, "verify", env)


def test_refused_wheels():
    for name, words in [("badhash", "bad RECORD"), ("dotdot", "escapes the target"), ("abspath", "absolute path"),
                        ("dupe", "duplicate entry"), ("symlink", "link entry")]:
        lock = write_lock(os.path.join(tmp, f"{name}.txt"), [W(name + "-")])
        target = os.path.join(tmp, f"env-{name}")
        p = envbuild(cache, "create", target, "--python", PYTHON, "--lock", lock, "-f", wheels, expect=1)
        check(words in p.stderr and name in p.stderr, f"{name}: {p.stderr}")
        check(not os.path.exists(os.path.join(target, "pyvenv.cfg")), f"{name}: environment untouched")
    check(not os.path.exists("/tmp/evil_abspath.py"), "absolute entry not written")
    for root, dirs, files in os.walk(tmp):
        check("evil_dotdot.py" not in files, f"../ entry written in {root}")
    check(os.listdir(os.path.join(cache, "tmp")) == [], "no work left in the cache's tmp")
    # --allow-bad-record installs it, says which wheel.
    lock = os.path.join(tmp, "badhash.txt")
    p = envbuild(cache, "create", os.path.join(tmp, "env-bad-ok"), "--python", PYTHON, "--lock", lock, "-f", wheels,
                 "--allow-bad-record")
    check("badhash-1.0-py3-none-any.whl has a bad RECORD" in p.stderr and "broken/__init__.py" in p.stderr, p.stderr)


def test_no_compatible_wheel():
    lock = write_lock(os.path.join(tmp, "old.txt"), [W("oldonly-")])
    p = envbuild(cache, "create", os.path.join(tmp, "env-old"), "--python", PYTHON, "--lock", lock, "-f", wheels, expect=1)
    xy = "%d%d" % sys.version_info[:2]
    for words in ("oldonly==1.0", "oldonly-1.0-cp27-cp27mu-linux_x86_64.whl", f"cp{xy}-cp{xy}", "py3-none-any"):
        check(words in p.stderr, f"{words!r} not in: {p.stderr}")
    # A wheel present but with another hash than the lock allows.
    bad = os.path.join(tmp, "wronghash.txt")
    open(bad, "w").write("demopure==1.0 --hash=sha256:" + "0" * 64 + "\n")
    p = envbuild(cache, "create", os.path.join(tmp, "env-wh"), "--python", PYTHON, "--lock", bad, "-f", wheels, expect=1)
    check("matches the lock's hashes" in p.stderr and "demopure-1.0-py3-none-any.whl" in p.stderr, p.stderr)


def test_bad_locks_exit_2():
    cases = {
        "unpinned.txt": ("demopure>=1.0 --hash=sha256:" + "a" * 64 + "\n", "unpinned.txt:1", "not pinned"),
        "nohash.txt": ("# c\n\nsetuptools==66.1.1 \\\n  --hash=sha256:" + "a" * 64 + "\ndemopure==1.0\n", "nohash.txt:5", "no --hash"),
        "weak.txt": ("demopure==1.0 --hash=sha1:" + "a" * 40 + "\n", "weak.txt:1", "too weak"),
        "marker.txt": ("demopure==1.0 ; python_version >>> '3' --hash=sha256:" + "a" * 64 + "\n", "marker.txt:1", "marker"),
        "pylock.toml": ('lock-version = "1.0"\ncreated-by = "t"\n\n[[packages]]\nname = "demopure"\n', "pylock.toml:4",
                        "Exactly one of vcs, directory, archive must be set"),
    }
    for name, (text, where, words) in cases.items():
        d = os.path.join(tmp, "bad-" + name.split(".")[0])
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, name)
        open(path, "w").write(text)
        p = envbuild(cache, "create", os.path.join(tmp, "env-never"), "--python", PYTHON, "--lock", path, "-f", wheels, expect=2)
        check(where in p.stderr and words in p.stderr, f"{name}: {p.stderr}")


def test_markers_select_entries():
    lock = os.path.join(tmp, "markers.txt")
    lines = [wheel_line(W("demopure-1.0-")).replace(" \\\n", " ; python_version >= '3.0' \\\n"),
             wheel_line(W("demoplat-")).replace(" \\\n", " ; sys_platform == 'win32' \\\n")]
    open(lock, "w").write("".join(lines))
    target = os.path.join(tmp, "env-markers")
    p = envbuild(cache, "create", target, "--python", PYTHON, "--lock", lock, "-f", wheels)
    check("+ demopure==1.0" in p.stdout and "demoplat" not in p.stdout, p.stdout)


main()
