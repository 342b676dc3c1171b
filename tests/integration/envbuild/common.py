"""Helpers shared by envbuild's integration tests (stdlib only)."""
import hashlib
import json
import os
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("PROVKIT_BIN", os.path.join(os.environ.get("PROVKIT_BUILD_DIR", "build"), "bin"))
ENVBUILD = os.path.join(BIN, "envbuild")
PYTHON = os.path.realpath(sys.executable)
DEBIAN_WHEELS = "/usr/share/python-wheels"

failures = []


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def run(args, expect=0, env=None, cwd=None):
    p = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    if expect is not None and p.returncode != expect:
        raise AssertionError(f"{' '.join(map(str, args))}: exit {p.returncode}, expected {expect}\n"
                             f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def envbuild(cache, *args, expect=0):
    return run([ENVBUILD, "--cache-dir", str(cache), *map(str, args)], expect=expect)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def wheel_line(path):
    name, version = os.path.basename(path).split("-")[:2]
    return f"{name}=={version} \\\n    --hash=sha256:{sha256(path)}\n"


def write_lock(path, wheels):
    with open(path, "w") as f:
        f.write("# test lock\n")
        for w in wheels:
            f.write(wheel_line(w))
    return path


def debian_wheels():
    return sorted(os.path.join(DEBIAN_WHEELS, n) for n in os.listdir(DEBIAN_WHEELS)
                  if n.startswith(("pip-", "setuptools-")) and n.endswith(".whl"))


def tree_files(root, skip_bytecode=True):
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        if skip_bytecode:
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for n in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            if skip_bytecode and n.endswith(".pyc"):
                continue
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def test(fn):
    """Runs one test function, records a failure instead of stopping."""
    name = fn.__name__
    start = __import__("time").monotonic()
    try:
        fn()
        print(f"ok    {name} ({__import__('time').monotonic() - start:.1f} s)", flush=True)
    except Exception:
        failures.append(name)
        print(f"FAIL  {name}\n{traceback.format_exc()}", flush=True)
    return fn


def finish():
    if failures:
        print(f"{len(failures)} failed: {', '.join(failures)}")
        sys.exit(1)
    print("all passed")
