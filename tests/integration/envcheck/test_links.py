#!/usr/bin/env python3
"""envcheck's links (issue 16) end to end: --link-test, --min-pcie, --min-h2d
and peer paths against the stand-in libcuda (copies are real memcpys, timed)
and NVML (the link trains up while a copy runs), --pcie-atomics against PCI
sysfs trees with config space written here, --roce against
/sys/class/infiniband trees.

Usage: test_links.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_envcheck import (BIN, FAKE_CUDA, MISSING, check, checks_by_name, envcheck, expect,  # noqa: E402
                           fake_gpu, main, row, write)

TWO_GPUS = """
driver_version=580.65.06
cuda_version=13000
gpu.0.uuid=GPU-5090aaaa-1111-2222-3333-444455556666
gpu.0.name=NVIDIA GeForce RTX 5090
gpu.0.cc=12.0
gpu.0.pcie_gen=1,5
gpu.0.pcie_width=8,16
gpu.0.pcie_load=4,8
gpu.0.pci_bus_id=0000:03:00.0
gpu.1.uuid=GPU-3090bbbb-1111-2222-3333-444455556666
gpu.1.name=NVIDIA GeForce RTX 3090
gpu.1.cc=8.6
gpu.1.pcie_gen=1,4
gpu.1.pcie_width=4,16
gpu.1.pcie_load=3,4
gpu.1.pci_bus_id=0000:05:00.0
"""


def data(run, name):
    return checks_by_name(run)[name]["data"]


# ---- --link-test, --min-pcie, --min-h2d, peer paths ------------------------------

def test_link_test(tmp):
    env = fake_gpu(tmp, TWO_GPUS)
    r = envcheck("--link-test", "0.3", "--json", env=env)
    expect(r, 0, "--link-test on two stand-in GPUs")
    check(r.json()["mode"] == "inventory", "--link-test alone is the inventory with measurements", str(r))
    row(r, "driver", "INFO", "--link-test keeps the inventory")
    # Each row names the card's index and its PCI address (issue 43 item 9).
    row(r, "link gpu 0", "PASS", "link gpu 0", ["gpu 0 (0000:03:00.0): H2D", "gen 4 x8 under load", "gen 1 x8 idle",
                                                "gen 5 x16 max", "15.75 GB/s"])
    g0, g1 = data(r, "link gpu 0"), data(r, "link gpu 1")
    # The stand-in NVML reads gen 1 idle and gen 4 x8 only while a copy runs: this is sampled under load.
    check(g0["under_load"] == {"gen": 4, "width": 8} and g0["idle"] == {"gen": 1, "width": 8}, "gpu 0 readings", str(g0))
    check(g1["under_load"] == {"gen": 3, "width": 4} and g1["max"] == {"gen": 4, "width": 16}, "gpu 1 readings", str(g1))
    check(g0["samples"] > 0 and g0["pci_bus_id"] == "0000:03:00.0", "gpu 0 samples and bus id", str(g0))
    for g in (g0, g1):
        check(g["h2d_gb_per_s"] > 0 and g["d2h_gb_per_s"] > 0, "copies measured", str(g))
        check(abs(g["h2d_fraction"] - g["h2d_gb_per_s"] / g["theoretical_gb_per_s"]) < 0.01, "fraction", str(g))
    check(g1["theoretical_gb_per_s"] == 3.94, "gen 3 x4 is 3.94 GB/s (128b/130b)", str(g1))
    # Two GeForce-like cards: the stand-in refuses peer access, so the pair's copies are host-staged.
    row(r, "peer 0-1", "WARN", "peer refused", ["no direct peer access", "staged through host memory", "GB/s measured"])
    p = data(r, "peer 0-1")
    check(p["direct"] is False and p["gb_per_s"] > 0, "peer 0-1 data", str(p))

    direct = fake_gpu(tmp, TWO_GPUS + "cuda_peer.0.1=1\n")
    r = envcheck("--link-test", "0.2", "--json", env=direct)
    row(r, "peer 0-1", "PASS", "peer allowed", ["direct peer access (cuDeviceCanAccessPeer)"])
    check(data(r, "peer 0-1")["direct"] is True, "peer allowed: direct", str(r))

    # --gpu selects by NVML index; the link test finds the CUDA device by its PCI bus id.
    r = envcheck("--gpu", "1", "--link-test", "0.2", "--json", env=env)
    names = checks_by_name(r)
    check("link gpu 1" in names and "link gpu 0" not in names and "peer 0-1" not in names, "--gpu 1 --link-test", str(r))


def test_link_thresholds(tmp):
    env = fake_gpu(tmp, TWO_GPUS)
    r = envcheck("--min-pcie", "4:8", "--min-h2d", "0.001", "--link-test", "0.2", "--json", env=env)
    expect(r, 1, "--min-pcie 4:8 with gpu 1 at gen 3 x4")
    check(r.json()["mode"] == "checks", "--min-pcie is a check", str(r))
    row(r, "min-pcie gpu 0", "PASS", "gpu 0 at gen 4 x8", ["gpu 0 (0000:03:00.0) trained gen 4 x8 under load >= gen 4 x8"])
    row(r, "min-pcie gpu 1", "FAIL", "gpu 1 at gen 3 x4", ["gpu 1 (0000:05:00.0) trained gen 3 x4 under load < gen 4 x8",
                                                            "allow gen 4 x16"])
    check(checks_by_name(r)["min-pcie gpu 1"]["rule"] == "PCIe link under load >= gen:width 4:8", "rule text", str(r))
    row(r, "min-h2d gpu 0", "PASS", "--min-h2d 0.001", ["gpu 0 (0000:03:00.0) copies host to device"])
    # --min-h2d alone runs the copies (default length) and fails what is too slow.
    r = envcheck("--gpu", "0", "--min-h2d", "100000", "--json", env=env)
    expect(r, 1, "--min-h2d 100000")
    row(r, "min-h2d gpu 0", "FAIL", "--min-h2d 100000", ["< 100000 GB/s asked"])
    # No libcuda: the copies cannot run, and that is a failure naming why.
    r = envcheck("--min-pcie", "3:4", "--json", env=fake_gpu(tmp, TWO_GPUS, cuda_lib=MISSING + "/libcuda.so.1"))
    expect(r, 1, "--min-pcie without libcuda")
    row(r, "link test", "FAIL", "no libcuda", ["no copies could run", "libcuda.so.1: cannot open shared object file"])
    # Values are checked like every other option's, on the command line and in profiles.
    for args, words in ((["--link-test", "soon"], "--link-test wants seconds"), (["--link-test", "120"], "at most 60"),
                        (["--min-pcie", "4x16"], "--min-pcie wants GEN:WIDTH"), (["--min-pcie", "7:16"], "GEN:WIDTH"),
                        (["--min-pcie", "4:3"], "GEN:WIDTH"), (["--min-h2d", "-1"], "--min-h2d wants a bandwidth")):
        bad = envcheck(*args, env=env)
        expect(bad, 2, " ".join(args))
        check(words in bad.err, f"{' '.join(args)}: message", str(bad))
    prof = os.path.join(tmp, "links.yaml")
    write(prof, "link_test: 0.2\nmin_pcie: \"4:8\"\nmin_h2d: 0.001\n")
    r = envcheck("--profile", prof, "--json", env=env)
    expect(r, 1, "profile with min_pcie 4:8")
    row(r, "min-pcie gpu 1", "FAIL", "profile min_pcie")
    write(prof, "link_test: true\nmin_pcie: 4-8\n")
    bad = envcheck("--profile", prof, env=env)
    expect(bad, 2, "profile min_pcie 4-8")
    check(f"{prof}:2: 'min_pcie' wants GEN:WIDTH" in bad.err, "profile min_pcie: FILE:LINE", str(bad))


# ---- --pcie-atomics -------------------------------------------------------------

def config_space(port_type, routing=False, c32=False, c64=False, cas128=False, size=4096):
    """A PCI config space image: a power-management capability at 0x40, then
    the PCI Express capability at 0x60 with Device Capabilities 2 at +0x24."""
    c = bytearray(size)
    struct.pack_into("<H", c, 0x06, 0x10)         # Status: capability list
    c[0x34] = 0x40
    c[0x40:0x42] = bytes([0x01, 0x60])            # PM capability, next 0x60
    if size > 0x60:
        c[0x60:0x62] = bytes([0x10, 0x00])        # PCI Express, last
        struct.pack_into("<H", c, 0x62, 0x2 | port_type << 4)
        struct.pack_into("<I", c, 0x60 + 0x24, routing << 6 | c32 << 7 | c64 << 8 | cas128 << 9)
    return bytes(c[:size])


ROOT, UP, DOWN, ENDPOINT = 4, 5, 6, 0


def make_pci_tree(sysfs):
    """Three GPUs under host bridge pci0000:00:
    0000:03:00.0 (NVIDIA gpu 0): root port 00:01.0 (routing) > switch up 01:00.0 (routing) > down 02:00.0 (no routing)
    0000:04:00.0 (AMD, DRM card1): root port 00:03.0 (routing)
    0000:05:00.0 (NVIDIA gpu 1): root port 00:05.0 whose config reads as 64 bytes (not root)"""
    tree = {
        "0000:00:01.0": (None, config_space(ROOT, routing=True, c32=True, c64=True)),
        "0000:01:00.0": ("0000:00:01.0", config_space(UP, routing=True)),
        "0000:02:00.0": ("0000:01:00.0", config_space(DOWN, routing=False)),
        "0000:03:00.0": ("0000:02:00.0", config_space(ENDPOINT, c32=True, c64=True)),
        "0000:00:03.0": (None, config_space(ROOT, routing=True, c32=True, c64=True, cas128=True)),
        "0000:04:00.0": ("0000:00:03.0", config_space(ENDPOINT, c32=True, c64=True, cas128=True)),
        "0000:00:05.0": (None, config_space(ROOT, routing=True, size=64)),
        "0000:05:00.0": ("0000:00:05.0", config_space(ENDPOINT, c32=True)),
    }
    def real(bdf):
        parent = tree[bdf][0]
        return os.path.join(real(parent) if parent else os.path.join(sysfs, "devices", "pci0000:00"), bdf)
    os.makedirs(os.path.join(sysfs, "bus", "pci", "devices"))
    for bdf, (_, config) in tree.items():
        os.makedirs(real(bdf), exist_ok=True)
        with open(os.path.join(real(bdf), "config"), "wb") as f:
            f.write(config)
        os.symlink(os.path.relpath(real(bdf), os.path.join(sysfs, "bus", "pci", "devices")),
                   os.path.join(sysfs, "bus", "pci", "devices", bdf))
    write(os.path.join(real("0000:04:00.0"), "vendor"), "0x1002\n")
    os.makedirs(os.path.join(sysfs, "class", "drm", "card1"))
    os.symlink(os.path.relpath(real("0000:04:00.0"), os.path.join(sysfs, "class", "drm", "card1")),
               os.path.join(sysfs, "class", "drm", "card1", "device"))
    os.makedirs(os.path.join(sysfs, "class", "drm", "card1-DP-1"))  # a connector, not a card


def test_pcie_atomics(tmp):
    sysfs = os.path.join(tmp, "sys")
    make_pci_tree(sysfs)
    env = fake_gpu(tmp, TWO_GPUS, ENVCHECK_SYSFS_ROOT=sysfs)
    # An AMD card KFD does not list is named by its PCI address alone.
    r = envcheck("--pcie-atomics", "--json", env=env)
    row(r, "pcie-atomics amd 0000:04:00.0", "PASS", "AMD card1 without KFD", ["amd 0000:04:00.0 (0000:04:00.0): every"])
    # KFD's node 1 is that card (location_id: bus << 8 | device << 3 | function).
    node = os.path.join(sysfs, "class", "kfd", "kfd", "topology", "nodes", "1")
    os.makedirs(node)
    write(os.path.join(node, "properties"), "cpu_cores_count 0\nsimd_count 64\ngfx_target_version 110000\n"
          "domain 0\nlocation_id 1024\n")
    r = envcheck("--pcie-atomics", "--json", env=env)
    expect(r, 1, "--pcie-atomics with a bridge that does not route")
    row(r, "pcie-atomics gpu 0", "FAIL", "gpu 0 behind 02:00.0",
        ["AtomicOps stop at 0000:02:00.0 (switch downstream port, AtomicOp Routing-)", "root port 0000:00:01.0", "Routing+"])
    d = data(r, "pcie-atomics gpu 0")
    check(d["first_blocking_bridge"] == "0000:02:00.0" and [b["bdf"] for b in d["bridges"]] ==
          ["0000:02:00.0", "0000:01:00.0", "0000:00:01.0"], "gpu 0's path, nearest first", str(d))
    check(d["device"]["completer64"] is True and d["device"]["cas128"] is False, "gpu 0's completer bits", str(d))
    # The AMD card by its index as the other AMD rows give it (KFD node 1, whose location_id is 04:00.0).
    row(r, "pcie-atomics amd1", "PASS", "AMD card1",
        ["amd1 (0000:04:00.0): every bridge up to root port 0000:00:03.0 (1 in all) routes AtomicOps", "32bit+ 64bit+ 128bitCAS+"])
    row(r, "pcie-atomics gpu 1", "FAIL", "gpu 1's root port unreadable",
        ["0000:00:05.0's config space reads as 64 bytes", "only root", "run envcheck --pcie-atomics as root"])
    # The inventory shows what it could read (and never gpu 1's guess), fails nothing, and stays fast.
    best = 1e9
    for _ in range(3):
        start = time.monotonic()
        inv = envcheck("--json", env=env)
        best = min(best, time.monotonic() - start)
    expect(inv, 0, "inventory with PCI trees")
    row(inv, "pcie-atomics gpu 0", "WARN", "inventory: gpu 0", ["0000:02:00.0"])
    row(inv, "pcie-atomics amd1", "INFO", "inventory: AMD", ["amd1 (0000:04:00.0)"])
    check("pcie-atomics gpu 1" not in checks_by_name(inv), "inventory guessed about gpu 1", str(inv))
    check(best < 0.1, f"inventory took {best:.3f} s (> 0.1 s)", str(inv))
    # A GPU whose bus id is not in sysfs is named, not skipped.
    r = envcheck("--pcie-atomics", "--json", env=fake_gpu(tmp, TWO_GPUS, ENVCHECK_SYSFS_ROOT=os.path.join(tmp, "nothing")))
    expect(r, 1, "--pcie-atomics without the tree")
    row(r, "pcie-atomics gpu 0", "FAIL", "no sysfs", ["no PCI device 0000:03:00.0"])


# ---- --roce ------------------------------------------------------------------

def sysfs_gid(text):
    """'::ffff:127.0.0.1' -> sysfs's eight groups of four hex digits."""
    import ipaddress
    return ":".join("%04x" % v for v in struct.unpack(">8H", ipaddress.IPv6Address(text).packed))


def make_port(sysfs, dev, port, link_layer, entries, size=8):
    """entries: {index: (gid, type, netdev)}; every other slot of the table is zero, without a type."""
    base = os.path.join(sysfs, "class", "infiniband", dev, "ports", str(port))
    for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
        os.makedirs(os.path.join(base, sub))
    write(os.path.join(base, "link_layer"), link_layer + "\n")
    for i in range(size):
        gid, typ, ndev = entries.get(i, ("::", None, None))
        write(os.path.join(base, "gids", str(i)), sysfs_gid(gid) + "\n")
        if typ:
            write(os.path.join(base, "gid_attrs", "types", str(i)), typ + "\n")
            write(os.path.join(base, "gid_attrs", "ndevs", str(i)), ndev + "\n")


LINK_LOCAL = "fe80::1e34:daff:fe5a:1b2c"


def make_rdma_tree(sysfs):
    make_port(sysfs, "mlx5_0", 1, "Ethernet", {  # dense
        0: (LINK_LOCAL, "IB/RoCE v1", "lo"), 1: (LINK_LOCAL, "RoCE v2", "lo"),
        2: ("::ffff:127.0.0.1", "IB/RoCE v1", "lo"), 3: ("::ffff:127.0.0.1", "RoCE v2", "lo")})
    make_port(sysfs, "mlx5_1", 1, "Ethernet", {  # an address removed: slots 2 and 3 left empty
        0: (LINK_LOCAL, "IB/RoCE v1", "lo"), 1: (LINK_LOCAL, "RoCE v2", "lo"),
        4: ("::ffff:127.0.0.1", "IB/RoCE v1", "lo"), 5: ("::ffff:127.0.0.1", "RoCE v2", "lo")})
    make_port(sysfs, "mlx5_2", 1, "Ethernet", {  # only a link-local v2 and another node's address (TEST-NET-3)
        0: (LINK_LOCAL, "RoCE v2", "lo"), 1: ("::ffff:203.0.113.9", "RoCE v2", "lo"),
        2: ("::ffff:127.0.0.1", "IB/RoCE v1", "lo")})
    make_port(sysfs, "ib0", 1, "InfiniBand", {0: ("fe80::2", "", "")})


def test_roce(tmp):
    sysfs = os.path.join(tmp, "sys")
    make_rdma_tree(sysfs)
    env = {"ENVCHECK_SYSFS_ROOT": sysfs}
    r = envcheck("--roce", "--json", env=env)
    expect(r, 1, "--roce with mlx5_2 lacking this node's IPv4")
    row(r, "roce mlx5_0/1", "PASS", "dense table", ["NCCL_IB_GID_INDEX=3", "RoCE v2 ::ffff:127.0.0.1 on lo"])
    check(data(r, "roce mlx5_0/1")["nccl_ib_gid_index"] == 3 and data(r, "roce mlx5_0/1")["holes"] == [], "dense", str(r))
    row(r, "roce mlx5_1/1", "PASS", "holed table", ["NCCL_IB_GID_INDEX=5", "holes at 2,3"])
    d = data(r, "roce mlx5_1/1")
    check(d["nccl_ib_gid_index"] == 5 and d["holes"] == [2, 3], "holed: index 5, holes 2 and 3", str(d))
    check([(g["index"], g["type"]) for g in d["gids"]] ==
          [(0, "IB/RoCE v1"), (1, "RoCE v2"), (4, "IB/RoCE v1"), (5, "RoCE v2")], "holed: the table", str(d))
    row(r, "roce mlx5_2/1", "FAIL", "no entry", ["mlx5_2 port 1 has no RoCE v2 GID for this node's IPv4", "127.0.0.1",
                                                 "203.0.113.9", "do not pin NCCL_IB_GID_INDEX"])
    check(data(r, "roce mlx5_2/1")["nccl_ib_gid_index"] is None, "no entry: null index", str(r))
    row(r, "roce ib0/1", "INFO", "InfiniBand port", ["does not apply"])
    one = envcheck("--roce", "mlx5_1", "--json", env=env)
    expect(one, 0, "--roce mlx5_1")
    check(list(checks_by_name(one)) == ["roce mlx5_1/1"], "--roce mlx5_1: only that device", str(one))
    none = envcheck("--roce", "mlx5_9", "--json", env=env)
    expect(none, 1, "--roce mlx5_9")
    row(none, "roce", "FAIL", "--roce mlx5_9", ["no RDMA device 'mlx5_9'"])
    inv = envcheck("--json", env=env)
    expect(inv, 0, "inventory with RDMA devices")
    row(inv, "roce mlx5_1/1", "INFO", "inventory: mlx5_1", ["NCCL_IB_GID_INDEX=5"])
    row(inv, "roce mlx5_2/1", "WARN", "inventory: mlx5_2")
    prof = os.path.join(tmp, "roce.yaml")
    write(prof, "roce: mlx5_0\npcie_atomics: false\n")
    r = envcheck("--profile", prof, "--json", env=env)
    expect(r, 0, "profile roce: mlx5_0")
    check(data(r, "roce mlx5_0/1")["nccl_ib_gid_index"] == 3, "profile roce", str(r))


if __name__ == "__main__":
    main()
