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


def full_pipe_repo():
    """700 files with long names: enough lines to fill a 64 KiB pipe before the run ends."""
    files = {"config.json": b"{}\n"}
    for i in range(700):
        files[f"shards/{'x' * 120}-{i:04d}.json"] = b'{"i": %d}\n' % i
    return Repo(files)


def sigterm_with_stdout_full(sim, repo, mode):
    """Runs a fetch whose stdout is a pipe nobody drains, sends SIGTERM once the pipe is full (64 KiB; FIONREAD:
    the bytes waiting in it) and the writer stuck: (exit status or None when it never ended, seconds taken)."""
    cache = tempdir("signals-pipe-")
    p = subprocess.Popen([HF_FETCH, "--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", cache,
                          "--progress", "none", *mode], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=clean_env())
    try:
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
        return rc, time.monotonic() - start
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()


def test_sigterm_with_stdout_a_full_pipe_nobody_drains():
    """A stalled log shipper: stdout a pipe that fills and is never read (Popen(stdout=PIPE), then terminate()).
    The writer thread blocks on it holding the output lock; SIGTERM must still end the run, 143, at once."""
    repo = full_pipe_repo()
    with HubSim(repo.repos_json) as sim:
        for mode in (["--json"], []):
            rc, took = sigterm_with_stdout_full(sim, repo, mode)
            check(rc == 143, f"{mode}: SIGTERM with stdout a full pipe: exit {rc} after {took:.1f} s (143 expected; "
                             "None: it never ended, the signal's path waited on the output lock)")
            check(took < 5, f"{mode}: SIGTERM took {took:.1f} s to end the run")


def slow_repo():
    return Repo({"config.json": b"{}\n", "big.gguf": blob(8 << 20, "big")}, lfs={"big.gguf"})


def signal_mid_fetch(sim, repo, sig, extra):
    """A fetch of `repo` (its CDN throttled to 1 MiB/s) sent `sig` 1.5 s in: (exit status, stdout, stderr)."""
    sim.set_faults([{"kind": "throttle", "origin": "cdn", "bytes_per_second": 1 << 20, "times": -1}])
    p = popen("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, *extra)
    time.sleep(1.5)
    p.send_signal(sig)
    out, err = p.communicate(timeout=30)
    return p.returncode, out, err


def interrupted_problems(sig, mode, rc, out, err, json_mode):
    """What an interrupted run's ending lacks (docs/json.md's `interrupted`): exit 128 + the signal, the
    summary naming it (--json) or the sentence (plain). [] when it has it all."""
    name = signal.Signals(sig).name
    problems = [] if rc == 128 + sig else [f"exit {rc}, not {128 + sig}"]
    if json_mode:
        lines = json_lines(out)
        s = lines[-1] if lines else {}
        if not (s.get("event") == "summary" and s.get("exit_code") == 128 + sig and s.get("reason") == "interrupted"
                and s.get("signal") == name and s.get("mode") == mode):
            problems.append(f"no interrupted summary naming {name}: {s}")
    elif f"interrupted by {name}" not in err:
        problems.append(f"no 'interrupted by {name}' sentence")
    return problems


def test_sighup_summary():
    """docs/json.md: SIGHUP ends a fetch with the `interrupted` summary, exit 129 (it killed the process with
    no summary at all)."""
    repo = slow_repo()
    with HubSim(repo.repos_json) as sim:
        for extra in (["--json"], []):
            rc, out, err = signal_mid_fetch(sim, repo, signal.SIGHUP, extra)
            problems = interrupted_problems(signal.SIGHUP, "fetch", rc, out, err, bool(extra))
            check(not problems, f"{extra}: SIGHUP: {problems}\n{out}\n{err}")
            if not extra:
                check("resumes them" in err, f"plain: {out}\n{err}")


class Assembly:
    """A split repo (24 MiB parts), fetched once by fetch_once(sim); signal() then fetches it again with the
    output gone, so that the rerun assembles it, catches that rerun under way and sends it a signal."""

    def __init__(self):
        self.repo, self.whole, self.manifest = split_repo(24 << 20)
        self.snap = self.repo.snapshot()

    def fetch_once(self, sim):
        self.base = ["--manifest", self.manifest, "--cache-dir", self.repo.cache, "--progress", "none",
                     "--endpoint", sim.hub]
        first = hf_fetch(*self.base)
        check(first.rc == 0, f"first fetch: {first}")
        self.stamps = os.path.join(self.repo.repo_dir(), ".provkit", self.repo.sha, "assemble")

    def signal(self, sig, extra=()):
        """Reruns with every part in place and the output gone, and sends `sig` while it assembles:
        (exit status, stdout, stderr)."""
        for _ in range(10):
            if os.path.exists(os.path.join(self.snap, "model.gguf")):
                os.remove(os.path.join(self.snap, "model.gguf"))
            subprocess.run(["rm", "-rf", self.stamps], check=True)
            p = popen(*self.base, *extra)
            if catch_temporary(p, self.snap, "assemble"):
                p.send_signal(sig)
                out, err = p.communicate(timeout=30)
                return p.returncode, out, err
            p.communicate(timeout=30)
        check(False, "the assembly was never caught under way in 10 runs")

    def leftovers(self):
        return leftovers(self.snap, "assemble")


def test_sigterm_during_assembly_leaves_no_temporary():
    """SIGTERM while the output is being assembled: "<out>.assemble-PID-N" (up to the output's size) stayed in the
    snapshot for good. Now the handler removes it; and one a SIGKILL left is removed by the next run."""
    a = Assembly()
    with HubSim(a.repo.repos_json) as sim:
        a.fetch_once(sim)
        rc, out, err = a.signal(signal.SIGTERM, ["--json"])
        check(rc == 143, f"SIGTERM during assembly: exit {rc}\n{out}\n{err}")
        s = json_lines(out)[-1]
        check(s["reason"] == "interrupted" and s["signal"] == "SIGTERM", f"summary: {s}")
        check(not a.leftovers(), f"SIGTERM left {a.leftovers()} in the snapshot")

        rc, out, err = a.signal(signal.SIGKILL)
        check(rc == -9, f"SIGKILL: {rc}")
        left = a.leftovers()
        check(len(left) == 1, f"a SIGKILL mid-assembly should leave its temporary (the test's premise): {left}")
        r = hf_fetch(*a.base)
        check(r.rc == 0, f"the run after the SIGKILL: {r}")
        check(not a.leftovers(), f"the next run left {a.leftovers()} in the snapshot")
        with open(os.path.join(a.snap, "model.gguf"), "rb") as f:
            check(f.read() == a.whole, "the output is not the parts joined")


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


def exported_repo():
    """1500 small files fetched into a cache: an export long enough to be caught under way."""
    files = {f"shards/s-{i:04d}.bin": blob(4096, f"s{i}") for i in range(1500)}
    repo = Repo(files, lfs=set(files))
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch("--manifest", repo.manifest, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--jobs", "16",
                     "--progress", "none", "--quiet")
        check(r.rc == 0, f"fetch: {r}")
    return repo


def export_signalled(repo, to, sig):
    """`mirror export --json` of `repo` into `to`, sent `sig` while its new tree is under way:
    (exit status, stdout, stderr)."""
    export = ["mirror", "export", "--manifest", repo.manifest, "--cache-dir", repo.cache, "--to", to, "--json"]
    for _ in range(10):
        p = popen(*export)
        if catch_temporary(p, to, "new"):
            p.send_signal(sig)
            out, err = p.communicate(timeout=30)
            return p.returncode, out, err
        p.communicate(timeout=30)
    check(False, "the export was never caught under way in 10 runs")


def test_mirror_export_sigterm_summary_and_leftover_trees():
    """`mirror export` killed by SIGTERM died by the signal with no summary and left "root.new-PID-N" trees that
    later exports never cleaned. Now: the summary, exit 143, no tree left; and trees a SIGKILL left (new and old)
    go with the next export."""
    repo = exported_repo()
    to = tempdir("signals-export-")
    export = ["mirror", "export", "--manifest", repo.manifest, "--cache-dir", repo.cache, "--to", to, "--json"]
    rc, out, err = export_signalled(repo, to, signal.SIGTERM)
    check(rc == 143, f"mirror export SIGTERM: exit {rc}\n{out}\n{err}")
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
