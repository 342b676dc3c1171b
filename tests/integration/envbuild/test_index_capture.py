#!/usr/bin/env python3
"""envbuild against a simple index on loopback (HTML and JSON forms, hash
fragments, retries, refusals), pylock.toml, capture (wheels from an installed
environment, rebuilt elsewhere), diff, and `python install` of a standalone
archive this test builds from the local Python."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, run, start_index, tempdir  # noqa: E402
from envbuild_fixtures import *  # noqa: E402,F401,F403

tmp = tempdir("envbuild-index-")
cache = os.path.join(tmp, "cache")
wheels = os.path.join(tmp, "wheels")
run([sys.executable, os.path.join(HERE, "make_wheels.py"), wheels])
for w in debian_wheels():
    shutil.copy(w, wheels)


def W(prefix):
    return [os.path.join(wheels, n) for n in sorted(os.listdir(wheels)) if n.startswith(prefix)][0]


GOOD = [W("demopure-1.0-"), W("demoplat-"), W("pip-"), W("setuptools-")]
server, base = start_index(wheels)


def test_index_html():
    lock = write_lock(os.path.join(tmp, "lock.txt"), GOOD)
    env = os.path.join(tmp, "env-html")
    p = envbuild(cache + "-html", "create", env, "--python", PYTHON, "--lock", lock, "--index-url", base + "/simple/")
    check("4 installed" in p.stdout, p.stdout)
    check(len(os.listdir(os.path.join(cache + "-html", "wheels"))) == 4, "downloads kept by sha256")
    envbuild(cache + "-html", "verify", env, "--lock", lock)
    check(run([os.path.join(env, "bin", "demopure")]).stdout.strip() == "demopure 1.0 ok", "console script")


def test_index_without_hash_fragments():
    lock = write_lock(os.path.join(tmp, "lock-nohash.txt"), GOOD[:1])
    env = os.path.join(tmp, "env-nohash")
    p = envbuild(cache + "-nohash", "create", env, "--python", PYTHON, "--lock", lock, "--index-url", base + "/nohash/simple")
    check("1 installed" in p.stdout, p.stdout)
    bad = os.path.join(tmp, "lock-nohash-bad.txt")
    open(bad, "w").write("demopure==1.0 --hash=sha256:" + "2" * 64 + "\n")
    p = envbuild(cache + "-nohash", "create", env, "--python", PYTHON, "--lock", bad, "--index-url", base + "/nohash/simple", expect=1)
    check("matches the lock's hashes" in p.stderr and sha256(GOOD[0]) in p.stderr, p.stderr)


def test_index_json_and_lock_option():
    # The index named inside the lock (pip's --index-url line); JSON is negotiated.
    lock = os.path.join(tmp, "lock-json.txt")
    with open(lock, "w") as f:
        f.write(f"--index-url {base}/simple\n")
        for w in GOOD[:2]:
            f.write(wheel_line(w))
    env = os.path.join(tmp, "env-json")
    p = envbuild(cache + "-json", "create", env, "--python", PYTHON, "--lock", lock)
    check("2 installed" in p.stdout, p.stdout)
    envbuild(cache + "-json", "verify", env)


def test_index_hash_mismatch_and_unknown():
    lock = os.path.join(tmp, "lock-bad.txt")
    open(lock, "w").write("demopure==1.0 --hash=sha256:" + "1" * 64 + "\n")
    p = envbuild(cache, "create", os.path.join(tmp, "env-x"), "--python", PYTHON, "--lock", lock,
                 "--index-url", base + "/simple", expect=1)
    check("matches the lock's hashes" in p.stderr, p.stderr)
    open(lock, "w").write("nosuchproject==1.0 --hash=sha256:" + "1" * 64 + "\n")
    p = envbuild(cache, "create", os.path.join(tmp, "env-x"), "--python", PYTHON, "--lock", lock,
                 "--index-url", base + "/simple", expect=1)
    check("no compatible wheel for nosuchproject==1.0" in p.stderr and "wheels seen: none" in p.stderr, p.stderr)
    p = envbuild(cache, "create", os.path.join(tmp, "env-x"), "--python", PYTHON, "--lock", lock,
                 "--index-url", base + "/private/simple", expect=4)
    check("refused" in p.stderr, p.stderr)


def test_pylock_urls_with_retry_and_bad_size():
    # pylock.toml naming wheels by URL; the flaky route fails once (503) and is retried.
    def entry(w, size=None):
        n = os.path.basename(w)
        name, version = n.split("-")[:2]
        return (f'[[packages]]\nname = "{name}"\nversion = "{version}"\n'
                f'wheels = [{{ url = "{base}/flaky/{n}", size = {size or os.path.getsize(w)}, '
                f'hashes = {{ sha256 = "{sha256(w)}" }} }}]\n\n')
    d = os.path.join(tmp, "pylock-url")
    os.makedirs(d)
    lock = os.path.join(d, "pylock.toml")
    open(lock, "w").write('lock-version = "1.0"\ncreated-by = "test"\n\n' + entry(GOOD[0]) + entry(GOOD[1]))
    env = os.path.join(tmp, "env-pylock")
    p = envbuild(cache + "-pylock", "create", env, "--python", PYTHON, "--lock", lock)
    check("2 installed" in p.stdout, p.stdout + p.stderr)
    open(lock, "w").write('lock-version = "1.0"\ncreated-by = "test"\n\n' + entry(W("demopure-1.1-"), size=10))
    p = envbuild(cache + "-pylock", "create", env, "--python", PYTHON, "--lock", lock, expect=1)
    check("size" in p.stderr, p.stderr)
    # A marker that is false skips the entry.
    open(lock, "w").write('lock-version = "1.0"\ncreated-by = "test"\n\n' + entry(GOOD[0]) +
                          entry(GOOD[1]).replace('version = "1.0"', 'version = "1.0"\nmarker = "sys_platform == \'win32\'"'))
    p = envbuild(cache + "-pylock", "create", env, "--python", PYTHON, "--lock", lock)
    check("- demoplat==1.0" in p.stdout, p.stdout)
    open(lock, "w").write('lock-version = "2.0"\n')
    p = envbuild(cache, "create", env, "--python", PYTHON, "--lock", lock, expect=2)
    check("pylock.toml:1" in p.stderr and "lock-version" in p.stderr, p.stderr)
    # Issue 22, Why 1: `[[package]]` (a typo) is no lock: exit 2 and the environment untouched
    # (it was read as an empty lock, and create uninstalled everything, exit 0).
    before = envbuild(cache, "verify", env, "--json").stdout
    open(lock, "w").write('lock-version = "1.0"\ncreated-by = "test"\n\n' + entry(GOOD[0]).replace("[[packages]]", "[[package]]"))
    p = envbuild(cache, "create", env, "--python", PYTHON, "--lock", lock, expect=2)
    check("Missing required value in 'packages'" in p.stderr, p.stderr)
    check(envbuild(cache, "verify", env, "--json").stdout == before, "the environment is untouched")
    # A valid lock that selects nothing would empty the environment: refused unless asked for.
    open(lock, "w").write('lock-version = "1.0"\ncreated-by = "test"\npackages = []\n')
    p = envbuild(cache, "create", env, "--python", PYTHON, "--lock", lock, expect=2)
    check("--allow-empty" in p.stderr, p.stderr)
    check(envbuild(cache, "verify", env, "--json").stdout == before, "the environment is untouched")
    p = envbuild(cache, "create", env, "--python", PYTHON, "--lock", lock, "--allow-empty")
    check(json.loads(envbuild(cache, "verify", env, "--json").stdout)["distributions"] == [], p.stdout)


def capture_pip_env():
    """An environment made by pip (not by envbuild) from real and test wheels, captured to a wheelhouse and a
    pylock: (environment, wheelhouse, lock, the capture's run)."""
    src = os.path.join(tmp, "pipenv")
    run([PYTHON, "-m", "venv", "--without-pip", src])
    names = ["==".join(os.path.basename(w).split("-")[:2]) for w in GOOD]
    run([os.path.join(src, "bin", "python"), os.path.join(W("pip-"), "pip"), "install", "--no-index", "--find-links",
         wheels, "--disable-pip-version-check", *names])
    house = os.path.join(tmp, "house")
    lock = os.path.join(tmp, "captured", "pylock.toml")
    return src, house, lock, run([ENVBUILD, "capture", src, "--wheelhouse", house, "--lock", lock])


def captured_lock():
    """capture_pip_env()'s lock, captured now if this process has not yet (each test is its own ctest)."""
    lock = os.path.join(tmp, "captured", "pylock.toml")
    return lock if os.path.exists(lock) else capture_pip_env()[2]


def test_capture_and_rebuild():
    src, house, lock, p = capture_pip_env()
    check("captured 4 distributions" in p.stdout, p.stdout)
    for n in os.listdir(house):
        wheel_meta = subprocess.run([sys.executable, "-c", f"import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); "
                                     f"print([z.read(i).decode() for i in z.namelist() if i.endswith('.dist-info/WHEEL')][0])",
                                     os.path.join(house, n)], capture_output=True, text=True).stdout
        check("Generator: envbuild capture" in wheel_meta, f"{n}: {wheel_meta}")
    # Launchers are not packed (the installer writes them), #!python scripts are restored.
    pure = W("demopure-1.0-")
    captured_pure = [os.path.join(house, n) for n in os.listdir(house) if n.startswith("demopure-")][0]
    import zipfile
    names_in = zipfile.ZipFile(captured_pure).namelist()
    check("demopure-1.0.data/scripts/demo-script" in names_in and not [n for n in names_in if n.endswith("/demopure")],
          names_in)
    check(zipfile.ZipFile(captured_pure).read("demopure-1.0.data/scripts/demo-script").startswith(b"#!python\n"), "#!python")
    check(set(names_in) == set(zipfile.ZipFile(pure).namelist()), f"{sorted(set(names_in) ^ set(zipfile.ZipFile(pure).namelist()))}")
    # Rebuilt from the captured wheels alone (paths in the lock), into another directory.
    dst = os.path.join(tmp, "rebuilt")
    envbuild(cache, "create", dst, "--python", PYTHON, "--lock", lock)
    envbuild(cache, "verify", dst, "--lock", lock)
    check(run([os.path.join(dst, "bin", "python"), "-m", "pip", "check"]).returncode == 0, "pip check")
    check(run([os.path.join(dst, "bin", "demo-script")]).stdout.strip() == "script 1.0", "script from captured wheel")
    p = run([ENVBUILD, "diff", src, dst])
    check("0 of 4 differ" in p.stdout, p.stdout)
    # A requirements lock captured from it too, and a differing diff.
    lock_txt = os.path.join(tmp, "captured.txt")
    run([ENVBUILD, "capture", dst, "--wheelhouse", house + "2", "--lock", lock_txt])
    check("--hash=sha256:" in open(lock_txt).read(), "requirements lock is hashed")
    other = write_lock(os.path.join(tmp, "other.txt"), [W("demopure-1.1-"), W("pip-")])
    p = run([ENVBUILD, "diff", lock_txt, other], expect=1)
    check("* demopure" in p.stdout and "1.1" in p.stdout and "3 of 4 differ" in p.stdout, p.stdout)
    p = run([ENVBUILD, "diff", dst, other, "--json"], expect=1)
    rows = {r["name"]: r for r in json.loads(p.stdout)["packages"]}
    check(rows["demoplat"]["b"] is None and rows["demoplat"]["differs"] and not rows["pip"]["differs"], rows)
    # A wheel the pylock names by path, replaced by other bytes, is refused: by its size
    # first, as uv refuses it, then (same size, other bytes) by its hash.
    target = [os.path.join(house, n) for n in os.listdir(house) if n.startswith("demopure-")][0]
    shutil.copy(target, target + ".orig")
    try:
        shutil.copy(W("demopure-1.0-"), target)
        p = envbuild(cache, "create", os.path.join(tmp, "env-swapped"), "--python", PYTHON, "--lock", lock, expect=1)
        check(f"is {os.path.getsize(target)} bytes; the lock says {os.path.getsize(target + '.orig')}" in p.stderr, p.stderr)
        data = bytearray(open(target + ".orig", "rb").read())
        data[-30] ^= 1
        open(target, "wb").write(bytes(data))
        p = envbuild(cache, "create", os.path.join(tmp, "env-swapped2"), "--python", PYTHON, "--lock", lock, expect=1)
        check("matches the lock's hashes" in p.stderr, p.stderr)
    finally:
        os.replace(target + ".orig", target)


def test_python_install_and_use():
    pythons = os.path.join(tmp, "pythons")
    xy = "%d.%d" % sys.version_info[:2]
    gz = make_standalone_archive(os.path.join(tmp, "cpython-standalone"), "gz")
    p = run([ENVBUILD, "--cache-dir", cache, "--python-dir", pythons, "python", "install", gz, "--sha256", "0" * 64], expect=1)
    check("expected" in p.stderr, p.stderr)
    p = run([ENVBUILD, "--cache-dir", cache, "--python-dir", pythons, "python", "install", gz, "--sha256", sha256(gz)])
    check("installed at" in p.stdout, p.stdout)
    found = run([ENVBUILD, "--python-dir", pythons, "python", "find", xy]).stdout.strip()
    check(found.startswith(pythons) and found.endswith(f"/python/bin/python{xy}"), found)
    check(os.listdir(os.path.join(pythons, ".tmp")) == [], "no work left behind")
    # --python X.Y finds the managed interpreter: a captured set rebuilt on another interpreter path.
    lock = captured_lock()
    env = os.path.join(tmp, "env-managed")
    run([ENVBUILD, "--cache-dir", cache, "--python-dir", pythons, "create", env, "--python", xy, "--lock", lock])
    check(os.readlink(os.path.join(env, "bin", "python")).startswith(pythons), "env uses the managed interpreter")
    check(run([os.path.join(env, "bin", "python"), "-c", "import demoplat, demopure; print(demoplat.add(1, 1))"]).stdout.strip() == "2",
          "imports under the managed interpreter")
    run([ENVBUILD, "--cache-dir", cache, "verify", env])
    zst = make_standalone_archive(os.path.join(tmp, "cpython-zst"), "zst")
    p = run([ENVBUILD, "--cache-dir", cache, "--python-dir", pythons + "-zst", "python", "install", zst, "--sha256", sha256(zst)])
    check("installed at" in p.stdout, p.stdout)
    # An archive with an escaping entry is refused and leaves nothing.
    evil = os.path.join(tmp, "evil.tar.gz")
    with tarfile.open(evil, "w:gz") as t:
        info = tarfile.TarInfo("python/../../evil.txt")
        info.size = 1
        import io
        t.addfile(info, io.BytesIO(b"x"))
    p = run([ENVBUILD, "--python-dir", pythons + "-evil", "python", "install", evil, "--sha256", sha256(evil)], expect=1)
    check("refused" in p.stderr, p.stderr)
    check(not os.path.exists(os.path.join(tmp, "evil.txt")) and not os.path.exists(os.path.join(pythons + "-evil", "..", "evil.txt")),
          "escaping entry not written")


main()
