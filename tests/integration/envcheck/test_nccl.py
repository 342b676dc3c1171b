#!/usr/bin/env python3
"""envcheck's NCCL all-reduce (issue 45) end to end: --nccl-test and its gates against a stand-in libnccl.so.2
(built by envcheck.cmake; it really sums the ranks' bf16 buffers, writes NCCL's INFO log to NCCL_DEBUG_FILE
and fails, hangs or falls back to SHM on request) over the stand-in libcuda and NVML, dlopen'd by envcheck's
child process exactly as the engine's own libnccl would be.

Usage: test_nccl.py test_CASE...   (one ctest per `def test_...`, registered by ../discover.cmake)
"""
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from envcheck_fixtures import FAKE_DRIVER, checks_by_name, envcheck, expect, fake_gpu, row  # noqa: E402
from common import check, main  # noqa: E402,I100
from test_links import TWO_GPUS  # noqa: E402

FAKE_NCCL = os.path.join(FAKE_DRIVER, "nccl", "libnccl.so.2")
# 64 x bf16 per token: the sizes run from 128 B (one token) to 1 MiB (8192 tokens), quick on memcpy'ing stand-ins.
SMALL = ["--hidden-size", "64"]


def data(run, name):
    return checks_by_name(run)[name]["data"]


def nccl(tmp, *args, mode="normal", extra_env=None, desc=TWO_GPUS):
    env = fake_gpu(tmp, desc, PROVKIT_FAKE_NCCL=mode)
    env.update(extra_env or {})
    return envcheck("--nccl-test", *SMALL, *args, "--json", env=env)


def test_nccl_allreduce_figures_and_transport(tmp):
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, "--layers", "40")
    expect(r, 0, "--nccl-test on two stand-in GPUs")
    row(r, "nccl all-reduce", "PASS", "the summary", ["NCCL 2.21.5", "(given)", "2 GPUs", "NCCL_NVLS_ENABLE=0",
                                                      "the floor under one token"])
    d = data(r, "nccl all-reduce")
    check(d["version"] == "2.21.5" and d["ranks"] == 2 and d["source"] == "given", "version, ranks, source", str(d))
    check(d["bus_ids"] == ["0000:03:00.0", "0000:05:00.0"], "the ranks' GPUs by CUDA's bus id", str(d))
    check(os.path.realpath(d["library"]) == os.path.realpath(FAKE_NCCL), "the library loaded", str(d))
    # The stand-in's log: a ring of two, two channels, P2P both ways.
    check(d["transports"] == [{"from_rank": 0, "to_rank": 1, "via": ["P2P/CUMEM/read"]},
                              {"from_rank": 1, "to_rank": 0, "via": ["P2P/CUMEM/read"]}], "transports", str(d))
    row(r, "nccl transport 0-1", "INFO", "P2P pair", ["rank 0 (0000:03:00.0) -> rank 1 (0000:05:00.0) via P2P"])
    sizes = [c for c in r.json()["checks"] if c["name"].startswith("nccl all-reduce ")]
    check([c["data"]["bytes"] for c in sizes] == [128, 1024, 8192, 65536, 524288, 1048576], "the sizes", str(r))
    check(sizes[0]["data"]["tokens"] == 1 and sizes[-1]["data"]["tokens"] == 8192, "tokens per size", str(r))
    for c in sizes:
        s = c["data"]
        check(s["latency_us"] > 0 and s["iterations"] == 20, "latency measured over 20 iterations", str(s))
        # nccl-tests: algbw = bytes / time; busbw = algbw x 2(n-1)/n, which is algbw itself for two ranks.
        want = s["bytes"] / (s["latency_us"] * 1e-6) / 1e9
        check(abs(s["algbw_gb_per_s"] - want) <= want * 1e-9, "algbw = bytes / latency", str(s))
        check(s["busbw_gb_per_s"] == s["algbw_gb_per_s"], "busbw for 2 ranks", str(s))
    # The stand-in sums 8192 x 64 bf16 per rank in C: a megabyte takes longer than 128 bytes.
    check(sizes[-1]["data"]["latency_us"] > sizes[0]["data"]["latency_us"], "latency grows with the size", str(r))
    floor = d["per_token_floor_us"]
    check(abs(floor - 2 * 40 * sizes[0]["data"]["latency_us"]) <= floor * 1e-9, "floor = 2 x layers x one token",
          str(d))


def test_nccl_visible_devices_choose_the_ranks(tmp):
    # The engine sees one GPU: one rank, no pair, no transport.
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, extra_env={"CUDA_VISIBLE_DEVICES": "1"})
    expect(r, 0, "one visible GPU")
    d = data(r, "nccl all-reduce")
    check(d["ranks"] == 1 and d["bus_ids"] == ["0000:05:00.0"], "CUDA_VISIBLE_DEVICES=1: the RTX 3090 alone", str(d))
    check(d["transports"] == [], "one rank: no transport", str(d))
    sizes = [c["data"] for c in r.json()["checks"] if c["name"].startswith("nccl all-reduce ")]
    check(all(s["busbw_gb_per_s"] == 0 for s in sizes), "one rank: bus bandwidth 0 (nccl-tests' rule)", str(sizes))
    # The engine sees none: no measurement, a FAIL naming the variable.
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, extra_env={"CUDA_VISIBLE_DEVICES": ""})
    expect(r, 1, "no visible GPU")
    row(r, "nccl all-reduce", "FAIL", "none visible", ["CUDA_VISIBLE_DEVICES='' leaves the engine no GPU to all-reduce"])


def make_venv(tmp, wheel=True, torch=True):
    venv = os.path.join(tmp, "venv")
    site = os.path.join(venv, "lib", "python3.11", "site-packages")
    os.makedirs(os.path.join(venv, "bin"), exist_ok=True)
    if not os.path.exists(os.path.join(venv, "bin", "python")):
        os.symlink(sys.executable, os.path.join(venv, "bin", "python"))
    placed = {}
    for name, where in (("wheel", "nvidia/nccl/lib"), ("torch", "torch/lib")):
        path = os.path.join(site, where, "libnccl.so.2")
        if (wheel if name == "wheel" else torch):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            shutil.copy(FAKE_NCCL, path)
            placed[name] = path
        elif os.path.exists(path):
            os.remove(path)
    return os.path.join(venv, "bin", "python"), placed


def test_nccl_discovery_order(tmp):
    system_dir = os.path.join(tmp, "system")
    os.makedirs(system_dir)
    shutil.copy(FAKE_NCCL, os.path.join(system_dir, "libnccl.so.2"))
    system = {"LD_LIBRARY_PATH": system_dir}
    python, placed = make_venv(tmp)

    def chosen(*args):
        r = nccl(tmp, *args, extra_env=system)
        check("nccl all-reduce" in checks_by_name(r), "a row", str(r))
        d = data(r, "nccl all-reduce")
        return d["source"], d["library"], r

    # The nvidia-nccl wheel in the engine's environment comes first, before torch's and the system's.
    source, library, r = chosen("--python", python)
    check(source == "wheel" and library == placed["wheel"], f"wheel first: {source} {library}", str(r))
    check([c["source"] for c in data(r, "nccl all-reduce")["candidates"]] == ["wheel", "torch", "system"],
          "the candidates in order", str(r))
    # A path given comes before all of them.
    source, library, r = chosen("--python", python, "--nccl-lib", FAKE_NCCL)
    check(source == "given" and library == FAKE_NCCL, "--nccl-lib first", str(r))
    # Without the wheel: torch's own; without either: the loader's (LD_LIBRARY_PATH here).
    python, placed = make_venv(tmp, wheel=False)
    source, library, r = chosen("--python", python)
    check(source == "torch" and library == placed["torch"], "torch's next", str(r))
    python, placed = make_venv(tmp, wheel=False, torch=False)
    source, library, r = chosen("--python", python)
    check(source == "system" and library == os.path.join(system_dir, "libnccl.so.2"), "the system's last", str(r))
    row(r, "nccl all-reduce", "PASS", "the system's library runs")
    # No Python environment named: the system's.
    source, library, r = chosen()
    check(source == "system", "no --python: the system's", str(r))


def test_nccl_missing_or_wrong_library(tmp):
    r = nccl(tmp, "--nccl-lib", os.path.join(tmp, "nothing", "libnccl.so.2"))
    expect(r, 1, "a --nccl-lib that is no file")
    row(r, "nccl all-reduce", "FAIL", "no such file", ["--nccl-lib " + os.path.join(tmp, "nothing", "libnccl.so.2") +
                                                       " is not a file"])
    # None in the engine's environment (neither the wheel nor torch's) nor the loader's: the fix names the flags.
    # Checked where the host has no libnccl.so.2 of its own (the loader's cache would find it).
    python, _ = make_venv(tmp, wheel=False, torch=False)
    r = nccl(tmp, "--python", python)
    if "library" not in data(r, "nccl all-reduce"):
        row(r, "nccl all-reduce", "FAIL", "none found",
            ["no libnccl.so.2 found", "or give --nccl-lib PATH (or the engine's environment as --python PATH)"])
    # A library that is not NCCL (the stand-in libcuda) loads but lacks NCCL's entry points.
    r = nccl(tmp, "--nccl-lib", os.path.join(FAKE_DRIVER, "libcuda.so.1"))
    expect(r, 1, "a library that is not NCCL")
    row(r, "nccl all-reduce", "FAIL", "not NCCL", ["has no ncclGetVersion"])


def test_nccl_init_fails(tmp):
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, mode="init-fails")
    expect(r, 1, "ncclCommInitAll fails")
    row(r, "nccl all-reduce", "FAIL", "init failure", ["ncclCommInitAll failed with NCCL error 2",
                                                      "unhandled system error"])
    d = data(r, "nccl all-reduce")
    check(d["call"] == "ncclCommInitAll" and d["timed_out"] is False, "the failed call", str(d))
    names = checks_by_name(r)
    check(not any(n.startswith("nccl all-reduce ") for n in names), "no size rows after a failed init", str(r))


def test_nccl_wrong_sum_fails(tmp):
    # Fast and wrong is not a pass: the sum is read back (ones from every rank sum to the rank count).
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, mode="wrong-sum")
    expect(r, 1, "an all-reduce that adds wrong")
    row(r, "nccl all-reduce", "FAIL", "wrong sum", ["ncclAllReduce summed wrong: rank 0 has 3 at element 524287",
                                                   "2 ranks of ones sum to 2"])


def test_nccl_hang_is_bounded(tmp):
    start = time.monotonic()
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, "--nccl-timeout", "2", mode="hang")
    took = time.monotonic() - start
    expect(r, 1, "ncclCommInitAll hangs")
    check(took < 20, f"the hang ends within its bound (took {took:.1f} s)", str(r))
    row(r, "nccl all-reduce", "FAIL", "hang", ["did not finish within 2 s", "it was in ncclCommInitAll", "killed"])
    d = data(r, "nccl all-reduce")
    check(d["timed_out"] is True and d["last_step"] == "ncclCommInitAll", "timed out in init", str(d))
    # A hang in the all-reduce itself, after a clean init: the row names the size it was in.
    start = time.monotonic()
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, "--nccl-timeout", "2", mode="hang-allreduce")
    took = time.monotonic() - start
    expect(r, 1, "an all-reduce hangs")
    check(took < 20, f"the hang ends within its bound (took {took:.1f} s)", str(r))
    row(r, "nccl all-reduce", "FAIL", "all-reduce hang", ["did not finish within 2 s",
                                                         "it was in all-reduce of 128 bytes", "killed"])


def test_nccl_shm_transport_warns(tmp):
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, mode="shm")
    expect(r, 0, "SHM is a warning, not a failure")
    row(r, "nccl transport 0-1", "WARN", "SHM pair", ["via SHM/direct/direct", "not peer-to-peer",
                                                     "P2P is disabled between connected GPUs 0 and 1",
                                                     "peer rows (--link-test)"])
    d = data(r, "nccl all-reduce")
    check(d["transports"][0]["via"] == ["SHM/direct/direct"], "SHM in the JSON", str(d))
    check(any("P2P is disabled" in n for n in d["p2p_notes"]), "NCCL's own note", str(d))
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, mode="net")
    row(r, "nccl transport 1-0", "WARN", "NET pair", ["via NET/Socket/0"])


def test_nccl_nvls_forced_off(tmp):
    record = os.path.join(tmp, "seen.txt")
    # The caller asks for NVLink multicast; the check turns it off whatever the caller's environment says.
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, extra_env={"NCCL_NVLS_ENABLE": "1", "PROVKIT_FAKE_NCCL_RECORD": record,
                                                      "NCCL_DEBUG": "WARN", "NCCL_DEBUG_FILE": os.path.join(tmp, "x")})
    expect(r, 0, "NCCL_NVLS_ENABLE=1 in the caller's environment")
    with open(record) as f:
        seen = f.read()
    check(seen == "NCCL_NVLS_ENABLE=0\n", f"the library saw {seen!r}")
    check(data(r, "nccl all-reduce")["nvls_enable"] == "0", "NCCL logged reading 0", str(r))
    check(data(r, "nccl all-reduce")["transports"], "our INFO log, not the caller's NCCL_DEBUG=WARN", str(r))


def test_nccl_gates(tmp):
    # Bus bandwidth at the largest size (1 MiB here): no stand-in reaches a petabyte a second.
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, "--min-busbw", "1000000")
    expect(r, 1, "--min-busbw too high")
    row(r, "min-busbw", "FAIL", "busbw gate", ["1.0 MiB (8192 tokens)", "< 1000000 GB/s asked",
                                                 "the link test's rows (--link-test)"])
    check(checks_by_name(r)["min-busbw"]["data"]["bytes"] == 1048576, "the size named in data", str(r))
    # One token's latency: the stand-in sleeps 3 ms in every all-reduce.
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, "--max-allreduce-us", "500",
             extra_env={"PROVKIT_FAKE_NCCL_DELAY_US": "3000"})
    expect(r, 1, "--max-allreduce-us too low")
    row(r, "max-allreduce-us", "FAIL", "latency gate", ["128 B (1 token)", "> 500 us asked"])
    check(checks_by_name(r)["max-allreduce-us"]["data"]["latency_us"] >= 3000, "the latency in data", str(r))
    # Both within reach: PASS, exit 0.
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, "--min-busbw", "0.000001", "--max-allreduce-us", "10000000")
    expect(r, 0, "gates that hold")
    row(r, "min-busbw", "PASS", "busbw gate holds")
    row(r, "max-allreduce-us", "PASS", "latency gate holds")
    # The same gates from a profile.
    profile = os.path.join(tmp, "p.yaml")
    with open(profile, "w") as f:
        f.write(f"nccl_lib: {FAKE_NCCL}\nhidden_size: 64\nmin_busbw: 1000000\n")
    r = envcheck("--profile", profile, "--json", env=fake_gpu(tmp, TWO_GPUS))
    expect(r, 1, "min_busbw from a profile")
    row(r, "min-busbw", "FAIL", "profile gate", ["< 1000000 GB/s asked"])
    # One GPU has no bus: the gate cannot pass.
    r = nccl(tmp, "--nccl-lib", FAKE_NCCL, "--gpu", "0", "--min-busbw", "1")
    expect(r, 1, "--min-busbw on one GPU")
    row(r, "min-busbw", "FAIL", "one rank",
        ["one GPU has no bus", "select at least two GPUs (--gpu, CUDA_VISIBLE_DEVICES)"])
    # A bad value is said naming its flag.
    r = envcheck("--min-busbw", "fast")
    expect(r, 2, "--min-busbw fast")
    check("--min-busbw wants a bus bandwidth in GB/s" in r.err, "the flag named", str(r))


if __name__ == "__main__":
    main()
