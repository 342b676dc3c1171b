#!/usr/bin/env python3
"""envcheck as a deploy gate (issue 23): --print FIELD for scripts without jq, --roce on a port that is
not ACTIVE, --elf on a directory, --port-free HOST:PORT naming the process that holds the port. The real
binary, real sockets, real shared objects built here, a sysfs tree for the RDMA devices.

Usage: test_gates.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main  # noqa: E402
from test_envcheck import checks_by_name, envcheck, expect, fake_gpu, row  # noqa: E402
from test_links import make_port, make_rdma_tree, write  # noqa: E402
from test_envcheck import make_kfd_tree  # noqa: E402


def test_print_gives_the_value_and_keeps_the_verdict(tmp):
    sysfs = os.path.join(tmp, "sys")
    make_rdma_tree(sysfs)
    env = {"ENVCHECK_SYSFS_ROOT": sysfs}
    r = envcheck("--roce", "mlx5_1", "--print", "nccl_ib_gid_index", env=env)
    expect(r, 0, "--print on a passing check")
    check(r.out == "5\n", "--print prints the bare value", repr(r.out))
    # mlx5_2 has no GID for this node: the index is null, the check fails, nothing is printed, exit 1.
    r = envcheck("--roce", "mlx5_2", "--print", "nccl_ib_gid_index", env=env)
    expect(r, 1, "--print on a failing check")
    check(r.out == "", "--print prints no null", repr(r.out))
    # A field no check has: said on stderr, exit 2.
    r = envcheck("--roce", "mlx5_1", "--print", "no_such_field", env=env)
    expect(r, 2, "--print of an unknown field")
    check("no_such_field" in r.err, "--print names the field", r.err)
    # The documented one-liner under set -euo pipefail stops instead of exporting "null".
    sh = subprocess.run(["bash", "-c", "set -euo pipefail; idx=$(\"$EC\" --roce mlx5_2 --print nccl_ib_gid_index); "
                         "export NCCL_IB_GID_INDEX=$idx; echo reached"],
                        env=dict(os.environ, EC=BIN, ENVCHECK_SYSFS_ROOT=sysfs), capture_output=True, text=True)
    check(sh.returncode == 1 and "reached" not in sh.stdout, "the gate one-liner stops", sh.stdout + sh.stderr)


def test_print_nccl_env_gives_lines_to_export(tmp):
    """Issue 43 item 8: --roce said the GID index only, and NCCL also needs the HCA and the interface. The
    row now names them, and `--print nccl_env` gives the three KEY=VALUE lines (NCCL's "=" before a name asks
    for that name exactly, not every name it prefixes), which a script exports under set -e or systemd reads
    as an EnvironmentFile; a port that is DOWN gives no line and exit 1."""
    sysfs = os.path.join(tmp, "sys")
    make_rdma_tree(sysfs)
    make_port(sysfs, "mlx5_7", 1, "Ethernet", {2: ("::ffff:127.0.0.1", "RoCE v2", "lo")})
    write(os.path.join(sysfs, "class/infiniband/mlx5_7/ports/1/state"), "1: DOWN\n")
    env = {"ENVCHECK_SYSFS_ROOT": sysfs}
    r = envcheck("--roce", "mlx5_1", env=env)
    expect(r, 0, "--roce mlx5_1")
    for said in ("NCCL_IB_HCA==mlx5_1:1", "NCCL_IB_GID_INDEX=5", "NCCL_SOCKET_IFNAME==lo"):
        check(said in r.out, f"the row names {said}", r.out)
    lines = ["NCCL_IB_HCA==mlx5_1:1", "NCCL_IB_GID_INDEX=5", "NCCL_SOCKET_IFNAME==lo"]
    p = envcheck("--roce", "mlx5_1", "--print", "nccl_env", env=env)
    expect(p, 0, "--print nccl_env")
    check(p.out.splitlines() == lines, "--print nccl_env: the three lines", repr(p.out))
    j = envcheck("--roce", "mlx5_1", "--json", env=env)
    row_data = checks_by_name(j)["roce mlx5_1/1"]["data"]
    check(row_data["nccl_env"] == lines and row_data["netdev"] == "lo", "the JSON row", str(row_data))
    script = ('set -euo pipefail; lines=$("$EC" --roce "$DEV" --print nccl_env); '
              'while IFS= read -r kv; do export "$kv"; done <<<"$lines"; '
              'echo "hca=$NCCL_IB_HCA index=$NCCL_IB_GID_INDEX ifname=$NCCL_SOCKET_IFNAME"')
    ok = subprocess.run(["bash", "-c", script], env=dict(os.environ, EC=BIN, DEV="mlx5_1", ENVCHECK_SYSFS_ROOT=sysfs),
                        capture_output=True, text=True)
    check(ok.returncode == 0 and ok.stdout == "hca==mlx5_1:1 index=5 ifname==lo\n", "exported as NCCL reads them",
          ok.stdout + ok.stderr)
    down = subprocess.run(["bash", "-c", script], env=dict(os.environ, EC=BIN, DEV="mlx5_7", ENVCHECK_SYSFS_ROOT=sysfs),
                          capture_output=True, text=True)
    check(down.returncode == 1 and "hca=" not in down.stdout, "a DOWN port stops the script", down.stdout + down.stderr)
    dj = envcheck("--roce", "mlx5_7", "--json", env=env)
    check(checks_by_name(dj)["roce mlx5_7/1"]["data"]["nccl_env"] is None, "a DOWN port: no lines", str(dj))


def test_severity_warn_keeps_an_advisory_check_from_failing_the_run(tmp):
    """Issue 43 item 7: a profile could not hold an advisory check ("accept the narrow link"), so the decision
    became shell around a second call. `--severity CHECK=warn` (profile `severity: {CHECK: warn}`) runs the
    check and shows its failure as WARN, exit 0; the other checks still gate; a name no check of the run has,
    or a level other than warn/fail, is exit 2 naming the flag or the profile's line."""
    big = os.path.join(tmp, "data")
    os.makedirs(big)
    missing = os.path.join(tmp, "absent.gguf")
    r = envcheck("--disk", big + "=100P", "--severity", "disk=warn", "--json")
    expect(r, 0, "--disk failing, severity warn")
    d = checks_by_name(r)["disk " + big]
    check(d["status"] == "WARN" and d["severity"] == "warn" and "severity warn" in d["reason"], "the row", str(d))
    gated = envcheck("--disk", big + "=100P", "--file", missing, "--severity", "disk=warn")
    expect(gated, 1, "another check still fails the run")
    check("WARN   disk" in gated.out and "FAIL   file" in gated.out, "the table shows both", gated.out)
    plain = envcheck("--disk", big + "=100P", "--json")
    expect(plain, 1, "without --severity the same check fails")
    check(checks_by_name(plain)["disk " + big]["severity"] == "fail", "the default severity", str(plain))
    typo = envcheck("--disk", big + "=100P", "--severity", "disks=warn")
    expect(typo, 2, "a check this run does not have")
    check("--severity" in typo.err and "its checks: disk" in typo.err, "the sentence names the flag and the checks",
          typo.err)
    level = envcheck("--disk", big + "=100P", "--severity", "disk=sometimes")
    expect(level, 2, "a level other than warn/fail")
    prof = os.path.join(tmp, "advisory.yaml")
    write(prof, f"envcheck: 1\ndisk:\n  {big}: 100P\nseverity:\n  disk: warn\n")
    p = envcheck("--profile", prof)
    expect(p, 0, "profile severity: {disk: warn}")
    check("WARN   disk" in p.out, "the profile's advisory row", p.out)
    write(prof, f"envcheck: 1\ndisk:\n  {big}: 100P\nseverity:\n  disk: sometimes\n")
    bad = envcheck("--profile", prof)
    expect(bad, 2, "profile severity with a bad level")
    check("advisory.yaml:5: 'severity' wants" in bad.err, "FILE:LINE and the key", bad.err)


ESC = "\x1b[2J\x1b[31m"


def test_print_values_are_names_never_lines(tmp):
    """Issue 41 (17): --print printed a name raw, so a device or path holding a newline forged a second
    value (`idx=$(...)` took it) and an escape sequence reached the terminal; --print F --json with no value
    exited 2 with no JSON at all. A value is one line, escaped as every name (util::printable: controls and
    the bidi/format characters); with --json the values are in the summary, which always comes."""
    sysfs = os.path.join(tmp, "sys")
    device = f"mlx5_{ESC}\nnccl_ib_gid_index=0\u202e"
    make_port(sysfs, device, 1, "Ethernet", {3: ("::ffff:127.0.0.1", "RoCE v2", "lo")})
    env = {"ENVCHECK_SYSFS_ROOT": sysfs}
    r = envcheck("--roce", "--print", "device", env=env)
    expect(r, 0, "--print device")
    check(r.out == "mlx5_\\x1b[2J\\x1b[31m\\nnccl_ib_gid_index=0\\xe2\\x80\\xae\n", "the device, one escaped line",
          repr(r.out))
    idx = envcheck("--roce", "--print", "nccl_ib_gid_index", env=env)
    check(idx.rc == 0 and idx.out == "3\n", "the index beside it", str(idx))
    where = os.path.join(tmp, f"disk{ESC}\nforged")
    os.makedirs(where)
    r = envcheck("--disk", where + "=1", "--print", "path")
    expect(r, 0, "--print path")
    check(len(r.out.splitlines()) == 1 and "\x1b" not in r.out and r.out.endswith("\\nforged\n"),
          "the path, one escaped line", repr(r.out))
    # --json: the summary with the values as they are (JSON escapes them), and with none a typed reason.
    r = envcheck("--disk", where + "=1", "--print", "path", "--json")
    expect(r, 0, "--print path --json")
    summary = r.json()
    check(summary["print"] == {"field": "path", "values": [where]} and summary["checks"], "the values", str(r))
    r = envcheck("--disk", where + "=1", "--print", "no_such_field", "--json")
    expect(r, 2, "--print of an unknown field with --json")
    summary = r.json()
    check(summary["reason"] == "usage" and "no_such_field" in summary["message"]
          and summary["print"]["values"] == [], "the summary of no value", str(r))
    r = envcheck("--disk", where + "=1", "--print", f"x{ESC}")
    expect(r, 2, "--print of a field with an escape sequence")
    check("\x1b" not in r.err and "x\\x1b[2J" in r.err, "the field named escaped", repr(r.err))


def test_roce_fails_a_port_that_is_not_active(tmp):
    sysfs = os.path.join(tmp, "sys")
    make_rdma_tree(sysfs)
    write(os.path.join(sysfs, "class/infiniband/mlx5_0/ports/1/state"), "1: DOWN\n")
    write(os.path.join(sysfs, "class/infiniband/mlx5_1/ports/1/state"), "4: ACTIVE\n")
    env = {"ENVCHECK_SYSFS_ROOT": sysfs}
    r = envcheck("--roce", "mlx5_0", "--json", env=env)
    expect(r, 1, "--roce on a DOWN port")
    row(r, "roce mlx5_0/1", "FAIL", "DOWN port", ["is not ACTIVE (state 1: DOWN)", "its NCCL_IB_GID_INDEX would be 3", "bring the port up"])
    check(checks_by_name(r)["roce mlx5_0/1"]["data"]["nccl_ib_gid_index"] is None, "DOWN port exports no index", str(r))
    r = envcheck("--roce", "mlx5_1", "--json", env=env)
    expect(r, 0, "--roce on an ACTIVE port")
    row(r, "roce mlx5_1/1", "PASS", "ACTIVE port", ["NCCL_IB_GID_INDEX=5"])
    inv = envcheck("--json", env=env)
    row(inv, "roce mlx5_0/1", "WARN", "inventory: DOWN port", ["not ACTIVE"])


def cc(*args):
    subprocess.run(["gcc", *args], check=True)


def test_elf_walks_a_directory(tmp):
    d = os.path.join(tmp, "lib")
    os.makedirs(os.path.join(d, "sub"))
    src = os.path.join(tmp, "a.c")
    write(src, "int a(void) { return 1; }\n")
    cc("-shared", "-fPIC", "-o", os.path.join(d, "libgood.so.1"), src)
    gone = os.path.join(tmp, "gone")
    os.makedirs(gone)
    cc("-shared", "-fPIC", "-Wl,-soname,libgone.so.7", "-o", os.path.join(gone, "libgone.so.7"), src)
    cc("-shared", "-fPIC", "-o", os.path.join(d, "sub", "libneedy.so"), src, "-Wl,--no-as-needed", "-L" + gone,
       "-l:libgone.so.7")
    os.remove(os.path.join(gone, "libgone.so.7"))
    write(os.path.join(d, "libc.so"), "/* GNU ld script */\nGROUP ( libc.so.6 )\n")  # not an ELF object: skipped
    r = envcheck("--elf", d, "--json")
    expect(r, 1, "--elf DIR with one library whose dependency does not resolve")
    rows = checks_by_name(r)
    row(r, "elf " + os.path.join(d, "libgood.so.1"), "PASS", "--elf DIR: libgood")
    row(r, "elf " + os.path.join(d, "sub", "libneedy.so") + ": libgone.so.7", "FAIL", "--elf DIR: libneedy", ["libgone.so.7"])
    check(not any("libc.so" == os.path.basename(n) for n in rows), "the linker script is not an ELF row", str(list(rows)))
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    r = envcheck("--elf", empty, "--json")
    expect(r, 1, "--elf on a directory without libraries")
    row(r, "elf " + empty, "FAIL", "--elf empty dir", ["no ELF shared object"])


def test_port_free_host_and_holder(tmp):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    try:
        r = envcheck("--port-free", f"127.0.0.1:{port}", "--json")
        expect(r, 1, "--port-free on a held address")
        name = f"port-free 127.0.0.1:{port}"
        row(r, name, "FAIL", "held", [f"held by PID {os.getpid()}", "python", f"stop PID {os.getpid()}"])
        check(checks_by_name(r)[name]["data"]["holder_pid"] == os.getpid(), "holder_pid", str(r))
        expect(envcheck("--port-free", str(port)), 1, "--port-free PORT: 0.0.0.0 overlaps 127.0.0.1")
        expect(envcheck("--port-free", f"127.0.0.2:{port}"), 0, "--port-free on another loopback address")
        expect(envcheck("--port-free", f"localhost:{port}"), 1, "--port-free localhost:PORT")
        expect(envcheck("--port-free", f"[::1]:{port}"), 0, "--port-free [::1]:PORT")
        expect(envcheck("--port-free", f"example.com:{port}"), 2, "--port-free with a host name")
        expect(envcheck("--port-free", "127.0.0.1:99999"), 2, "--port-free with a bad port")
    finally:
        s.close()


def close_after(sock, seconds):
    """A real listener that goes away after `seconds` (a model server being restarted)."""
    t = threading.Timer(seconds, sock.close)
    t.start()
    return t


def test_port_free_wait_for_a_listener_that_closes(tmp):
    # Issue 43 item 4: --wait SECONDS asks again until the port is free or the time ends.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    name = f"port-free 127.0.0.1:{port}"
    closer = close_after(s, 1.0)
    start = time.monotonic()
    r = envcheck("--port-free", f"127.0.0.1:{port}", "--wait", "10", "--json")
    took = time.monotonic() - start
    closer.join()
    expect(r, 0, "--wait until the listener closed")
    row(r, name, "PASS", "freed while waiting", [f"127.0.0.1 port {port} is free (after waiting"])
    waited = checks_by_name(r)[name]["data"]["waited_s"]
    check(0.7 <= waited <= 5 and took < 6, f"waited {waited} s, took {took:.1f} s for a listener closed after 1 s", r)
    # Held for longer than the wait: exit 1 as without --wait, after the wait, naming the holder.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    try:
        start = time.monotonic()
        r = envcheck("--port-free", f"127.0.0.1:{port}", "--wait", "1", "--json")
        took = time.monotonic() - start
        expect(r, 1, "--wait 1 on a port held throughout")
        row(r, f"port-free 127.0.0.1:{port}", "FAIL", "still held",
            [f"held by PID {os.getpid()}", "; still so after waiting 1."])  # 1.0 s, more when the last look is slow
        held = checks_by_name(r)[f"port-free 127.0.0.1:{port}"]
        # waited_s is said to a tenth of a second, so it may round up past the time this side measured.
        check(held["reason"].endswith(" s") and "still so after waiting" in held["reason"] and 1.0 <= held["data"]["waited_s"] <= took + 0.05,
              "the wait said, as long as it was", held)
        check(1.0 <= took < 4, f"--wait 1 took {took:.1f} s", r)
    finally:
        s.close()
    expect(envcheck("--port-free", "1", "--wait", "lots"), 2, "--wait with no number")
    expect(envcheck("--port-free", "1", "--wait", "0"), 2, "--wait 0")
    expect(envcheck("--wait", "5"), 2, "--wait with nothing to wait for")


def test_vram_free_wait_until_memory_comes_free(tmp):
    busy = "driver_version=580.65.06\ncuda_version=13000\ngpu.0.uuid=GPU-aaaa\ngpu.0.name=NVIDIA RTX 3090\n" \
           "gpu.0.cc=8.6\ngpu.0.memory_total=25769803776\ngpu.0.memory_free=%d\n"
    env = fake_gpu(tmp, busy % (1 << 30))
    desc = env["PROVKIT_FAKE_GPU"]

    def freed():  # the old server's memory given back: the stand-in NVML reads the file at each nvmlInit
        write(desc + ".new", busy % (20 << 30))
        os.replace(desc + ".new", desc)

    expect(envcheck("--vram-free", "16G", env=env), 1, "1 GiB free without --wait")
    t = threading.Timer(1.0, freed)
    t.start()
    start = time.monotonic()
    r = envcheck("--vram-free", "16G", "--wait", "10", "--json", env=env)
    took = time.monotonic() - start
    t.join()
    expect(r, 0, "--vram-free --wait until the memory came free")
    row(r, "vram-free gpu0", "PASS", "freed while waiting", ["after waiting"])
    check(took < 6, f"took {took:.1f} s", r)
    write(desc, busy % (1 << 30))
    r = envcheck("--vram-free", "16G", "--wait", "0.5", "--json", env=env)
    expect(r, 1, "--vram-free --wait 0.5 on memory that stays taken")
    row(r, "vram-free gpu0", "FAIL", "still taken", ["still so after waiting"])
    # Issue 43 item 7: the profile holds the wait too (a key for every command-line check).
    prof = write(os.path.join(tmp, "wait.yaml"), "envcheck: 1\nvram_free: 16G\nwait: 10\n")
    write(desc, busy % (1 << 30))
    t = threading.Timer(1.0, freed)
    t.start()
    r = envcheck("--profile", prof, "--json", env=env)
    t.join()
    expect(r, 0, "profile wait: 10 until the memory came free")
    row(r, "vram-free gpu0", "PASS", "profile wait", ["after waiting"])
    alone = envcheck("--profile", write(os.path.join(tmp, "alone.yaml"), "envcheck: 1\nwait: 5\n"), env=env)
    expect(alone, 2, "profile wait with nothing to wait for")
    check("'wait' goes with ports_free or vram_free" in alone.err, "the key named", alone.err)
    bad = envcheck("--profile", write(os.path.join(tmp, "bad.yaml"), "envcheck: 1\nvram_free: 1G\nwait: soon\n"),
                   env=env)
    expect(bad, 2, "profile wait: soon")
    check("bad.yaml:3: 'wait' wants seconds" in bad.err, "FILE:LINE and the key", bad.err)


from test_envcheck import BIN  # noqa: E402

def test_gfx_gate_from_kfd(tmp):
    sysfs = os.path.join(tmp, "sys")
    make_kfd_tree(sysfs)  # node 1 gfx942, node 2 gfx1100
    env = {"ENVCHECK_SYSFS_ROOT": sysfs}
    r = envcheck("--gfx", "gfx942", "--json", env=env)
    expect(r, 1, "--gfx gfx942 with a gfx1100 beside it")
    row(r, "gfx gfx942", "FAIL", "mixed box", ["does not load on node 2 gfx1100", "it does on node 1 gfx942"])
    os.remove(os.path.join(sysfs, "class/kfd/kfd/topology/nodes/2/properties"))
    expect(envcheck("--gfx", "gfx942", env=env), 0, "--gfx gfx942 on gfx942 only")
    expect(envcheck("--gfx", "gfx9-4-generic", env=env), 0, "--gfx gfx9-4-generic on gfx942")
    expect(envcheck("--gfx", "gfx90a", env=env), 1, "--gfx gfx90a on gfx942")
    expect(envcheck("--gfx", "mi300", env=env), 2, "--gfx with a marketing name")
    r = envcheck("--gfx", "gfx942", "--json")  # no KFD tree at all
    expect(r, 1, "--gfx without AMD GPUs")
    row(r, "gfx gfx942", "FAIL", "no KFD", ["no AMD GPU"])


def test_gfx_takes_the_targets_of_one_build_on_a_mixed_box(tmp):
    """Issue 43 items 7 and 8: on a mixed box (gfx942 beside gfx1100 here, gfx1151 beside gfx1201 in the
    field) --gfx passed in no spelling, since each target had to load on every GPU. One build carries code for
    several targets and the runtime picks, per GPU, the one that loads: `--gfx gfx942,gfx1100` asks that each GPU
    loads one of them, and says which. Repeated --gfx flags stay separate requirements."""
    sysfs = os.path.join(tmp, "sys")
    make_kfd_tree(sysfs)  # node 1 gfx942, node 2 gfx1100
    env = {"ENVCHECK_SYSFS_ROOT": sysfs}
    r = envcheck("--gfx", "gfx942,gfx1100", "--json", env=env)
    expect(r, 0, "--gfx gfx942,gfx1100 on gfx942 + gfx1100")
    row(r, "gfx gfx942,gfx1100", "PASS", "mixed box, one build",
        ["node 1 gfx942", "(from gfx942)", "node 2 gfx1100", "(from gfx1100)"])
    gpus = checks_by_name(r)["gfx gfx942,gfx1100"]["data"]["gpus"]
    check([(g["node"], g["loads"]) for g in gpus] == [(1, "gfx942"), (2, "gfx1100")], "data: which target loads", str(gpus))
    expect(envcheck("--gfx", "gfx942", "--gfx", "gfx1100", env=env), 1, "two flags: two requirements")
    expect(envcheck("--gfx", "gfx9-4-generic,gfx11-generic", env=env), 0, "generic targets, one each")
    r = envcheck("--gfx", "gfx942,gfx90a", "--json", env=env)
    expect(r, 1, "a set without the second GPU's target")
    row(r, "gfx gfx942,gfx90a", "FAIL", "the GPU left out", ["does not load on node 2 gfx1100", "it does on node 1 gfx942", "(from gfx942)"])
    check("--offload-arch=gfx1100" in checks_by_name(r)["gfx gfx942,gfx90a"]["fix"], "the fix names the missing target",
          str(r))
    expect(envcheck("--gfx", "gfx942,mi300", env=env), 2, "a set with a marketing name")
    expect(envcheck("--gfx", "gfx942,", env=env), 2, "an empty target in the set")
    prof = os.path.join(tmp, "mixed.yaml")
    write(prof, 'envcheck: 1\ngfx: ["gfx942,gfx1100"]\n')
    expect(envcheck("--profile", prof, env=env), 0, "profile gfx: one build's targets")


def test_amd_only_box_is_not_told_to_install_the_nvidia_driver(tmp):
    # Issue 43 item 11: the inventory of a box with AMD GPUs only said "install the NVIDIA driver".
    sysfs = os.path.join(tmp, "sys")
    make_kfd_tree(sysfs)  # node 1 gfx942, node 2 gfx1100; no NVIDIA driver at all
    env = {"ENVCHECK_SYSFS_ROOT": sysfs}
    r = envcheck("--json", env=env)
    expect(r, 0, "the inventory of an AMD box")
    row(r, "driver", "INFO", "no NVIDIA driver on an AMD box", ["no NVIDIA driver, none needed", "2 GPUs here are AMD's"])
    check("NVIDIA driver (its" not in r.out, "the inventory tells an AMD box to install the NVIDIA driver", r.out)
    r = envcheck("--need", "fp8", "--json", env=env)
    expect(r, 1, "an NVIDIA question on an AMD box")
    row(r, "gpu", "FAIL", "--need fp8 on an AMD box", ["no NVIDIA driver", "the GPUs here are AMD's", "--gfx TARGET"])
    check("install the NVIDIA driver" not in r.out, "--need fp8 on an AMD box: install the NVIDIA driver", r.out)
    # Without AMD GPUs either, the NVIDIA driver is still what to install.
    r = envcheck("--json")
    row(r, "driver", "WARN", "no GPU at all", ["install the NVIDIA driver"])


def amd_box(root):
    """Two AMD GPUs: KFD nodes 1 (gfx942, renderD128, 10 GiB free) and 2 (gfx90a, renderD129, 1 GiB free)."""
    nodes = os.path.join(root, "class/kfd/kfd/topology/nodes")
    for node, props in {"0": "cpu_cores_count 32\ngfx_target_version 0\n",
                        "1": "simd_count 1216\ngfx_target_version 90402\ndrm_render_minor 128\n",
                        "2": "simd_count 440\ngfx_target_version 90010\ndrm_render_minor 129\n"}.items():
        os.makedirs(os.path.join(nodes, node))
        write(os.path.join(nodes, node, "properties"), props)
    for minor, total, used in ((128, 192 << 30, 182 << 30), (129, 64 << 30, 63 << 30)):
        dev = os.path.join(root, f"class/drm/renderD{minor}/device")
        os.makedirs(dev)
        write(os.path.join(dev, "mem_info_vram_total"), f"{total}\n")
        write(os.path.join(dev, "mem_info_vram_used"), f"{used}\n")


def test_amd_vram_free_and_visible_devices(tmp):
    sysfs = os.path.join(tmp, "sys")
    amd_box(sysfs)
    env = {"ENVCHECK_SYSFS_ROOT": sysfs}
    r = envcheck("--vram-free", "5G", "--json", env=env)
    expect(r, 1, "--vram-free on AMD: node 2 has 1 GiB")
    row(r, "vram-free amd1", "PASS", "node 1", ["gfx942", "10.0 GiB free"])
    row(r, "vram-free amd2", "FAIL", "node 2", ["1.0 GiB free < 5.0 GiB", "HIP_VISIBLE_DEVICES"])
    for var in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        r = envcheck("--vram-free", "5G", "--json", env=dict(env, **{var: "0"}))
        expect(r, 0, f"{var}=0")
        check(list(checks_by_name(r)) == ["vram-free amd1"], f"{var}=0 leaves node 1", str(r))
    r = envcheck("--gfx", "gfx942", env=dict(env, HIP_VISIBLE_DEVICES="0"))
    expect(r, 0, "--gfx on the visible GPU only")
    expect(envcheck("--gfx", "gfx942", env=env), 1, "--gfx with the gfx90a visible")


def test_fix_lines_name_the_cause(tmp):
    # NVML says 580.65.06 (CUDA 13.0); the libcuda the engine loads is another driver's (12.8).
    env = fake_gpu(tmp, "driver_version=580.65.06\ncuda_version=13000\nlibcuda_version=12080\ngpu.0.uuid=GPU-1\ngpu.0.cc=9.0\n")
    r = envcheck("--cuda", "13.0", "--json", env=env)
    expect(r, 1, "libcuda/NVML mismatch")
    fix = checks_by_name(r)["cuda 13.0"]["fix"]
    check("install NVIDIA driver 580.65.06 or newer" not in fix and "the installed driver 580.65.06 supports CUDA 13.0" in fix
          and "libcuda.so.1 the engine loads" in fix, "mismatch fix line", fix)
    # gcc on PATH is cc-shim, and there is no zig: the fix is zig, not a gcc package.
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    os.symlink(os.path.join(os.path.dirname(BIN), "cc-shim"), os.path.join(bindir, "gcc"))
    r = envcheck("--cc", "--json", env={"PATH": bindir, "HOME": tmp, "CC": ""})
    expect(r, 1, "cc-shim without zig")
    fix = checks_by_name(r)["cc"]["fix"]
    check("is cc-shim" in fix and "install zig" in fix and "reinstall" not in fix, "cc-shim fix line", fix)


TWO_GPUS = "driver_version=580.159.04\ncuda_version=13000\n" + "".join(
    f"gpu.{i}.uuid=GPU-{c * 8}-1111-2222-3333-444455556666\ngpu.{i}.name=NVIDIA H200\ngpu.{i}.cc=9.0\n"
    f"gpu.{i}.memory_total=150000000000\ngpu.{i}.memory_free={free}\n" for i, c, free in ((0, "a", 140000000000), (1, "b", 10**9)))


def test_cuda_visible_devices_limits_the_gpu_checks(tmp):
    env = fake_gpu(tmp, TWO_GPUS)
    expect(envcheck("--vram-free", "10G", env=env), 1, "both GPUs: GPU 1 is nearly full")
    r = envcheck("--vram-free", "10G", "--json", env=dict(env, CUDA_VISIBLE_DEVICES="0"))
    expect(r, 0, "CUDA_VISIBLE_DEVICES=0")
    check(list(checks_by_name(r)) == ["vram-free gpu0"], "only GPU 0 is checked", str(r))
    r = envcheck("--vram-free", "10G", "--json", env=dict(env, CUDA_VISIBLE_DEVICES="GPU-bbbbbbbb"))
    expect(r, 1, "CUDA_VISIBLE_DEVICES by UUID prefix")
    check(list(checks_by_name(r)) == ["vram-free gpu1"], "only GPU 1 is checked", str(r))
    # The list ends at the first entry that names no GPU, as the CUDA runtime reads it.
    r = envcheck("--vram-free", "10G", "--json", env=dict(env, CUDA_VISIBLE_DEVICES="0,7,1"))
    expect(r, 0, "CUDA_VISIBLE_DEVICES=0,7,1")
    for value in ("", "MIG-4c5b3f0e-aaaa-bbbb-cccc-000000000000"):
        r = envcheck("--vram-free", "10G", "--json", env=dict(env, CUDA_VISIBLE_DEVICES=value))
        expect(r, 1, f"CUDA_VISIBLE_DEVICES={value!r}")
        row(r, "gpu", "FAIL", f"CUDA_VISIBLE_DEVICES={value!r}", ["leaves the engine no GPU"])
    r = envcheck("--gpu", "1", "--json", env=dict(env, CUDA_VISIBLE_DEVICES="0"))
    expect(r, 1, "--gpu naming a hidden GPU")
    row(r, "gpu 1", "FAIL", "--gpu 1 hidden", ["not visible to the engine (CUDA_VISIBLE_DEVICES='0')"])
    inv = envcheck("--json", env=dict(env, CUDA_VISIBLE_DEVICES="0"))
    row(inv, "gpu 1", "INFO", "inventory", ["not visible to the engine"])
    check(checks_by_name(inv)["gpu 1"]["data"]["visible"] is False, "inventory data.visible", str(inv))
    r = envcheck("--kernels", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "kernels", "libk_multi.so"),
                 "--json", env=dict(env, CUDA_VISIBLE_DEVICES="1"))
    data = [c for c in r.json()["checks"] if c["name"].startswith("kernels ")][0]["data"]
    check(data["gpus"][0]["indices"] == [1], "--kernels judges the visible GPU only", str(data))

if __name__ == "__main__":
    main()
