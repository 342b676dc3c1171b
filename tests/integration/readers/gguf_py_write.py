#!/usr/bin/python3
"""Run by Debian's python3 with PYTHONPATH at the unpacked python3-gguf: writes GGUFs with gguf-py's own
GGUFWriter and reads them back with its GGUFReader, and prints what gguf-py says about each as JSON lines.

Usage: gguf_py_write.py OUTDIR
"""

import json
import os
import sys

import numpy as np
import gguf
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType, LlamaFileType

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def write(path, endian, file_type, tensors):
    w = gguf.GGUFWriter(path, "llama", endianess=endian)
    w.add_file_type(file_type)
    for name, qtype, rows, blocks in tensors:
        size = GGML_QUANT_SIZES[qtype][1]
        # gguf-py takes raw bytes with their byte shape (rows, blocks * bytes per block) for every type.
        w.add_tensor(name, np.zeros((rows, blocks * size), dtype=np.uint8), raw_shape=(rows, blocks * size),
                     raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


for endian in (gguf.GGUFEndian.LITTLE, gguf.GGUFEndian.BIG):
    order = "big" if endian == gguf.GGUFEndian.BIG else "little"
    for qtype in GGMLQuantizationType:
        path = os.path.join(out, f"type-{int(qtype)}-{order}.gguf")
        write(path, endian, LlamaFileType.ALL_F32, [(f"t.{qtype.name}", qtype, 2, 3)])
        r = gguf.GGUFReader(path)
        (t,) = r.tensors
        print(json.dumps({"kind": "type", "path": path, "order": order, "id": int(qtype), "name": qtype.name,
                          "block": GGML_QUANT_SIZES[qtype][0], "block_bytes": GGML_QUANT_SIZES[qtype][1],
                          "reader_type": t.tensor_type.name, "reader_bytes": int(t.n_bytes),
                          "reader_offset": int(t.data_offset), "reader_order": r.endianess.name.lower()}))
for ftype in LlamaFileType:
    if ftype == LlamaFileType.GUESSED:
        continue
    path = os.path.join(out, f"ftype-{int(ftype)}.gguf")
    write(path, gguf.GGUFEndian.LITTLE, ftype, [("t.f32", GGMLQuantizationType.F32, 1, 4)])
    name = ftype.name.removeprefix("MOSTLY_").removeprefix("ALL_")
    print(json.dumps({"kind": "file_type", "path": path, "id": int(ftype), "name": name}))
print(json.dumps({"kind": "version", "gguf_py": getattr(gguf, "__version__", None)}))
