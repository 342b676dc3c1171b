#!/usr/bin/env python3
"""envbuild create over locks that uv 0.11.15 really wrote (tests/data/locks/uv-0.11.15, made on the GPU
host), served from a loopback index. What each lock should install is not written here by hand: for
requirements files it is what pip installs from the same file, for pylock files what pip's own `packaging`
(the copy vendored in pip) says of each package's marker and of the lock's requires-python for the
interpreter in use."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, run, start_index, tempdir  # noqa: E402
from envbuild_fixtures import *  # noqa: E402,F401,F403

SOURCE = os.environ.get("PROVKIT_SOURCE_DIR", os.path.join(HERE, "..", "..", ".."))
FIXTURES = os.path.join(SOURCE, "tests", "data", "locks", "uv-0.11.15")
WHEELS = os.path.join(FIXTURES, "wheels")
RECORDED_ORIGINS = ("http://127.0.0.1:42577", "http://127.0.0.1:34809")  # see uv-commands.sh

tmp = tempdir("envbuild-uv-")
cache = os.path.join(tmp, "cache")
server, ORIGIN = start_index(WHEELS)


def pyenv_python(prefix):
    root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip() or \
        os.path.expanduser("~/.pyenv")
    versions = sorted(v for v in os.listdir(os.path.join(root, "versions")) if v.startswith(prefix))
    check(versions, f"no pyenv {prefix} under {root}/versions")
    return os.path.join(root, "versions", versions[-1], "bin", "python3")


def interpreter_facts(python):
    """Marker environment and version as pip's vendored packaging computes them for that interpreter."""
    code = ("import json, platform; from pip._vendor.packaging.markers import default_environment;"
            "print(json.dumps([default_environment(), platform.python_version()]))")
    return __import__("json").loads(run([python, "-c", code]).stdout)


def packaging_expects(lock_path, python):
    """(admitted, {name: version}) for a pylock file, judged by pip's packaging with that interpreter's
    marker values (the judging runs here: tomllib needs 3.11, the target may be older)."""
    from pip._vendor.packaging.markers import Marker
    from pip._vendor.packaging.specifiers import SpecifierSet
    env, version = interpreter_facts(python)
    lock = tomllib.load(open(lock_path, "rb"))
    admitted = version in SpecifierSet(lock.get("requires-python", ""))
    return admitted, {p["name"]: p["version"] for p in lock["packages"]
                      if "marker" not in p or Marker(p["marker"]).evaluate(env)}


def pip_installs(requirements, python):
    """What pip installs from a requirements file (no deps, hashes required, the fixture wheels)."""
    target = tempfile.mkdtemp(dir=tmp, prefix="pip-")
    run([python, "-m", "pip", "install", "-q", "--no-deps", "--require-hashes", "--no-index",
         "--find-links", WHEELS, "--target", target, "-r", requirements])
    return dist_infos(target)


def dist_infos(site):
    out = {}
    for n in os.listdir(site):
        m = re.fullmatch(r"(.+)-([^-]+)\.dist-info", n)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def env_installs(env):
    lib = os.path.join(env, "lib")
    sites = [os.path.join(lib, d, "site-packages") for d in os.listdir(lib)]
    return dist_infos(sites[0])


def localized(relpath):
    """The fixture with this run's index origin in place of the one uv saw; the file name is kept."""
    text = open(os.path.join(FIXTURES, relpath)).read()
    for origin in RECORDED_ORIGINS:
        text = text.replace(origin, ORIGIN)
    out_dir = tempfile.mkdtemp(dir=tmp, prefix="lock-")
    path = os.path.join(out_dir, os.path.basename(relpath))
    with open(path, "w") as f:
        f.write(text)
    return path


def create(lock, python, expect=0, *extra):
    env = tempfile.mkdtemp(dir=tmp, prefix="env-")
    shutil.rmtree(env)
    p = envbuild(cache, "create", env, "--python", python, "--lock", lock, *extra, expect=expect)
    return env, p


PY311 = PYTHON
PYLOCKS_311 = ["app/pylock.toml", "app/pylock.all.toml", "app/pylock.cli-nodev.toml",
               "appenv/pylock.toml", "appenv/pylock.all.toml", "appenv/pylock.cli-nodev.toml",
               "appconf/pylock.x.toml", "appconf/pylock.xextra_cpu.toml",
               "appconf/pylock.xextra_cu_group_new.toml", "appconf/pylock.xnodefaultgroups.toml"]


def test_uv_export_pylocks_install_what_packaging_selects():
    for rel in PYLOCKS_311:
        lock = localized(rel)
        allowed, expected = packaging_expects(lock, PY311)
        check(allowed, f"{rel}: the fixture's requires-python should admit {PY311}")
        env, p = create(lock, PY311)
        got = env_installs(env)
        check(got == expected, f"{rel}: envbuild installed {got}, pip's packaging selects {expected}\n{p.stdout}")


def test_uv_requirements_install_what_pip_installs():
    # uv writes no index into these; envbuild is pointed at the index (pip at the same wheels' directory),
    # or at the directory as uv was for req.findlinks.txt.
    index = ("--index-url", ORIGIN + "/simple")
    for rel, extra in (("app/requirements.txt", index), ("appenv/requirements.txt", index),
                       ("req.hashes.txt", index), ("req.findlinks.txt", ("--find-links", WHEELS))):
        lock = localized(rel)
        expected = pip_installs(lock, PY311)
        env, p = create(lock, PY311, 0, *extra)
        got = env_installs(env)
        check(got == expected, f"{rel}: envbuild installed {got}, pip installed {expected}\n{p.stdout}")


def test_uv_pip_compile_requires_python_is_honoured():
    # uv pip compile wrote the GPU host's interpreter into the lock: >=3.12.3 (>=3.12 with --universal).
    cases = [("pylock.compile.toml", PY311, False), ("pylock.compile.toml", pyenv_python("3.12."), False),
             ("pylock.compile.toml", pyenv_python("3.13."), True),
             ("pylock.compile-hashes.toml", PY311, False),
             ("pylock.universal.toml", PY311, False), ("pylock.universal.toml", pyenv_python("3.12."), True)]
    for rel, python, admitted in cases:
        lock = localized(rel)
        allowed, expected = packaging_expects(lock, python)
        check(allowed == admitted, f"{rel} on {python}: packaging says {allowed}, the test expects {admitted}")
        if admitted:
            env, p = create(lock, python)
            check(env_installs(env) == expected, f"{rel} on {python}: {env_installs(env)} != {expected}")
        else:
            env, p = create(lock, python, 1)
            check("requires Python >=3.12" in p.stderr and f"{rel}:" in p.stderr, f"{rel} on {python}: {p.stderr}")
            check(not os.path.exists(env), f"{rel} on {python}: nothing may be created when the lock refuses")


def test_uv_find_links_pylock_without_hashes_is_refused_with_a_way_out():
    lock = localized("pylock.findlinks.toml")  # requires-python >=3.12.3, as uv wrote it
    env, p = create(lock, pyenv_python("3.13."), 2, "--find-links", WHEELS)
    err = p.stderr
    check("hash" in err and "democli-1.0-py3-none-any.whl" in err, f"names the unhashed wheel: {err}")
    check("--generate-hashes" in err or "index" in err, f"says how to get a hashed lock: {err}")
    check(not os.path.exists(env), "nothing created")


main()
