#!/usr/bin/env python3
"""hf-fetch inspect beside safetensors' own reader (its Rust `SafeTensors::read_metadata` / `Metadata::validate`,
safetensors/src/tensor.rs, run as Debian unstable's python3-safetensors, fetched by the "readers" fixture): every
dtype safetensors knows (the FNUZ ones of 0.8 included) and its validity rules (contiguous from 0, no gap, no
overlap, no trailing byte). inspect accepts exactly what safetensors accepts, and names safetensors' error.

Usage: test_safetensors_rules.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""

import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from common import BUILD, check, main, tool  # noqa: E402

SITE = os.path.join(BUILD, "tests", "readers", "root", "usr", "lib", "python3", "dist-packages")
DEBIAN_PYTHON = "/usr/bin/python3"
# safetensors' Python error text -> the Rust SafeTensorError it comes from (safetensors 0.8.0).
ERROR_NAMES = {"incomplete metadata": "MetadataIncompleteBuffer", "invalid offset": "InvalidOffset",
               "invalid shape, data type, or offset": "TensorInvalidInfo", "unknown variant": "unknown dtype"}


def st_file(tensors, data, trailing=b""):
    header = json.dumps(tensors).encode()
    return struct.pack("<Q", len(header)) + header + data + trailing


def u8(begin, end, shape=None):
    return {"dtype": "U8", "shape": shape if shape is not None else [end - begin], "data_offsets": [begin, end]}


# (name, file bytes): each judged by safetensors itself below.
CASES = [
    ("contiguous", st_file({"a": u8(0, 4), "b": u8(4, 6)}, b"abcdef")),
    ("listed out of order", st_file({"b": u8(4, 6), "a": u8(0, 4)}, b"abcdef")),
    ("trailing bytes", st_file({"a": u8(0, 4)}, b"abcd", trailing=b"\0\0")),
    ("gap between tensors", st_file({"a": u8(0, 2), "b": u8(3, 5)}, b"abcde")),
    ("first tensor not at 0", st_file({"a": u8(2, 4)}, b"abcd")),
    ("overlap", st_file({"a": u8(0, 4), "b": u8(2, 6, [4])}, b"abcdef")),
    ("size does not match shape", st_file({"a": u8(0, 4, [3])}, b"abcd")),
    ("empty tensor at the end", st_file({"a": u8(0, 4), "z": u8(4, 4, [0])}, b"abcd")),
    ("no tensors, no data", st_file({}, b"")),
    ("no tensors, trailing bytes", st_file({}, b"", trailing=b"xy")),
    ("FNUZ fp8 (AMD)", st_file({"a": {"dtype": "F8_E4M3FNUZ", "shape": [2], "data_offsets": [0, 2]},
                                "b": {"dtype": "F8_E5M2FNUZ", "shape": [3], "data_offsets": [2, 5]}}, b"12345")),
]


def safetensors_says(paths):
    """{path: None (loads) or the error text}, from safetensors' own deserialize."""
    check(os.path.isfile(os.path.join(SITE, "safetensors", "__init__.py")),
          f"safetensors is not in {SITE}: the fixture 'readers: fetch gguf-py and safetensors' must run first")
    code = ("import json, sys, safetensors\n"
            "out = {}\n"
            "for p in sys.argv[1:]:\n"
            "    try:\n"
            "        safetensors.deserialize(open(p, 'rb').read()); out[p] = None\n"
            "    except Exception as e:\n"
            "        out[p] = str(e)\n"
            "print(json.dumps({'version': safetensors.__version__, 'verdicts': out}))\n")
    p = subprocess.run([DEBIAN_PYTHON, "-c", code, *paths], env=dict(os.environ, PYTHONPATH=SITE),
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "safetensors could not be run", p.stderr)
    return json.loads(p.stdout)


def inspect(path):
    return subprocess.run([tool("hf-fetch"), "inspect", path, "--json"], capture_output=True, text=True, timeout=60)


def judge(tmp, cases):
    paths = {}
    for name, data in cases:
        path = os.path.join(tmp, name.replace(" ", "-").replace("(", "").replace(")", "") + ".safetensors")
        with open(path, "wb") as f:
            f.write(data)
        paths[name] = path
    said = safetensors_says(list(paths.values()))
    wrong = []
    for name, path in paths.items():
        verdict = said["verdicts"][path]
        p = inspect(path)
        if verdict is None and p.returncode != 0:
            wrong.append(f"{name}: safetensors loads it; inspect exit {p.returncode}: {p.stdout[-300:]}")
        elif verdict is not None:
            error = next((v for k, v in ERROR_NAMES.items() if k in verdict), verdict)
            if p.returncode != 2 or error not in p.stdout:
                wrong.append(f"{name}: safetensors {said['version']} refuses it ({verdict}: {error}); "
                             f"inspect exit {p.returncode}: {p.stdout[-300:]}")
    return said, wrong


def test_validity_rules_as_safetensors(tmp):
    said, wrong = judge(tmp, CASES)
    check(sum(v is not None for v in said["verdicts"].values()) >= 5, "safetensors refuses the broken ones", said)
    check(not wrong, f"{len(wrong)} of {len(CASES)} files judged otherwise than safetensors judges them",
          "\n".join(wrong))


# Every dtype safetensors 0.8.0 has (safetensors/src/tensor.rs, enum Dtype) and its width in bits.
DTYPES = {"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8,
          "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
          "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64}


def test_every_dtype(tmp):
    cases = []
    for dtype, bits in DTYPES.items():
        n = 8  # 8 elements: a whole number of bytes for every width
        size = n * bits // 8
        cases.append((f"dtype {dtype}", st_file({"t": {"dtype": dtype, "shape": [n], "data_offsets": [0, size]}},
                                                 b"\0" * size)))
    cases.append(("dtype unknown", st_file({"t": {"dtype": "F8_E4M3FNX", "shape": [1], "data_offsets": [0, 1]}}, b"\0")))
    said, wrong = judge(tmp, cases)
    loads = sorted(n for n, _ in cases if said["verdicts"][os.path.join(tmp, n.replace(" ", "-") + ".safetensors")] is None)
    check(len(loads) == len(DTYPES), "safetensors loads every dtype of the table and only those", loads)
    for dtype, bits in DTYPES.items():
        path = os.path.join(tmp, f"dtype-{dtype}.safetensors")
        p = inspect(path)
        if p.returncode == 0:
            report = json.loads([x for x in p.stdout.splitlines() if x.strip()][-1])
            if report["files"][0]["bytes_by_dtype"] != {dtype: 8 * bits // 8}:
                wrong.append(f"{dtype}: {report['files'][0]['bytes_by_dtype']}")
    check(not wrong, "dtypes read otherwise than safetensors reads them", "\n".join(wrong))


if __name__ == "__main__":
    main()
