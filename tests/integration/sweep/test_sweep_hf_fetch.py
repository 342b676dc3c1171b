#!/usr/bin/env python3
"""The attacker sweep (sweep_table.py), hf-fetch's rows: the cache (blobs, partials, .ranges sidecars, stamps,
locks, refs, snapshots, .no_exist), --local-dir, --manifest, --token-file, mirror export --to and inspect of
a snapshot. Each cell a fresh copy, one plant, the real binary, plain and --json.
The class tables (issue 41, sweep_table.sweep_inputs): hostile inputs by class, each row one input with the
refusal its class expects: wrapped sums (sizes a Hub or a manifest claims that add up past 2^64 - 1, a tree
holding `x.txt` and `x.txt/inner`); signals mid-write (SIGTERM, SIGINT and SIGHUP while hf-fetch assembles or
downloads, with stdout a pipe nobody drains, while `mirror export` writes its tree).

Run one: python3 test_sweep_hf_fetch.py test_cache_rows   (ctest runs each alone)
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hf-fetch"))
from common import HubSim, check, main  # noqa: E402
from hf_fixtures import HF_FETCH, Repo, blob, claims_repos, clean_env, huge_tensor_header, sha256  # noqa: E402
from sweep_table import ODD_NAME, Row, sweep, sweep_inputs  # noqa: E402

BIG = "big.safetensors"
FILES = {"config.json": b'{"model_type": "llama"}\n', BIG: blob(1 << 20, "sweep"),
         "sub/tokenizer.json": b'{"version": "1.0"}\n'}
REPO = Repo(FILES, lfs={BIG})
SHA = REPO.sha
BIG_SHA = sha256(FILES[BIG])
MODEL = "models--org--model"
ENV = clean_env()
FETCH_MAX = 256 << 20  # util::kReadFileMax: --manifest, --token-file


def hf(*args):
    return [HF_FETCH, *args]


def repo_path(cell, *parts):
    return cell.path(MODEL, *parts)


def populated(base):
    """A cache the fetch filled and stamped (the rows that plant into a complete cache)."""
    with HubSim(REPO.repos_json) as sim:
        r = hf_run(["--manifest", REPO.manifest, "--endpoint", sim.hub, "--cache-dir", base])
    check(r == 0, f"the base fetch failed: exit {r}")


def hf_run(args):
    return subprocess.run(hf(*args), env=ENV, capture_output=True).returncode


def fetch_into(cell, sim, *extra):
    return {"argv": hf("--manifest", REPO.manifest, "--endpoint", sim.hub, "--cache-dir", cell.root,
                       "--retries", "1", *extra), "env": ENV}


def offline_into(cell):
    return {"argv": hf("--manifest", REPO.manifest, "--offline", "--cache-dir", cell.root), "env": ENV}


# odd-name, where a row has it: a stray file of the odd name beside the planted path (Cell.plant), in a
# directory hf-fetch lists or writes into; elsewhere the names are the manifest's, checked by the path rule.
NAME_FROM_MANIFEST = "names below the cache come from the manifest and the Hub tree, checked by the path rule"


def cache_rows(sim):
    def blob_row(cell, plant):
        cell.plant(repo_path(cell, "blobs", BIG_SHA), plant, 2 << 20)
        return fetch_into(cell, sim)

    def partial_row(cell, plant):
        cell.plant(repo_path(cell, "blobs", BIG_SHA + ".provkit-partial.incomplete"), plant, 2 << 20)
        return fetch_into(cell, sim)

    def sidecar_row(cell, plant):
        partial = repo_path(cell, "blobs", BIG_SHA + ".provkit-partial.incomplete")
        os.makedirs(os.path.dirname(partial), exist_ok=True)
        with open(partial, "wb") as f:
            f.write(FILES[BIG][: 1 << 18])
        cell.plant(partial + ".ranges", plant, (1 << 20) + 1)  # range_record.cpp: kSidecarMax
        return fetch_into(cell, sim, "--connections", "4", "--min-split-size", "65536")

    def stamp_row(cell, plant):
        cell.plant(repo_path(cell, ".provkit", SHA, "verified", BIG + ".stamp"), plant, (64 << 10) + 1)
        return offline_into(cell)

    def stamp_dir_row(cell, plant):
        cell.plant(repo_path(cell, ".provkit", SHA, "verified", "sub"), plant)
        return fetch_into(cell, sim)

    def lock_row(cell, plant):
        cell.plant(cell.path(".locks", MODEL, BIG_SHA + ".lock"), plant, 1 << 20)
        return fetch_into(cell, sim)

    def ref_row(cell, plant):
        cell.plant(repo_path(cell, "refs", "main"), plant, 4097)  # cache_layout.cpp: kRefMax
        return fetch_into(cell, sim)

    def ref_offline_row(cell, plant):
        cell.plant(repo_path(cell, "refs", "main"), plant, 4097)
        return offline_into(cell)

    def snapshot_file_row(cell, plant):
        cell.plant(repo_path(cell, "snapshots", SHA, "config.json"), plant, 1 << 20)
        return fetch_into(cell, sim)

    def snapshot_dir_row(cell, plant):
        cell.plant(repo_path(cell, "snapshots", SHA, "sub"), plant)
        return fetch_into(cell, sim)

    def no_exist_row(cell, plant):
        cell.plant(repo_path(cell, ".no_exist", SHA, "config.json"), plant, 1 << 20)
        return fetch_into(cell, sim)

    not_read = "hf-fetch only writes this file (created O_EXCL beside it and renamed), never reads it"
    return [
        Row("cache blobs/<sha>", blob_row, {"oversized": "no bound: a blob is hashed as a stream and moved aside"}),
        Row("cache blobs/<sha>.provkit-partial", partial_row,
            {"odd-name": NAME_FROM_MANIFEST, "oversized": "cut back to the blob's size when opened"}),
        Row("cache .ranges sidecar", sidecar_row, {"odd-name": NAME_FROM_MANIFEST}),
        Row("cache verified stamp (--offline)", stamp_row, {"odd-name": NAME_FROM_MANIFEST}, base=populated),
        Row("cache .provkit/<commit>/verified/sub", stamp_dir_row,
            {"odd-name": NAME_FROM_MANIFEST, "oversized": "a directory position", "link-file": "a directory "
             "position: link-dir is the shape", "fifo": "a directory position", "device": "a directory position"}),
        Row("cache .locks/<repo>/<sha>.lock", lock_row, {"odd-name": NAME_FROM_MANIFEST, "oversized": not_read}),
        Row("cache refs/main", ref_row, base=populated),
        Row("cache refs/main (--offline)", ref_offline_row, {"odd-name": NAME_FROM_MANIFEST}, base=populated),
        Row("cache snapshots/<commit>/config.json", snapshot_file_row,
            {"odd-name": NAME_FROM_MANIFEST, "oversized": "a link position: replaced, never read"}, base=populated),
        Row("cache snapshots/<commit>/sub", snapshot_dir_row, {"oversized": "a directory position"}),
        Row("cache .no_exist/<commit>/config.json", no_exist_row,
            {"odd-name": NAME_FROM_MANIFEST, "oversized": "never read (huggingface_hub's, not hf-fetch's)"},
            base=populated),
    ]


def test_cache_rows(tmp):
    with HubSim(REPO.repos_json) as sim:
        sweep(cache_rows(sim), tmp)


def user_rows(sim):
    def local_file_row(cell, plant):
        cell.plant(cell.path("config.json"), plant, 1 << 20)
        return {"argv": hf("--manifest", REPO.manifest, "--endpoint", sim.hub, "--local-dir", cell.root),
                "env": ENV}

    def local_dir_row(cell, plant):
        cell.plant(cell.path("sub"), plant)
        return {"argv": hf("--manifest", REPO.manifest, "--endpoint", sim.hub, "--local-dir", cell.root),
                "env": ENV}

    def local_metadata_row(cell, plant):
        cell.plant(cell.path(".cache", "huggingface", "download", "config.json.metadata"), plant, 1 << 20)
        return {"argv": hf("--manifest", REPO.manifest, "--endpoint", sim.hub, "--local-dir", cell.root),
                "env": ENV}

    def manifest_row(cell, plant):
        path = cell.path("manifest.yaml")
        if plant == "odd-name":
            path = cell.odd_path(cell.root)
        else:
            cell.plant(path, plant, FETCH_MAX + 1)
        return {"argv": hf("--manifest", path, "--endpoint", sim.hub, "--cache-dir", cell.path("cache")),
                "env": ENV}

    def token_row(cell, plant):
        path = cell.path("token")
        if plant == "odd-name":
            path = cell.odd_path(cell.root)
        else:
            cell.plant(path, plant, FETCH_MAX + 1)
        return {"argv": hf("--manifest", REPO.manifest, "--endpoint", sim.hub, "--cache-dir", cell.path("cache"),
                           "--token-file", path), "env": ENV}

    def export_row(cell, plant):
        to = cell.path("export")
        if plant == "odd-name":
            to = cell.odd_path(cell.root)
        else:
            os.makedirs(to)
            cell.plant(os.path.join(to, "root"), plant, 1 << 20)
        return {"argv": hf("mirror", "export", "--manifest", REPO.manifest, "--cache-dir", cell.path("cache"),
                           "--to", to), "env": ENV}

    def export_base(base):
        populated(os.path.join(base, "cache"))

    def inspect_row(cell, plant):
        snap = cell.path("cache", MODEL, "snapshots", SHA)
        if plant == "odd-name":
            with open(os.path.join(os.fsencode(snap), ODD_NAME + b".safetensors"), "wb") as f:
                f.write(b"\x02\x00\x00\x00\x00\x00\x00\x00{}")
        else:
            cell.plant(os.path.join(snap, BIG), plant, 2 << 30)
        return {"argv": hf("inspect", snap), "env": ENV}

    return [
        Row("--local-dir DIR/config.json", local_file_row, {"oversized": "moved aside or hashed as a stream"}),
        Row("--local-dir DIR/sub", local_dir_row, {"odd-name": NAME_FROM_MANIFEST, "oversized": "a directory"}),
        Row("--local-dir DIR/.cache/huggingface/download/*.metadata", local_metadata_row,
            {"odd-name": NAME_FROM_MANIFEST}),
        Row("--manifest FILE", manifest_row),
        Row("--token-file FILE", token_row),
        Row("mirror export --to DIR", export_row, base=export_base),
        Row("inspect SNAPSHOT (a file of it)", inspect_row, base=export_base),
    ]


def test_user_named_rows(tmp):
    with HubSim(REPO.repos_json) as sim:
        sweep(user_rows(sim), tmp)


# ---- the class tables (issue 41): hostile inputs by class ----------------------------------------------

TENSOR = (1 << 60) + 256
HEAD = huge_tensor_header(TENSOR)
CLAIMS = {  # repo -> files the simulator claims (path, bytes, claimed size, lfs)
    "org/four-quarters": [(f"w{i}.bin", b"x%d" % i, 1 << 62, True) for i in range(4)],
    "org/one-quarter": [("huge.bin", b"x", 1 << 62, True)],
    "org/sixteen-tensors": [(f"model-{i:05d}.safetensors", HEAD, len(HEAD) + TENSOR, True) for i in range(16)],
    "org/file-and-folder": [("x.txt", b"outer\n", None, False), ("x.txt/inner", b"inner\n", None, False)],
}


def wrapped_sum_rows(sim, tmp):
    quarter = 1 << 62
    manifest = os.path.join(tmp, "quarters.yaml")
    with open(manifest, "w") as f:
        f.write("manifest: 1\nrepo: org/four-quarters\nrevision: " + "c1" * 20 + "\nfiles:\n" +
                "".join(f"  - path: w{i}.bin\n    size: {quarter}\n    sha256: {'ab' * 32}\n" for i in range(4)))

    def by_repo(repo, *extra):
        return lambda cell, cls: {"argv": hf(repo, "--endpoint", sim.hub, "--cache-dir", cell.path("cache"),
                                             "--retries", "1", *extra), "env": ENV}

    def from_manifest(cell, cls):
        return {"argv": hf("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", cell.path("cache"),
                           "--dry-run"), "env": ENV}

    def inspect_fit(cell, cls):
        return {"argv": hf("inspect", "org/sixteen-tensors", "--endpoint", sim.hub, "--gpus", "1",
                           "--gpu-memory", "1G"), "env": ENV}

    return [
        Row("tree: 4 LFS files of 2^62 bytes, `--dry-run` (the gate's sum wrapped to 0: fits)",
            by_repo("org/four-quarters", "--dry-run"), rc={2}),
        Row("tree: 4 LFS files of 2^62 bytes, fetch (2^35 ranges planned: bad_alloc)",
            by_repo("org/four-quarters", "--connections", "8"), rc={2}),
        Row("tree: 1 LFS file of 2^62 bytes, fetch (no wrap: the disk gate)",
            by_repo("org/one-quarter", "--connections", "8"), rc={1}),
        Row("manifest: 4 x `size: 2^62`", from_manifest, rc={2}),
        Row("inspect: 16 tensors of 2^60 + 256 bytes, `--gpus 1 --gpu-memory 1G` (wrapped to 4096: fits)",
            inspect_fit, rc={2}),
        Row("tree: `x.txt` and `x.txt/inner`, `--dry-run`", by_repo("org/file-and-folder", "--dry-run"), rc={2}),
        Row("tree: `x.txt` and `x.txt/inner`, fetch (failed half way)", by_repo("org/file-and-folder"), rc={2}),
    ]


def test_wrapped_sums_rows(tmp):
    with HubSim(claims_repos(os.path.join(tmp, "repos"), CLAIMS)) as sim:
        sweep_inputs("wrapped sums", wrapped_sum_rows(sim, tmp), os.path.join(tmp, "cells"))


# ---- signals mid-write (issue 41, items 14 and 15) -------------------------------------------------------
# A row runs a real run to the point that matters (test_signals.py's scenarios), sends the signal, and holds
# when the run ends at once with 128 + the signal and docs/json.md's `interrupted` summary (--json) or
# sentence (plain), and leaves no temporary behind.


def signal_rows():
    import test_signals as ts

    def during_assembly(sig):
        def run(a):
            problems, codes = [], []
            for extra in (["--json"], []):
                rc, out, err = a.signal(sig, extra)
                codes.append(rc)
                problems += [f"{extra or 'plain'}: {p}" for p in
                             ts.interrupted_problems(sig, "fetch", rc, out, err, bool(extra))]
                if a.leftovers():
                    problems.append(f"{extra or 'plain'}: left {a.leftovers()} in the snapshot")
            return problems, codes
        return run

    def sighup_mid_download():
        repo = ts.slow_repo()
        problems, codes = [], []
        with HubSim(repo.repos_json) as sim:
            for extra in (["--json"], []):
                rc, out, err = ts.signal_mid_fetch(sim, repo, signal.SIGHUP, extra)
                codes.append(rc)
                problems += [f"{extra or 'plain'}: {p}" for p in
                             ts.interrupted_problems(signal.SIGHUP, "fetch", rc, out, err, bool(extra))]
        return problems, codes

    def full_pipe():
        repo = ts.full_pipe_repo()
        problems, codes = [], []
        with HubSim(repo.repos_json) as sim:
            for mode in (["--json"], []):
                rc, took = ts.sigterm_with_stdout_full(sim, repo, mode)
                codes.append(rc)
                if rc != 143 or took >= 5:
                    problems.append(f"{mode or 'plain'}: exit {rc} after {took:.1f} s (143 within 5 s expected; "
                                    "None: it never ended)")
        return problems, codes

    def export_then_next():
        repo = ts.exported_repo()
        to = tempfile.mkdtemp(prefix="sweep-export-")
        rc, out, err = ts.export_signalled(repo, to, signal.SIGTERM)
        problems = [f"killed: {p}" for p in ts.interrupted_problems(signal.SIGTERM, "mirror-export", rc, out, err,
                                                                      True)]
        again = subprocess.run([HF_FETCH, "mirror", "export", "--manifest", repo.manifest, "--cache-dir",
                                repo.cache, "--to", to, "--json"], env=ENV, capture_output=True, text=True)
        if again.returncode != 0:
            problems.append(f"the next export: exit {again.returncode}")
        left = [n for n in os.listdir(to) if ".new-" in n or ".old-" in n]
        if left:
            problems.append(f"after the next export: {left}")
        shutil.rmtree(to, ignore_errors=True)
        return problems, [rc, again.returncode]

    assembly = ts.Assembly()
    in_assembly = [(f"{s.name} during `--assemble` (a manifest's assembly): no `.assemble-*` left, the "
                    "interrupted summary", during_assembly(s)) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)]
    return assembly, in_assembly, [
        ("SIGHUP mid-download: the interrupted summary (was: killed, no summary)", sighup_mid_download),
        ("SIGTERM with stdout a full pipe nobody drains: ends within 5 s (was: never)", full_pipe),
        ("`mirror export` SIGTERM mid-tree: the summary; no `root.new-*` after the next export", export_then_next),
    ]


def test_signal_rows(tmp):
    assembly, in_assembly, others = signal_rows()
    failures, table = [], []

    def record(name, problems, codes):
        failures.extend(f"signals mid-write: {name}: {p}" for p in problems)
        table.append((name, "FAIL" if problems else "held, exit " + "/".join(dict.fromkeys(map(str, codes)))))

    with HubSim(assembly.repo.repos_json) as sim:
        assembly.fetch_once(sim)
        for name, run in in_assembly:
            record(name, *run(assembly))
    for name, run in others:
        record(name, *run())
    print("| signals mid-write | outcome |\n| --- | --- |")
    for name, outcome in table:
        print(f"| {name} | {outcome} |")
    check(not failures, f"{len(failures)} rows did not hold", "\n".join(failures))


if __name__ == "__main__":
    main()
