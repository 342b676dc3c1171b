#!/usr/bin/env python3
"""envbuild judged by pip itself (issue 42, items 7-9): a corpus of wheels built here with zipfile covering the
wheel spec's corners (.data dirs, entry points with extras and dotted attributes, `#!python` variants, a namespace
package, a .pth, names outside ASCII, Root-Is-Purelib false, a wheel named pip with pip 24.2's and 25.0.1's entry
points) installed by envbuild and by pip (Debian's pip wheel, into a venv of the same Python), then compared
file by file: paths, bytes (each environment's own path taken out), RECORD rows and modes, under umask 022 and
077, and with a cache that a run under another umask filled.

Run one: python3 test_pip_judge.py test_NAME   (ctest runs each as its own test)"""
import os
import stat
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, run, tempdir  # noqa: E402
from envbuild_fixtures import DEBIAN_WHEELS, ENVBUILD, PYTHON, is_venv_skeleton, tree_files, write_lock  # noqa: E402
from make_wheels import write_wheel  # noqa: E402

XY = "%d.%d" % sys.version_info[:2]
PIP_ENTRY_POINTS = "[console_scripts]\npip = pip._internal.cli.main:main\npip3 = pip._internal.cli.main:main\n"
DIFFERENT_BY_DESIGN = {"bin/plain-tool"}  # a .data script not executable in the zip: pip leaves it so, envbuild not


def corpus(outdir, pip_version):
    os.makedirs(outdir, exist_ok=True)
    d = "corner-1.0.data"
    files = {
        "corner/__init__.py": b"def main():\n    print('corner ok')\n",
        "corner/sub.py": b"class obj:\n    @staticmethod\n    def method():\n        print('dotted ok')\n",
        "corner/\u00fcn\u00ef.txt": "\u00fcmlauts\n".encode(),
        "corner/\u65e5\u672c/\u8a9e.py": b"X = 1\n",
        "corner/tool.sh": (b"#!/bin/sh\necho tool\n", 0o755),
        "nsp/part/mod.py": b"VALUE = 2\n",  # a namespace package: no nsp/__init__.py
        "corner.pth": b"import corner  # noqa\n",
        f"{d}/scripts/exact": (b"#!python\nprint('exact')\n", 0o755),
        f"{d}/scripts/gui": (b"#!pythonw\nprint('gui')\n", 0o755),
        f"{d}/scripts/with-args": (b"#!python -u\nprint('args')\n", 0o755),
        f"{d}/scripts/crlf": (b"#!python\r\nprint('crlf')\r\n", 0o755),
        f"{d}/scripts/env-python": (b"#!/usr/bin/env python3\nprint('env')\n", 0o755),
        f"{d}/scripts/t\u00f6\u00f6l": (b"#!python\nprint('umlaut')\n", 0o755),
        f"{d}/scripts/plain-tool": b"#!/bin/sh\necho plain\n",
        f"{d}/data/share/corner/readme.txt": b"data at the root\n",
        f"{d}/headers/corner.h": b"#define CORNER 1\n",
        f"{d}/purelib/corner_extra.py": b"EXTRA = 1\n",
        f"{d}/platlib/corner_plat.py": b"PLAT = 1\n",
    }
    eps = ("[console_scripts]\ncorner-cli = corner:main [extra1, extra2]\ncorner-dotted = corner.sub:obj.method\n"
           "[gui_scripts]\ncorner-gui = corner:main\n")
    wheels = [write_wheel(outdir, "corner-1.0-py3-none-any.whl", "corner", "1.0", files, entry_points=eps)]
    wheels.append(write_wheel(outdir, "rootplat-1.0-py3-none-any.whl", "rootplat", "1.0",
                              {"rootplat/__init__.py": b"R = 1\n", "rootplat-1.0.data/purelib/rootpure.py": b"P = 1\n"},
                              purelib=False))
    wheels.append(write_wheel(outdir, f"pip-{pip_version}-py3-none-any.whl", "pip", pip_version,
                              {"pip/__init__.py": f"__version__ = '{pip_version}'\n".encode()},
                              entry_points=PIP_ENTRY_POINTS))
    return wheels


def in_umask(mask):
    return lambda: os.umask(mask)


def envbuild_create(cache, env, lock, wheels_dir, mask, *extra):
    p = subprocess.run([ENVBUILD, "--cache-dir", cache, "create", env, "--python", PYTHON, "--lock", lock,
                        "-f", wheels_dir, *extra], capture_output=True, text=True, preexec_fn=in_umask(mask))
    check(p.returncode == 0, f"envbuild create (umask {mask:03o}): rc {p.returncode}\n{p.stdout}\n{p.stderr}")


def pip_install(ref, wheels, wheels_dir, mask):
    run([PYTHON, "-m", "venv", "--without-pip", ref])
    pip = [os.path.join(DEBIAN_WHEELS, n) for n in sorted(os.listdir(DEBIAN_WHEELS)) if n.startswith("pip-")][0]
    names = ["==".join(os.path.basename(w).split("-")[:2]) for w in wheels]
    p = subprocess.run([os.path.join(ref, "bin", "python"), os.path.join(pip, "pip"), "install", "--no-deps",
                        "--no-index", "--find-links", wheels_dir, "--no-compile", "--disable-pip-version-check", *names],
                       capture_output=True, text=True, preexec_fn=in_umask(mask))
    check(p.returncode == 0, f"pip install: {p.stdout}\n{p.stderr}")


skeleton = is_venv_skeleton


def installed(root):
    return {f for f in tree_files(root) if not skeleton(f)}


def mode(root, f):
    return stat.S_IMODE(os.lstat(os.path.join(root, f)).st_mode)


def compare_with_pip(env, ref, what):
    ours, theirs = installed(env), installed(ref)
    check(ours == theirs, f"{what}: only envbuild: {sorted(ours - theirs)}\nonly pip: {sorted(theirs - ours)}")
    for f in sorted(ours):
        if not f.endswith("/INSTALLER"):
            a = open(os.path.join(env, f), "rb").read().replace(env.encode(), b"ENV")
            b = open(os.path.join(ref, f), "rb").read().replace(ref.encode(), b"ENV")
            if f.endswith("/RECORD"):
                # A launcher's or rewritten script's hash depends on the environment's path; its size does not
                # (env and ref: names of one length).
                rows = lambda data: sorted((r.rsplit(",", 2)[0], r.rsplit(",", 2)[2]) if "/bin/" in r else (r,)
                                           for r in data.decode().splitlines() if r and "/INSTALLER," not in r)
                check(rows(a) == rows(b), f"{what}: {f} rows differ:\n{sorted(set(rows(a)) ^ set(rows(b)))}")
            else:
                check(a == b, f"{what}: {f} differs from pip's:\n{a[:200]!r}\n{b[:200]!r}")
        if f in DIFFERENT_BY_DESIGN:
            check(mode(ref, f) & 0o111 == 0 and mode(env, f) & 0o111 == 0o111, f"{what}: {f} modes")
            continue
        check(mode(env, f) == mode(ref, f), f"{what}: {f} is {mode(env, f):04o}, pip's {mode(ref, f):04o}")
    return ours


def case(pip_version, mask):
    tmp = tempdir("envbuild-pip-judge-")
    wheels_dir = os.path.join(tmp, "wheels")
    wheels = corpus(wheels_dir, pip_version)
    lock = write_lock(os.path.join(tmp, "lock.txt"), wheels)
    # Same-length names: launcher sizes in RECORD depend on the environment's path.
    env, ref = os.path.join(tmp, "env"), os.path.join(tmp, "ref")
    envbuild_create(os.path.join(tmp, "cache"), env, lock, wheels_dir, mask)
    pip_install(ref, wheels, wheels_dir, mask)
    return tmp, wheels, wheels_dir, lock, env, ref


def test_corpus_as_pip_installs_it_umask_022_pip_25():
    tmp, wheels, wheels_dir, lock, env, ref = case("25.0.1", 0o022)
    files = compare_with_pip(env, ref, "umask 022")
    # The corners are there (so that the comparison above covered them).
    for f in ("bin/pip", "bin/pip3", f"bin/pip{XY}", "bin/corner-cli", "bin/corner-gui", "bin/t\u00f6\u00f6l",
              f"lib/python{XY}/site-packages/corner/\u00fcn\u00ef.txt", f"lib/python{XY}/site-packages/corner.pth",
              f"lib/python{XY}/site-packages/nsp/part/mod.py", f"lib/python{XY}/site-packages/rootpure.py",
              f"include/site/python{XY}/corner/corner.h", "share/corner/readme.txt"):
        check(f in files, f"{f} not installed: {sorted(files)}")
    out = run([os.path.join(env, "bin", "python"), "-c", "import nsp.part.mod, corner_plat; print('ok')"]).stdout
    check(out.strip() == "ok", "the namespace package and the .data/platlib module import")
    check(run([os.path.join(env, "bin", "corner-dotted")]).stdout.strip() == "dotted ok", "dotted entry point")


def test_corpus_as_pip_installs_it_umask_077_pip_24():
    tmp, wheels, wheels_dir, lock, env, ref = case("24.2", 0o077)
    files = compare_with_pip(env, ref, "umask 077")
    check(f"bin/pip{XY}" in files, f"no bin/pip{XY}")
    check(mode(env, f"lib/python{XY}/site-packages/corner/__init__.py") == 0o600, "0600 under umask 077")


def test_cache_filled_under_another_umask():
    """The cache filled by a run under umask 077; creates under umask 022 (hardlink and copy) still give pip's
    022 modes, and the reverse: a cache filled under 022 never hands its 0644 files to a run under 077."""
    tmp = tempdir("envbuild-pip-judge-cache-")
    wheels_dir = os.path.join(tmp, "wheels")
    wheels = corpus(wheels_dir, "25.0.1")
    lock = write_lock(os.path.join(tmp, "lock.txt"), wheels)
    for first, then in ((0o077, 0o022), (0o022, 0o077)):
        cache = os.path.join(tmp, f"cache-{first:03o}")
        envbuild_create(cache, os.path.join(tmp, f"fill-{first:03o}"), lock, wheels_dir, first)
        ref = os.path.join(tmp, f"ref-{then:03o}")
        pip_install(ref, wheels, wheels_dir, then)
        for link_mode in ("hardlink", "copy"):
            env = os.path.join(tmp, f"env-{then:03o}")
            envbuild_create(cache, env, lock, wheels_dir, then, "--link-mode", link_mode)
            compare_with_pip(env, ref, f"cache filled under {first:03o}, {link_mode} under {then:03o}")
            run(["rm", "-rf", env])


if __name__ == "__main__":
    main()
