#!/usr/bin/env python3
"""Lock-conformance suite: envbuild create from locks in the exact shapes uv,
pip-tools, pdm and PEP 751's example write (fixtures in locks/, filled in with
the hashes of wheels built here and served by a loopback simple index). Where
pip reads the format, the environment must hold the same files as
`pip install --no-deps --require-hashes -r LOCK` makes; a pylock must install
the same set as its requirements-format twin. Also: PEP 751 selection
(extras, dependency groups, default-groups), requires-python and environments
refusals, misnamed pylock files, uv's `hashes = {}`, and --python X.Y behind a
pyenv shim that fails as pyenv's does."""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, run, start_index, tempdir  # noqa: E402
from envbuild_fixtures import *  # noqa: E402,F401,F403
from make_wheels import write_wheel  # noqa: E402

FIXTURES = os.path.join(HERE, "locks")
tmp = tempdir("envbuild-locks-")
cache = os.path.join(tmp, "cache")
wheels = os.path.join(tmp, "wheels")
os.makedirs(wheels)
XY = "%d.%d" % sys.version_info[:2]
PYNEXT = "%d.%d" % (sys.version_info[0], sys.version_info[1] + 1)


def build_wheels():
    def pure(dist, version, metadata_name=None, extra=None, entry_points=None):
        pkg = dist.lower()
        files = {f"{pkg}/__init__.py": f'VERSION = "{version}"\n'.encode()}
        files.update(extra or {})
        write_wheel(wheels, f"{dist}-{version}-py3-none-any.whl", dist, version, files,
                    metadata_name=metadata_name, entry_points=entry_points)
    # dist-info says lockdemo_core, METADATA LockDemo.Core, locks lockdemo-core.
    pure("lockdemo_core", "1.0", metadata_name="LockDemo.Core", extra={
        "lockdemo_core-1.0.data/headers/lockdemo.h": b"#define LOCKDEMO 1\n",
        "lockdemo_core-1.0.data/data/share/lockdemo/notes.txt": b"notes\n",
    })
    pure("lockdemo_cli", "1.0", entry_points="[console_scripts]\nlockdemo = lockdemo_cli:main\n",
         extra={"lockdemo_cli/__main__.py": b"print('cli')\n"})
    for dist, version in [("lockdemo_old", "1.0"), ("lockdemo_old", "2.0"), ("lockdemo_win", "1.0"),
                          ("lockdemo_dev", "1.0"), ("lockdemo_pre", "1.0rc1"), ("lockdemo_plus", "1.0+cpu")]:
        pure(dist, version)
    setuptools = [w for w in debian_wheels() if os.path.basename(w).startswith("setuptools-")][0]
    shutil.copy(setuptools, wheels)
    return os.path.basename(setuptools)


SETUPTOOLS = build_wheels()
SETUPTOOLS_VERSION = SETUPTOOLS.split("-")[1]
server, INDEX = start_index(wheels)


def fill(fixture, dest_dir, dest_name, edit=None):
    """The fixture with its placeholders filled in, written as dest_dir/dest_name."""
    text = open(os.path.join(FIXTURES, fixture)).read()
    for name in os.listdir(wheels):
        path = os.path.join(wheels, name)
        text = text.replace(f"@SHA:{name}@", sha256(path)).replace(f"@SIZE:{name}@", str(os.path.getsize(path)))
    text = (text.replace("@SHA:setuptools.whl@", sha256(os.path.join(wheels, SETUPTOOLS)))
            .replace("@SETUPTOOLS_VERSION@", SETUPTOOLS_VERSION).replace("@INDEX@", INDEX)
            .replace("@WHEELS@", wheels).replace("@PY@", XY).replace("@PYNEXT@", PYNEXT))
    if edit:
        text = edit(text)
    check("@" not in text.replace("@generated", ""), f"{fixture}: unfilled placeholder")
    os.makedirs(dest_dir, exist_ok=True)
    path = os.path.join(dest_dir, dest_name)
    with open(path, "w") as f:
        f.write(text)
    return path


def site_files(env):
    """Files of the environment that installing put there (not the venv skeleton)."""
    skeleton = is_venv_skeleton
    return {f for f in tree_files(env) if not skeleton(f)}


def installed(env):
    p = envbuild(cache, "verify", env, "--json")
    return sorted(re.sub(r"[-_.]+", "-", d["name"]).lower() + "==" + d["version"]
                  for d in json.loads(p.stdout)["distributions"])


pip_refs = {}


def pip_env(lock, *args):
    """What pip installs from the requirements lock, into a fresh venv (once per lock)."""
    key = (lock, args)
    if key not in pip_refs:
        ref = os.path.join(tmp, f"pip-{len(pip_refs)}")
        run([PYTHON, "-m", "venv", "--without-pip", ref])
        pip = [f for f in debian_wheels() if os.path.basename(f).startswith("pip-")][0]
        run([os.path.join(ref, "bin", "python"), os.path.join(pip, "pip"), "install", "--no-deps", "--require-hashes",
             "--no-compile", "--disable-pip-version-check", "-r", lock, *args], env=dict(os.environ, LOCKS_INDEX=INDEX))
        pip_refs[key] = ref
    return pip_refs[key]


def create(env, lock, *args, expect=0):
    return run([ENVBUILD, "--cache-dir", cache, "create", env, "--python", PYTHON, "--lock", lock, *args],
               expect=expect, env=dict(os.environ, LOCKS_INDEX=INDEX))


def same_as_pip(env, ref):
    ours, theirs = site_files(env), site_files(ref)
    check(ours == theirs, f"only envbuild: {sorted(ours - theirs)[:20]}\nonly pip: {sorted(theirs - ours)[:20]}")


ALL = ["lockdemo-cli==1.0", "lockdemo-core==1.0", "lockdemo-old==2.0"]
HEADER = os.path.join("include", "site", "python" + XY, "lockdemo-core", "lockdemo.h")

# Requirement formats: the same files as pip's install of the same lock. Each test is its own ctest (its own
# process and temporary directory); one that needs another's lock or environment makes it through
# requirements_lock() and requirements_env().
REQUIREMENTS = {  # fixture: (pip's arguments, what is installed)
    "pip-compile.txt": ((), ["lockdemo-cli==1.0", "lockdemo-core==1.0", f"setuptools=={SETUPTOOLS_VERSION}"]),
    "uv-pip-compile.txt": ((), ALL + ["lockdemo-plus==1.0+cpu"]),
    "pdm-export.txt": (("--no-index", "--find-links", wheels), ALL),
    "uv-export.txt": (("--no-index", "--find-links", wheels), ALL),
    "pip-options.txt": ((), ["lockdemo-core==1.0", "lockdemo-pre==1.0rc1"]),
}


def requirements_lock(fixture):
    """tmp/req-FIXTURE/requirements.txt, filled in now if this process has not yet."""
    path = os.path.join(tmp, "req-" + fixture, "requirements.txt")
    return path if os.path.exists(path) else fill(fixture, os.path.dirname(path), "requirements.txt")


def requirements_env(fixture):
    """tmp/env-FIXTURE, created from requirements_lock(fixture) now if this process has not yet."""
    env = os.path.join(tmp, "env-" + fixture)
    if not os.path.exists(os.path.join(env, "pyvenv.cfg")):
        create(env, requirements_lock(fixture), *[a for a in REQUIREMENTS[fixture][0] if a != "--no-index"])
    return env


def requirements_like_pip(fixture):
    args, expected = REQUIREMENTS[fixture]
    env = requirements_env(fixture)
    check(installed(env) == expected, f"{fixture}: {installed(env)}")
    same_as_pip(env, pip_env(requirements_lock(fixture), *args))


def test_requirements_like_pip_pip_compile():
    requirements_like_pip("pip-compile.txt")


def test_requirements_like_pip_uv_pip_compile():
    requirements_like_pip("uv-pip-compile.txt")


def test_requirements_like_pip_pdm_export():
    requirements_like_pip("pdm-export.txt")


def test_requirements_like_pip_uv_export():
    requirements_like_pip("uv-export.txt")


def test_requirements_like_pip_pip_options():
    requirements_like_pip("pip-options.txt")


def test_headers_dir_is_the_project_name():
    # pip: include/site/pythonX.Y/<the name as the lock spells it>; uv: the normalised name.
    # Both are lockdemo-core for these locks; the dist-info says lockdemo_core.
    env = requirements_env("uv-pip-compile.txt")
    check(os.path.exists(os.path.join(env, HEADER)), f"{HEADER} missing: {sorted(f for f in site_files(env) if f.startswith('include'))}")
    check(os.path.exists(os.path.join(pip_env(requirements_lock("uv-pip-compile.txt")), HEADER)),
          "pip puts it there too")


# pylock formats: the same set and files as the requirements twin pip installed.
def pylock_env(fixture, *args, name="pylock.toml", edit=None, expect=0):
    pylock_env.count = getattr(pylock_env, "count", 0) + 1
    lock = fill(fixture, os.path.join(tmp, f"lock-{pylock_env.count}-{fixture}"), name, edit)
    env = os.path.join(tmp, f"env-lock-{pylock_env.count}")
    return env, create(env, lock, *args, expect=expect), lock

ref_all = lambda: pip_env(requirements_lock("uv-export.txt"), "--no-index", "--find-links", wheels)


def test_uv_pip_compile_pylock():
    # With a local version, whose URL uv percent-encodes (torch-2.6.0%2Bcpu-...).
    env, _, _ = pylock_env("uv-pip-compile.pylock.toml")
    check(installed(env) == ALL + ["lockdemo-plus==1.0+cpu"], installed(env))
    same_as_pip(env, pip_env(requirements_lock("uv-pip-compile.txt")))


def test_pep751_example_shape():
    env, _, _ = pylock_env("pep751-example.pylock.toml", name="pylock.example.toml")
    check(installed(env) == ALL, installed(env))
    same_as_pip(env, ref_all())


def test_uv_export_extras_and_groups():
    # Defaults (PEP 751): no extras, the default-groups (dev).
    env, p, lock = pylock_env("uv-export.pylock.toml")
    check(installed(env) == ["lockdemo-core==1.0", "lockdemo-dev==1.0", "lockdemo-old==2.0"], installed(env))
    envbuild(cache, "verify", env, "--lock", lock)
    # --extra cli without the default group: exactly what pip installs from the flat twin.
    env, p, lock = pylock_env("uv-export.pylock.toml", "--extra", "cli", "--no-default-groups")
    check(installed(env) == ALL, installed(env))
    same_as_pip(env, ref_all())
    envbuild(cache, "verify", env, "--lock", lock, "--extra", "cli", "--no-default-groups")
    # verify judges the set by the same selection.
    p = envbuild(cache, "verify", env, "--lock", lock, "--json", expect=1)
    check(json.loads(p.stdout)["lock"]["missing"] == ["lockdemo-dev==1.0"], p.stdout)
    # --group names the group explicitly (with --no-default-groups it is the only one).
    env, p, lock = pylock_env("uv-export.pylock.toml", "--no-default-groups", "--group", "dev")
    check(installed(env) == ["lockdemo-core==1.0", "lockdemo-dev==1.0", "lockdemo-old==2.0"], installed(env))
    # Names the lock does not offer: exit 2, saying what it offers; nothing created.
    for args, words in [(("--extra", "docs"), "no extra 'docs' (it offers: cli)"),
                        (("--group", "lint"), "no dependency group 'lint' (it offers: dev)")]:
        env, p, lock = pylock_env("uv-export.pylock.toml", *args, expect=2)
        check(words in p.stderr, p.stderr)
        check(not os.path.exists(env), "nothing created")


def test_pdm_pylock():
    env, _, _ = pylock_env("pdm.pylock.toml")  # default-groups = ["default"]
    check(installed(env) == ["lockdemo-core==1.0", "lockdemo-old==2.0"], installed(env))
    env, _, _ = pylock_env("pdm.pylock.toml", "--extra", "cli", "--no-default-groups")
    check(installed(env) == ALL, installed(env))
    same_as_pip(env, ref_all())
    env, _, _ = pylock_env("pdm.pylock.toml", "--group", "dev")
    check(installed(env) == ["lockdemo-core==1.0", "lockdemo-dev==1.0", "lockdemo-old==2.0"], installed(env))


def test_uv_export_with_the_project():
    # Without --no-emit-project, uv export's first requirement is the project itself, editable.
    lock = fill("uv-export.txt", os.path.join(tmp, "req-uv-export-project"), "requirements.txt",
                lambda t: t.replace("--no-emit-project\n", "\n-e .\n"))
    p = create(os.path.join(tmp, "env-never"), lock, "-f", wheels, expect=2)
    check("requirements.txt:3" in p.stderr and "editable" in p.stderr and "--no-emit-project" in p.stderr, p.stderr)


def test_extras_on_a_requirements_lock_is_usage():
    lock = requirements_lock("pip-compile.txt")
    p = create(os.path.join(tmp, "env-never"), lock, "--extra", "cli", expect=2)
    check("requirements file" in p.stderr, p.stderr)


def test_requires_python_and_environments_refuse():
    # PEP 751: an installer must refuse a lock whose requires-python or
    # environments leave the interpreter out; nothing is created.
    cases = [
        ("uv-pip-compile.pylock.toml",
         lambda t: t.replace('requires-python = ">=3.8"', f'requires-python = ">={PYNEXT}"'),
         "pylock.toml:5", f"the lock requires Python >={PYNEXT}; the interpreter is Python {XY}"),
        ("pep751-example.pylock.toml",
         lambda t: t.replace("environments = [\"sys_platform == 'win32'\", \"sys_platform == 'linux'\"]",
                             "environments = [\"sys_platform == 'win32'\"]"),
         "pylock.toml:2", "in none of them (sys_platform 'linux'"),
        ("pep751-example.pylock.toml", lambda t: t.replace("requires-python = '>= 3.0'", f"requires-python = '>= {PYNEXT}'"),
         "pylock.toml:42", f"lockdemo-old==2.0 requires Python >= {PYNEXT}"),
        ("pdm.pylock.toml", lambda t: t.replace('requires-python = ">=3.6"', f'requires-python = ">={PYNEXT}"'),
         "pylock.toml:27", f"lockdemo-core==1.0 requires Python >={PYNEXT}"),
    ]
    for i, (fixture, edit, where, words) in enumerate(cases):
        lock = fill(fixture, os.path.join(tmp, f"mismatch-{i}"), "pylock.toml", edit)
        env = os.path.join(tmp, f"env-mismatch-{i}")
        p = create(env, lock, expect=1)
        check(where in p.stderr and words in p.stderr, f"{fixture}: {p.stderr}")
        check(not os.path.exists(env), f"{fixture}: nothing created")


def test_project_directory_entry():
    env, p, _ = pylock_env("uv-export-project.pylock.toml", expect=2)
    check("pylock.toml:35" in p.stderr and "lockdemo-app is the local directory '.'" in p.stderr and
          "--no-emit-project" in p.stderr, p.stderr)


def test_uv_find_links_has_no_hashes():
    env, p, _ = pylock_env("uv-find-links.pylock.toml", "-f", wheels, expect=2)
    check("pylock.toml:10" in p.stderr and "no hash for lockdemo_core-1.0-py3-none-any.whl" in p.stderr and
          "uv pip compile --generate-hashes" in p.stderr, p.stderr)
    check(not os.path.exists(env), "nothing created")


def test_misnamed_pylock():
    for name in ("uv-export.pylock.toml", "pylock.toml.txt", "requirements.lock"):
        lock = fill("uv-export.pylock.toml", os.path.join(tmp, "misnamed"), name)
        p = create(os.path.join(tmp, "env-never"), lock, expect=2)
        check(f"{name}:3" in p.stderr and 'this is a PEP 751 lock (lock-version = "1.0")' in p.stderr and
              "pylock.toml or pylock.NAME.toml" in p.stderr, f"{name}: {p.stderr}")
    # capture does not write a pylock under a name create would refuse.
    house = os.path.join(tmp, "house-misnamed")
    p = run([ENVBUILD, "capture", requirements_env("uv-pip-compile.txt"), "--wheelhouse", house,
             "--lock", os.path.join(tmp, "misnamed", "env.toml")], expect=2)
    check("pylock.toml or pylock.NAME.toml" in p.stderr, p.stderr)
    check(not os.path.exists(os.path.join(tmp, "misnamed", "env.toml")) and not os.path.exists(house), "nothing written")


def test_python_version_behind_a_pyenv_shim():
    # A pyenv root whose shim for pythonX.Y fails as pyenv's does when
    # another version is active, and versions/X.Y.Z holding the interpreter.
    root = os.path.join(tmp, "pyenv")
    version_bin = os.path.join(root, "versions", XY + ".99", "bin")
    os.makedirs(version_bin)
    os.symlink(PYTHON, os.path.join(version_bin, "python" + XY))
    shims, tools = os.path.join(root, "shims"), os.path.join(tmp, "tools")
    os.makedirs(shims)
    os.makedirs(tools)
    shim = os.path.join(shims, "python" + XY)
    with open(shim, "w") as f:
        f.write('#!/usr/bin/env bash\nset -e\n[ -n "$PYENV_DEBUG" ] && set -x\n\nprogram="${0##*/}"\n\n'
                f'export PYENV_ROOT="{root}"\n'
                f'exec "{root}/libexec/pyenv" exec "$program" "$@"\n')
    os.chmod(shim, 0o755)
    os.makedirs(os.path.join(root, "libexec"))
    fake = os.path.join(root, "libexec", "pyenv")
    with open(fake, "w") as f:  # pyenv exec, with another version active
        f.write(f"#!/bin/sh\necho \"pyenv: $2: command not found\" >&2\necho >&2\n"
                f"echo \"The \\`$2' command exists in these Python versions:\" >&2\necho \"  {XY}.99\" >&2\nexit 127\n")
    os.chmod(fake, 0o755)
    os.symlink(shutil.which("bash"), os.path.join(tools, "bash"))
    check(subprocess.run([shim, "-c", "1"], env={"PATH": tools}, capture_output=True).returncode == 127,
          "the shim fails as pyenv's does")
    env = {"PATH": f"{shims}:{tools}", "HOME": tmp}  # no PYENV_ROOT: found through the shim
    p = subprocess.run([ENVBUILD, "python", "find", XY], env=env, capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout.strip() == os.path.join(version_bin, "python" + XY), f"{p.returncode} {p.stdout} {p.stderr}")
    target = os.path.join(tmp, "env-pyenv")
    lock = requirements_lock("pip-options.txt")
    p = subprocess.run([ENVBUILD, "--cache-dir", cache, "create", target, "--python", XY, "--lock", lock],
                       env=dict(env, LOCKS_INDEX=INDEX), capture_output=True, text=True)
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    out = run([os.path.join(target, "bin", "python"), "-c", "import lockdemo_pre, sys; print(sys.prefix)"]).stdout.strip()
    check(out == target, out)

main()
