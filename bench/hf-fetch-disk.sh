#!/usr/bin/env bash
# hf-fetch against what the disk and the origin allow (issue 14): download + sha256 + durability
# side by side with `curl -o` of every file at once + `sync`, aria2c + sync behind a capped origin,
# and --verify-only against parallel sha256sum, all writing to a real disk (not tmpfs).
#
#   bench/hf-fetch-disk.sh [HF_FETCH]              run every case on this host (default build/bin/hf-fetch)
#   bench/hf-fetch-disk.sh pack OUT.tar.gz [HF_FETCH]
#        packs this script, the Hub simulator, hf-fetch, nginx, aria2c, curl and openssl with their shared
#        libraries (like bench/device/pack.sh), so that on another host (no nginx, no network,
#        python3 only) `tar xzf OUT.tar.gz -C D && D/hf-fetch-disk/run.sh` runs the same cases.
#   bench/hf-fetch-disk.sh serve                   sets up the origin, prints the commands, waits (for perf/strace)
#
#   env: BENCH_DIR (origin blobs and outputs; default a mktemp dir in /var/tmp: use a real disk),
#        RUNS=3, BIG_MIB=1024 (the one big file), SHARDS=4, SHARD_MIB=256, SMALL=6 (small git files),
#        RATE=50m (nginx limit_rate per connection in the capped case),
#        CASES="big shards capped verify" (which cases to run).
# Every timed run starts after the previous output is removed, `sync`, the page cache dropped (where
# /proc/sys/vm/drop_caches is writable) and the origin blobs read back into it (a warm origin, as in
# the other benchmarks). Clients alternate their order from run to run; figures are medians.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [[ ${1:-} == pack ]]; then
  out=$(realpath -m "$2")
  bin=$(realpath "${3:-$here/../build/bin/hf-fetch}")
  stage=$(mktemp -d)
  dir=$stage/hf-fetch-disk
  mkdir -p "$dir/bench/lib" "$dir/tests/hubsim" "$dir/bin" "$dir/real"
  cp "$here/hf-fetch-disk.sh" "$dir/bench/"
  cp "$here/lib/nginx.sh" "$dir/bench/lib/"
  cp "$here"/../tests/hubsim/hubsim*.py "$dir/tests/hubsim/"
  skip='^(linux-vdso|libc\.so|libm\.so|ld-linux|libpthread|libdl\.so|librt\.so|libstdc\+\+|libgcc_s)'
  for tool in "$bin" "$(command -v nginx)" "$(command -v aria2c)" "$(command -v curl)" "$(command -v openssl)"; do
    name=$(basename "$tool")
    mkdir -p "$dir/real/$name.lib"
    cp -L "$tool" "$dir/real/$name"
    strip --strip-debug "$dir/real/$name" 2>/dev/null || true
    ldd "$tool" | awk '/=> \//{print $1" "$3}' | while read -r lib path; do
      [[ $lib =~ $skip ]] || cp -L "$path" "$dir/real/$name.lib/$lib"
    done
    # Each tool with its own libraries only: the host's python3 and shell tools keep theirs.
    printf '#!/bin/sh\nd=$(dirname "$(readlink -f "$0")")/../real\nLD_LIBRARY_PATH=$d/%s.lib exec "$d/%s" "$@"\n' \
      "$name" "$name" >"$dir/bin/$name"
    chmod +x "$dir/bin/$name"
  done
  cat >"$dir/run.sh" <<'RUN'
#!/bin/sh
d=$(cd "$(dirname "$0")" && pwd)
PATH=$d/bin:$PATH exec "$d/bench/hf-fetch-disk.sh" "$d/bin/hf-fetch" "$@"
RUN
  chmod +x "$dir/run.sh"
  tar czf "$out" -C "$stage" hf-fetch-disk
  rm -rf "$stage"
  du -h "$out"
  exit 0
fi

serve=0
[[ ${1:-} == serve ]] && { serve=1; shift; }
src=$(cd "$here/.." && pwd)
bin=$(realpath "${1:-$src/build/bin/hf-fetch}")
runs=${RUNS:-3}
big_mib=${BIG_MIB:-1024}
shards=${SHARDS:-4}
shard_mib=${SHARD_MIB:-256}
small=${SMALL:-6}
rate=${RATE:-50m}
cases=" ${CASES:-big shards capped verify} "
has_case() { [[ $cases == *" $1 "* ]]; }
[[ -x $bin ]] || { echo "hf-fetch-disk.sh: no hf-fetch at $bin" >&2; exit 2; }
for tool in nginx curl openssl python3 sha256sum; do
  command -v $tool >/dev/null || { echo "hf-fetch-disk.sh: $tool missing" >&2; exit 2; }
done
has_case capped && ! command -v aria2c >/dev/null && { echo "hf-fetch-disk.sh: aria2c missing" >&2; exit 2; }
# shellcheck source=lib/nginx.sh
source "$here/lib/nginx.sh"

work=${BENCH_DIR:-$(mktemp -d /var/tmp/provkit-bench-disk.XXXXXX)}
mkdir -p "$work/origin/blobs" "$work/repo" "$work/out"
chmod 755 "$work" "$work/origin" "$work/origin/blobs"  # nginx workers run unprivileged
out=$work/out
need_kib=$(((big_mib + shards * shard_mib) * 2 * 1024 + 512 * 1024))
avail_kib=$(df -Pk "$work" | awk 'NR==2 {print $4}')
((avail_kib >= need_kib)) || { echo "hf-fetch-disk.sh: $work has $((avail_kib / 1024)) MiB free, needs $((need_kib / 1024))" >&2; exit 2; }

pids=()
cleanup() {
  stop_nginx_all
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$work" "${nginx_dirs[@]}"
  true
}
nginx_dirs=() nginx_pids=()
stop_nginx_all() { for p in "${nginx_pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done; nginx_pids=(); }
trap cleanup EXIT

now() { echo "${EPOCHREALTIME/./}"; }
can_drop=0
[[ -w /proc/sys/vm/drop_caches ]] && echo 1 >/proc/sys/vm/drop_caches 2>/dev/null && can_drop=1
disk_line() {
  local dev; dev=$(df -P "$1" | awk 'NR==2 {print $1}')
  local b; b=$(basename "$(readlink -f "$dev")" 2>/dev/null || echo "?")
  local rot; rot=$(cat "/sys/class/block/$b/queue/rotational" 2>/dev/null || echo "?")
  echo "$(df -PT "$1" | awk 'NR==2 {print $2}') on $dev (rotational $rot; model $(cat "/sys/class/block/$b/device/model" 2>/dev/null || \
    cat "/sys/class/block/${b%[0-9]*}/device/model" 2>/dev/null || echo "?"))"
}

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "host: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')," \
  "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "disk: $work: $(disk_line "$work")"
echo "sha256 (openssl speed, 1 core): $(openssl speed -evp sha256 -bytes 1048576 -seconds 1 2>/dev/null | awk '/^sha256|^SHA256/ {print $NF}')"
echo "page cache dropped between runs: $( ((can_drop)) && echo yes || echo "no (not root)")"
echo "hf-fetch: $bin; $(curl --version | head -1 | cut -d' ' -f1-2); $(nginx -v 2>&1)"

echo "writing the blobs: 1 x $big_mib MiB, $shards x $shard_mib MiB, $small small files ..."
big_sha=$(make_blob "$big_mib" big)
shard_sha=()
for ((i = 1; i <= shards; i++)); do shard_sha+=("$(make_blob "$shard_mib" "shard$i")"); done
for ((i = 1; i <= small; i++)); do
  head -c $((i * 4000)) < <(openssl enc -aes-128-ctr -nosalt -pass "pass:small$i" -in /dev/zero 2>/dev/null) |
    base64 >"$work/repo/config-$i.json"
done
python3 - "$work" "$big_sha" "$small" "${shard_sha[@]}" <<'PY'
import hashlib, json, sys
work, big, small, shards = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def commit(name): return hashlib.sha1(name.encode()).hexdigest()
n = len(shards)
files = [{"path": f"config-{i}.json", "source": f"repo/config-{i}.json"} for i in range(1, small + 1)]
files += [{"path": f"model-{i:05d}-of-{n:05d}.safetensors", "source": f"origin/blobs/{s}", "lfs": True, "sha256": s}
          for i, s in enumerate(shards, 1)]
json.dump({"repos": [
    {"id": "bench/big", "type": "model", "commits": [{"sha": commit("big" + big), "refs": ["main"], "files": [
        {"path": "model.safetensors", "source": f"origin/blobs/{big}", "lfs": True, "sha256": big}]}]},
    {"id": "bench/shards", "type": "model", "commits": [{"sha": commit("shards" + "".join(shards)), "refs": ["main"],
        "files": files}]}]}, open(f"{work}/repos.json", "w"))
PY

# Two origins on 127.0.0.2, as a CDN would be: uncapped, and capped per connection.
NGINX_HOST=127.0.0.2 start_nginx "$work/origin"
fast_url=$NGINX_URL; nginx_dirs+=("$NGINX_DIR"); nginx_pids+=("$NGINX_PID")
NGINX_HOST=127.0.0.2 start_nginx "$work/origin" "$rate"
capped_url=$NGINX_URL; nginx_dirs+=("$NGINX_DIR"); nginx_pids+=("$NGINX_PID")
start_hub() {  # start_hub CDN_URL NAME: a simulator redirecting LFS files there
  python3 "$src/tests/hubsim/hubsim.py" --repos "$work/repos.json" --ready-file "$work/ready-$2.json" \
    --external-cdn "$1/blobs/{sha256}" >"$work/hubsim-$2.log" 2>&1 &
  pids+=($!)
}
hub_url() {  # hub_url NAME: the simulator's URL once it is ready
  for _ in $(seq 300); do [[ -s $work/ready-$1.json ]] && break; sleep 0.1; done
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hub"])' "$work/ready-$1.json"
}
start_hub "$fast_url" fast
start_hub "$capped_url" capped
hub=$(hub_url fast)
capped_hub=$(hub_url capped)
export HF_HOME=$work/hf-home
unset HF_TOKEN HF_ENDPOINT HF_HUB_CACHE HF_HUB_OFFLINE
"$bin" manifest create bench/big@main --endpoint "$hub" --quiet -o "$work/big.manifest"
"$bin" manifest create bench/shards@main --endpoint "$hub" --quiet -o "$work/shards.manifest"
shards_commit=$(awk '/^revision:/ {print $2}' "$work/shards.manifest")
big_bytes=$((big_mib * 1048576))
shard_bytes=$(awk '/size:/ {s += $2} END {printf "%.0f", s}' "$work/shards.manifest")

if ((serve)); then
  echo "hub $hub (CDN $fast_url), capped hub $capped_hub (CDN $capped_url, limit_rate $rate)"
  echo "$bin --manifest $work/big.manifest --cache-dir $out/cache --endpoint $hub --quiet"
  echo "$bin --manifest $work/shards.manifest --cache-dir $out/cache --endpoint $hub --quiet"
  echo "serving until killed (BENCH_DIR=$work)"
  trap 'exit 0' INT TERM
  while :; do sleep 3600 & wait $! || true; done
fi

# --- the clients ------------------------------------------------------------------------------
fetch() {  # fetch MANIFEST HUB [FLAGS...]
  local m=$1 h=$2; shift 2
  "$bin" --manifest "$m" --cache-dir "$out/cache" --endpoint "$h" --quiet "$@"
}
curl_all() {  # curl_all NAME [hash]: every file of NAME's manifest at once, curl -o, then (sha256sum in parallel,) sync
  local name=$1 hash=${2:-} files=() urls=() p=() i
  if [[ $name == big ]]; then files=(model.safetensors); urls=("$fast_url/blobs/$big_sha"); fi
  if [[ $name == shards ]]; then
    for ((i = 1; i <= small; i++)); do files+=("config-$i.json"); urls+=("$hub/bench/shards/resolve/$shards_commit/config-$i.json"); done
    for ((i = 1; i <= shards; i++)); do files+=("shard-$i"); urls+=("$fast_url/blobs/${shard_sha[i - 1]}"); done
  fi
  mkdir -p "$out/curl"
  for i in "${!files[@]}"; do curl -sS --fail -L -o "$out/curl/${files[i]}" "${urls[i]}" & p+=($!); done
  for x in "${p[@]}"; do wait "$x"; done
  if [[ $hash == hash ]]; then
    p=()
    for f in "${files[@]}"; do sha256sum "$out/curl/$f" >/dev/null & p+=($!); done
    for x in "${p[@]}"; do wait "$x"; done
  fi
  sync
}
aria_sync() {
  aria2c -q -x8 -s8 --file-allocation=falloc --allow-overwrite=true --auto-file-renaming=false \
    -d "$out/aria" -o big.bin "$capped_url/blobs/$big_sha"
  sync
}
sha256sum_all() {  # sha256sum_all NAME [TOOL...]: sha256 of every file of the snapshot, nproc at once
  local repo=models--bench--$1; shift
  find -L "$out/cache/$repo/snapshots" -type f -print0 | xargs -0 -P "$(nproc)" -n 1 "${@:-sha256sum}" >/dev/null
}

# --- timing ------------------------------------------------------------------------------------
declare -A times=() labels=()
warm=()  # the origin blobs of the case at hand
between() {  # no output of the last run, nothing dirty, the case's origin blobs in the page cache
  rm -rf "$out/curl" "$out/aria" "${1:+$out/cache}"
  sync
  ((can_drop)) && echo 3 >/proc/sys/vm/drop_caches
  cat "${warm[@]}" >/dev/null
}
timed() {  # timed KEY LABEL COMMAND...: appends the wall time (us) of COMMAND to times[KEY]
  local key=$1 label=$2; shift 2
  labels[$key]=$label
  local t0; t0=$(now)
  "$@" >/dev/null
  local us=$(($(now) - t0))
  times[$key]+="$us "
  printf '  %-52s %7.3f s\n' "$label" "$(awk -v us="$us" 'BEGIN {print us / 1e6}')"  # as it goes: a cut-off run still tells
}
median_s() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)] / 1e6}'; }
spread_s() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "%.2f-%.2f", a[1] / 1e6, a[NR] / 1e6}'; }
summary=()
row() {  # row KEY BYTES
  local key=$1 m; m=$(median_s <<<"${times[$key]}")
  summary+=("$(printf '  %-52s %7.3f s  (%s)  %5.0f MB/s' "${labels[$key]}" "$m" "$(spread_s <<<"${times[$key]}")" \
    "$(awk -v b="$2" -v s="$m" 'BEGIN {print b / s / 1e6}')")")
  echo "${summary[-1]}"
}
verdict() {  # verdict KEY BASE_KEY TARGET: ratio of medians
  local a b; a=$(median_s <<<"${times[$1]}"); b=$(median_s <<<"${times[$2]}")
  summary+=("$(awk -v a="$a" -v b="$b" -v t="$3" -v n="${labels[$1]}" -v m="${labels[$2]}" 'BEGIN {
    r = a / b; printf "    %s / %s = %.3f (target <= %.2f: %s)", n, m, r, t, (r <= t ? "MET" : "MISSED") }')")
  echo "${summary[-1]}"
}
rounds() {  # rounds CASE KEY... : runs the case's clients RUNS times, order alternating
  local c=$1; shift
  local keys=("$@") i k
  for ((i = 0; i < runs; i++)); do
    local order=("${keys[@]}")
    ((i % 2)) && order=($(printf '%s\n' "${keys[@]}" | tac))
    for k in "${order[@]}"; do
      between cache
      run_client "$c" "$k"
    done
  done
}
run_client() {
  case $1:$2 in
    big:default) timed big:default "hf-fetch (defaults)" fetch "$work/big.manifest" "$hub" ;;
    big:c1) timed big:c1 "hf-fetch --connections 1" fetch "$work/big.manifest" "$hub" --connections 1 ;;
    big:curl) timed big:curl "curl -o + sync" curl_all big ;;
    big:curlhash) timed big:curlhash "curl -o + sha256sum + sync" curl_all big hash ;;
    shards:default) timed shards:default "hf-fetch (defaults)" fetch "$work/shards.manifest" "$hub" ;;
    shards:c1) timed shards:c1 "hf-fetch --connections 1" fetch "$work/shards.manifest" "$hub" --connections 1 ;;
    shards:curl) timed shards:curl "curl -o x$((small + shards)) at once + sync" curl_all shards ;;
    shards:curlhash) timed shards:curlhash "curl -o x$((small + shards)) + sha256sum + sync" curl_all shards hash ;;
    capped:default) timed capped:default "hf-fetch (defaults), limit_rate $rate" fetch "$work/big.manifest" "$capped_hub" ;;
    capped:aria) timed capped:aria "aria2c -x8 -s8 + sync, limit_rate $rate" aria_sync ;;
  esac
}

big_blobs=("$work/origin/blobs/$big_sha")
shard_blobs=()
for s in "${shard_sha[@]}"; do shard_blobs+=("$work/origin/blobs/$s"); done
if has_case big; then
  echo "== one file, $big_mib MiB, uncapped origin"
  warm=("${big_blobs[@]}")
  rounds big default c1 curl curlhash
fi
if has_case shards; then
  echo "== $shards x $shard_mib MiB shards + $small small files, uncapped origin"
  warm=("${shard_blobs[@]}")
  rounds shards default c1 curl curlhash
fi
if has_case capped; then
  echo "== one file, $big_mib MiB, origin capped at $rate per connection"
  warm=("${big_blobs[@]}")
  rounds capped default aria
fi
if has_case verify; then
  echo "== --verify-only vs sha256sum (nproc at once)"
  for name in big shards; do
    warm=("${big_blobs[@]}"); [[ $name == shards ]] && warm=("${shard_blobs[@]}")
    between cache
    fetch "$work/$name.manifest" "$hub"
    for state in warm $( ((can_drop)) && echo cold); do
      for ((i = 0; i < runs; i++)); do
        order=(hf sha ossl)
        ((i % 2)) && order=(ossl sha hf)
        for k in "${order[@]}"; do
          sync
          if [[ $state == cold ]]; then ((can_drop)) && echo 3 >/proc/sys/vm/drop_caches; else cat "$out"/cache/models--bench--$name/blobs/* >/dev/null; fi
          if [[ $k == hf ]]; then
            timed "verify:$name:$state:hf" "hf-fetch --verify-only ($name, $state)" \
              "$bin" --manifest "$work/$name.manifest" --cache-dir "$out/cache" --verify-only --quiet
          elif [[ $k == sha ]]; then
            timed "verify:$name:$state:sha" "sha256sum, nproc at once ($name, $state)" sha256sum_all "$name"
          else
            timed "verify:$name:$state:ossl" "openssl dgst -sha256, nproc at once ($name, $state)" \
              sha256sum_all "$name" openssl dgst -sha256
          fi
        done
      done
    done
  done
fi

echo
echo "== medians of $runs ($(date -u '+%H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg))"
summary=()
if has_case big; then
  echo "one file, $big_bytes bytes:"
  for k in default c1 curl curlhash; do row "big:$k" "$big_bytes"; done
  verdict big:default big:curl 1.10; verdict big:default big:c1 1.00
fi
if has_case shards; then
  echo "shards, $shard_bytes bytes:"
  for k in default c1 curl curlhash; do row "shards:$k" "$shard_bytes"; done
  verdict shards:default shards:curl 1.10; verdict shards:default shards:curlhash 0.75
  verdict shards:default shards:c1 1.05
fi
if has_case capped; then
  echo "capped origin, $big_bytes bytes:"
  for k in default aria; do row "capped:$k" "$big_bytes"; done
  verdict capped:default capped:aria 1.00
fi
if has_case verify; then
  for name in big shards; do
    b=$big_bytes; [[ $name == shards ]] && b=$shard_bytes
    for state in warm cold; do
      [[ $state == cold ]] && ((!can_drop)) && continue
      for k in hf sha ossl; do row "verify:$name:$state:$k" "$b"; done
      verdict "verify:$name:$state:hf" "verify:$name:$state:sha" 1.10
      verdict "verify:$name:$state:hf" "verify:$name:$state:ossl" 1.10
    done
  done
fi
