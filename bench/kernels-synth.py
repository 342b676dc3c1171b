#!/usr/bin/env python3
"""A synthetic site-packages for timing envcheck --kernels cold: ELF objects
whose .nv_fatbin (and .ldata) hold fatbin containers in the shapes the CUDA
wheels have (sizes chosen from the GPU host's torch 2.11 site-packages):
  one torch-like library: 320 MB of .nv_fatbin, 600 containers of 4 entries
  of 20-250 KB (21414 images in 3 GB of fatbins there: ~140 KB each);
  one cuFFT-like library: one sm_75 cubin registered, 24000 containers of
  4-16 KB in .ldata (read when nothing registered runs: an sm_90 GPU);
  20 libraries of 55 MB; 800 small objects with no device code.
  bench/kernels-synth.py DIR [SCALE]   (SCALE 1.0 is about 1.8 GB)
Payloads are filler: only the headers are read."""
import os, random, struct, sys

FILL = bytes(range(1, 251)) * 4200  # no container magic in it

def entry(kind, arch, payload, flags=0, isa=(9, 0)):
    h = struct.pack("<HHIQIIHHIIIQQ", kind, 0x101, 64, payload, 0, 0, isa[1], isa[0], arch, 0, 0, flags, 0)
    return h.ljust(64, b"\0")

def container(entries, rng):
    body = b""
    for kind, arch, size in entries:
        body += entry(kind, arch, size) + FILL[:size] if size <= len(FILL) else entry(kind, arch, size) + FILL * (size // len(FILL)) + FILL[: size % len(FILL)]
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body

def section(n, shape, rng, starts=None):
    parts, at = [], 0
    for _ in range(n):
        c = container([(k, a, rng.randint(lo, hi)) for k, a, lo, hi in shape], rng)
        parts.append(c + b"\0" * (-len(c) % 8))
        if starts is not None: starts.append(at)
        at += len(parts[-1])
    return b"".join(parts)

def registered(n, shape, rng):
    """.nv_fatbin and the .nvFatBinSegment that points at its containers, as nvcc and ld write them."""
    starts = []
    body = section(n, shape, rng, starts)
    return [(".nv_fatbin", body), (".nvFatBinSegment", starts)]

def write_elf(path, sections):
    names = b"\0" + b"".join(n.encode() + b"\0" for n, _ in sections) + b".shstrtab\0"
    data, offs, off = [], [], 64
    for i, (name, body) in enumerate(sections):
        off += -off % 8
        if name == ".nvFatBinSegment":  # the wrappers: magic, version, the fatbin's address (address == offset here)
            body = b"".join(struct.pack("<IIQQ", 0x466243B1, 1, offs[i - 1] + s, 0) for s in body)
            sections[i] = (name, body)
        offs.append(off); data.append(body); off += len(body)
    names_off = off; off += len(names); off += -off % 8
    shoff = off
    with open(path, "wb") as f:
        f.write(b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 56, 0, 64, len(sections) + 2, len(sections) + 1))
        for o, body in zip(offs, data):
            f.seek(o); f.write(body)
        f.seek(names_off); f.write(names)
        f.seek(shoff)
        f.write(b"\0" * 64)
        ni = 1
        for (n, body), o in zip(sections, offs):
            f.write(struct.pack("<IIQQQQIIQQ", ni, 1, 2, o, o, len(body), 0, 0, 8, 0)); ni += len(n) + 1
        f.write(struct.pack("<IIQQQQIIQQ", ni, 3, 0, 0, names_off, len(names), 0, 0, 1, 0))

def main():
    out = sys.argv[1]; scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    rng = random.Random(23)
    os.makedirs(f"{out}/torch/lib", exist_ok=True); os.makedirs(f"{out}/nvidia/lib", exist_ok=True)
    torch_shape = [(2, 80, 20000, 250000), (2, 86, 20000, 250000), (2, 90, 20000, 250000), (1, 90, 20000, 250000)]
    write_elf(f"{out}/torch/lib/libtorch_cuda.so", registered(int(600 * scale), torch_shape, rng))
    write_elf(f"{out}/nvidia/lib/libcufft.so.12", [(".nv_fatbin", section(1, [(2, 75, 4000, 4000)], rng)),
                                                   (".ldata", section(int(24000 * scale), [(2, 90, 4000, 16000)], rng))])
    for i in range(20):
        write_elf(f"{out}/nvidia/lib/libcuda_like_{i}.so", registered(int(100 * scale), torch_shape, rng))
    for i in range(800):
        os.makedirs(f"{out}/pkg{i % 40}", exist_ok=True)
        write_elf(f"{out}/pkg{i % 40}/_ext{i}.cpython-312-x86_64-linux-gnu.so", [(".rodata", FILL[:100000])])

main()
