"""Signals and what an interrupted run leaves (issue 41, items 14 and 15): real hf-fetch processes against
the Hub simulator, sent real signals at the points that matter. SIGTERM ends a run whose stdout is a full pipe
nobody drains; SIGHUP gives the documented `interrupted` summary; SIGTERM during an assembly or a mirror
export removes the temporary it was writing; what a run killed outright (SIGKILL) left is removed by the next
run, before the disk gate counts the free space.

Run one: python3 test_signals.py test_sighup_summary   (ctest runs each as its own test)
"""

import fcntl
import json
import os
import signal
import subprocess
import sys
import termios
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, tempdir  # noqa: E402
from hf_fixtures import HF_FETCH, Repo, blob, clean_env, file_entries, hf_fetch, sha256  # noqa: E402
from test_faults import tmpfs  # noqa: E402

PARTS = ["p/model.gguf.part1of2", "p/model.gguf.part2of2"]


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def popen(*args):
    return subprocess.Popen([HF_FETCH, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=clean_env())


def split_repo(part_size):
    files = {"config.json": b'{"model_type": "llama"}\n'}
    for path in PARTS:
        files[path] = blob(part_size, path)
    repo = Repo(files, lfs=set(PARTS))
    whole = b"".join(files[p] for p in PARTS)
    manifest = repo.write_manifest(file_entries(repo.files, repo.lfs), name="asm.yaml",
                                   assemble=[{"output": "model.gguf", "parts": PARTS, "sha256": sha256(whole)}])
    return repo, whole, manifest


def leftovers(directory, tag):
    return [n for n in os.listdir(directory) if f".{tag}-" in n] if os.path.isdir(directory) else []


def catch_temporary(p, directory, tag, timeout=60):
    """Polls (no sleep) until `directory` holds a temporary with `tag` while `p` runs; False when p ended first."""
    deadline = time.monotonic() + timeout
    while p.poll() is None and time.monotonic() < deadline:
        if leftovers(directory, tag):
            return True
    return False


def test_sigterm_with_stdout_a_full_pipe_nobody_drains():
    """A stalled log shipper: stdout a pipe that fills and is never read (Popen(stdout=PIPE), then terminate()).
    The writer thread blocks on it holding the output lock; SIGTERM must still end the run, 143, at once."""
    files = {"config.json": b"{}\n"}
    for i in range(700):
        files[f"shards/{'x' * 120}-{i:04d}.json"] = b'{"i": %d}\n' % i
    repo = Repo(files)
    with HubSim(repo.repos_json) as sim:
        for mode in (["--json"], []):
            cache = tempdir("signals-pipe-")
            p = subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", cache,
                                  "--progress", "none", *mode], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 env=clean_env())
            try:
                # Until the pipe is full (64 KiB; FIONREAD: the bytes waiting in it) and the writer is stuck.
                deadline = time.monotonic() + 60
                held = bytearray(4)
                while p.poll() is None and time.monotonic() < deadline:
                    fcntl.ioctl(p.stdout.fileno(), termios.FIONREAD, held)
                    if int.from_bytes(held, sys.byteorder) >= 60000:
                        break
                    time.sleep(0.05)
                check(p.poll() is None, f"{mode}: the run ended before its stdout filled; the test needs more files")
                time.sleep(0.5)
                start = time.monotonic()
                p.terminate()
                try:
                    rc = p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    rc = None
                took = time.monotonic() - start
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                p.stdout.close()
            check(rc == 143, f"{mode}: SIGTERM with stdout a full pipe: exit {rc} after {took:.1f} s (143 expected; "
                             "None: it never ended, the signal's path waited on the output lock)")
            check(took < 5, f"{mode}: SIGTERM took {took:.1f} s to end the run")


def test_sighup_summary():
    """docs/json.md: SIGHUP ends a fetch with the `interrupted` summary, exit 129 (it killed the process with
    no summary at all)."""
    files = {"config.json": b"{}\n", "big.gguf": blob(8 << 20, "big")}
    repo = Repo(files, lfs={"big.gguf"})
    with HubSim(repo.repos_json) as sim:
        sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 1 << 20, "times": -1}])
        for extra in (["--json"], []):
            p = popen("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, *extra)
            time.sleep(1.5)
            p.send_signal(signal.SIGHUP)
            out, err = p.communicate(timeout=30)
            check(p.returncode == 129, f"{extra}: SIGHUP: exit {p.returncode}, not 129\n{out}\n{err}")
            if extra:
                s = json_lines(out)[-1]
                check(s["event"] == "summary" and s["exit_code"] == 129 and s["reason"] == "interrupted"
                      and s["signal"] == "SIGHUP" and s["mode"] == "fetch", f"summary: {s}")
            else:
                check("interrupted by SIGHUP" in err and "resumes them" in err, f"plain: {out}\n{err}")


def test_sigterm_during_assembly_leaves_no_temporary():
    """SIGTERM while the output is being assembled: "<out>.assemble-PID-N" (up to the output's size) stayed in the
    snapshot for good. Now the handler removes it; and one a SIGKILL left is removed by the next run."""
    repo, whole, manifest = split_repo(24 << 20)
    snap = repo.snapshot()
    base = ["--manifest", manifest, "--cache-dir", repo.cache, "--progress", "none"]
    with HubSim(repo.repos_json) as sim:
        first = hf_fetch(*base, "--endpoint", sim.hub)
        check(first.rc == 0, f"first fetch: {first}")
        stamps = os.path.join(repo.repo_dir(), ".provkit", repo.sha, "assemble")

        def again(sig, extra=()):
            """Reruns with every part in place and the output gone, and sends `sig` while it assembles."""
            for _ in range(10):
                if os.path.exists(os.path.join(snap, "model.gguf")):
                    os.remove(os.path.join(snap, "model.gguf"))
                subprocess.run(["rm", "-rf", stamps], check=True)
                p = popen(*base, "--endpoint", sim.hub, *extra)
                if catch_temporary(p, snap, "assemble"):
                    p.send_signal(sig)
                    out, err = p.communicate(timeout=30)
                    return p.returncode, out, err
                p.communicate(timeout=30)
            check(False, "the assembly was never caught under way in 10 runs")

        rc, out, err = again(signal.SIGTERM, ["--json"])
        check(rc == 143, f"SIGTERM during assembly: exit {rc}\n{out}\n{err}")
        s = json_lines(out)[-1]
        check(s["reason"] == "interrupted" and s["signal"] == "SIGTERM", f"summary: {s}")
        check(not leftovers(snap, "assemble"), f"SIGTERM left {leftovers(snap, 'assemble')} in the snapshot")

        rc, out, err = again(signal.SIGKILL)
        check(rc == -9, f"SIGKILL: {rc}")
        left = leftovers(snap, "assemble")
        check(len(left) == 1, f"a SIGKILL mid-assembly should leave its temporary (the test's premise): {left}")
        r = hf_fetch(*base, "--endpoint", sim.hub)
        check(r.rc == 0, f"the run after the SIGKILL: {r}")
        check(not leftovers(snap, "assemble"), f"the next run left {leftovers(snap, 'assemble')} in the snapshot")
        with open(os.path.join(snap, "model.gguf"), "rb") as f:
            check(f.read() == whole, "the output is not the parts joined")


def test_leftover_assembly_temporary_is_removed_before_the_disk_gate():
    """A dead run's "<out>.assemble-PID-N" holds up to the output's size. The gate once counted it as used
    space and refused a fetch that fits; now the run removes it first (its lock is free: its run is gone)."""
    mib = 1 << 20
    repo, whole, manifest = split_repo(2 * mib)
    with tmpfs("11m") as d, HubSim(repo.repos_json) as sim:
        cache = os.path.join(d, "cache")
        base = ["--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", cache, "--progress", "none"]
        first = hf_fetch(*base)
        check(first.rc == 0, f"first fetch: {first}")
        snap = os.path.join(cache, "models--org--model", "snapshots", repo.sha)
        os.remove(os.path.join(snap, "model.gguf"))  # 4 MiB parts are left; the output is to be made again
        dead = os.path.join(snap, "model.gguf.assemble-4194303-0")  # a PID past pid_max: its run is surely gone
        with open(dead, "wb") as f:
            f.write(whole)
        r = hf_fetch(*base, "--json")
        check(r.rc == 0, f"the leftover's 4 MiB were counted against the fetch instead of removed: {r}")
        check(not os.path.exists(dead), "the leftover is still there")
        with open(os.path.join(snap, "model.gguf"), "rb") as f:
            check(f.read() == whole, "the output is not the parts joined")


def test_mirror_export_sigterm_summary_and_leftover_trees():
    """`mirror export` killed by SIGTERM died by the signal with no summary and left "root.new-PID-N" trees that
    later exports never cleaned. Now: the summary, exit 143, no tree left; and trees a SIGKILL left (new and old)
    go with the next export."""
    files = {f"shards/s-{i:04d}.bin": blob(4096, f"s{i}") for i in range(1500)}
    repo = Repo(files, lfs=set(files))
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--jobs", "16",
                     "--progress", "none", "--quiet")
        check(r.rc == 0, f"fetch: {r}")
    to = tempdir("signals-export-")
    export = ["mirror", "export", "--manifest", repo.manifest, "--cache-dir", repo.cache, "--to", to, "--json"]
    for _ in range(10):
        p = popen(*export)
        if catch_temporary(p, to, "new"):
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=30)
            break
        p.communicate(timeout=30)
    else:
        check(False, "the export was never caught under way in 10 runs")
    check(p.returncode == 143, f"mirror export SIGTERM: exit {p.returncode}\n{out}\n{err}")
    s = json_lines(out)[-1] if json_lines(out) else {}
    check(s.get("reason") == "interrupted" and s.get("signal") == "SIGTERM" and s.get("mode") == "mirror-export",
          f"mirror export SIGTERM summary: {out!r}")
    check(not leftovers(to, "new"), f"SIGTERM left {leftovers(to, 'new')}")

    # What runs killed outright leave: an unfinished new tree and an old one whose removal was cut short.
    for name in ("root.new-4194303-0", "root.old-4194303-1"):
        os.makedirs(os.path.join(to, name, "api", "models"))
        with open(os.path.join(to, name, "api", "models", "x"), "w") as f:
            f.write("left")
    x = hf_fetch(*export)
    check(x.rc == 0, f"export after the kills: {x}")
    check(sorted(os.listdir(to)) == sorted(n for n in os.listdir(to) if ".new-" not in n and ".old-" not in n),
          f"the export left the dead runs' trees: {os.listdir(to)}")


if __name__ == "__main__":
    main()
