#!/usr/bin/env python3
"""envbuild --debug create: each decision of the plan on stderr with its reason (install, reinstall for
another version, another wheel of the same version or drifted files, removal of what the lock drops or its
marker leaves out, keep), the same decisions typed in --json's "plan", and PROVKIT_LOG=debug doing what
--debug does. Real wheels (make_wheels.py), a real interpreter."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, run, tempdir  # noqa: E402
from envbuild_fixtures import *  # noqa: E402,F401,F403

sys.path.insert(0, HERE)
from make_wheels import write_wheel  # noqa: E402

tmp = tempdir("envbuild-plan-")
wheels = os.path.join(tmp, "wheels")
run([sys.executable, os.path.join(HERE, "make_wheels.py"), wheels])


def W(prefix):
    return [os.path.join(wheels, n) for n in sorted(os.listdir(wheels)) if n.startswith(prefix)][0]


PURE10, PURE11, PLAT = W("demopure-1.0-"), W("demopure-1.1-"), W("demoplat-")


def decisions(stderr):
    """The plan's trace lines, without the "envbuild: debug: python: plan: " prefix."""
    prefix = "envbuild: debug: python: plan: "
    return [line[len(prefix):] for line in stderr.splitlines() if line.startswith(prefix)]


def phases(stderr):
    """The create's phase lines ("create: WHAT in N ms"), as (what, ms)."""
    prefix = "envbuild: debug: python: create: "
    out = []
    for line in stderr.splitlines():
        if line.startswith(prefix):
            m = re.fullmatch(r"(.+) in (\d+) ms", line[len(prefix):])
            check(m, "a phase line without its milliseconds", line)
            out.append((m.group(1), int(m.group(2))))
    return out


def has(lines, start, *words):
    return any(line.startswith(start) and all(w in line for w in words) for line in lines)


def create(cache, env, lock, *more, find_links=(wheels,), expect=0, debug=True):
    flags = [a for d in find_links for a in ("-f", d)]
    return envbuild(cache, *(["--debug"] if debug else []), "create", env, "--python", PYTHON, "--lock", lock,
                    *flags, *more, expect=expect)


def test_version_change_and_removal():
    cache, env = os.path.join(tmp, "cache-a"), os.path.join(tmp, "env-a")
    p = create(cache, env, write_lock(os.path.join(tmp, "a1.txt"), [PURE10, PLAT]))
    lines = decisions(p.stderr)
    check(has(lines, "install demopure 1.0 (demopure-1.0-py3-none-any.whl): not installed", "cache: unpack"), "the plan's decisions", lines)
    check(has(lines, "install demoplat 1.0 (demoplat-1.0-", "not installed"), "the plan's decisions", lines)
    check(len(lines) == 2, "the plan's decisions", lines)
    # Where the create's time went, phase by phase, in the order they ran (for a host without a profiler).
    steps = [what for what, _ in phases(p.stderr)]
    check(steps == ["interpreter asked", "lock read, the wheels of its 2 entries found and hashed",
                    "0 installed distributions read", "the cache's state of 2 wheels looked at",
                    "2 wheels unpacked, 0 found unpacked in the cache", "the cache synced to disk, 2 wheels published",
                    "install plans made", "environment made, removals done", "2 wheels installed"],
          "the create's phases", steps)

    # demopure moves to 1.1 (a reinstall), demoplat leaves the lock (a removal).
    p = create(cache, env, write_lock(os.path.join(tmp, "a2.txt"), [PURE11]), "--json")
    lines = decisions(p.stderr)
    check(has(lines, "reinstall demopure 1.1 (demopure-1.1-py3-none-any.whl): version_differs: 1.0 is installed"), "the plan's decisions", lines)
    check("remove demoplat 1.0: not_in_lock: no lock entry names it" in lines, "the plan's decisions", lines)
    check(len(lines) == 2, "the plan's decisions", lines)
    plan = p.json()["plan"]
    check(plan["reinstall"] == [{"name": "demopure", "version": "1.1", "installed_version": "1.0",
                                 "wheel": "demopure-1.1-py3-none-any.whl", "sha256": sha256(PURE11),
                                 "reason": "version_differs"}], "--json's plan", plan)
    check(plan["remove"] == [{"name": "demoplat", "version": "1.0", "reason": "not_in_lock"}], "--json's plan", plan)
    check(plan["install"] == [] and plan["keep"] == [], "--json's plan", plan)
    check(p.json()["installed"] == ["demopure==1.1"] and p.json()["removed"] == ["demoplat==1.0"], "--json's strings", p.json())
    envbuild(cache, "verify", env, "--lock", os.path.join(tmp, "a2.txt"))

    # Nothing left to do: one keep, and nothing written.
    p = create(cache, env, os.path.join(tmp, "a2.txt"))
    check(decisions(p.stderr) == ["keep demopure 1.1 (demopure-1.1-py3-none-any.whl): installed, its files match "
                                  "RECORD and the wheel's"], p.stderr)
    check("already matches the lock (1 distributions)" in p.stdout, p.stdout)


def test_marker_false_removal_and_drift():
    cache, env = os.path.join(tmp, "cache-b"), os.path.join(tmp, "env-b")
    create(cache, env, write_lock(os.path.join(tmp, "b1.txt"), [PURE10, PLAT]), debug=False)
    # demoplat's entry stays in the lock, for another platform; one of demopure's files is edited.
    lock = os.path.join(tmp, "b2.txt")
    with open(lock, "w") as f:
        f.write(wheel_line(PURE10))
        f.write(f"demoplat==1.0 ; sys_platform == 'win32' --hash=sha256:{sha256(PLAT)}\n")
    site = [os.path.join(env, "lib", d, "site-packages") for d in os.listdir(os.path.join(env, "lib"))][0]
    with open(os.path.join(site, "demopure", "data", "table.txt"), "a") as f:
        f.write("edited\n")
    # PROVKIT_LOG=debug traces as --debug does.
    p = run([ENVBUILD, "--cache-dir", cache, "create", env, "--python", PYTHON, "--lock", lock, "-f", wheels],
            env={**os.environ, "PROVKIT_LOG": "debug"})
    lines = decisions(p.stderr)
    check(has(lines, "reinstall demopure 1.0 (demopure-1.0-py3-none-any.whl): files_drifted: its files no longer "
                     "match RECORD (first: demopure/data/table.txt)", "cache: unpack again"), "the plan's decisions", lines)
    check("remove demoplat 1.0: marker_false: its lock entry (line 3) is not selected for this interpreter" in lines,
          "the plan's decisions", lines)
    check("- demoplat==1.0" in p.stdout and "+ demopure==1.0" in p.stdout, p.stdout)
    envbuild(cache, "verify", env, "--lock", lock)
    # Without --debug or PROVKIT_LOG nothing is traced.
    env_quiet = {k: v for k, v in os.environ.items() if k != "PROVKIT_LOG"}
    p = run([ENVBUILD, "--cache-dir", cache, "create", env, "--python", PYTHON, "--lock", lock, "-f", wheels],
            env=env_quiet)
    check(decisions(p.stderr) == [] and phases(p.stderr) == [] and "debug" not in p.stderr, p.stderr)


def test_same_version_other_wheel():
    # A rebuild of demopure 1.0 (a build tag, another module): the lock's hash now names it.
    rebuilt_dir = os.path.join(tmp, "rebuilt")
    os.makedirs(rebuilt_dir)
    rebuilt = write_wheel(rebuilt_dir, "demopure-1.0-1-py3-none-any.whl", "demopure", "1.0",
                          {"demopure/__init__.py": b'VERSION = "1.0"\nREBUILT = True\n'})
    cache = os.path.join(tmp, "cache-c")
    env, other = os.path.join(tmp, "env-c"), os.path.join(tmp, "env-c-other")
    create(cache, env, write_lock(os.path.join(tmp, "c1.txt"), [PURE10]), debug=False)
    lock = write_lock(os.path.join(tmp, "c2.txt"), [rebuilt])
    # Another environment has put the rebuilt wheel in the cache: the installed files are compared with it.
    create(cache, other, lock, find_links=(rebuilt_dir,), debug=False)
    p = create(cache, env, lock, find_links=(rebuilt_dir,))
    lines = decisions(p.stderr)
    check(has(lines, "reinstall demopure 1.0 (demopure-1.0-1-py3-none-any.whl): hash_differs: the installed files are "
                     "another wheel's (first difference: demopure"), "the plan's decisions", lines)
    site = [os.path.join(env, "lib", d, "site-packages") for d in os.listdir(os.path.join(env, "lib"))][0]
    check(b"REBUILT" in open(os.path.join(site, "demopure", "__init__.py"), "rb").read(), "the rebuilt wheel is in")
    envbuild(cache, "verify", env, "--lock", lock)
    # A cache that has never seen the lock's wheel (wiped, or another machine's): the wheel file is at hand, and
    # its own RECORD, read from the zip, is what the installed files are compared with. `other` holds that
    # wheel's files: kept, and nothing unpacked into the new cache.
    fresh = os.path.join(tmp, "cache-c-fresh")
    p = create(fresh, other, lock, find_links=(rebuilt_dir,))
    check(decisions(p.stderr) == ["keep demopure 1.0 (demopure-1.0-1-py3-none-any.whl): installed, its files match "
                                  "RECORD and the wheel's"], p.stderr)
    unpacked = os.path.join(fresh, "unpacked")
    check(not os.path.isdir(unpacked) or os.listdir(unpacked) == [], "unpacked for a keep", unpacked)
    # An environment holding 1.0's first wheel: its files are not the rebuilt wheel's RECORD says, so it is
    # reinstalled, from the wheel unpacked now.
    old_env = os.path.join(tmp, "env-c-old")
    create(cache, old_env, os.path.join(tmp, "c1.txt"), debug=False)
    p = create(os.path.join(tmp, "cache-c-fresh2"), old_env, lock, find_links=(rebuilt_dir,))
    check(has(decisions(p.stderr), "reinstall demopure 1.0 (demopure-1.0-1-py3-none-any.whl): hash_differs: the "
                                   "installed files are another wheel's (first difference: demopure", "cache: unpack"),
          p.stderr)
    site = [os.path.join(old_env, "lib", d, "site-packages") for d in os.listdir(os.path.join(old_env, "lib"))][0]
    check(b"REBUILT" in open(os.path.join(site, "demopure", "__init__.py"), "rb").read(), "the rebuilt wheel is in")


def test_refusals_name_the_flag_in_plain_and_json():
    # The library's refusal is typed; the tool adds the flag that would let it through, in both outputs.
    cache, env = os.path.join(tmp, "cache-d"), os.path.join(tmp, "env-d")
    create(cache, env, write_lock(os.path.join(tmp, "d1.txt"), [PURE10]), debug=False)
    lock = os.path.join(tmp, "d2.txt")
    with open(lock, "w") as f:
        f.write(f"demopure==1.0 ; sys_platform == 'win32' --hash=sha256:{sha256(PURE10)}\n")
    p = create(cache, env, lock, expect=2, debug=False)
    check(p.stderr.strip().endswith("holds 1 that it would remove; --allow-empty empties the environment"), p.stderr)
    summary = create(cache, env, lock, "--json", expect=2, debug=False).json()
    check(summary["reason"] == "invalid_input" and summary["message"].endswith("; --allow-empty empties the environment"),
          "--json summary", summary)
    p = create(cache, env, lock, "--allow-empty", "--json")
    check(p.json()["plan"]["remove"] == [{"name": "demopure", "version": "1.0", "reason": "marker_false"}], "plan",
          p.json())


if __name__ == "__main__":
    main()
