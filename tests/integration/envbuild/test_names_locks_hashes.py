#!/usr/bin/env python3
"""Hostile inputs, round 3 (issue 41, items 1, 9 and 10): names made from an installed distribution's
metadata are names, never paths (capture's wheels, launcher scripts); two runs on one environment each end
with a correct result or a clear refusal (the environment's lock, ENV/.lock); every RECORD hash algorithm
the wheel spec allows is checked, and a weak or unknown one is reported, never skipped (verify and create).
Expected hashes come from Python's hashlib, never from envbuild."""
import base64
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, run, tempdir  # noqa: E402
from envbuild_fixtures import ENVBUILD, PYTHON, envbuild, write_lock  # noqa: E402
from make_wheels import pure_wheel, write_wheel  # noqa: E402

tmp = tempdir("envbuild-round3-")
cache = os.path.join(tmp, "cache")
wheels = os.path.join(tmp, "wheels")
os.makedirs(wheels)
DEMO1, DEMO2 = pure_wheel(wheels, "1.0"), pure_wheel(wheels, "2.0")
LOCK1 = write_lock(os.path.join(tmp, "lock1.txt"), [DEMO1])
LOCK2 = write_lock(os.path.join(tmp, "lock2.txt"), [DEMO2])
FL = ["-f", wheels]


def site_of(env):
    return glob.glob(os.path.join(env, "lib", "python3.*", "site-packages"))[0]


def fresh_env(name, lock=LOCK1):
    env = os.path.join(tmp, name)
    envbuild(cache, "create", env, "--python", PYTHON, "--lock", lock, *FL, "--link-mode", "copy")
    return env


def files_below(d):
    return {os.path.relpath(os.path.join(p, n), d) for p, _, names in os.walk(d) for n in names}


def rewrite_header(path, key, value):
    """Sets a METADATA/WHEEL header line `key: value` (replacing every line of that key)."""
    lines = [x for x in open(path).read().splitlines() if not x.startswith(key + ":")]
    at = 1 if lines and ":" in lines[0] else 0
    lines.insert(at, f"{key}: {value}")
    open(path, "w").write("\n".join(lines) + "\n")


# ---- item 1: names made from metadata ----------------------------------------------------------------------

def capture_case(label, edit):
    """A fresh environment whose demopure METADATA/WHEEL `edit` changes, captured into a wheelhouse three levels
    down: (the run, the wheelhouse, the case's directory)."""
    case = os.path.join(tmp, "capture-" + label)
    env = fresh_env(os.path.join(case, "env"))
    info = os.path.join(site_of(env), "demopure-1.0.dist-info")
    edit(info)
    house = os.path.join(case, "a", "b", "house")
    before = files_below(case)
    p = run([ENVBUILD, "capture", env, "--wheelhouse", house, "--lock", os.path.join(case, "lock.txt")],
            expect=None)
    made = files_below(case) - before
    outside = sorted(f for f in made if not f.startswith(os.path.join("a", "b", "house") + os.sep)
                     and f != "lock.txt")
    check(not outside, f"{label}: capture wrote outside the wheelhouse", f"{outside}\n{p.out}{p.err}")
    return p, house


def test_capture_names_wheels_only_from_checked_metadata():
    # METADATA's Version and Name, and WHEEL's tags, as issue 41 found them and more.
    for label, key, value, what in [
        ("version-dotdot", "Version", "../../../escaped", "is not a PEP 440 version"),
        ("version-slash", "Version", "1.0/../../../../escaped", "is not a PEP 440 version"),
        ("name-dotdot", "Name", "../../../../escapee", "is not a distribution name"),
        ("name-esc", "Name", "demo\x1b[2Jpure", "is not a distribution name"),
    ]:
        p, house = capture_case(label, lambda info: rewrite_header(os.path.join(info, "METADATA"), key, value))
        check(p.rc == 0 and "captured 0 distributions" in p.out, f"{label}: not skipped", p.out + p.err)
        check(what in p.err and "skipped" in p.err, f"{label}: the skip does not say why", p.err)
        check("\x1b" not in p.out + p.err, f"{label}: a raw ESC reached the output", p.err)
        check(not os.path.isdir(house) or os.listdir(house) == [], f"{label}: a wheel was written",
              os.listdir(house))
    p, house = capture_case("tag", lambda info: rewrite_header(os.path.join(info, "WHEEL"), "Tag",
                                                              "py3-none-../../../tagescape"))
    check(p.rc == 0 and "is not a wheel tag" in p.err, "a WHEEL Tag path: not skipped", p.out + p.err)
    check(os.listdir(house) == [], "a WHEEL Tag path: a wheel was written", os.listdir(house))
    # A .dist-info whose name is not METADATA's project: the wheel would lie about what it holds.
    p, house = capture_case("other-name", lambda info: rewrite_header(os.path.join(info, "METADATA"), "Name", "torch"))
    check(p.rc == 0 and "is not the .dist-info of torch 1.0" in p.err, "another project's name: not skipped",
          p.out + p.err)
    # An absolute Name lands wherever it says unless refused: a directory of our own under the system's temporary
    # directory, spelt so that the name's normalisation leaves it as it is.
    base = tempfile.gettempdir()
    if re.fullmatch(r"[a-z0-9/]+", base):
        target = os.path.join(base, "provkitround" + str(os.getpid()))
        os.makedirs(target)
        try:
            p, house = capture_case("name-absolute", lambda info: rewrite_header(
                os.path.join(info, "METADATA"), "Name", target + "/escapee"))
            check(os.listdir(target) == [], "an absolute Name wrote outside the wheelhouse", os.listdir(target))
            check(p.rc == 0 and "is not a distribution name" in p.err, "an absolute Name: not skipped", p.err)
        finally:
            shutil.rmtree(target)
    # The good case still captures, and its name is the normalised one: a version as written "1.0.0" stays.
    p, house = capture_case("good", lambda info: None)
    check(p.rc == 0 and os.listdir(house) == ["demopure-1.0-py3-none-any.whl"], "a good capture", p.out + p.err)


def test_launcher_names_from_entry_points_are_one_file_name():
    out = os.path.join(tmp, "ep-wheels")
    os.makedirs(out)
    for label, name in [("esc", "tool\x1b[2J"), ("backslash", "a\\..\\b"), ("dotdot", "..")]:
        w = write_wheel(out, "epname-1.0-py3-none-any.whl", "epname", "1.0", {"epname/__init__.py": b"def main(): pass\n"},
                        entry_points=f"[console_scripts]\n{name} = epname:main\n")
        lock = write_lock(os.path.join(tmp, f"ep-{label}.txt"), [w])
        env = os.path.join(tmp, f"ep-env-{label}")
        p = envbuild(cache + "-ep-" + label, "create", env, "--python", PYTHON, "--lock", lock, "-f", out,
                     expect=1)
        check("is not a plain file name" in p.err, f"{label}: the launcher name is not refused", p.err)
        check("\x1b" not in p.out + p.err, f"{label}: a raw ESC in the output", p.err)
        check(not os.path.exists(os.path.join(env, "bin", name)), f"{label}: a launcher was written")
        os.remove(w)


# ---- item 10: every RECORD hash algorithm --------------------------------------------------------------------

def hashlib_field(algorithm, data):
    return algorithm + "=" + base64.urlsafe_b64encode(hashlib.new(algorithm, data).digest()).rstrip(b"=").decode()


def set_record_row(record, path, field):
    lines = open(record).read().splitlines()
    out = [f"{path},{field},{x.split(',')[2]}" if x.startswith(path + ",") else x for x in lines]
    open(record, "w").write("\n".join(out) + "\n")


def verify_json(env, *extra, expect):
    p = run([ENVBUILD, "--cache-dir", cache, "verify", env, "--json", *extra], expect=expect)
    return json.loads(p.out.splitlines()[-1])


def test_verify_checks_every_record_hash_algorithm():
    env = fresh_env("verify-algorithms")
    site = site_of(env)
    record = os.path.join(site, "demopure-1.0.dist-info", "RECORD")
    target = os.path.join(site, "demopure", "__init__.py")
    original = open(target, "rb").read()
    # Rows rewritten with each algorithm the spec allows, the value from hashlib: clean.
    for algorithm in ("sha384", "sha512", "sha3_256", "sha3_384", "sha3_512", "blake2b", "blake2s"):
        set_record_row(record, "demopure/__init__.py", hashlib_field(algorithm, original))
        envbuild(cache, "verify", env, expect=0)
        # The file changed to run a command, same size, its row left: modified.
        evil = b"import os; os.system('id')\n"
        evil = (evil + b"#" * len(original))[:len(original)]
        open(target, "wb").write(evil)
        p = envbuild(cache, "verify", env, expect=1)
        check("modified  demopure/__init__.py" in p.out, f"{algorithm}: the changed file verifies clean", p.out)
        envbuild(cache, "verify", env, "--lock", LOCK1, expect=1)
        open(target, "wb").write(original)
    # Issue 41's rows: a changed file, its row rewritten with a value nothing computed.
    open(target, "wb").write(evil)
    set_record_row(record, "demopure/__init__.py", "sha512=AAAA")
    p = envbuild(cache, "verify", env, expect=1)
    check("modified  demopure/__init__.py" in p.out, "sha512=AAAA verifies clean", p.out)
    envbuild(cache, "verify", env, "--lock", LOCK1, expect=1)
    # Weak and unknown algorithms: reported, naming the file and the algorithm, with --lock too; never skipped
    # (even with a value that matches).
    for field, why in [(hashlib_field("md5", evil), "md5 is too weak"), ("md5=AAAA", "md5 is too weak"),
                       (hashlib_field("sha1", evil), "sha1 is too weak"),
                       (hashlib_field("sha224", evil), "sha224 is too weak"),
                       ("crc32=AAAA", "unknown hash algorithm"), ("sha256", "no algorithm")]:
        set_record_row(record, "demopure/__init__.py", field)
        algorithm = field.split("=")[0]
        p = envbuild(cache, "verify", env, expect=1)
        check(f"unverifiable  demopure/__init__.py (RECORD's hash {algorithm}: {why}" in p.out,
              f"{field}: not reported", p.out)
        envbuild(cache, "verify", env, "--lock", LOCK1, expect=1)
        j = verify_json(env, expect=1)
        [d] = [d for d in j["distributions"] if d["name"] == "demopure"]
        check(d["unverifiable"] == [{"path": "demopure/__init__.py", "algorithm": algorithm,
                                     "why": d["unverifiable"][0]["why"]}] and why in d["unverifiable"][0]["why"],
              f"{field}: --json", json.dumps(d))


def test_create_checks_every_record_hash_algorithm():
    out = os.path.join(tmp, "algo-wheels")
    os.makedirs(out)
    init = b"VALUE = 1\n"
    # The row of algo/__init__.py rewritten: (label, its hash field, create's exit status, words of the refusal).
    cases = [("sha512", hashlib_field("sha512", init), 0, None),
             ("blake2b", hashlib_field("blake2b", init), 0, None),
             ("sha3_384", hashlib_field("sha3_384", init), 0, None),
             ("sha512-wrong", hashlib_field("sha512", b"other\n"), 1, "does not match RECORD's sha512="),
             ("md5", hashlib_field("md5", init), 1, "md5 is too weak"),
             ("unknown", "whirlpool=AAAA", 1, "unknown hash algorithm")]
    for label, field, rc, words in cases:
        d = os.path.join(out, label)
        os.makedirs(d)
        w = write_wheel(d, "algo-1.0-py3-none-any.whl", "algo", "1.0", {"algo/__init__.py": init},
                        record_override=lambda r, field=field: r.replace(hashlib_field("sha256", init), field))
        lock = write_lock(os.path.join(out, label + ".txt"), [w])
        env = os.path.join(tmp, "algo-env-" + label)
        p = envbuild(cache, "create", env, "--python", PYTHON, "--lock", lock, "-f", d, expect=rc)
        if rc == 0:
            envbuild(cache, "verify", env, "--lock", lock, expect=0)
            installed = open(os.path.join(site_of(env), "algo-1.0.dist-info", "RECORD")).read()
            check(hashlib_field("sha256", init) in installed, f"{label}: the installed RECORD", installed)
        else:
            check(words in p.err and "bad RECORD" in p.err, f"{label}: not refused", p.err)


# ---- item 9: two runs on one environment ---------------------------------------------------------------------

class Holder:
    """Holds ENV/.lock with python's fcntl.flock, as another run would."""

    def __init__(self, env, mode=fcntl.LOCK_EX):
        os.makedirs(env, exist_ok=True)
        self.f = open(os.path.join(env, ".lock"), "a+")
        fcntl.flock(self.f, mode | fcntl.LOCK_NB)

    def release(self):
        self.f.close()


def read_until(stream, words, seconds):
    """Reads lines of `stream` until one holds `words`; returns what was read (fails after `seconds`)."""
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(stream, selectors.EVENT_READ)
    seen, deadline = "", time.monotonic() + seconds
    while words not in seen:
        left = deadline - time.monotonic()
        check(left > 0 and sel.select(left), f"no {words!r} within {seconds} s", seen)
        line = stream.readline()
        check(line, f"the stream ended before {words!r}", seen)
        seen += line
    return seen


def test_create_waits_for_the_environments_lock():
    env = fresh_env("locked", LOCK1)
    holder = Holder(env)
    try:
        p = subprocess.Popen([ENVBUILD, "--cache-dir", cache, "create", env, "--python", PYTHON, "--lock", LOCK2,
                              *FL, "--link-mode", "copy"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        said = read_until(p.stderr, "is in use by another run", 60)
        check("waiting up to 300 s for its lock" in said, "the wait is not said", said)
        time.sleep(1.0)
        check(p.poll() is None, "create did not wait for the lock")
        # Meanwhile the environment is still the first lock's, whole.
        envbuild(cache, "verify", env, "--lock", LOCK1, "--wait", "0", expect=1)  # the holder has it: refused
    finally:
        holder.release()
    out, err = p.communicate(timeout=120)
    check(p.returncode == 0, "create after the wait", out + err)
    envbuild(cache, "verify", env, "--lock", LOCK2, expect=0)

    # --wait bounds the wait: a clear refusal naming the environment, exit 1, nothing changed.
    holder = Holder(env)
    try:
        p = envbuild(cache, "create", env, "--python", PYTHON, "--lock", LOCK1, *FL, "--wait", "1", expect=1)
        check("is in use by another run" in p.err and "waited 1 s" in p.err, "the refusal", p.err)
        j = json.loads(run([ENVBUILD, "--cache-dir", cache, "create", env, "--python", PYTHON, "--lock", LOCK1,
                            *FL, "--wait", "0", "--json"], expect=1).out.splitlines()[-1])
        check(j["reason"] == "check_failed" and "is in use" in j["message"], "the --json refusal", json.dumps(j))
        p = envbuild(cache, "verify", env, "--wait", "1", expect=1)
        check("is in use by another run" in p.err, "verify's refusal", p.err)
    finally:
        holder.release()
    envbuild(cache, "verify", env, "--lock", LOCK2, expect=0)
    # A verify running (a shared lock) lets another verify in, and keeps a create out.
    holder = Holder(env, fcntl.LOCK_SH)
    try:
        envbuild(cache, "verify", env, "--wait", "0", expect=0)
        envbuild(cache, "create", env, "--python", PYTHON, "--lock", LOCK1, *FL, "--wait", "0", expect=1)
    finally:
        holder.release()
    envbuild(cache, "verify", env, "--lock", LOCK2, expect=0)


def test_two_creates_at_once_each_end_correct():
    """Two real creates of one environment with different locks, started together, in a bounded loop (a new
    directory each round, so that both also race to make it): both exit 0, and the environment verifies
    clean against exactly one of the locks, the one whose create took the lock last."""
    rounds = 8
    extra1 = write_wheel(wheels, "alpha-1.0-py3-none-any.whl", "alpha", "1.0", {"alpha/__init__.py": b"A = 1\n"})
    extra2 = write_wheel(wheels, "beta-1.0-py3-none-any.whl", "beta", "1.0", {"beta/__init__.py": b"B = 1\n"})
    lock_a = write_lock(os.path.join(tmp, "race-a.txt"), [DEMO1, extra1])
    lock_b = write_lock(os.path.join(tmp, "race-b.txt"), [DEMO2, extra2])
    waited = 0
    for i in range(rounds):
        env = os.path.join(tmp, f"race-{i}")
        cmd = lambda lock: [ENVBUILD, "--cache-dir", cache, "create", env, "--python", PYTHON, "--lock", lock,
                            *FL, "--link-mode", "copy"]
        procs = [subprocess.Popen(cmd(lock), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for lock in ((lock_a, lock_b) if i % 2 == 0 else (lock_b, lock_a))]
        results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
        for out, err, rc in results:
            check(rc == 0, f"round {i}: a create failed", out + err)
            waited += "is in use by another run" in err
        clean = [lock for lock in (lock_a, lock_b)
                 if run([ENVBUILD, "--cache-dir", cache, "verify", env, "--lock", lock], expect=None).rc == 0]
        check(len(clean) == 1, f"round {i}: the environment matches {len(clean)} of the two locks", results)
    print(f"{rounds} rounds; {waited} creates waited for the other's lock")


if __name__ == "__main__":
    main()
