#!/usr/bin/env python3
"""Builds the test wheels envbuild's integration tests install, with zipfile.

Usage: make_wheels.py OUTDIR
Writes good wheels (pure Python with scripts, a platlib wheel with a gcc-built
extension tagged for the running interpreter) and broken ones (wrong RECORD
hash, '../' path, absolute path, duplicate entry, symlink), one per file.
"""
import base64
import hashlib
import os
import subprocess
import sys
import sysconfig
import tempfile
import zipfile


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(outdir, filename, name, version, files, purelib=True, tag="py3-none-any",
                entry_points=None, record_override=None, extra_entries=(), metadata_name=None):
    """files: {archive path: bytes or (bytes, mode)}; RECORD is computed unless overridden.
    name names the .dist-info directory; metadata_name (default name) is METADATA's Name."""
    distinfo = f"{name}-{version}.dist-info"
    files = dict(files)
    files[f"{distinfo}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {metadata_name or name}\nVersion: {version}\nSummary: envbuild test wheel\n\n").encode()
    files[f"{distinfo}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: envbuild-tests\nRoot-Is-Purelib: {'true' if purelib else 'false'}\n"
        f"Tag: {tag}\n").encode()
    if entry_points:
        files[f"{distinfo}/entry_points.txt"] = entry_points.encode()
    rows = []
    for path, content in files.items():
        data = content[0] if isinstance(content, tuple) else content
        rows.append(f"{path},{record_hash(data)},{len(data)}")
    rows.append(f"{distinfo}/RECORD,,")
    record = "\n".join(rows) + "\n"
    if record_override:
        record = record_override(record)
    files[f"{distinfo}/RECORD"] = record.encode()
    path = os.path.join(outdir, filename)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, content in files.items():
            data, mode = content if isinstance(content, tuple) else (content, 0o644)
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
        for info, data in extra_entries:
            with __import__("warnings").catch_warnings():
                __import__("warnings").simplefilter("ignore")
                z.writestr(info, data)
    return path


def pure_wheel(outdir, version):
    init = f'VERSION = "{version}"\n\ndef main():\n    print("demopure {version} ok")\n    return 0\n'.encode()
    return write_wheel(outdir, f"demopure-{version}-py3-none-any.whl", "demopure", version, {
        "demopure/__init__.py": init,
        "demopure/data/table.txt": b"a,b\n1,2\n",
        "demopure/sub/__init__.py": b"",
        f"demopure-{version}.data/scripts/demo-script": (b"#!python\nimport demopure\nprint('script', demopure.VERSION)\n", 0o755),
        f"demopure-{version}.data/scripts/plain-tool": (b"#!/bin/sh\necho plain tool\n", 0o755),
        f"demopure-{version}.data/data/share/demopure/readme.txt": b"installed to the environment root\n",
        f"demopure-{version}.data/headers/demopure.h": b"#define DEMOPURE 1\n",
    }, entry_points="[console_scripts]\ndemopure = demopure:main\n\n[gui_scripts]\ndemopure-gui = demopure:main\n")


def platlib_wheel(outdir, workdir):
    """An extension module built by gcc, tagged cpXY-cpXY-linux_<arch>."""
    src = os.path.join(workdir, "native.c")
    with open(src, "w") as f:
        f.write(
            "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n"
            "static PyObject* add(PyObject* self, PyObject* args) { long a, b;\n"
            "  if (!PyArg_ParseTuple(args, \"ll\", &a, &b)) return NULL; return PyLong_FromLong(a + b); }\n"
            "static PyMethodDef methods[] = {{\"add\", add, METH_VARARGS, \"add\"}, {NULL, NULL, 0, NULL}};\n"
            "static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, \"_native\", NULL, -1, methods};\n"
            "PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&mod); }\n")
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    so = os.path.join(workdir, "_native" + ext)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-I", sysconfig.get_paths()["include"], src, "-o", so], check=True)
    with open(so, "rb") as f:
        so_bytes = f.read()
    xy = f"{sys.version_info[0]}{sys.version_info[1]}"
    tag = f"cp{xy}-cp{xy}{getattr(sys, 'abiflags', '')}-linux_{os.uname().machine}"
    return write_wheel(outdir, f"demoplat-1.0-{tag}.whl", "demoplat", "1.0", {
        "demoplat/__init__.py": b"from ._native import add\n",
        f"demoplat/_native{ext}": (so_bytes, 0o755),
    }, purelib=False, tag=tag)


def broken_wheels(outdir):
    ok = {"broken/__init__.py": b"X = 1\n"}

    def wrong_hash(record):
        return record.replace(record_hash(b"X = 1\n"), record_hash(b"X = 2\n"))
    write_wheel(outdir, "badhash-1.0-py3-none-any.whl", "badhash", "1.0", ok, record_override=wrong_hash)

    def escaping(name, arcname):
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        write_wheel(outdir, f"{name}-1.0-py3-none-any.whl", name, "1.0", ok, extra_entries=[(info, b"evil\n")])
    escaping("dotdot", "../../evil_dotdot.py")
    escaping("abspath", "/tmp/evil_abspath.py")
    escaping("dupe", "broken/__init__.py")  # a second entry with the same name

    link = zipfile.ZipInfo("broken/link.py", date_time=(2020, 1, 1, 0, 0, 0))
    link.external_attr = (0o120777) << 16
    write_wheel(outdir, "symlink-1.0-py3-none-any.whl", "symlink", "1.0", ok, extra_entries=[(link, b"/etc/passwd")])

    # A wheel no CPython 3 can use.
    write_wheel(outdir, "oldonly-1.0-cp27-cp27mu-linux_x86_64.whl", "oldonly", "1.0", ok, purelib=False,
                tag="cp27-cp27mu-linux_x86_64")


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        pure_wheel(outdir, "1.0")
        pure_wheel(outdir, "1.1")
        platlib_wheel(outdir, work)
    broken_wheels(outdir)


if __name__ == "__main__":
    main()
