#!/usr/bin/env python3
"""A chain of N shared objects for `envcheck --elf` (docs/benchmarks-envcheck.md, issue 11 item 15).

    python3 bench/elf-chain.py N DIR [--shape origin|missing]

libchain0.so needs libchain1.so, which needs libchain2.so, ... up to N-1, all in DIR.
--shape origin (default): every object has DT_RPATH $ORIGIN, so each inherits the RPATHs of
all objects above it. --shape missing: libchain0.so has DT_RPATH DIR, every other object a
build-tree RPATH of its own that does not exist here. Prints the root's path. The objects
are minimal ELF64 files of this machine (one PT_LOAD, one PT_DYNAMIC): nothing is executed.
"""
import os
import struct
import sys

EM = {"x86_64": 62, "aarch64": 183}[os.uname().machine]
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_SONAME, DT_RPATH = 0, 1, 5, 10, 14, 15


def shared_object(soname, needed, rpath):
    strtab = b"\0"
    dyn = []

    def add(s):
        nonlocal strtab
        at = len(strtab)
        strtab += s.encode() + b"\0"
        return at

    for n in needed:
        dyn.append((DT_NEEDED, add(n)))
    dyn.append((DT_SONAME, add(soname)))
    dyn.append((DT_RPATH, add(rpath)))
    strtab_off = 64 + 2 * 56
    dyn_off = (strtab_off + len(strtab) + 7) & ~7
    dyn += [(DT_STRTAB, strtab_off), (DT_STRSZ, len(strtab)), (DT_NULL, 0)]
    size = dyn_off + 16 * len(dyn)
    ehdr = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HHIQQQIHHHHHH", 3, EM, 1, 0, 64, 0, 0, 64, 56, 2, 0, 0, 0)
    load = struct.pack("<IIQQQQQQ", 1, 4, 0, 0, 0, size, size, 0x1000)
    dynamic = struct.pack("<IIQQQQQQ", 2, 4, dyn_off, dyn_off, dyn_off, 16 * len(dyn), 16 * len(dyn), 8)
    out = bytearray(size)
    out[0:64] = ehdr
    out[64:120] = load
    out[120:176] = dynamic
    out[strtab_off:strtab_off + len(strtab)] = strtab
    for i, (tag, val) in enumerate(dyn):
        out[dyn_off + 16 * i:dyn_off + 16 * i + 16] = struct.pack("<qQ", tag, val)
    return bytes(out)


def main():
    args = sys.argv[1:]
    shape = "origin"
    if "--shape" in args:
        at = args.index("--shape")
        shape = args[at + 1]
        del args[at:at + 2]
    if len(args) != 2 or shape not in ("origin", "missing"):
        sys.exit(__doc__)
    n, root = int(args[0]), os.path.abspath(args[1])
    os.makedirs(root, exist_ok=True)
    for i in range(n):
        name = f"libchain{i}.so"
        needed = [f"libchain{i + 1}.so"] if i + 1 < n else []
        rpath = "$ORIGIN" if shape == "origin" else root if i == 0 else f"/nonexistent-provkit-build/{i}/lib"
        with open(os.path.join(root, name), "wb") as f:
            f.write(shared_object(name, needed, rpath))
    print(os.path.join(root, "libchain0.so"))


if __name__ == "__main__":
    main()
