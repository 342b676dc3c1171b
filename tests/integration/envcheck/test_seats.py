#!/usr/bin/env python3
"""The seat map (issue 43 item 3): envcheck names, per GPU, the processes holding its memory (PID, memory,
command, systemd unit, listening ports), and a failing --vram-free names them with the way to stop them.
The stand-in NVML reports the pid of a REAL process started here (a python listening on a loopback port);
envcheck reads its command, cgroup and sockets from the real /proc.

Usage: test_seats.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, main  # noqa: E402
from envcheck_fixtures import FAKE_DRIVER, checks_by_name, envcheck, expect, fake_gpu, row  # noqa: E402

UUID = "GPU-3090bbbb-1111-2222-3333-444455556666"
SERVER = ("import socket, sys, time\n"
          "s = socket.socket()\n"
          "s.bind(('127.0.0.1', 0))\n"
          "s.listen()\n"
          "print(s.getsockname()[1], flush=True)\n"
          "time.sleep(120)\n")


class Seat:
    """A real process listening on a loopback port: its pid, port and command line."""

    def __init__(self, tmp):
        self.script = os.path.join(tmp, "seat_marker_server.py")
        with open(self.script, "w") as f:
            f.write(SERVER)

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, self.script, "--port", "0"], stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())
        self.pid = self.proc.pid
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def box(pid, extra=""):
    """One RTX 3090 with 2 GiB free; `pid` holds 20 GiB of it (compute), and pid 1 a graphics context."""
    return ("driver_version=580.65.06\ncuda_version=13000\n"
            f"gpu.0.uuid={UUID}\ngpu.0.name=NVIDIA GeForce RTX 3090\ngpu.0.cc=8.6\n"
            "gpu.0.memory_total=25769803776\ngpu.0.memory_free=2147483648\n"
            f"gpu.0.process.0={pid},21474836480\n" + extra)


def the_seat(r, name, pid):
    rows = checks_by_name(r)
    check(name in rows, f"a row '{name}'", str(r))
    seats = [p for p in rows[name]["data"].get("processes", []) if p["pid"] == pid]
    check(len(seats) == 1, f"'{name}' data.processes has pid {pid} once", str(rows[name]["data"]))
    return seats[0]


def check_named(r, name, seat):
    p = the_seat(r, name, seat.pid)
    check(p["memory"] == 21474836480, "its memory in bytes", str(p))
    check(p["command"] == f"{sys.executable} {seat.script} --port 0", "its command line from /proc", str(p))
    check({"port": seat.port, "address": "127.0.0.1"} in p["ports"], "its listening port", str(p))
    check(p["type"] == "compute", "a compute process", str(p))
    reason = checks_by_name(r)[name]["reason"]
    for text in (f"PID {seat.pid} (20.0 GiB", f"listens on 127.0.0.1:{seat.port}", f"{seat.script} --port 0"):
        check(text in reason, f"'{name}' says {text!r}", reason)


def test_inventory_names_the_processes_holding_memory(tmp):
    with Seat(tmp) as seat:
        env = fake_gpu(tmp, box(seat.pid, "gpu.0.process.1=1,na,graphics\n"))
        r = envcheck("--json", env=env)
        expect(r, 0, "inventory")
        check_named(r, "gpu 0", seat)
        init = the_seat(r, "gpu 0", 1)
        check(init["memory"] is None and init["type"] == "graphics", "NVML_VALUE_NOT_AVAILABLE is null", str(init))
        row(r, "gpu 0", "INFO", "inventory", ["PID 1 (memory not reported"])
        text = envcheck(env=env)
        check(f"PID {seat.pid} (20.0 GiB" in text.out, "the text report names it too", text.out)


def test_vram_free_failure_names_the_holder_and_the_fix(tmp):
    with Seat(tmp) as seat:
        env = fake_gpu(tmp, box(seat.pid))
        r = envcheck("--vram-free", "10G", "--json", env=env)
        expect(r, 1, "--vram-free 10G with 2 GiB free")
        check_named(r, "vram-free gpu0", seat)
        row(r, "vram-free gpu0", "FAIL", "--vram-free", ["2.0 GiB free < 10.0 GiB needed", f"kill {seat.pid}"])
        # Without a unit the fix is the pid; in a service it would be `systemctl stop` (unit tests).
        p = the_seat(r, "vram-free gpu0", seat.pid)
        if p["unit"] is None:
            check(p["stop"] is None, "no unit, no systemctl", str(p))
        else:
            row(r, "vram-free gpu0", "FAIL", "in a unit", [p["stop"]])


def kfd_seat_box(root, pid):
    """An MI300X (KFD node 1, gpu_id 41234, renderD128) with 2 GiB of 192 free, 20 GiB of it held by `pid` as KFD
    writes it (/sys/class/kfd/kfd/proc/PID/vram_GPUID, kfd_process.c), and a process of KFD's that has not
    opened this GPU (its folder holds another gpu_id's file)."""
    node = os.path.join(root, "class/kfd/kfd/topology/nodes/1")
    os.makedirs(node)
    with open(os.path.join(node, "properties"), "w") as f:
        f.write("simd_count 1216\ngfx_target_version 90402\ndrm_render_minor 128\n")
    with open(os.path.join(node, "gpu_id"), "w") as f:
        f.write("41234\n")
    dev = os.path.join(root, "class/drm/renderD128/device")
    os.makedirs(dev)
    for name, value in (("mem_info_vram_total", 192 << 30), ("mem_info_vram_used", 190 << 30)):
        with open(os.path.join(dev, name), "w") as f:
            f.write(f"{value}\n")
    for holder, gpu_id in ((pid, 41234), (1, 999)):
        proc = os.path.join(root, "class/kfd/kfd/proc", str(holder))
        os.makedirs(proc)
        with open(os.path.join(proc, f"vram_{gpu_id}"), "w") as f:
            f.write(f"{20 << 30}\n")


def test_amd_seats_from_kfd(tmp):
    """Issue 43 item 3 on AMD: the processes holding each GPU's memory come from KFD's per-process files, named
    as on NVIDIA (PID, memory, command, unit, ports); a failing --vram-free names them and the way to stop them."""
    sysfs = os.path.join(tmp, "sys")
    with Seat(tmp) as seat:
        kfd_seat_box(sysfs, seat.pid)
        env = {"ENVCHECK_SYSFS_ROOT": sysfs}
        r = envcheck("--vram-free", "10G", "--json", env=env)
        expect(r, 1, "--vram-free 10G with 2 GiB free on the MI300X")
        check_named(r, "vram-free amd1", seat)
        check(all(p["pid"] != 1 for p in checks_by_name(r)["vram-free amd1"]["data"]["processes"]),
              "a process that has not opened this GPU is not its seat", str(r))
        row(r, "vram-free amd1", "FAIL", "--vram-free on AMD", ["2.0 GiB free < 10.0 GiB needed", f"kill {seat.pid}",
                                                                 "HIP_VISIBLE_DEVICES"])
        g = envcheck("--gpu", "0", "--json", env=env)
        expect(g, 0, "--gpu 0 on the AMD box")
        check_named(g, "gpu amd1", seat)
        inv = envcheck("--json", env=env)
        gpus = checks_by_name(inv)["rocm"]["data"]["gpus"]
        check([p["pid"] for p in gpus[0]["processes"]] == [seat.pid], "the inventory's KFD GPU names its seat", str(gpus))
        check(f"PID {seat.pid} (20.0 GiB" in checks_by_name(inv)["rocm"]["reason"], "the inventory row says it",
              str(inv))


def test_a_driver_before_510_lists_processes_through_v2(tmp):
    with Seat(tmp) as seat:
        env = fake_gpu(tmp, box(seat.pid), ENVCHECK_NVML_LIB=os.path.join(FAKE_DRIVER, "pre-510", "libnvidia-ml.so.1"))
        r = envcheck("--vram-free", "10G", "--json", env=env)
        expect(r, 1, "--vram-free through the _v2 lists")
        check_named(r, "vram-free gpu0", seat)


def test_more_processes_than_the_first_guess(tmp):
    # NVML's sizing protocol: more records than envcheck first makes room for are all read.
    with Seat(tmp) as seat:
        extra = "".join(f"gpu.0.process.{k}={100000 + k},1048576\n" for k in range(1, 16))
        r = envcheck("--json", env=fake_gpu(tmp, box(seat.pid, extra)))
        procs = checks_by_name(r)["gpu 0"]["data"]["processes"]
        check(len(procs) == 16, "all 16 processes", str(procs))
        gone = [p for p in procs if p["pid"] == 100001][0]
        check(gone["command"] == "" and gone["unit"] is None, "a pid /proc does not have", str(gone))
        row(r, "gpu 0", "INFO", "a pid /proc lacks", ["PID 100001 (1.0 MiB): not in this host's /proc"])


def test_smi_fallback_reads_the_compute_apps(tmp):
    with Seat(tmp) as seat:
        smi = os.path.join(tmp, "nvidia-smi")
        with open(smi, "w") as f:
            f.write("#!/bin/sh\n"
                    "case \"$1\" in\n"
                    f"  --query-gpu=*) echo '0, {UUID}, NVIDIA GeForce RTX 3090, 8.6, 24576, 2048, 4, 4, 16, 16, 580.65.06';;\n"
                    f"  --query-compute-apps=gpu_uuid,pid,used_memory) echo '{UUID}, {seat.pid}, 20480';;\n"
                    "  *) echo '| NVIDIA-SMI 580.65.06     Driver Version: 580.65.06     CUDA Version: 13.0     |';;\n"
                    "esac\n")
        os.chmod(smi, 0o755)
        r = envcheck("--vram-free", "10G", "--json", env={"ENVCHECK_NVIDIA_SMI": smi})
        expect(r, 1, "--vram-free through nvidia-smi")
        check_named(r, "vram-free gpu0", seat)


if __name__ == "__main__":
    main()
