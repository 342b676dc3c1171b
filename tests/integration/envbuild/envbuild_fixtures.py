"""What envbuild's integration tests share beyond the harness (../common.py): locks, wheels, trees, a
standalone-Python archive (stdlib only)."""
import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from common import run, tool  # noqa: E402

ENVBUILD = tool("envbuild")
PYTHON = os.path.realpath(sys.executable)
DEBIAN_WHEELS = "/usr/share/python-wheels"

def envbuild(cache, *args, expect=0):
    """envbuild with a wheel cache: for the commands that read one (create, verify, python install; the others
    refuse --cache-dir)."""
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


def is_venv_skeleton(f):
    """A path of the environment itself rather than of what was installed into it: the venv's files and
    the environment's lock (ENV/.lock, which envbuild takes for create and verify, as uv takes the same file)."""
    return f in ("pyvenv.cfg", "lib64", ".lock") or f.startswith(("bin/activate", "bin/Activate", "bin/python"))


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


def make_standalone_archive(out, compression):
    """A python-build-standalone-like tree (python/bin/python3, python/lib/pythonX.Y) from the local Python."""
    stdlib = sysconfig.get_paths()["stdlib"]
    xy = "%d.%d" % sys.version_info[:2]
    skip = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages", "dist-packages", "__pycache__"}

    def filt(info):
        parts = info.name.split("/")
        if any(p in skip for p in parts) or info.name.endswith(".pyc"):
            return None
        return info
    tar_path = out + ".tar"
    with tarfile.open(tar_path, "w", dereference=True) as t:  # Debian links sitecustomize.py to /etc
        t.add(PYTHON, f"python/bin/python{xy}")
        link = tarfile.TarInfo("python/bin/python3")
        link.type, link.linkname = tarfile.SYMTYPE, f"python{xy}"
        t.addfile(link)
        t.add(stdlib, f"python/lib/python{xy}", filter=filt)
        libdir = sysconfig.get_config_var("LIBDIR")
        ldlib = sysconfig.get_config_var("LDLIBRARY")
        if ldlib and ldlib.endswith(".so") and os.path.exists(os.path.join(libdir, ldlib)):
            for n in os.listdir(libdir):
                if n.startswith(ldlib):
                    t.add(os.path.join(libdir, n), f"python/lib/{n}")
    if compression == "gz":
        run(["gzip", "-1", "-f", tar_path])
        return tar_path + ".gz"
    run(["zstd", "-q", "-1", "--rm", "-f", tar_path, "-o", tar_path + ".zst"])
    return tar_path + ".zst"
