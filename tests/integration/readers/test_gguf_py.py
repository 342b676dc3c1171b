#!/usr/bin/env python3
"""hf-fetch inspect beside gguf-py (llama.cpp's own GGUF code, Debian unstable's python3-gguf, fetched by the
"readers" fixture): every ggml type and every file type gguf-py knows, in both byte orders, written by its
GGUFWriter and read back by its GGUFReader; inspect must name each as gguf-py does, count the bytes GGUFReader
counts, and refuse the ids gguf-py does not know.

Usage: test_gguf_py.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""

import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from common import BUILD, check, main, tool  # noqa: E402

GGUF_PY = os.path.join(BUILD, "tests", "readers", "root", "usr", "lib", "python3", "dist-packages")
# Debian's own interpreter: python3-numpy (scripts/deps.sh) is installed for it, whatever python3 runs this.
DEBIAN_PYTHON = "/usr/bin/python3"


def gguf_py_files(tmp):
    """Runs gguf_py_write.py under gguf-py; its JSON lines (what gguf-py wrote and read back)."""
    check(os.path.isfile(os.path.join(GGUF_PY, "gguf", "constants.py")),
          f"gguf-py is not in {GGUF_PY}: the fixture 'readers: fetch gguf-py and safetensors' must run first (it needs the network once)")
    p = subprocess.run([DEBIAN_PYTHON, os.path.join(HERE, "gguf_py_write.py"), os.path.join(tmp, "gguf")],
                       env=dict(os.environ, PYTHONPATH=GGUF_PY), capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "gguf-py could not write the files", p.stderr)
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    check(len([r for r in rows if r["kind"] == "type"]) > 60, "gguf-py listed its types", p.stdout)
    return rows


def inspect(path):
    p = subprocess.run([tool("hf-fetch"), "inspect", path, "--json"], capture_output=True, text=True, timeout=60)
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    return p, (lines[-1] if lines else {})


def test_every_ggml_type_both_byte_orders(tmp):
    rows = [r for r in gguf_py_files(tmp) if r["kind"] == "type"]
    wrong = []
    for r in rows:
        check(r["reader_type"] == r["name"] and r["reader_order"] == r["order"], "gguf-py reads its own file", r)
        p, report = inspect(r["path"])
        if p.returncode != 0:
            wrong.append(f"{r['name']} ({r['id']}, {r['order']}-endian): exit {p.returncode}: {p.stdout[-300:]}")
            continue
        f = report["files"][0]
        order = f.get("gguf_byte_order", "little")
        if f["bytes_by_dtype"] != {r["name"]: r["reader_bytes"]} or order != r["order"]:
            wrong.append(f"{r['name']} ({r['id']}, {r['order']}-endian): inspect says {f['bytes_by_dtype']}, "
                         f"{order}; GGUFReader {r['reader_bytes']} bytes")
    check(not wrong, f"{len(wrong)} of {len(rows)} files read otherwise than gguf-py reads them", "\n".join(wrong))


def test_ids_gguf_py_does_not_know_are_refused(tmp):
    rows = gguf_py_files(tmp)
    known = {r["id"] for r in rows if r["kind"] == "type"}
    f32 = next(r for r in rows if r["kind"] == "type" and r["name"] == "F32" and r["order"] == "little")
    with open(f32["path"], "rb") as f:
        data = f.read()
    name = b"t.F32"
    at = data.index(name) + len(name) + 4 + 2 * 8  # name, u32 dims, two u64 dims: then the u32 type
    check(struct.unpack_from("<I", data, at)[0] == 0, "found the tensor's type field")
    accepted = []
    for type_id in range(0, 64):
        if type_id in known:
            continue
        path = os.path.join(tmp, f"unknown-{type_id}.gguf")
        with open(path, "wb") as f:
            f.write(data[:at] + struct.pack("<I", type_id) + data[at + 4:])
        p, _ = inspect(path)
        if p.returncode != 2 or f"unknown ggml type {type_id}" not in p.stdout:
            accepted.append(f"{type_id}: exit {p.returncode}")
    check(not accepted, "ggml type ids gguf-py does not know were not refused", accepted)


def test_every_file_type(tmp):
    rows = [r for r in gguf_py_files(tmp) if r["kind"] == "file_type"]
    wrong = []
    for r in rows:
        p, report = inspect(r["path"])
        got = report["files"][0]["file_type"] if p.returncode == 0 else f"exit {p.returncode}"
        if got != r["name"]:
            wrong.append(f"{r['id']}: gguf-py {r['name']}, inspect {got}")
    check(not wrong, f"{len(wrong)} of {len(rows)} file types named otherwise than gguf-py names them", "\n".join(wrong))


if __name__ == "__main__":
    main()
