"""hf-fetch against sizes and counts that cannot all be right (issue 41): sums of sizes from a tree listing,
a manifest or checkpoint headers that would pass 2^64 - 1 are refused naming the file, never wrapped; a tree
where one path is a file and also a folder of another is refused at planning; a listing over the stated cap
is refused. Each against the Hub simulator (its `size` key: a Hub claiming sizes no disk holds).

Run one: python3 test_wrapped_sums.py TEST_NAME   (ctest runs each as its own test)
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main  # noqa: E402
from hf_fixtures import claims_repos, hf_fetch, huge_tensor_header, manifest_yaml, resolves  # noqa: E402

REPO = "org/claims"
SHA = "c1" * 20


def write_repo(tmp, files):
    return claims_repos(tmp, {REPO: files}, SHA)


def fetch(sim, tmp, *extra):
    return hf_fetch(REPO, "--endpoint", sim.hub, "--cache-dir", os.path.join(tmp, "cache"), "--retries", "1",
                    *extra, timeout=60)


# ---- item 3: four LFS files of 2^62 bytes ------------------------------------------------------------


def dry_run_then_fetch(repos, tmp):
    """A --dry-run and then a fetch of `repos` through the simulator: [(result, requests it made)] for each."""
    with HubSim(repos) as sim:
        dry = fetch(sim, tmp, "--dry-run", "--json")
        after_dry = sim.requests()
        sim.clear_requests()
        real = fetch(sim, tmp, "--json")
        after_fetch = sim.requests()
    return [(dry, after_dry), (real, after_fetch)]

def test_four_files_of_2_pow_62_bytes_are_refused_not_wrapped_to_zero(tmp):
    # Four contents (four blobs): the gate counts each blob once, and 4 x 2^62 = 2^64 wrapped to 0, "fits".
    repos = write_repo(tmp, [(f"w{i}.bin", b"x%d" % i, 1 << 62, True) for i in range(4)])
    for r, reqs in dry_run_then_fetch(repos, tmp):
        summary = r.json()
        check(r.rc == 2, f"expected exit 2 (the sizes cannot all be right), got {r.rc}: {r}")
        check(summary.get("reason") == "invalid_input", f"reason: {summary}")
        check("w3.bin" in summary["message"] and "2^64 - 1" in summary["message"],
              f"the refusal does not name the file that took the total past 2^64 - 1: {summary}")
        check(not resolves(reqs), f"bytes were asked for: {[q['path'] for q in resolves(reqs)]}")
    check(not os.path.exists(os.path.join(tmp, "cache", "models--org--claims", "blobs")), "blobs made")


def test_one_file_of_2_pow_62_bytes_is_refused_by_the_disk_gate_at_once(tmp):
    # No wrap here: the gate sees 4 EiB and refuses (exit 1) before a range is planned or a request made.
    repos = write_repo(tmp, [("huge.bin", b"x", 1 << 62, True)])
    with HubSim(repos) as sim:
        r = fetch(sim, tmp, "--connections", "8", "--json")
        reqs = sim.requests()
    summary = r.json()
    check(r.rc == 1 and "not enough space" in summary.get("message", ""), f"expected the disk gate: {r}")
    check(not resolves(reqs), f"bytes were asked for: {[q['path'] for q in resolves(reqs)]}")


def test_manifest_whose_sizes_pass_2_pow_64_is_refused_naming_its_line(tmp):
    files = [{"path": f"w{i}.bin", "size": 1 << 62, "sha256": "ab" * 32} for i in range(4)]
    path = os.path.join(tmp, "huge.yaml")
    with open(path, "w") as f:
        f.write(manifest_yaml(REPO, SHA, files))
    r = hf_fetch("--manifest", path, "--dry-run", "--cache-dir", os.path.join(tmp, "cache"), "--json")
    summary = r.json()
    check(r.rc == 2 and summary.get("reason") == "invalid_input", f"expected exit 2, invalid_input: {r}")
    check(f"{path}:" in summary["message"] and "'w3.bin'" in summary["message"], f"not named: {summary}")


# ---- item 2: inspect, 16 files of one (2^60 + 256)-byte tensor each ------------------------------------

def test_inspect_fit_of_16_tensors_of_2_pow_60_plus_256_bytes_is_refused(tmp):
    tensor = (1 << 60) + 256
    head = huge_tensor_header(tensor)
    repos = write_repo(tmp, [(f"model-{i:05d}.safetensors", head, len(head) + tensor, True) for i in range(16)])
    with HubSim(repos) as sim:
        r = hf_fetch("inspect", REPO, "--endpoint", sim.hub, "--gpus", "1", "--gpu-memory", "1G", "--json",
                     timeout=60)
    summary = r.json()
    check(r.rc == 2 and summary.get("reason") == "invalid_input",
          f"expected exit 2: 16 x (2^60 + 256) bytes cannot be added up (before: 4096 bytes, fits): {r}")
    check("model-00015.safetensors" in summary.get("message", "") and "2^64 - 1" in summary["message"],
          f"the refusal does not name the file: {summary}")
    check('"fits": true' not in r.out, f"a fit was reported: {r}")


def test_inspect_of_15_such_files_still_reports_their_true_total(tmp):
    # Below the edge nothing is refused: 15 x (2^60 + 256) fits in 64 bits and is reported as it is.
    tensor = (1 << 60) + 256
    head = huge_tensor_header(tensor)
    repos = write_repo(tmp, [(f"model-{i:05d}.safetensors", head, len(head) + tensor, True) for i in range(15)])
    with HubSim(repos) as sim:
        r = hf_fetch("inspect", REPO, "--endpoint", sim.hub, "--gpus", "1", "--gpu-memory", "1G", "--json",
                     timeout=60)
    report = r.json()
    check(r.rc == 1, f"expected exit 1 (does not fit): {r}")
    check(report["total"]["bytes"] == 15 * tensor, f"total: {report['total']}")
    check(report["fit"]["weights_per_gpu"] == 15 * tensor and report["fit"]["fits"] is False, f"{report['fit']}")
    check(report["fit"]["free_per_gpu"] == -(2**63 - 1), f"free_per_gpu not held at int64's end: {report['fit']}")


# ---- item 18 (second half): a path that is a file and a folder -------------------------------------------

def test_file_that_is_also_a_folder_is_refused_before_any_byte(tmp):
    repos = write_repo(tmp, [("x.txt", b"outer\n", None, False), ("x.txt/inner", b"inner\n", None, False),
                             ("ok.txt", b"fine\n", None, False)])
    for r, reqs in dry_run_then_fetch(repos, tmp):
        summary = r.json()
        check(r.rc == 2 and summary.get("reason") == "invalid_input", f"expected exit 2: {r}")
        message = summary.get("message", "")
        check("'x.txt/inner'" in message and "'x.txt'" in message, f"both paths not named: {summary}")
        check(not resolves(reqs), f"bytes were asked for: {[q['path'] for q in resolves(reqs)]}")
    check(not os.path.exists(os.path.join(tmp, "cache", "models--org--claims", "snapshots")), "a snapshot was begun")


def test_manifest_with_a_file_that_is_also_a_folder_is_refused(tmp):
    files = [{"path": "x.txt", "size": 1, "sha256": "ab" * 32}, {"path": "x.txt-b", "size": 1, "sha256": "cd" * 32},
             {"path": "x.txt/inner", "size": 1, "sha256": "ef" * 32}]
    path = os.path.join(tmp, "both.yaml")
    with open(path, "w") as f:
        f.write(manifest_yaml(REPO, SHA, files))
    r = hf_fetch("--manifest", path, "--dry-run", "--cache-dir", os.path.join(tmp, "cache"))
    check(r.rc == 2, f"expected exit 2: {r}")
    check("'x.txt/inner' lies in the folder 'x.txt', which is a file (line 5)" in r.err, f"{r}")


if __name__ == "__main__":
    main()
