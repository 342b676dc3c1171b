#!/usr/bin/env python3
"""Checks an unpacked provkit release against the glibc floor docs/installing.md states.

Usage: release_check.py DIR [--floor 2.34] [--needed docs/installing.md] [--json]

For every ELF file under DIR/bin and DIR/lib it reads, from the file itself
(standard library only, so it runs on any host with python3):
  - NEEDED: each entry must be glibc's (libc, libm, the loader...) or a file in DIR/lib;
  - the version needs (.gnu.version_r): the highest GLIBC_ version must be at or
    below the floor, and no GLIBCXX_/CXXABI_/GCC_ version may be needed from the host;
  - the tools in DIR/bin must carry RPATH $ORIGIN/../lib (or be static);
  - with --needed DOC: each tool's NEEDED entries must be exactly those the DOC's table under
    "### What each tool loads" lists for it (the loader by any ld-linux name), so that the page a user
    reads and the binaries cannot drift apart.
Prints one line per file; exits 1 when any file breaks a rule, 2 on bad usage.
"""
import json
import os
import re
import struct
import sys

# glibc's own libraries: the one thing a release takes from the host.
GLIBC = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libresolv.so.2",
         "libutil.so.1", "libanl.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
SHT_DYNAMIC, SHT_GNU_VERNEED = 6, 0x6ffffffe
DT_NEEDED, DT_RPATH, DT_RUNPATH = 1, 15, 29


def version_key(v):
    return tuple(int(x) for x in v.split(".") if x.isdigit())


def read_elf(path):
    """(needed, rpath, runpath, [(file, version)]) or None when not an ELF file."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        return None
    if data[4] != 2:
        raise ValueError(f"{path}: not a 64-bit ELF file")
    end = "<" if data[5] == 1 else ">"
    shoff, = struct.unpack_from(end + "Q", data, 0x28)
    shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
    sections = [struct.unpack_from(end + "IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]

    def cstr(strtab, off):
        base = sections[strtab][4] + off
        return data[base:data.index(b"\0", base)].decode()

    needed, rpath, runpath, needs = [], None, None, []
    for (_name, stype, _flags, _addr, off, size, link, info, _align, entsize) in sections:
        if stype == SHT_DYNAMIC:
            for i in range(size // 16):
                tag, val = struct.unpack_from(end + "qQ", data, off + i * 16)
                if tag == DT_NEEDED:
                    needed.append(cstr(link, val))
                elif tag == DT_RPATH:
                    rpath = cstr(link, val)
                elif tag == DT_RUNPATH:
                    runpath = cstr(link, val)
        elif stype == SHT_GNU_VERNEED:
            pos = off
            for _ in range(info):
                _ver, cnt, file_off, aux, nxt = struct.unpack_from(end + "HHIII", data, pos)
                apos = pos + aux
                for _ in range(cnt):
                    _hash, _fl, _other, name_off, anext = struct.unpack_from(end + "IHHII", data, apos)
                    needs.append((cstr(link, file_off), cstr(link, name_off)))
                    apos += anext
                pos += nxt
    return needed, rpath, runpath, needs


def loader_neutral(names):
    """The loader's name is the architecture's (ld-linux-x86-64.so.2, ld-linux-aarch64.so.1): one name for it."""
    return {"ld-linux (the loader)" if n.startswith("ld-linux") else n for n in names}


def needed_table(doc):
    """{"bin/TOOL": {NEEDED...}} from the table under the doc's '### What each tool loads' heading: a row
    `| `bin/TOOL` | `libc.so.6` `libm.so.6` ... |` (or 'none' for a static tool)."""
    text = open(doc, encoding="utf-8").read()
    m = re.search(r"^### What each tool loads\n(.*?)(?=^#)", text, re.S | re.M)
    if not m:
        raise ValueError(f"{doc} has no '### What each tool loads' section")
    table = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and re.fullmatch(r"`bin/[\w.-]+`", cells[0]):
            table[cells[0].strip("`")] = set(re.findall(r"`([^`]+)`", cells[1]))
    if not table:
        raise ValueError(f"{doc}: the '### What each tool loads' section has no `bin/TOOL` row")
    return table


def check(root, floor, needed_doc=None):
    bundled = set(os.listdir(os.path.join(root, "lib"))) if os.path.isdir(os.path.join(root, "lib")) else set()
    rows, ok = [], True
    table = needed_table(needed_doc) if needed_doc else None
    for sub in ("bin", "lib"):
        folder = os.path.join(root, sub)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            elf = read_elf(path)
            if elf is None:
                continue
            needed, rpath, runpath, needs = elf
            problems = []
            outside = [n for n in needed if n not in GLIBC and n not in bundled]
            if outside:
                problems.append("needs from the host: " + ", ".join(outside))
            glibc = sorted({v[len("GLIBC_"):] for _f, v in needs if v.startswith("GLIBC_2")}, key=version_key)
            highest = glibc[-1] if glibc else None
            if highest and version_key(highest) > version_key(floor):
                above = [v for v in glibc if version_key(v) > version_key(floor)]
                problems.append(f"needs GLIBC_{', GLIBC_'.join(above)} (floor {floor})")
            runtime = sorted({f"{v} ({f})" for f, v in needs if f not in GLIBC and f not in bundled})
            if runtime:
                problems.append("versions from the host outside glibc: " + ", ".join(runtime))
            if sub == "bin" and needed and rpath != "$ORIGIN/../lib":
                problems.append(f"RPATH is {rpath!r} (RUNPATH {runpath!r}), not '$ORIGIN/../lib'")
            if table is not None and sub == "bin":
                documented = table.get(f"bin/{name}")
                if documented is None:
                    problems.append(f"{needed_doc} does not list what bin/{name} loads")
                elif loader_neutral(needed) != loader_neutral(documented):
                    more = sorted(loader_neutral(needed) - loader_neutral(documented))
                    less = sorted(loader_neutral(documented) - loader_neutral(needed))
                    problems.append(f"NEEDED differs from {os.path.basename(needed_doc)}: "
                                    + "; ".join(x for x in (more and "also " + ", ".join(more),
                                                            less and "not " + ", ".join(less)) if x))
            ok = ok and not problems
            rows.append({"file": f"{sub}/{name}", "needed": needed, "highest_glibc": highest,
                         "static": not needed, "problems": problems})
    for tool in sorted(table or {}):
        if not os.path.isfile(os.path.join(root, tool)):
            ok = False
            rows.append({"file": tool, "needed": [], "highest_glibc": None, "static": False,
                         "problems": [f"listed in {needed_doc} but not in the archive"]})
    return ok, rows


def main(argv):
    args = list(argv)
    floor, as_json, needed_doc = "2.34", False, None
    if "--floor" in args:
        i = args.index("--floor")
        floor = args[i + 1]
        del args[i:i + 2]
    if "--needed" in args:
        i = args.index("--needed")
        needed_doc = args[i + 1]
        del args[i:i + 2]
    if "--json" in args:
        args.remove("--json")
        as_json = True
    if len(args) != 1 or not os.path.isdir(args[0]):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    ok, rows = check(args[0], floor, needed_doc)
    if as_json:
        print(json.dumps({"floor": floor, "ok": ok, "files": rows}, indent=1))
    else:
        for r in rows:
            glibc = "static" if r["static"] else f"GLIBC_{r['highest_glibc']}"
            verdict = "ok" if not r["problems"] else "FAIL: " + "; ".join(r["problems"])
            print(f"{r['file']:32} {glibc:14} {verdict}")
        print(f"{'ok' if ok else 'FAIL'}: {len(rows)} ELF files, glibc floor {floor}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
