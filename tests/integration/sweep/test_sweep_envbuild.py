#!/usr/bin/env python3
"""The attacker sweep (sweep_table.py), envbuild's rows: an environment (RECORD, dist-info, pyvenv.cfg, bin/,
site-packages), the wheel cache (entries, files.json, the interpreter answers), --find-links, the lock and a
pylock's wheel path, and the managed interpreter directory (--python-dir). Each cell a fresh copy, one plant,
the real binary, plain and --json where the subcommand has it.

Run one: python3 test_sweep_envbuild.py test_environment_rows   (ctest runs each alone)
"""

import glob
import hashlib
import io
import os
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "envbuild"))
from common import check, main  # noqa: E402
from envbuild_fixtures import ENVBUILD, PYTHON, sha256, write_lock  # noqa: E402
from make_wheels import pure_wheel, write_wheel  # noqa: E402
from sweep_table import (CONCURRENT_PLANTS, NAME_PLANTS, ODD_NAME, Row, held, name_plant, sweep,  # noqa: E402
                         together)

READ_FILE_MAX = 256 << 20  # util::kReadFileMax: a lock
RECORD_MAX = 64 << 20  # installed.cpp, env_create.cpp: kMaxRecordBytes
DEMO = "demopure-1.0-py3-none-any.whl"
XY = "%d.%d" % sys.version_info[:2]


def base_env(base):
    """wheels/ (demopure 1.0 and 2.0), lock1.txt, lock2.txt, cache/ and env/ (demopure 1.0, copied)."""
    wheels = os.path.join(base, "wheels")
    os.makedirs(wheels)
    w1, w2 = pure_wheel(wheels, "1.0"), pure_wheel(wheels, "2.0")
    write_lock(os.path.join(base, "lock1.txt"), [w1])
    write_lock(os.path.join(base, "lock2.txt"), [w2])
    p = subprocess.run([ENVBUILD, "--cache-dir", os.path.join(base, "cache"), "create", os.path.join(base, "env"),
                        "--python", PYTHON, "--lock", os.path.join(base, "lock1.txt"), "-f", wheels,
                        "--link-mode", "copy"], capture_output=True, text=True)
    check(p.returncode == 0, "the base environment", p.stdout + p.stderr)


def site(cell, *parts):
    found = glob.glob(cell.path("env", "lib", "python3.*", "site-packages"))
    return os.path.join(found[0], *parts)


def verify(cell):
    return {"argv": [ENVBUILD, "verify", cell.path("env")]}


def create(cell, env="env", lock="lock2.txt", *extra, find_links=None):
    return {"argv": [ENVBUILD, "--cache-dir", cell.path("cache"), "create", cell.path(env), "--python", PYTHON,
                     "--lock", lock if os.path.isabs(lock) else cell.path(lock),
                     *sum([["-f", f] for f in (find_links or [cell.path("wheels")])], []), "--link-mode", "copy",
                     *extra]}


NAMES = "names here are envbuild's own (a dist-info, a key), not the outside's"
DIR = "a directory position"


def environment_rows():
    def record_row(cell, plant):
        odd = cell.plant(site(cell, "demopure-1.0.dist-info", "RECORD"), plant, RECORD_MAX + 1)
        if plant == "odd-name":  # a file RECORD lists under a name with a newline, ESC and non-UTF-8 bytes
            with open(os.fsencode(site(cell, "demopure-1.0.dist-info", "RECORD")), "ab") as f:
                f.write(b'"demopure-1.0.dist-info/' + ODD_NAME + b'",,\n')
            del odd
        return verify(cell)

    def dist_info_row(cell, plant):
        cell.plant(site(cell, "demopure-1.0.dist-info"), plant)
        return verify(cell)

    def pyvenv_row(cell, plant):
        cell.plant(cell.path("env", "pyvenv.cfg"), plant, (1 << 20) + 1)  # venv.cpp: 1 MiB
        return verify(cell)

    def script_row(cell, plant):
        cell.plant(cell.path("env", "bin", "demopure"), plant, 1 << 20)
        return create(cell)

    def package_row(cell, plant):
        cell.plant(site(cell, "demopure"), plant, 1 << 20)
        return create(cell)

    def site_row(cell, plant):
        where = site(cell)
        cell.plant(where, plant, 1 << 20)
        return create(cell)

    def odd_file_row(cell, plant):
        cell.plant(site(cell, "demopure", "data", "table.txt"), plant, 1 << 20)
        return verify(cell)

    return [
        Row("env <dist-info>/RECORD (verify)", record_row, base=base_env, json_args=["--json"]),
        Row("env <dist-info>/ (verify)", dist_info_row, base=base_env,
            skips={"oversized": DIR, "odd-name": NAMES}),
        Row("env pyvenv.cfg (verify)", pyvenv_row, base=base_env, skips={"odd-name": NAMES}),
        Row("env bin/<script> (create, upgrade)", script_row, base=base_env,
            skips={"odd-name": "script names come from the wheel's entry points, checked by the path rule",
                   "oversized": "replaced, never read"}),
        Row("env site-packages/<package>/ (create, upgrade)", package_row, base=base_env,
            skips={"odd-name": "the wheel's entry names: the path rule (hostile_output)"}),
        Row("env lib/pythonX.Y/site-packages/ (create, upgrade)", site_row, base=base_env,
            skips={"odd-name": "envbuild's own name"}),
        Row("env a file RECORD lists (verify)", odd_file_row, base=base_env,
            skips={"oversized": "hashed as a stream, no bound needed",
                   "odd-name": "covered by the RECORD row's odd-name cell"}),
    ]


def test_environment_rows(tmp):
    sweep(environment_rows(), tmp)


def interpreter_key():
    """query_interpreter's cache key (interpreter.cpp): the resolved path, its mtime and size."""
    resolved = os.path.realpath(PYTHON)
    st = os.stat(resolved)
    text = f"{resolved}\n{st.st_mtime_ns // 10**9}.{st.st_mtime_ns % 10**9}\n{st.st_size}\nv1"
    return hashlib.sha256(text.encode()).hexdigest()


def tiny_python_archive(path):
    """A python-build-standalone-shaped .tar.gz whose python3 is a script (answers nothing useful)."""
    data = b"#!/bin/sh\nexit 3\n"
    with tarfile.open(path, "w:gz") as t:
        info = tarfile.TarInfo("python/bin/python3")
        info.size, info.mode = len(data), 0o755
        t.addfile(info, io.BytesIO(data))
    return path


def input_rows():
    entry_sha = None

    def entry(cell):
        nonlocal entry_sha
        entry_sha = entry_sha or sha256(cell.path("wheels", DEMO))
        return cell.path("cache", "unpacked", entry_sha)

    def files_json_row(cell, plant):
        cell.plant(os.path.join(entry(cell), "files.json"), plant, (64 << 20) + 1)  # wheel_cache.cpp
        return create(cell, "new", "lock1.txt")

    def entry_row(cell, plant):
        cell.plant(entry(cell), plant, 1 << 20)
        return create(cell, "new", "lock1.txt")

    def interp_row(cell, plant):
        cell.plant(cell.path("cache", "interpreters", interpreter_key() + ".json"), plant, (1 << 20) + 1)
        return create(cell, "new", "lock1.txt")

    def find_links_row(cell, plant):
        links = cell.path("links")
        os.makedirs(links)
        if plant == "odd-name":
            with open(os.path.join(os.fsencode(links), ODD_NAME + b"-1.0-py3-none-any.whl"), "wb") as f:
                f.write(b"not a wheel")
        else:
            cell.plant(os.path.join(links, DEMO), plant, 1 << 20)
        return create(cell, "new", "lock1.txt", find_links=[links, cell.path("wheels")])

    def lock_row(cell, plant):
        lock = cell.path("lock.txt")
        if plant == "odd-name":
            lock = cell.odd_path(cell.root)
        else:
            cell.plant(lock, plant, READ_FILE_MAX + 1)
        return create(cell, "new", lock)

    def pylock_row(cell, plant):
        wheel = cell.path("planted", DEMO)
        if plant == "odd-name":
            wheel = cell.odd_path(cell.path("planted"))
        else:
            cell.plant(wheel, plant)
        lock = cell.path("pylock.toml")
        with open(lock, "wb") as f:
            f.write(b'lock-version = "1.0"\ncreated-by = "sweep"\n\n[[packages]]\nname = "demopure"\n'
                    b'version = "1.0"\nwheels = [{ name = "' + DEMO.encode() + b'", path = "' +
                    os.fsencode(wheel).replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"\x1b", b"\\u001b")
                    + b'", hashes = { sha256 = "' + sha256(cell.path("wheels", DEMO)).encode() + b'" } }]\n')
        return create(cell, "new", lock)

    def pythons_tmp_row(cell, plant):
        pythons = cell.path("pythons")
        cell.plant(os.path.join(pythons, ".tmp"), plant, 1 << 20)
        archive = tiny_python_archive(cell.path("tiny.tar.gz"))
        return {"argv": [ENVBUILD, "--python-dir", pythons, "python", "install", archive, "--sha256",
                         sha256(archive)]}

    def pythons_find_row(cell, plant):
        pythons = cell.path("pythons")
        cell.plant(os.path.join(pythons, f"cpython-{XY}.99-x86_64-0123abcd"), plant, 1 << 20)
        if plant == "odd-name":
            os.makedirs(os.path.join(os.fsencode(pythons), b"cpython-" + ODD_NAME))
        return {"argv": [ENVBUILD, "--python-dir", pythons, "python", "find", f"{XY}.99"]}

    return [
        Row("wheel cache unpacked/<sha>/files.json", files_json_row, base=base_env, json_args=["--json"],
            skips={"odd-name": NAMES}),
        Row("wheel cache unpacked/<sha>/", entry_row, base=base_env, skips={"odd-name": NAMES, "oversized": DIR}),
        Row("wheel cache interpreters/<key>.json", interp_row, base=base_env, skips={"odd-name": NAMES}),
        Row("--find-links DIR/<wheel>", find_links_row, base=base_env,
            skips={"oversized": "hashed as a stream; a wrong hash is passed over"}),
        Row("--lock FILE", lock_row, base=base_env),
        Row("pylock wheels[].path", pylock_row, base=base_env,
            skips={"oversized": "hashed as a stream against the lock's sha256"}),
        Row("--python-dir DIR/.tmp (python install)", pythons_tmp_row, json_args=None,
            skips={"odd-name": "envbuild's own name"}),
        Row("--python-dir DIR/cpython-* (python find)", pythons_find_row, json_args=None,
            skips={"oversized": DIR}),
    ]


def test_input_rows(tmp):
    sweep(input_rows(), tmp)


def set_header(path, key, value):
    """Sets the header `key` of a METADATA or WHEEL file to `value` (bytes allowed: an escape sequence)."""
    lines = [x for x in open(path, "rb").read().split(b"\n") if x and not x.startswith(key.encode() + b":")]
    lines.insert(1, key.encode() + b": " + (value if isinstance(value, bytes) else value.encode()))
    open(path, "wb").write(b"\n".join(lines) + b"\n")


def metadata_name_rows():
    """Names envbuild makes from what an environment's or a wheel's metadata says (issue 41, item 1)."""

    def capture_row(file, key, template, prefix_components):
        def setup(cell, plant):
            house = cell.path("house")
            value = template.format(name_plant(cell, plant, house, prefix_components))
            set_header(site(cell, "demopure-1.0.dist-info", file), key, value)
            return {"argv": [ENVBUILD, "capture", cell.path("env"), "--wheelhouse", house, "--lock",
                             cell.path("captured.txt")]}
        return setup

    def launcher_row(cell, plant):
        links = cell.path("ep-wheels")
        os.makedirs(links)
        name = name_plant(cell, plant, cell.path("new", "bin"), 0)
        w = write_wheel(links, "epname-1.0-py3-none-any.whl", "epname", "1.0", {"epname/__init__.py": b"M = 1\n"},
                        entry_points=f"[console_scripts]\n{name} = epname:main\n")
        write_lock(cell.path("ep.txt"), [w])
        return create(cell, "new", "ep.txt", find_links=[links])

    return [
        Row("capture: METADATA Name, the wheel's name", capture_row("METADATA", "Name", "{}", 0), base=base_env,
            json_args=None),
        Row("capture: METADATA Version, the wheel's name", capture_row("METADATA", "Version", "{}", 1),
            base=base_env, json_args=None),
        Row("capture: WHEEL Tag, the wheel's name", capture_row("WHEEL", "Tag", "py3-none-{}", 1), base=base_env,
            json_args=None),
        Row("create: entry_points.txt console_scripts name, a launcher in bin/", launcher_row, base=base_env),
    ]


def test_metadata_name_rows(tmp):
    sweep(metadata_name_rows(), tmp, NAME_PLANTS)


def concurrent_rows():
    """Two runs on one environment (issue 41, item 9): each cell is the row's run while another holds the
    environment's lock (ENV/.lock) or runs beside it; the row's run waits --wait 1 at most."""

    def other_run(cell, plant, argv):
        lock_file = cell.path("env", ".lock")
        if plant == "create-holds":
            return {"argv": held(lock_file, "exclusive", argv)}
        if plant == "verify-holds":
            return {"argv": held(lock_file, "shared", argv)}
        return {"argv": together(argv, create(cell, "env", "lock1.txt")["argv"])}

    def create_row(cell, plant):
        argv = create(cell, "env", "lock2.txt")["argv"]
        return other_run(cell, plant, argv + ([] if plant == "two-at-once" else ["--wait", "1"]))

    def verify_row(cell, plant):
        return other_run(cell, plant, [*verify(cell)["argv"], "--wait", "1" if plant != "two-at-once" else "10"])

    return [
        Row("env DIR, create (another run on it)", create_row, base=base_env),
        Row("env DIR, verify (another run on it)", verify_row, base=base_env),
    ]


def test_concurrent_run_rows(tmp):
    sweep(concurrent_rows(), tmp, CONCURRENT_PLANTS)


if __name__ == "__main__":
    main()
