#!/usr/bin/env python3
"""The attacker sweep's per-file budgets: small inputs that asked for far more work than their size (issue
41's "work a small input can multiply"), each run through the real tool. A row holds when the tool ends by
itself within ROW_TIMEOUT with an exit status of the README's table (never a signal), its peak memory
(the child's own maximum RSS, from wait4) stays under MAX_RSS, --json's lines match docs/json.md's schema,
and the row's own check of what the tool said holds (the budget named, the work counted).

Run one: python3 test_sweep_budgets.py test_budget_rows   (ctest runs each alone)
"""

import json
import os
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "envcheck"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hf-fetch"))
import checkpoints as ck  # noqa: E402
from common import check, check_json_lines, main, tool  # noqa: E402
from envcheck_fixtures import BIN as ENVCHECK  # noqa: E402
from test_sweep_envcheck_ccshim import fake_gpu  # noqa: E402

HF_FETCH = tool("hf-fetch")
ROW_TIMEOUT = 30  # seconds; before the budgets the rows took 10-45 s, or never ended
MAX_RSS = 512 << 20  # bytes; before, the bundle rows took 0.76-2.7 GB
FILE_INFLATED = 64 << 20  # kernels::Budget::file_inflated


def elf_with_section(name, data):
    """A little-endian ELF64 object of one section (and the section-name table)."""
    names = b"\0" + name.encode() + b"\0.shstrtab\0"
    data_at, names_at = 64, 64 + len(data)
    shoff = (names_at + len(names) + 7) & ~7
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    eh = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 3, 2)
    null = bytes(64)
    sec = struct.pack("<IIQQQQIIQQ", 1, 1, 0, 0, data_at, len(data), 0, 0, 8, 0)
    strtab = struct.pack("<IIQQQQIIQQ", len(name) + 2, 3, 0, 0, names_at, len(names), 0, 0, 1, 0)
    out = eh + data + names
    return out + bytes(shoff - len(out)) + null + sec + strtab


def ccob_zlib(entries):
    """A CCOB v3 (zlib) offload bundle whose table lists `entries` gfx90a code objects."""
    ident = b"hipv4-amdgcn-amd-amdhsa--gfx90a"
    plain = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", entries)
    plain += (struct.pack("<QQQ", 0, 0, len(ident)) + ident) * entries
    packed = zlib.compress(plain, 9)
    b = b"CCOB" + struct.pack("<HHQQQ", 3, 0, 32 + len(packed), len(plain), 0) + packed
    return b + bytes(-len(b) % 8)


def zstd_zeros(size):
    """A zstd frame of `size` zero bytes as RLE blocks of 128 KiB (2 KB for 64 MiB)."""
    f = struct.pack("<IBQ", 0xFD2FB528, 0xE0, size)
    done = 0
    while done < size:
        n = min(size - done, 128 << 10)
        done += n
        f += struct.pack("<I", (n << 3) | 2 | (done == size))[:3] + b"\0"
    return f


def fatbin_of_zstd_cubins(count, payload, claimed):
    entry = struct.pack("<HHIQII", 2, 0, 64, len(payload), len(payload), 0) + struct.pack("<HHI", 0, 0, 75)
    entry += bytes(8) + struct.pack("<Q", 0x8000) + bytes(8) + struct.pack("<Q", claimed)
    entries = (entry + payload) * count
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entries)) + entries


def run_measured(argv, env=None):
    """(exit status, stdout, stderr, peak RSS in bytes, hung)."""
    p = subprocess.Popen([str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=ROW_TIMEOUT)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
        hung = True
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), hung


def peak_rss(argv, env=None):
    """The peak RSS in bytes of one more run of `argv`, its own (wait4's rusage; communicate() above reaps
    its child where wait4 could not see it)."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(fd, target)
        try:
            os.execve(str(argv[0]), [str(a) for a in argv], env or os.environ)
        finally:
            os._exit(127)
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_maxrss * 1024


def kernel_rows(tmp):
    env = fake_gpu(type("Cell", (), {"tmp": tmp}))  # the stand-in driver's two GPUs, sm_120 and sm_86
    bundles = os.path.join(tmp, "libbundles.so")
    with open(bundles, "wb") as f:
        f.write(elf_with_section(".hip_fatbin", ccob_zlib(70000) * 100))
    cubins = os.path.join(tmp, "libcubins.so")
    with open(cubins, "wb") as f:
        f.write(elf_with_section(".nv_fatbin", fatbin_of_zstd_cubins(600, zstd_zeros(64 << 20), 64 << 20)))

    def kernels_row(lines, path, problem):
        row = next(x for x in lines[-1].get("checks", []) if x.get("name") == "kernels " + path)
        data = row["data"]
        check(data["decompressed_bytes"] <= FILE_INFLATED + 4096, "decompressed past the file's budget", row)
        if problem:
            check(any(problem in p for p in data["problems"]), f"no problem naming '{problem}'", row)

    return [
        ("envcheck --kernels: 100 CCOB bundles of 70,000-entry tables (400 KB)",
         [ENVCHECK, "--kernels", bundles], env, {0, 1},
         lambda lines: kernels_row(lines, bundles, "passes the file's budget of 131072")),
        ("envcheck --kernels: 600 zstd cubins claiming 64 MiB each (1.2 MB), judged on two GPUs",
         [ENVCHECK, "--kernels", cubins], env, {1},
         lambda lines: kernels_row(lines, cubins, None)),
    ]


def checkpoint_rows(tmp):
    def model_dir(name, config=None, hf_quant=None, tensors=None):
        d = os.path.join(tmp, name)
        os.makedirs(d)
        with open(os.path.join(d, "model.safetensors"), "wb") as f:
            f.write(ck.safetensors(tensors or [("model.layers.0.mlp.down_proj.weight", "BF16", (8, 8))]))
        for file, text in (("config.json", config), ("hf_quant_config.json", hf_quant)):
            if text is not None:
                with open(os.path.join(d, file), "w") as f:
                    f.write(text)
        return d

    deep = "[" * 500000 + "]" * 500000
    long_name = "a" * (400 << 10)
    ct = {"quant_method": "compressed-tensors", "format": "float-quantized",
          "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float"}}},
          "ignore": ["re:(a|aa)*c", "re:.*x"]}
    regex_dir = model_dir("regex", config=json.dumps({"quantization_config": ct}),
                          tensors=[(long_name + ".weight", "BF16", (8, 8))])
    hf_quant_dir = model_dir("hf-quant", hf_quant='{"quantization": ' + deep + "}")
    modelopt_dir = model_dir("modelopt", config='{"quantization_config": {"quant_method": "modelopt", "x": ' + deep +
                             "}}")

    def refused(file):
        def check_refusal(lines):
            summary = lines[-1]
            check(file in json.dumps(summary) and "nested deeper than 100 levels" in json.dumps(summary),
                  f"the refusal does not name {file} and the depth", summary)
        return check_refusal

    return [
        ("hf-fetch inspect: ignore re:(a|aa)*c and re:.*x over a 400 KB tensor name",
         [HF_FETCH, "inspect", regex_dir], None, {0, 1}, lambda lines: None),
        ("hf-fetch inspect: hf_quant_config.json nested 500,000 deep (1 MB)",
         [HF_FETCH, "inspect", hf_quant_dir], None, {2}, refused("hf_quant_config.json")),
        ("hf-fetch inspect: a modelopt config.json nested 500,000 deep (1 MB)",
         [HF_FETCH, "inspect", modelopt_dir], None, {2}, refused("config.json")),
    ]


def sweep_budgets(rows):
    failures, table = [], []
    for name, argv, env, codes, check_lines in rows:
        rc, out, err, hung = run_measured([*argv, "--json"], env)
        problems = []
        if hung:
            problems.append(f"hung (killed after {ROW_TIMEOUT} s)")
        elif rc < 0:
            problems.append(f"killed by signal {-rc}")
        elif rc not in codes:
            problems.append(f"exit {rc}, not one of {sorted(codes)}")
        rss = peak_rss([*argv, "--json"], env) if not hung else 0
        if rss > MAX_RSS:
            problems.append(f"peak RSS {rss >> 20} MiB, over {MAX_RSS >> 20} MiB")
        if not hung:
            try:
                lines = [json.loads(x) for x in out.splitlines() if x.strip()]
                check_json_lines(lines, out[-2000:])
                check_lines(lines)
            except Exception as e:  # noqa: BLE001 - every cell's failure is reported
                problems.append(str(e).splitlines()[0] if str(e) else type(e).__name__)
        table.append(f"| {name} | {'held' if not problems else 'FAIL'}, exit {rc}, peak RSS {rss >> 20} MiB |")
        if problems:
            failures.append(f"{name}: {'; '.join(problems)} [{(out + err).strip()[-300:]!r}]")
    print("| input | outcome |\n|---|---|", *table, sep="\n")
    check(not failures, "cells that did not hold:\n  " + "\n  ".join(failures))


def test_budget_rows(tmp):
    sweep_budgets(kernel_rows(tmp) + checkpoint_rows(tmp))


if __name__ == "__main__":
    main()
