#!/usr/bin/env python3
"""Wraps a plain clang offload bundle in the compressed (CCOB) form that
clang-offload-bundler -compress writes (clang/lib/Driver/OffloadBundler.cpp):
"CCOB", u16 version, u16 method (0 zlib, 1 zstd), then v2: u32 total size,
u32 uncompressed size; v3: u64 total size, u64 uncompressed size; then the low
64 bits of the MD5 of the uncompressed bundle, then the compressed bundle."""
import argparse, hashlib, struct, subprocess, zlib

p = argparse.ArgumentParser()
p.add_argument("bundle"); p.add_argument("out")
p.add_argument("--version", type=int, choices=(2, 3), default=3)
p.add_argument("--method", choices=("zlib", "zstd"), default="zstd")
a = p.parse_args()
data = open(a.bundle, "rb").read()
if a.method == "zstd":
    body = subprocess.run(["zstd", "-q", "-c", "-19", "-"], input=data, capture_output=True, check=True).stdout
else:
    body = zlib.compress(data, 9)
digest = struct.unpack("<Q", hashlib.md5(data).digest()[:8])[0]
method = 1 if a.method == "zstd" else 0
if a.version == 2:
    header = b"CCOB" + struct.pack("<HHIIQ", 2, method, 24 + len(body), len(data), digest)
else:
    header = b"CCOB" + struct.pack("<HHQQQ", 3, method, 32 + len(body), len(data), digest)
open(a.out, "wb").write(header + body)
