#!/usr/bin/env bash
# hf-fetch inspect on a checkpoint of SHARDS safetensors shards (default 60, each SHARD_MIB MiB of tensor
# data, default 8) served by the Hub simulator on loopback (issue 15): wall time of a whole run (revision,
# tree, every header by Range, config and index) over RUNS runs (default 5: min and median), the bytes
# inspect reports as transferred, and the simulator's own count of requests and body bytes sent.
#
#   bench/hf-fetch-inspect.sh [HF_FETCH_BINARY]          (default build/bin/hf-fetch)
#   env: SHARDS=60 SHARD_MIB=8 RUNS=5 JOBS (passed as --jobs when set), BENCH_DIR (default mktemp in /var/tmp)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${PROVKIT_SOURCE_DIR:-$(cd "$here/.." && pwd)}
bin=$(realpath "${1:-${PROVKIT_BIN:-$src/build/bin}/hf-fetch}")
[[ -x $bin ]] || { echo "hf-fetch-inspect.sh: no hf-fetch at $bin" >&2; exit 2; }
dir=${BENCH_DIR:-$(mktemp -d /var/tmp/provkit-inspect-bench.XXXXXX)}
SHARDS=${SHARDS:-60} SHARD_MIB=${SHARD_MIB:-8} RUNS=${RUNS:-5} JOBS=${JOBS:-} \
  python3 - "$src" "$bin" "$dir" <<'PY'
import json, os, statistics, subprocess, sys, time
src, binary, d = sys.argv[1:4]
sys.path[:0] = [os.path.join(src, "tests", "hubsim"), os.path.join(src, "tests", "integration", "hf-fetch")]
from simctl import HubSim, make_repo
import checkpoints as ck
shards, mib, runs = int(os.environ["SHARDS"]), int(os.environ["SHARD_MIB"]), int(os.environ["RUNS"])
# One decoder layer per shard, FP8 block-quantized; hidden size chosen so a shard holds about SHARD_MIB MiB.
hidden = 256
while 17 * hidden * hidden // 2 < mib << 20:  # q, o: h^2; k, v: h^2/4; gate, up, down: 2 h^2 (F8: a byte each)
    hidden *= 2
model, index = ck.sharded_model(shards, ck.fp8_block, shards=shards, hidden=hidden, inter=2 * hidden, vocab=1024)
files = {"config.json": json.dumps(ck.FP8_CONFIG).encode(), "model.safetensors.index.json": json.dumps(index).encode()}
root = os.path.join(d, "src")
os.makedirs(root, exist_ok=True)
for p, t in model.items():
    files[p] = ck.safetensors(t, {"format": "pt"})
sha = make_repo(d, "bench/fp8-60", files, lfs={p for p in files if p.endswith(".safetensors")})
total = sum(len(v) for v in files.values())
del files
args = [binary, "inspect", "bench/fp8-60", "--json"] + (["--jobs", os.environ["JOBS"]] if os.environ.get("JOBS") else [])
try:
    sim = HubSim(os.path.join(d, "repos.json")).__enter__()
except RuntimeError:  # no 127.0.0.2 on this host: the CDN origin on 127.0.0.1 too
    sim = HubSim(os.path.join(d, "repos.json"), extra_args=("--cdn-host", "127.0.0.1")).__enter__()
with sim:
    times, report = [], None
    for _ in range(runs):
        sim.clear_requests()
        t0 = time.monotonic()
        p = subprocess.run(args + ["--endpoint", sim.hub], capture_output=True, text=True)
        times.append(time.monotonic() - t0)
        if p.returncode != 0:
            sys.exit(f"inspect failed ({p.returncode}): {p.stderr or p.stdout}")
        report = json.loads(p.stdout.splitlines()[-1])
    reqs = sim.requests()
print(json.dumps({"shards": shards, "checkpoint_bytes": total, "tensors": report["total"]["tensors"],
                  "runs": runs, "min_s": round(min(times), 3), "median_s": round(statistics.median(times), 3),
                  "transferred": report["transferred"], "requests": len(reqs),
                  "bytes_sent_by_simulator": sum(r.get("bytes_sent") or 0 for r in reqs),
                  "findings": len(report["quantization"]["findings"]), "exit_code": report["exit_code"]}))
PY
