#!/usr/bin/env python3
"""envcheck end to end, ELF objects and libraries: the real binary against stand-in driver libraries
(dlopen'd like the real ones), objects built here with gcc/clang and real tools.

Usage: test_libraries.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main  # noqa: E402
from envcheck_fixtures import cc, checks_by_name, envcheck, expect, row, write  # noqa: E402


# ---- ELF and libraries ---------------------------------------------------------


def build_elf_tree(tmp):
    """app/bin/prog -> libalpha.so (RUNPATH $ORIGIN/../lib) -> libbeta.so, libmissing.so."""
    src = os.path.join(tmp, "src")
    os.makedirs(src)
    paths = {k: os.path.join(tmp, k) for k in ("app/bin", "app/lib", "ld32", "ld64", "gone")}
    for p in paths.values():
        os.makedirs(p, exist_ok=True)
    files = {"beta.c": "int beta(void) { return 2; }\n",
             "missing.c": "int missing(void) { return 3; }\n",
             "alpha.c": "int beta(void); int missing(void);\nint alpha(void) { return beta() + missing(); }\n",
             "prog.c": "int alpha(void);\nint main(void) { return alpha() == 5 ? 0 : 1; }\n"}
    for name, text in files.items():
        with open(os.path.join(src, name), "w") as f:
            f.write(text)
    cc("-shared", "-fPIC", "-o", os.path.join(paths["ld64"], "libbeta.so"), os.path.join(src, "beta.c"))
    cc("-shared", "-fPIC", "-o", os.path.join(paths["gone"], "libmissing.so"), os.path.join(src, "missing.c"))
    cc("-shared", "-fPIC", "-o", os.path.join(paths["app/lib"], "libalpha.so"), os.path.join(src, "alpha.c"),
       "-L" + paths["ld64"], "-L" + paths["gone"], "-lbeta", "-lmissing")
    cc("-o", os.path.join(paths["app/bin"], "prog"), os.path.join(src, "prog.c"), "-L" + paths["app/lib"], "-lalpha",
       "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib", "-Wl,--allow-shlib-undefined")
    # The 32-bit decoy: gcc -m32 has no 32-bit libc here, so clang builds it (no libc needed).
    subprocess.run(["clang", "--target=i386-linux-gnu", "-nostdlib", "-shared", "-fPIC", "-o",
                    os.path.join(paths["ld32"], "libbeta.so"), os.path.join(src, "beta.c")],
                   check=True, capture_output=True, timeout=60)
    return paths


def loader_says(prog, ld_path):
    env = dict(os.environ, LD_LIBRARY_PATH=ld_path)
    p = subprocess.run([prog], env=env, capture_output=True, text=True, timeout=30)
    return p.returncode, p.stderr


def test_elf(tmp):
    p = build_elf_tree(tmp)
    prog = os.path.join(p["app/bin"], "prog")
    with_decoy = p["ld32"] + ":" + p["ld64"]
    # libmissing.so is nowhere: the real loader refuses the program, envcheck says which and why.
    rc, err = loader_says(prog, with_decoy)
    check(rc != 0 and "libmissing.so" in err, "the real loader should fail on libmissing.so", err)
    r = envcheck("--elf", prog, "--json", env={"LD_LIBRARY_PATH": with_decoy})
    expect(r, 1, "--elf with a missing library")
    name = f"elf {prog}: libmissing.so"
    row(r, name, "FAIL", "--elf missing", ["libmissing.so", os.path.join(p["app/lib"], "libalpha.so")])
    check(not any("libbeta.so" in n or "libalpha.so" in n for n in checks_by_name(r) if n != name),
          "--elf reports only libmissing.so as missing", str(r))
    # Found it: the loader agrees and so does envcheck, through $ORIGIN RUNPATH and past the 32-bit decoy.
    shutil.copy(os.path.join(p["gone"], "libmissing.so"), p["ld64"])
    rc, err = loader_says(prog, with_decoy)
    check(rc == 0, "the real loader should run prog now", err)
    r = envcheck("--elf", prog, "--json", env={"LD_LIBRARY_PATH": with_decoy})
    expect(r, 0, "--elf resolving everything")
    row(r, f"elf {prog}", "PASS", "--elf resolving everything", ["needed libraries resolve"])
    resolved = {e["name"]: e for e in checks_by_name(r)[f"elf {prog}"]["data"]["resolved"]}
    check(resolved.get("libalpha.so", {}).get("via") == "RUNPATH", "libalpha.so found through RUNPATH", str(resolved))
    check(resolved.get("libalpha.so", {}).get("path") == os.path.join(p["app/lib"], "libalpha.so"),
          "$ORIGIN/../lib expanded from the program's directory", str(resolved))
    check(resolved.get("libbeta.so", {}).get("path") == os.path.join(p["ld64"], "libbeta.so"),
          "libbeta.so resolved past the 32-bit decoy", str(resolved))
    check("libc.so.6" in resolved, "libc.so.6 resolved (cache or default dirs)", str(resolved))
    # Only the decoy on the path: the 64-bit program cannot use it.
    r = envcheck("--elf", prog, "--json", env={"LD_LIBRARY_PATH": p["ld32"]})
    expect(r, 1, "--elf with only the 32-bit decoy")
    row(r, f"elf {prog}: libbeta.so", "FAIL", "32-bit decoy", ["ELF32 i386, not ELF64 x86-64"])
    # A truncated object is refused cleanly, naming it.
    cut = os.path.join(tmp, "truncated.so")
    with open(os.path.join(p["app/lib"], "libalpha.so"), "rb") as f, open(cut, "wb") as g:
        g.write(f.read(200))
    r = envcheck("--elf", cut, "--json")
    expect(r, 1, "--elf on a truncated file")
    row(r, f"elf {cut}", "FAIL", "truncated", [cut, "truncated"])
    text = os.path.join(tmp, "notes.txt")
    with open(text, "w") as f:
        f.write("not an object\n")
    r = envcheck("--elf", text, "--elf", os.path.join(tmp, "absent"), "--json")
    expect(r, 1, "--elf on a text file and an absent one")
    row(r, f"elf {text}", "FAIL", "text file", ["not an ELF file"])
    row(r, f"elf {os.path.join(tmp, 'absent')}", "FAIL", "absent file", ["cannot open"])


def test_elf_fifo(tmp):
    # Issue 11 item 13: a FIFO is never opened for reading (with no writer the open
    # would wait forever); it is reported as not a regular file, directly and
    # through a profile. The harness's 60 s timeout fails the test if it hangs.
    fifo = os.path.join(tmp, "libfifo.so")
    os.mkfifo(fifo)
    r = envcheck("--elf", fifo, "--json")
    expect(r, 1, "--elf on a FIFO")
    row(r, f"elf {fifo}", "FAIL", "--elf FIFO", [fifo, "not a regular file (a FIFO)"])
    profile = write(os.path.join(tmp, "fifo.yaml"), f"elf:\n  - {fifo}\n")
    r = envcheck("--profile", profile, "--json")
    expect(r, 1, "profile naming a FIFO")
    row(r, f"elf {fifo}", "FAIL", "profile elf FIFO", ["not a regular file (a FIFO)"])
    # A FIFO where the loader looks is passed over like any non-library.
    r = envcheck("--lib", "libfifo.so", "--json", env={"LD_LIBRARY_PATH": tmp})
    expect(r, 1, "--lib with a FIFO of that name on LD_LIBRARY_PATH")
    row(r, "lib libfifo.so", "FAIL", "--lib FIFO", ["would not find"])

def test_lib(tmp):
    p = build_elf_tree(tmp)
    r = envcheck("--lib", "libc.so.6", "--json")
    expect(r, 0, "--lib libc.so.6")
    row(r, "lib libc.so.6", "PASS", "--lib libc.so.6", ["ELF64"])
    r = envcheck("--lib", "libbeta.so", "--json", env={"LD_LIBRARY_PATH": p["ld32"] + ":" + p["ld64"]})
    expect(r, 0, "--lib past a decoy")
    row(r, "lib libbeta.so", "PASS", "--lib past a decoy",
        [os.path.join(p["ld64"], "libbeta.so"), "LD_LIBRARY_PATH", "passed over " + os.path.join(p["ld32"], "libbeta.so")])
    r = envcheck("--lib", "libbeta.so", "--lib", "libprovkit-never-there.so.9", "--json", env={"LD_LIBRARY_PATH": p["ld32"]})
    expect(r, 1, "--lib only a decoy / absent")
    row(r, "lib libbeta.so", "FAIL", "--lib only a decoy", ["ELF32 i386"])
    row(r, "lib libprovkit-never-there.so.9", "FAIL", "--lib absent", ["would not find", "LD_LIBRARY_PATH"])


if __name__ == "__main__":
    main()
