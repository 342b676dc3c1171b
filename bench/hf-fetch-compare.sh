#!/usr/bin/env bash
# hf-fetch side by side with the tools people use instead (issue 6), each a ratio measured in one run
# against the same local origin: nginx serves the LFS blobs with a per-connection limit_rate (so that
# parallel connections matter, as on the real CDN), the Hub simulator answers the API and redirects LFS
# downloads to nginx (--external-cdn).
#
#   bench/hf-fetch-compare.sh [HF_FETCH_BINARY]            (default build/bin/hf-fetch)
#   env: RATE=50m (nginx limit_rate per connection), BIG_MIB=8192 (the single file), SHARDS=7,
#        SHARD_MIB=1024, SMALL=10 (small config files), CONNECTIONS=8 (passed as --connections when
#        hf-fetch has it), JS_MODULE_DIR (folder holding node_modules/@huggingface/hub; default
#        build/npm/hf-hub; the JS row is skipped when missing), BENCH_DIR (default mktemp in /var/tmp),
#        BENCH_OUT (where the clients write; default BENCH_DIR),
#        PARTS="1 2 3 4" (which parts to run; 3 and 4 fill the cache untimed when 2 is left out).
#
# 1. one big file: hf-fetch (fetch + sha256) vs `aria2c -x8 -s8` vs `curl -o` (aria2c and curl on the
#    nginx URL directly, no Hub round trip, no verification). Target: hf-fetch <= aria2c.
# 2. a manifest of SMALL small files + SHARDS shards: hf-fetch vs @huggingface/hub snapshotDownload
#    (tests/integration/hubsim/js_snapshot.mjs) vs `aria2c -i` (-j8 -x8 -s8). Target: hf-fetch fastest.
# 3. the same manifest again, everything in place: wall time (target < 0.1 s) and bytes sent by the
#    simulator (beyond the tree listing) and by nginx; again with --offline when hf-fetch has it.
# 4. --verify-only on the manifest's files vs `openssl dgst -sha256` on them through xargs -P nproc
#    (warm page cache). Target: within 1.10x.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
bin=$(realpath "${1:-${PROVKIT_BIN:-$src/build/bin}/hf-fetch}")
rate=${RATE:-50m}
big_mib=${BIG_MIB:-8192}
shards=${SHARDS:-7}
shard_mib=${SHARD_MIB:-1024}
small=${SMALL:-10}
connections=${CONNECTIONS:-8}
js_dir=${JS_MODULE_DIR:-$src/build/npm/hf-hub}
parts=" ${PARTS:-1 2 3 4} "
part() { [[ $parts == *" $1 "* ]]; }
part 1 || big_mib=1
[[ -x $bin ]] || { echo "hf-fetch-compare.sh: no hf-fetch at $bin (build it, or pass its path)" >&2; exit 2; }
for tool in nginx curl openssl python3 aria2c; do
  command -v $tool >/dev/null || { echo "hf-fetch-compare.sh: $tool missing (scripts/deps.sh --bench)" >&2; exit 2; }
done
# shellcheck source=lib/nginx.sh
source "$here/lib/nginx.sh"

work=${BENCH_DIR:-$(mktemp -d /var/tmp/provkit-bench-compare.XXXXXX)}
outs=${BENCH_OUT:-$work}  # where the clients write (e.g. a dir on /dev/shm: the disk taken out)
mkdir -p "$work" "$outs"
chmod 755 "$work"  # nginx workers run as an unprivileged user
# origin (big + shards) + one copy of the big file + one copy of the shards at a time, + slack
need_kib=$(((big_mib * 2 + shards * shard_mib * 2 + 1024) * 1024))
avail_kib=$(df -Pk "$work" | awk 'NR==2 {print $4}')
if ((avail_kib < need_kib)); then
  echo "hf-fetch-compare.sh: $work has $((avail_kib / 1024)) MiB free, needs $((need_kib / 1024)) MiB" >&2
  exit 2
fi

sim_pid=
cleanup() {
  [[ -n ${NGINX_PID:-} ]] && stop_nginx
  [[ -n $sim_pid ]] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
  [[ -n ${NGINX_DIR:-} ]] && rm -rf "$NGINX_DIR"
  rm -rf "$work" "$outs"
  true
}
trap cleanup EXIT

now() { echo "${EPOCHREALTIME/./}"; }  # microseconds, no fork
secs() { awk -v us="$1" 'BEGIN {printf "%.3f", us / 1e6}'; }
elapsed=0
timed() {  # timed COMMAND...: sets $elapsed (microseconds); the command must succeed
  sync
  local t0; t0=$(now)
  "$@"
  elapsed=$(($(now) - t0))
}
die() { echo "hf-fetch-compare.sh: $*" >&2; exit 1; }

has_connections=0 has_offline=0
"$bin" --help | grep -q -- '--connections' && has_connections=1
"$bin" --help | grep -q -- '--offline' && has_offline=1
fetch_flags=(--quiet)
((has_connections)) && fetch_flags+=(--connections "$connections")

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "host: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')," \
  "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
echo "uptime at start: $(uptime)"
echo "hf-fetch: $bin (--connections: $( ((has_connections)) && echo "yes, $connections" || echo no);" \
  "--offline: $( ((has_offline)) && echo yes || echo no))"
echo "aria2c: $(aria2c --version | head -1); curl: $(curl --version | head -1 | cut -d' ' -f1-2); nginx limit_rate $rate per connection"

# Blobs: pseudo-random bytes (AES-CTR keystream), named by their sha256 as nginx serves them.
mkdir -p "$work/origin/blobs" "$work/repo" "$work/hf-home"
echo "writing the blobs: 1 x $big_mib MiB, $shards x $shard_mib MiB ..."
big_sha=$(make_blob "$big_mib" big)
shard_sha=()
for ((i = 1; i <= shards; i++)); do shard_sha+=("$(make_blob "$shard_mib" "shard$i")"); done
for ((i = 1; i <= small; i++)); do
  printf '{"name": "config-%d", "layers": %d, "pad": "%s"}\n' "$i" "$i" "$(head -c $((i * 300)) /dev/zero | tr '\0' x)" \
    >"$work/repo/config-$i.json"
done

# repos.json: bench/big (one LFS file), bench/shards (small git files + LFS shards); trusted sha256s.
python3 - "$work" "$big_sha" "$small" "${shard_sha[@]}" <<'PY'
import hashlib, json, sys
work, big, small, shards = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def commit(name): return hashlib.sha1(name.encode()).hexdigest()
files = [{"path": f"config-{i}.json", "source": f"repo/config-{i}.json"} for i in range(1, small + 1)]
n = len(shards)
files += [{"path": f"model-{i:05d}-of-{n:05d}.safetensors", "source": f"origin/blobs/{s}", "lfs": True, "sha256": s}
          for i, s in enumerate(shards, 1)]
repos = {"repos": [
    {"id": "bench/big", "type": "model", "commits": [{"sha": commit("big" + big), "refs": ["main"], "files": [
        {"path": "model.safetensors", "source": f"origin/blobs/{big}", "lfs": True, "sha256": big}]}]},
    {"id": "bench/shards", "type": "model", "commits": [{"sha": commit("shards" + "".join(shards)), "refs": ["main"],
        "files": files}]}]}
json.dump(repos, open(f"{work}/repos.json", "w"), indent=1)
PY

start_nginx "$work/origin" "$rate"
python3 "$src/tests/hubsim/hubsim.py" --repos "$work/repos.json" --ready-file "$work/ready.json" \
  --external-cdn "$NGINX_URL/blobs/{sha256}" >"$work/hubsim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 300); do [[ -s $work/ready.json ]] && break; sleep 0.1; done
[[ -s $work/ready.json ]] || die "the simulator did not start: $(tail -5 "$work/hubsim.log")"
hub=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hub"])' "$work/ready.json")
export HF_HOME=$work/hf-home
unset HF_TOKEN HF_ENDPOINT HF_HUB_CACHE HF_HUB_OFFLINE

"$bin" manifest create bench/big@main --endpoint "$hub" --quiet -o "$work/big.manifest"
"$bin" manifest create bench/shards@main --endpoint "$hub" --quiet -o "$work/shards.manifest"
shards_commit=$(awk '/^revision:/ {print $2}' "$work/shards.manifest")

cat "$work"/origin/blobs/* >/dev/null  # warm origin: the disk under nginx is not the bottleneck
results=()
row() { results+=("$(printf '%-58s %9.3f s  %s' "$1" "$(secs "$2")" "${3:-}")"); echo "  ${results[-1]}"; }
mbps() { awk -v b="$1" -v us="$2" 'BEGIN {printf "%.0f MB/s", b / (us / 1e6) / 1e6}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

# --- 1. one big file --------------------------------------------------------------------------
if part 1; then
big_bytes=$((big_mib * 1048576))
big_url=$NGINX_URL/blobs/$big_sha
echo "1. one ${big_mib} MiB file"
# Untimed warm-up: the first client to fill the output file system with this much paid up to 2x more
# (kernel time reclaiming memory: 44 s, 38 s of it sys, where the same run right after took 27 s).
aria2c -q -x8 -s8 --file-allocation=falloc --allow-overwrite=true --auto-file-renaming=false \
  -d "$outs/warm" -o big.bin "$big_url"
rm -rf "$outs/warm" "$outs/cache"
timed "$bin" --manifest "$work/big.manifest" --cache-dir "$outs/cache" --endpoint "$hub" "${fetch_flags[@]}"
t_fetch=$elapsed
[[ $(stat -c %s "$outs/cache/models--bench--big/blobs/$big_sha") == "$big_bytes" ]] || die "hf-fetch: wrong size"
row "hf-fetch --manifest (sha256 verified)" "$t_fetch" "$(mbps $big_bytes "$t_fetch")"
rm -rf "$outs/cache"
timed aria2c -q -x8 -s8 --file-allocation=falloc --allow-overwrite=true --auto-file-renaming=false \
  -d "$outs/out" -o big.bin "$big_url"
t_aria=$elapsed
row "aria2c -x8 -s8 (no verification)" "$t_aria" "$(mbps $big_bytes "$t_aria")"
rm -rf "$outs/out"
timed curl -sS --fail -o "$outs/curl.out" "$big_url"
t_curl=$elapsed
[[ $(stat -c %s "$outs/curl.out") == "$big_bytes" ]] || die "curl: wrong size"
row "curl -o (one connection, no verification)" "$t_curl" "$(mbps $big_bytes "$t_curl")"
rm -f "$outs/curl.out"
r=$(ratio "$t_fetch" "$t_aria")
results+=("   ratio hf-fetch / aria2c = $r (target <= 1.00: $(awk -v r="$r" 'BEGIN {print (r <= 1.0 ? "MET" : "MISSED")}'));\
 hf-fetch / curl -o = $(ratio "$t_fetch" "$t_curl")")
echo "  ${results[-1]}"
fi

# --- 2. the manifest ---------------------------------------------------------------------------
n_files=$((small + shards))
man_bytes=$(awk '/size:/ {s += $2} END {printf "%.0f", s}' "$work/shards.manifest")
echo "2. a $n_files-file manifest ($small small files, $shards x $shard_mib MiB), $man_bytes bytes"
cache=$outs/cache
snap=$cache/models--bench--shards/snapshots/$shards_commit
if ! part 2; then
  echo "   (part 2 left out: filling the cache untimed)"
  "$bin" --manifest "$work/shards.manifest" --cache-dir "$cache" --endpoint "$hub" "${fetch_flags[@]}"
else
{
  for ((i = 1; i <= small; i++)); do
    printf '%s\n  out=config-%d.json\n' "$hub/bench/shards/resolve/$shards_commit/config-$i.json" "$i"
  done
  for ((i = 1; i <= shards; i++)); do
    printf '%s\n  out=model-%05d-of-%05d.safetensors\n' "$NGINX_URL/blobs/${shard_sha[i - 1]}" "$i" "$shards"
  done
} >"$work/aria2.input"
# Untimed warm-up, as in part 1.
aria2c -q -i "$work/aria2.input" -j8 -x8 -s8 --file-allocation=falloc --allow-overwrite=true \
  --auto-file-renaming=false -d "$outs/warm"
rm -rf "$outs/warm"
timed "$bin" --manifest "$work/shards.manifest" --cache-dir "$cache" --endpoint "$hub" "${fetch_flags[@]}"
t_mfetch=$elapsed
row "hf-fetch --manifest ($n_files files, verified)" "$t_mfetch" "$(mbps "$man_bytes" "$t_mfetch")"
t_js=
if [[ -d $js_dir/node_modules/@huggingface/hub ]] && command -v node >/dev/null; then
  js_version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' \
    "$js_dir/node_modules/@huggingface/hub/package.json")
  timed node "$src/tests/integration/hubsim/js_snapshot.mjs" --module-dir "$js_dir" --hub "$hub" \
    --repo bench/shards --revision "$shards_commit" --cache-dir "$outs/js-cache" >"$work/js.json" 2>"$work/js.err"
  t_js=$elapsed
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert len(s["files"]) == int(sys.argv[2]), s' \
    "$work/js.json" "$n_files" || die "the JS client fetched the wrong files"
  row "@huggingface/hub $js_version snapshotDownload (size check only)" "$t_js" "$(mbps "$man_bytes" "$t_js")"
  rm -rf "$outs/js-cache"
else
  echo "  (no @huggingface/hub in $js_dir or no node: JS row skipped)"
fi
timed aria2c -q -i "$work/aria2.input" -j8 -x8 -s8 --file-allocation=falloc --allow-overwrite=true \
  --auto-file-renaming=false -d "$outs/out"
t_maria=$elapsed
[[ $(find "$outs/out" -type f | wc -l) == "$n_files" ]] || die "aria2c -i: wrong number of files"
row "aria2c -i (-j8 -x8 -s8, no verification)" "$t_maria" "$(mbps "$man_bytes" "$t_maria")"
rm -rf "$outs/out"
best=$t_maria
[[ -n $t_js ]] && ((t_js < best)) && best=$t_js
r=$(ratio "$t_mfetch" "$best")
results+=("   ratio hf-fetch / fastest other = $r (target < 1.00: $(awk -v r="$r" 'BEGIN {print (r < 1.0 ? "MET" : "MISSED")}'))")
echo "  ${results[-1]}"
fi

# --- 3. the same manifest again, everything in place -------------------------------------------
echo "3. rerun with everything in place"
sim_bytes() {  # body bytes the simulator sent: "total tree" (tree listing) since the last clear
  curl -s "$hub/_sim/requests" | python3 -c '
import json, sys
reqs = json.load(sys.stdin)
tree = sum(r["bytes_sent"] or 0 for r in reqs if "/tree/" in r["path"])
print(sum(r["bytes_sent"] or 0 for r in reqs), tree, len(reqs),
      ",".join(sorted({r["method"] + ":" + r["path"].split("?")[0] for r in reqs})))'
}
nginx_bytes() { awk '{s += $10} END {printf "%.0f", s}' "$NGINX_DIR/logs/access.log"; }
rerun() {  # rerun LABEL FLAGS...
  local label=$1; shift
  curl -s -X POST "$hub/_sim/requests/clear" >/dev/null
  local before; before=$(nginx_bytes)
  timed "$bin" --manifest "$work/shards.manifest" --cache-dir "$cache" --endpoint "$hub" "$@"
  local t=$elapsed sim; sim=($(sim_bytes))
  local ng=$(($(nginx_bytes) - before))
  row "$label" "$t" "(target < 0.100 s: $( ((t < 100000)) && echo MET || echo "MISSED, $(ratio "$t" 100000)x"))"
  results+=("   network: simulator sent ${sim[0]} body bytes in ${sim[2]} requests (tree listing ${sim[1]},\
 beyond it $((sim[0] - sim[1]))); nginx sent $ng bytes; requests: ${sim[3]:-none}")
  echo "  ${results[-1]}"
}
if part 3; then
rerun "hf-fetch --manifest, all in place" --quiet
if ((has_offline)); then
  rerun "hf-fetch --manifest --offline, all in place" --quiet --offline
else
  results+=("   (hf-fetch has no --offline: not measured)")
  echo "  ${results[-1]}"
fi
fi

# --- 4. --verify-only vs openssl, same parallelism ----------------------------------------------
part 4 && {
echo "4. verification of the $n_files files, warm page cache, $(nproc) cores"
cat "$cache"/models--bench--shards/blobs/* >/dev/null
timed "$bin" --manifest "$work/shards.manifest" --cache-dir "$cache" --verify-only --quiet
t_verify=$elapsed
row "hf-fetch --verify-only" "$t_verify" "$(mbps "$man_bytes" "$t_verify")"
timed sh -c 'find -L "$1" -type f -print0 | xargs -0 -P "$(nproc)" -n 1 openssl dgst -sha256 -r >/dev/null' sh "$snap"
t_ossl=$elapsed
row "find | xargs -P $(nproc) -n1 openssl dgst -sha256" "$t_ossl" "$(mbps "$man_bytes" "$t_ossl")"
r=$(ratio "$t_verify" "$t_ossl")
results+=("   ratio = $r (target <= 1.10: $(awk -v r="$r" 'BEGIN {print (r <= 1.10 ? "MET" : "MISSED")}'))")
echo "  ${results[-1]}"
}

echo
echo "== summary ($(date -u '+%H:%M UTC'); uptime at end: $(uptime | sed 's/.*load/load/'))"
printf '%s\n' "${results[@]}"
