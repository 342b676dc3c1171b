#!/usr/bin/env bash
# hf-fetch on one big LFS file from a local origin that is not the bottleneck
# (issue 2): nginx serves the blob, the Hub simulator redirects the LFS
# download to it (--external-cdn), hf-fetch fetches and verifies it.
#
#   bench/hf-fetch-4g.sh [HF_FETCH_BINARY] [RUNS] [SIZE_MIB]     (defaults: build/bin/hf-fetch 5 4096)
#   env: BENCH_DIR (where the blob goes; default a mktemp dir in /var/tmp),
#        BENCH_OUT (where curl and hf-fetch write; default BENCH_DIR; e.g. a dir on
#        /dev/shm to take the disk out and compare the clients' own costs),
#        BENCH_COLD=1 also times --verify-only vs openssl with the page cache dropped
#        before each run (needs a writable /proc/sys/vm/drop_caches; drops the whole host's cache).
#
# Targets: fetch + verification within 1.10x of `curl -o` alone on the nginx
# blob URL; `--verify-only` within 1.10x of `openssl dgst -sha256` on the same file.
# Every timed command starts after `sync` (no dirty pages from the run before);
# the origin blob stays in the page cache (a warm origin, so the disk is not the
# bottleneck). hf-fetch fsyncs the file before its atomic rename, `curl -o`
# does not: `curl -o; sync` is timed too, to show what durability costs here.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
bin=$(realpath "${1:-${PROVKIT_BIN:-$src/build/bin}/hf-fetch}")
runs=${2:-5}
size_mib=${3:-4096}
[[ -x $bin ]] || { echo "hf-fetch-4g.sh: no hf-fetch at $bin (build it, or pass its path)" >&2; exit 2; }
for tool in nginx curl openssl python3; do
  command -v $tool >/dev/null || { echo "hf-fetch-4g.sh: $tool missing (scripts/deps.sh --bench)" >&2; exit 2; }
done
# shellcheck source=lib/nginx.sh
source "$here/lib/nginx.sh"

work=${BENCH_DIR:-$(mktemp -d /var/tmp/provkit-bench-hf.XXXXXX)}
mkdir -p "$work"
chmod 755 "$work"  # nginx workers run as an unprivileged user
out=${BENCH_OUT:-$work}/out
mkdir -p "$out"
for dir in "$work" "$out"; do  # the blob, one output at a time, slack (counted twice when on one file system)
  need_kib=$(((size_mib * 2 + 512) * 1024))
  avail_kib=$(df -Pk "$dir" | awk 'NR==2 {print $4}')
  if ((avail_kib < need_kib)); then
    echo "hf-fetch-4g.sh: $dir has $((avail_kib / 1024)) MiB free, needs $((need_kib / 1024)) MiB" >&2
    exit 2
  fi
done

sim_pid=
cleanup() {
  [[ -n ${NGINX_PID:-} ]] && stop_nginx
  [[ -n $sim_pid ]] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
  [[ -n ${NGINX_DIR:-} ]] && rm -rf "$NGINX_DIR"
  rm -rf "$work" "$out"
  true
}
trap cleanup EXIT

now() { echo "${EPOCHREALTIME/./}"; }  # microseconds, no fork
median() { sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)] / 1e6}'; }
spread() { sort -n | awk '{a[NR]=$1} END {printf "min %.3f max %.3f", a[1] / 1e6, a[NR] / 1e6}'; }

echo "host: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')," \
  "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "blob in: $work ($(df -PT "$work" | awk 'NR==2 {print $2}')), outputs in: $out ($(df -PT "$out" | awk 'NR==2 {print $2}'))"
echo "hf-fetch: $bin"
echo "sha256 speed (openssl speed -evp sha256, 1 MiB blocks, 1 core):" \
  "$(openssl speed -evp sha256 -bytes 1048576 -seconds 2 2>/dev/null | awk '/^sha256|^SHA256/ {print $NF}')"

# The blob: pseudo-random bytes (AES-CTR keystream), hashed on the way.
mkdir -p "$work/origin/blobs" "$work/hf-home"
echo "writing a ${size_mib} MiB blob ..."
sha=$(head -c $((size_mib * 1048576)) < <(openssl enc -aes-128-ctr -nosalt -pass pass:provkit-bench -in /dev/zero 2>/dev/null) |
  tee "$work/origin/blobs/blob" | openssl dgst -sha256 -r | cut -d' ' -f1)
mv "$work/origin/blobs/blob" "$work/origin/blobs/$sha"
blob=$work/origin/blobs/$sha
size=$(stat -c %s "$blob")
commit=$(printf 'bench %s' "$sha" | openssl dgst -sha1 -r | cut -d' ' -f1)

start_nginx "$work/origin"
url=$NGINX_URL/blobs/$sha

cat >"$work/repos.json" <<JSON
{"repos": [{"id": "bench/big", "type": "model", "commits": [{"sha": "$commit", "refs": ["main"],
  "files": [{"path": "model.safetensors", "source": "origin/blobs/$sha", "lfs": true, "sha256": "$sha"}]}]}]}
JSON
python3 "$src/tests/hubsim/hubsim.py" --repos "$work/repos.json" --ready-file "$work/ready.json" \
  --external-cdn "$NGINX_URL/blobs/{sha256}" >"$work/hubsim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do [[ -s $work/ready.json ]] && break; sleep 0.1; done
hub=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hub"])' "$work/ready.json")

cat >"$work/bench.manifest" <<YAML
manifest: 1
repo: bench/big
revision: $commit
files:
  - path: model.safetensors
    size: $size
    sha256: $sha
YAML
export HF_HOME=$work/hf-home
unset HF_TOKEN HF_ENDPOINT HF_HUB_CACHE
cache=$out/cache
fetch=("$bin" --manifest "$work/bench.manifest" --cache-dir "$cache" --endpoint "$hub" --quiet)
verify=("$bin" --manifest "$work/bench.manifest" --cache-dir "$cache" --verify-only --quiet)
fetched=$cache/models--bench--big/blobs/$sha

# Warm the origin blob into the page cache (nginx serves it from there).
cat "$blob" >/dev/null

curl_t=() curl_sync_t=() fetch_t=() openssl_t=() verify_t=()
declare -A cpu=()  # name -> "user+sys seconds" of each run, space-separated
time_it() {  # time_it ARRAY COMMAND...: appends wall microseconds, records CPU; the command must succeed
  local -n times=$1
  local name=$1
  shift
  sync
  local t0; t0=$(now)
  /usr/bin/time -f '%U %S' -o "$work/cpu" "$@" >/dev/null
  times+=($(($(now) - t0)))
  cpu[$name]+="$(awk '{printf "%.2f", $1 + $2}' "$work/cpu") "
}
curl_o=(curl -sS --fail -o "$out/curl.out" "$url")
curl_o_sync=(sh -c 'curl -sS --fail -o "$1" "$2" && sync' sh "$out/curl.out" "$url")
check_same() { cmp -s "$1" "$blob" || { echo "hf-fetch-4g.sh: $1 differs from the blob" >&2; exit 1; }; }

echo "download: $runs runs each, order alternating, warm origin"
for ((i = 0; i < runs; i++)); do
  order=(curl fetch curl_sync)
  ((i % 2)) && order=(fetch curl_sync curl)
  for what in "${order[@]}"; do
    case $what in
      curl) time_it curl_t "${curl_o[@]}"; check_same "$out/curl.out"; rm -f "$out/curl.out" ;;
      curl_sync) time_it curl_sync_t "${curl_o_sync[@]}"; rm -f "$out/curl.out" ;;
      fetch) rm -rf "$cache"; time_it fetch_t "${fetch[@]}"; check_same "$fetched" ;;
    esac
  done
  echo "  run $((i + 1)): curl -o ${curl_t[-1]}us, curl -o + sync ${curl_sync_t[-1]}us, hf-fetch ${fetch_t[-1]}us"
done
rm -f "$out/curl.out"

# Verification of the fetched file, warm page cache (it was just written and read).
cat "$fetched" >/dev/null
echo "verify: $runs runs each, warm page cache"
for ((i = 0; i < runs; i++)); do
  time_it openssl_t openssl dgst -sha256 -r "$fetched"
  time_it verify_t "${verify[@]}"
done

report() {  # report NAME TARGET_ARRAY BASE_ARRAY BASE_NAME
  local -n a=$2 b=$3
  local ma mb
  ma=$(printf '%s\n' "${a[@]}" | median)
  mb=$(printf '%s\n' "${b[@]}" | median)
  awk -v n="$1" -v ma="$ma" -v mb="$mb" -v bn="$4" -v sa="$(printf '%s\n' "${a[@]}" | spread)" \
    -v sb="$(printf '%s\n' "${b[@]}" | spread)" -v sz="$size" -v ca="${cpu[$2]}" -v cb="${cpu[$3]}" 'BEGIN {
      r = ma / mb
      printf "%-34s %8.3f s (%s)  %7.0f MB/s  cpu %s\n", n, ma, sa, sz / ma / 1e6, ca
      printf "%-34s %8.3f s (%s)  %7.0f MB/s  cpu %s\n", bn, mb, sb, sz / mb / 1e6, cb
      printf "ratio %.3f: target 1.10 %s\n", r, (r <= 1.10 ? "MET" : "MISSED")
    }'
}
echo
echo "== median of $runs, $size bytes"
report "hf-fetch (fetch + verify)" fetch_t curl_t "curl -o"
printf '%-34s %8.3f s (%s)  cpu %s\n' "curl -o; sync" "$(printf '%s\n' "${curl_sync_t[@]}" | median)" \
  "$(printf '%s\n' "${curl_sync_t[@]}" | spread)" "${cpu[curl_sync_t]}"
report "hf-fetch --verify-only (warm)" verify_t openssl_t "openssl dgst -sha256 (warm)"

if [[ ${BENCH_COLD:-0} == 1 ]]; then
  cold_openssl_t=() cold_verify_t=()
  drop() { sync && echo 3 >/proc/sys/vm/drop_caches; }
  for ((i = 0; i < runs; i++)); do
    drop; time_it cold_openssl_t openssl dgst -sha256 -r "$fetched"
    drop; time_it cold_verify_t "${verify[@]}"
  done
  report "hf-fetch --verify-only (cold)" cold_verify_t cold_openssl_t "openssl dgst -sha256 (cold)"
fi
