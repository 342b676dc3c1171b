#!/usr/bin/env python3
"""Where --python X.Y is found when the environment is a service's (systemd's PATH, no ~/.local/bin): a
uv-managed interpreter laid out as uv installs it (crates/uv-python/src/managed.rs:
UV_PYTHON_INSTALL_DIR or ~/.local/share/uv/python, cpython-X.Y.Z-linux-<machine>-gnu/bin/pythonX.Y), a real
interpreter copied there with its standard library beside it; uv's link in ~/.local/bin; envbuild create,
`python find` and envcheck --python agreeing on it; and the sentence when nothing is found naming uv's
folder (docs/envbuild.md, "Finding the interpreter")."""
import os
import platform
import shutil
import subprocess
import sys
import sysconfig

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, run, tool  # noqa: E402
from envbuild_fixtures import ENVBUILD, PYTHON, HERE, wheel_line  # noqa: E402

XY = "%d.%d" % sys.version_info[:2]
XYZ = "%d.%d.%d" % sys.version_info[:3]
# systemd's default PATH for services: no ~/.local/bin.
SERVICE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def uv_install(install_dir, version=XYZ):
    """A real interpreter where `uv python install` puts one: the binary copied (so it resolves there), its
    standard library and libpython linked beside it, as in uv's python-build-standalone trees."""
    root = os.path.join(install_dir, f"cpython-{version}-linux-{platform.machine()}-gnu")
    os.makedirs(os.path.join(root, "bin"))
    os.makedirs(os.path.join(root, "lib"))
    exe = os.path.join(root, "bin", "python" + XY)
    shutil.copy2(PYTHON, exe)
    os.symlink("python" + XY, os.path.join(root, "bin", "python3"))
    os.symlink(sysconfig.get_paths()["stdlib"], os.path.join(root, "lib", "python" + XY))
    libdir, ldlib = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("LDLIBRARY")
    if ldlib and ldlib.endswith(".so"):
        for n in os.listdir(libdir):
            if n.startswith(ldlib):
                os.symlink(os.path.join(libdir, n), os.path.join(root, "lib", n))
    out = subprocess.run([exe, "-I", "-S", "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True,
                         env={"PATH": SERVICE_PATH})
    check(out.returncode == 0 and out.stdout.strip() == root, f"the copied interpreter runs from {root}", out)
    return exe


def service_env(home, **extra):
    return {"HOME": home, "PATH": SERVICE_PATH, **extra}


def find(env, spec=XY, expect=0):
    return run([ENVBUILD, "python", "find", spec], env=env, expect=expect)


def create_env(tmp, env):
    """envbuild create --python X.Y from a one-wheel lock; returns the environment's pyvenv.cfg home."""
    wheels = os.path.join(tmp, "wheels")
    run([sys.executable, os.path.join(HERE, "make_wheels.py"), wheels])
    only = os.path.join(tmp, "only")
    os.makedirs(only)
    wheel = os.path.join(wheels, "demopure-1.0-py3-none-any.whl")
    shutil.copy(wheel, only)
    lock = os.path.join(tmp, "lock.txt")
    with open(lock, "w") as f:
        f.write(wheel_line(wheel))
    target = os.path.join(tmp, "venv")
    run([ENVBUILD, "--cache-dir", os.path.join(tmp, "cache"), "create", target, "--python", XY, "--lock", lock,
         "--find-links", only], env=env)
    run([os.path.join(target, "bin", "python"), "-c", "import demopure"])
    with open(os.path.join(target, "pyvenv.cfg")) as f:
        cfg = dict(line.split(" = ", 1) for line in f.read().splitlines() if " = " in line)
    return cfg.get("home")


def test_uv_managed_without_local_bin_on_path(tmp):
    home = os.path.join(tmp, "home")
    exe = uv_install(os.path.join(home, ".local", "share", "uv", "python"))
    env = service_env(home)
    r = find(env)
    check(r.out.strip() == exe, f"python find {XY} under a service's PATH finds uv's install {exe}", r)
    check(create_env(tmp, env) == os.path.dirname(exe), "create --python made the environment from uv's install")
    # envcheck --python: the same interpreter, by the same rule.
    r = run([tool("envcheck"), "--python", XY, "--json"], env=env, expect=None)
    check(r.json()["checks"][0]["data"]["path"] == exe, f"envcheck --python {XY} finds {exe}", r)


def test_uv_python_install_dir(tmp):
    home = os.path.join(tmp, "home")
    os.makedirs(home)
    installs = os.path.join(tmp, "srv-uv-pythons")
    exe = uv_install(installs)
    env = service_env(home, UV_PYTHON_INSTALL_DIR=installs)
    r = find(env)
    check(r.out.strip() == exe, f"UV_PYTHON_INSTALL_DIR's install {exe} is found", r)
    check(create_env(tmp, env) == os.path.dirname(exe), "create --python made the environment from it")
    # Without the variable (a unit file that does not set it), uv's link in ~/.local/bin still leads there.
    links = os.path.join(home, ".local", "bin")
    os.makedirs(links)
    os.symlink(exe, os.path.join(links, "python" + XY))
    r = find(service_env(home))
    check(r.out.strip() == os.path.join(links, "python" + XY), "uv's link in ~/.local/bin is found", r)


def test_not_found_names_uv_folder(tmp):
    home = os.path.join(tmp, "home")
    os.makedirs(home)
    r = find(service_env(home), "3.97", expect=2)
    uv = os.path.join(home, ".local", "share", "uv", "python")
    check("no interpreter found for 3.97" in r.err and uv in r.err and os.path.join(home, ".local", "bin") in r.err,
          f"the sentence names uv's folder {uv} and its links", r)
    r = find(service_env(home, UV_PYTHON_INSTALL_DIR=os.path.join(tmp, "uvdir")), "3.97", expect=2)
    check(os.path.join(tmp, "uvdir") in r.err, "and UV_PYTHON_INSTALL_DIR when set", r)


if __name__ == "__main__":
    main()
