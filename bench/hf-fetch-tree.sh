#!/usr/bin/env bash
# hf-fetch REPO --dry-run on a repository of FILES files (default 300000) served by the Hub simulator on
# loopback (issue 41, item 7): what holding a tree listing costs. Peak resident memory (GNU time's "Maximum
# resident set size") and wall time of the whole run (revision, every tree page, the pin, the plan), over RUNS
# runs (default 3: min and median of each), hf-fetch's own CPU time (user + system), with the listing's bytes
# and the memory per file. The wall time includes the simulator's (Python) serving of the pages.
#
#   bench/hf-fetch-tree.sh [HF_FETCH_BINARY]          (default build/bin/hf-fetch)
#   env: FILES=300000 RUNS=3 BENCH_DIR (default mktemp in /var/tmp)
#
# The files are LFS entries of one 1-byte source (the simulator takes the given sha256 and skips hashing),
# at paths like the real Hub's large trees: "shard-00042/part-000123.safetensors", about 37 bytes each.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${PROVKIT_SOURCE_DIR:-$(cd "$here/.." && pwd)}
bin=$(realpath "${1:-${PROVKIT_BIN:-$src/build/bin}/hf-fetch}")
[[ -x $bin ]] || { echo "hf-fetch-tree.sh: no hf-fetch at $bin" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "hf-fetch-tree.sh: needs GNU time (/usr/bin/time, Debian package time)" >&2; exit 2; }
dir=${BENCH_DIR:-$(mktemp -d /var/tmp/provkit-tree-bench.XXXXXX)}
FILES=${FILES:-300000} RUNS=${RUNS:-3} python3 - "$src" "$bin" "$dir" <<'PY'
import hashlib, json, os, re, statistics, subprocess, sys, time
src, binary, d = sys.argv[1:4]
sys.path[:0] = [os.path.join(src, "tests", "hubsim")]
from simctl import HubSim
n, runs = int(os.environ["FILES"]), int(os.environ["RUNS"])
os.makedirs(os.path.join(d, "files"), exist_ok=True)
with open(os.path.join(d, "files", "one"), "wb") as f:
    f.write(b"x")
one = hashlib.sha256(b"x").hexdigest()
files = [{"path": f"shard-{i // 1000:05d}/part-{i % 1000:06d}.safetensors", "source": "files/one", "lfs": True,
          "sha256": one} for i in range(n)]
with open(os.path.join(d, "repos.json"), "w") as f:
    json.dump({"repos": [{"id": "bench/wide-tree", "type": "model",
                          "commits": [{"sha": "ab" * 20, "refs": ["main"], "files": files}]}]}, f)
del files
try:
    sim = HubSim(os.path.join(d, "repos.json"), timeout=600).__enter__()
except RuntimeError:  # no 127.0.0.2 on this host: the CDN origin on 127.0.0.1 too
    sim = HubSim(os.path.join(d, "repos.json"), timeout=600, extra_args=("--cdn-host", "127.0.0.1")).__enter__()
with sim:
    rss, wall, cpu, summary = [], [], [], None
    for r in range(runs):
        sim.clear_requests()
        cache = os.path.join(d, f"cache-{r}")
        t0 = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-v", binary, "bench/wide-tree", "--dry-run", "--json",
                            "--endpoint", sim.hub, "--cache-dir", cache], capture_output=True, text=True)
        wall.append(time.monotonic() - t0)
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
        rss.append(int(m.group(1)) * 1024 if m else None)
        cpu.append(sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", p.stderr)))
        lines = [x for x in p.stdout.splitlines() if x.startswith("{")]
        summary = json.loads(lines[-1]) if lines else {"exit_code": p.returncode, "stderr": p.stderr[-500:]}
    listing = sum(x.get("bytes_sent") or 0 for x in sim.requests() if "/tree/" in x["path"])
print(json.dumps({"files": n, "listing_bytes": listing, "runs": runs, "exit_code": summary.get("exit_code"),
                  "message": summary.get("message"),
                  "peak_rss_bytes_min": min(rss), "peak_rss_bytes_median": statistics.median(rss),
                  "rss_bytes_per_file": round(min(rss) / n), "wall_s_min": round(min(wall), 2),
                  "wall_s_median": round(statistics.median(wall), 2), "cpu_s_min": round(min(cpu), 2)}))
PY
