#!/usr/bin/env python3
"""Issue 20, the file system, for envbuild: a lock's wheel path or a --find-links entry that is a FIFO or a
device never blocks or reads forever (util::open_regular, the boundary every wheel read goes through), and an
env dir's RECORD that is a FIFO is no RECORD."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main, tempdir  # noqa: E402
from envbuild_fixtures import ENVBUILD, PYTHON, sha256, write_lock  # noqa: E402
from make_wheels import pure_wheel  # noqa: E402

tmp = tempdir("envbuild-fs-")
cache = os.path.join(tmp, "cache")
wheels = os.path.join(tmp, "wheels")
os.makedirs(wheels)
DEMO = pure_wheel(wheels, "1.0")
NAME = os.path.basename(DEMO)


def create(env, *args, timeout=60):
    """envbuild create, killed (and failed) if it does not return within `timeout`."""
    try:
        return subprocess.run([ENVBUILD, "--cache-dir", cache, "create", env, "--python", PYTHON, *args],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        check(False, f"envbuild create {args} did not return within {timeout} s")


def pylock_with_path(name, path):
    lock = os.path.join(tmp, f"pylock.{name}.toml")
    with open(lock, "w") as f:
        f.write('lock-version = "1.0"\ncreated-by = "test"\n\n[[packages]]\nname = "demopure"\nversion = "1.0"\n'
                f'wheels = [{{ name = "{NAME}", path = "{path}", hashes = {{ sha256 = "{sha256(DEMO)}" }} }}]\n')
    return lock


def test_lock_wheel_path_dev_zero_is_refused_at_once():
    p = create(os.path.join(tmp, "env-zero"), "--lock", pylock_with_path("zero", "/dev/zero"))
    check(p.returncode != 0, f"/dev/zero is no wheel: {p.stdout}{p.stderr}")
    check("not a regular file" in p.stderr, f"the sentence should say what /dev/zero is: {p.stderr}")


def test_lock_wheel_path_fifo_is_refused_at_once():
    fifo = os.path.join(tmp, "fifo-" + NAME)
    os.mkfifo(fifo)
    p = create(os.path.join(tmp, "env-fifo"), "--lock", pylock_with_path("fifo", fifo))
    check(p.returncode != 0, f"a FIFO is no wheel: {p.stdout}{p.stderr}")
    check("not a regular file" in p.stderr, f"the sentence should say what the FIFO is: {p.stderr}")


def test_fifo_named_like_the_wheel_in_find_links_is_skipped():
    links = os.path.join(tmp, "links")
    os.makedirs(links)
    os.mkfifo(os.path.join(links, NAME))  # the FIFO first, the real wheel in a second directory
    lock = write_lock(os.path.join(tmp, "fl.txt"), [DEMO])
    p = create(os.path.join(tmp, "env-fl"), "--lock", lock, "-f", links, "-f", wheels)
    check(p.returncode == 0, f"the FIFO should be passed over for the real wheel: {p.stdout}{p.stderr}")


if __name__ == "__main__":
    main()
