#!/usr/bin/env python3
"""envcheck --elf beside ld.so itself (issue 42): each loader scenario is built here with gcc (and patchelf),
then `/lib64/ld-linux-x86-64.so.2 --list` and the program's own start are the judge. Where ld.so loads, envcheck
must PASS and name the same files; where it stops, envcheck must FAIL naming the file ld.so stopped at and
ld.so's reason.

Usage: test_loader_parity.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""

import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main  # noqa: E402
from envcheck_fixtures import cc, envcheck  # noqa: E402

LDSO = "/lib64/ld-linux-x86-64.so.2"


def ldso(obj, env=None, cwd=None):
    """(loaded, {real paths of what ld.so maps}, (path, why) where it stopped)."""
    e = dict(os.environ)
    e.pop("LD_LIBRARY_PATH", None)
    e.update(env or {})
    p = subprocess.run([LDSO, "--list", obj], env=e, cwd=cwd, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        m = re.search(r"error while loading shared libraries: ([^:]+): (.+)$", p.stderr.strip())
        return False, set(), (m.group(1), m.group(2)) if m else (None, p.stderr)
    found = set()
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(?:\S+ => )?(\S+) \(0x", line)
        if m and "vdso" not in m.group(1):
            found.add(os.path.realpath(os.path.join(cwd or os.getcwd(), m.group(1))))
    return True, found, None


def starts(prog, env=None, cwd=None):
    e = dict(os.environ)
    e.pop("LD_LIBRARY_PATH", None)
    e.update(env or {})
    return subprocess.run([prog], env=e, cwd=cwd, capture_output=True, timeout=30).returncode == 0


def envcheck_elf(obj, env=None, cwd=None):
    e = {"LD_LIBRARY_PATH": ""}
    e.update(env or {})
    r = envcheck("--elf", obj, "--json", env=e, cwd=cwd)
    rows = r.json()["checks"]
    resolved = set()
    for row in rows:
        for x in row.get("data", {}).get("resolved", []):
            resolved.add(os.path.realpath(os.path.join(cwd or os.getcwd(), x["path"])))
    return r, rows, resolved


def agree(obj, env=None, cwd=None, judge_path=None, what=""):
    """envcheck on `obj` says what ld.so says on `judge_path` (default: obj itself)."""
    loaded, maps, stop = ldso(judge_path or obj, env, cwd)
    r, rows, resolved = envcheck_elf(obj, env, cwd)
    if loaded:
        maps.discard(os.path.realpath(judge_path or obj))
        check(r.rc == 0, f"{what}: ld.so loads {obj}, envcheck exit {r.rc}", r.out)
        check(resolved == maps, f"{what}: envcheck resolves other files than ld.so maps",
              f"ld.so only: {sorted(maps - resolved)}\nenvcheck only: {sorted(resolved - maps)}")
    else:
        path, why = stop
        check(r.rc == 1, f"{what}: ld.so stops ({stop}), envcheck exit {r.rc}", r.out)
        reasons = " ".join(row["reason"] for row in rows if row["status"] == "FAIL")
        if why.startswith("cannot open shared object file"):  # found nowhere: envcheck names it
            check(f"{path}, needed by" in reasons and "will not resolve" in reasons,
                  f"{what}: envcheck does not say {path} is missing", reasons)
        else:
            check(path in reasons and why in reasons,
                  f"{what}: envcheck does not name where ld.so stops and why: {stop}", reasons)
    return loaded


def sources(tmp):
    src = os.path.join(tmp, "src")
    os.makedirs(src, exist_ok=True)
    for name, text in {"beta.c": "int beta(void) { return 2; }\n",
                       "prog.c": "int beta(void);\nint main(void) { return beta() == 2 ? 0 : 1; }\n"}.items():
        with open(os.path.join(src, name), "w") as f:
            f.write(text)
    good = os.path.join(tmp, "good")
    os.makedirs(good, exist_ok=True)
    cc("-shared", "-fPIC", "-o", os.path.join(good, "libbeta.so"), os.path.join(src, "beta.c"))
    return src, good


def patchelf(*args):
    subprocess.run(["patchelf", *args], check=True, capture_output=True, timeout=60)


def test_needed_with_origin(tmp):
    # python-build-standalone's shape: DT_NEEDED "$ORIGIN/../lib/libpython3.X.so.1.0".
    src, good = sources(tmp)
    os.makedirs(os.path.join(tmp, "app", "bin"))
    shutil.copytree(good, os.path.join(tmp, "app", "lib"))
    for form in ("$ORIGIN", "${ORIGIN}"):
        prog = os.path.join(tmp, "app", "bin", "prog-" + form.strip("${}").lower() + str(len(form)))
        cc("-o", prog, os.path.join(src, "prog.c"), "-L" + good, "-lbeta")
        patchelf("--replace-needed", "libbeta.so", form + "/../lib/libbeta.so", prog)
        check(starts(prog), f"{form}: the program starts")
        agree(prog, what=f"NEEDED {form}/../lib/libbeta.so")


def test_platform_and_lib_in_rpath_and_needed(tmp):
    # $PLATFORM is ld.so's platform name (AT_PLATFORM, or glibc's own: "haswell" on some Intel CPUs); $LIB is
    # lib/x86_64-linux-gnu on Debian. Both in RPATH, RUNPATH and a NEEDED path, braced and not.
    src, good = sources(tmp)
    help_text = subprocess.run([LDSO, "--help"], capture_output=True, text=True, timeout=30).stdout
    platform = re.search(r"^  (\S+) \(AT_PLATFORM", help_text, re.M).group(1)
    app = os.path.join(tmp, "app")
    for sub in (os.path.join("p", platform), os.path.join("l", "lib", "x86_64-linux-gnu")):
        shutil.copytree(good, os.path.join(app, sub))
    os.makedirs(os.path.join(app, "bin"))
    cases = [("rpath", ["-Wl,--disable-new-dtags,-rpath,$ORIGIN/../p/$PLATFORM"]),
             ("runpath", ["-Wl,--enable-new-dtags,-rpath,${ORIGIN}/../p/${PLATFORM}"]),
             ("lib", ["-Wl,--enable-new-dtags,-rpath,$ORIGIN/../l/$LIB"]),
             ("needed", [])]
    for name, flags in cases:
        prog = os.path.join(app, "bin", name)
        cc("-o", prog, os.path.join(src, "prog.c"), "-L" + good, "-lbeta", *flags)
        if name == "needed":
            patchelf("--replace-needed", "libbeta.so", "$ORIGIN/../p/$PLATFORM/libbeta.so", prog)
        check(starts(prog), f"{name}: the program starts")
        agree(prog, what=f"{name} with $PLATFORM={platform} / $LIB")


# Something named like the library in the first RPATH directory: ld.so passes over another class or machine and
# an unreadable file, and stops at anything else.
def bad_candidates(src, good):
    beta = os.path.join(good, "libbeta.so")
    with open(beta, "rb") as f:
        elf = f.read()
    aarch64 = bytearray(elf)
    aarch64[18:20] = (183).to_bytes(2, "little")
    return {"git-lfs pointer": b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 15016\n",
            "truncated copy": elf[:200], "empty file": b"", "short text": b"not a library\n",
            "another machine": bytes(aarch64), "big-endian flag": elf[:5] + b"\x02" + elf[6:],
            "object file": None, "directory": None, "32-bit library": None}


def test_candidate_ldso_stops_at(tmp):
    src, good = sources(tmp)
    bad = os.path.join(tmp, "bad")
    prog = os.path.join(tmp, "prog")
    cc("-o", prog, os.path.join(src, "prog.c"), "-L" + good, "-lbeta", f"-Wl,--disable-new-dtags,-rpath,{bad}:{good}")
    verdicts = {}
    for kind, data in bad_candidates(src, good).items():
        shutil.rmtree(bad, ignore_errors=True)
        os.makedirs(bad)
        target = os.path.join(bad, "libbeta.so")
        if kind == "object file":
            cc("-c", "-fPIC", "-o", target, os.path.join(src, "beta.c"))
        elif kind == "directory":
            os.makedirs(target)
        elif kind == "32-bit library":
            subprocess.run(["clang", "--target=i386-linux-gnu", "-nostdlib", "-shared", "-fPIC", "-o", target,
                            os.path.join(src, "beta.c")], check=True, capture_output=True, timeout=60)
        else:
            with open(target, "wb") as f:
                f.write(data)
        loaded = agree(prog, what=kind)
        check(loaded == starts(prog), f"{kind}: ld.so --list and the program's start agree")
        verdicts[kind] = loaded
    # Both outcomes were seen: the table is not one-sided.
    check(verdicts["32-bit library"] and verdicts["another machine"] and not verdicts["git-lfs pointer"]
          and not verdicts["truncated copy"], "ld.so passes over other targets and stops at the rest", verdicts)


def test_symlinked_program_origin(tmp):
    # /usr/bin/java's shape: a link to a program whose RUNPATH is $ORIGIN/../lib. The kernel runs the real path,
    # so $ORIGIN is its folder (ld.so --list on the link itself would take the link's folder: it is not the judge).
    src, good = sources(tmp)
    real = os.path.join(tmp, "jdk", "bin")
    os.makedirs(real)
    shutil.copytree(good, os.path.join(tmp, "jdk", "lib"))
    prog = os.path.join(real, "java")
    cc("-o", prog, os.path.join(src, "prog.c"), "-L" + good, "-lbeta", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib")
    os.makedirs(os.path.join(tmp, "usr", "bin"))
    link = os.path.join(tmp, "usr", "bin", "java")
    os.symlink(os.path.relpath(prog, os.path.dirname(link)), link)
    check(starts(link), "the program starts through its link")
    check(agree(link, judge_path=prog, what="symlinked program"), "ld.so loads the real program")


def test_empty_search_path_elements(tmp):
    src, good = sources(tmp)
    work = os.path.join(tmp, "cwd")
    shutil.copytree(good, work)
    prog = os.path.join(tmp, "prog")
    cc("-o", prog, os.path.join(src, "prog.c"), "-L" + good, "-lbeta")
    # export LD_LIBRARY_PATH=/x:$LD_LIBRARY_PATH with it unset: "/x:" -- the empty element is the current directory.
    for value in ("/nonexistent:", ":/nonexistent", "/nonexistent::/nonexistent2"):
        env = {"LD_LIBRARY_PATH": value}
        check(starts(prog, env, cwd=work), f"LD_LIBRARY_PATH={value!r}: the program starts from {work}")
        agree(prog, env, cwd=work, what=f"LD_LIBRARY_PATH={value!r}")
    # An empty LD_LIBRARY_PATH is no directory at all.
    check(not starts(prog, {"LD_LIBRARY_PATH": ""}, cwd=work), "an empty LD_LIBRARY_PATH adds nothing")
    agree(prog, {"LD_LIBRARY_PATH": ""}, cwd=work, what="LD_LIBRARY_PATH=''")
    # The same in RPATH and RUNPATH.
    for force in ([], ["--force-rpath"]):
        patched = os.path.join(tmp, "prog-rpath" if force else "prog-runpath")
        shutil.copy(prog, patched)
        patchelf(*force, "--set-rpath", "/nonexistent:", patched)
        check(starts(patched, cwd=work), f"{patched}: starts from {work}")
        agree(patched, cwd=work, what="empty " + ("RPATH" if force else "RUNPATH") + " element")


def test_hwcaps_subdirectories(tmp):
    # ld.so tries each search directory's glibc-hwcaps/<level> subdirectories (and, before glibc 2.37, the legacy
    # tls/ and platform ones) before the directory itself; `ld.so --help` lists those it searches on this CPU.
    src, good = sources(tmp)
    lib = os.path.join(tmp, "lib")
    prog = os.path.join(tmp, "prog")
    cc("-o", prog, os.path.join(src, "prog.c"), "-L" + good, "-lbeta", f"-Wl,--enable-new-dtags,-rpath,{lib}")
    help_text = subprocess.run([LDSO, "--help"], capture_output=True, text=True, timeout=30).stdout
    searched = re.findall(r"^  (x86-64-v\d) \(supported, searched\)", help_text, re.M)
    legacy = re.findall(r"^  (\S+) \((?:AT_PLATFORM; )?supported, searched\)", help_text.split("Legacy")[-1], re.M)
    subdirs = [os.path.join("glibc-hwcaps", level) for level in ("x86-64-v4", "x86-64-v3", "x86-64-v2")]
    subdirs += sorted(set(legacy) - {"tls"}) + ["tls"]
    lfs = b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"1" * 64 + b"\nsize 15016\n"
    outcomes = []
    for sub in subdirs:
        for content in ("library", "git-lfs pointer"):
            shutil.rmtree(lib, ignore_errors=True)
            shutil.copytree(good, lib)  # the plain copy in the directory itself
            os.makedirs(os.path.join(lib, sub), exist_ok=True)
            target = os.path.join(lib, sub, "libbeta.so")
            if content == "library":
                shutil.copy(os.path.join(good, "libbeta.so"), target)
            else:
                with open(target, "wb") as f:
                    f.write(lfs)
            loaded = agree(prog, what=f"{content} in {sub}")
            check(loaded == starts(prog), f"{content} in {sub}: ld.so --list and the start agree")
            r, _, resolved = envcheck_elf(prog)
            outcomes.append((sub, content, loaded, os.path.realpath(target) in resolved))
    # On any x86-64 CPU ld.so searches x86-64-v2 (or better) or a legacy directory: the table saw it happen.
    check(searched or legacy, "ld.so --help lists searched subdirectories", help_text)
    check(any(used for _, _, _, used in outcomes) and any(not loaded for _, _, loaded, _ in outcomes),
          "a subdirectory's library was used, and a pointer there stopped the load", outcomes)


def test_python_build_standalone_like(tmp):
    # An interpreter laid out as python-build-standalone's: bin/python3.11 with DT_NEEDED
    # "$ORIGIN/../lib/libpython3.11.so.1.0" (made here from Debian's python3.11 with patchelf), lib/ with
    # libpython, and the extension modules under lib/python3.11/lib-dynload. Every ELF under it is judged.
    root = os.path.join(tmp, "python")
    os.makedirs(os.path.join(root, "bin"))
    os.makedirs(os.path.join(root, "lib"))
    python = os.path.join(root, "bin", "python3.11")
    shutil.copy("/usr/bin/python3.11", python)
    shutil.copy("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", os.path.join(root, "lib"))
    patchelf("--add-needed", "$ORIGIN/../lib/libpython3.11.so.1.0", python)
    shutil.copytree("/usr/lib/python3.11/lib-dynload", os.path.join(root, "lib", "python3.11", "lib-dynload"))
    check(subprocess.run([python, "-c", "import ssl, sqlite3"], capture_output=True, timeout=60).returncode == 0,
          "the interpreter runs")
    objects = [python, os.path.join(root, "lib", "libpython3.11.so.1.0")]
    objects += sorted(glob.glob(os.path.join(root, "lib", "python3.11", "lib-dynload", "*.so")))
    check(len(objects) > 20, "every ELF of the interpreter", objects)
    for obj in objects:
        agree(obj, what=os.path.relpath(obj, root))


if __name__ == "__main__":
    main()
