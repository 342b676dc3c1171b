#!/usr/bin/env bash
# envbuild vs uv on the GPU host (Ubuntu 24.04, python3 with torch, uv at
# /usr/local/bin/uv, no network). For the lead to run there:
#
#   OUT=/some/dir ENVBUILD=/path/to/envbuild bash bench/envbuild-gpu.sh
#
# 1. envbuild capture of the site-packages that holds torch -> wheelhouse + hashed lock
# 2. one run each, same wheels, same file system for every cache:
#      uv venv + uv pip install --offline --no-index --find-links W --no-deps -r LOCK, cold uv cache
#      the same with uv's warm cache (new venv)
#      envbuild create cold (empty cache), then warm (new environment)
#      envbuild verify of the warm environment
# 3. results: $OUT/envbuild-gpu.md (table), $OUT/envbuild-gpu.log (everything printed)
# Targets (issue 22): warm at or under 0.5x of uv with the page cache hot and 0.1x with it dropped; cold at
# or under 0.3x of uv.
# The envbuild binary needs (ldd): libcurl.so.4 libcrypto.so.3 libarchive.so.13
# libtomlplusplus.so.3 libstdc++.so.6 libgcc_s.so.1 libm libc; put any that are
# missing next to it in lib/ and this script sets LD_LIBRARY_PATH to that.
set -euo pipefail
OUT=${OUT:?set OUT to a directory for the results}
mkdir -p "$OUT"
ENVBUILD=${ENVBUILD:-$(command -v envbuild || echo ./envbuild)}
ENVBUILD=$(readlink -f "$ENVBUILD")
libdir=$(dirname "$ENVBUILD")/lib
[[ -d $libdir ]] && export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PY=${PY:-python3}
UV=${UV:-/usr/local/bin/uv}
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/envbuild-gpu.XXXXXX")}; mkdir -p "$work"
exec > >(tee "$OUT/envbuild-gpu.log") 2>&1

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "host: $(uname -srm); $(nproc) cores; $(grep PRETTY_NAME /etc/os-release | cut -d= -f2)"
echo "envbuild: $ENVBUILD ($("$ENVBUILD" --version))"; ldd "$ENVBUILD" | grep -E "not found|curl|archive|toml|crypto" || true
echo "uv: $("$UV" --version)"
PY=$(command -v "$PY")  # not resolved: a venv python must stay the venv's
site=$("$PY" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
echo "python: $PY ($("$PY" -V 2>&1)); torch $("$PY" -c 'import torch; print(torch.__version__)') in $site"
echo "work: $work ($(df -h "$work" | tail -1 | awk '{print $1, $6}'))"

t0=$(now)
"$ENVBUILD" capture "$site" --wheelhouse "$work/wheels" --lock "$work/lock.txt"
t_capture=$(secs "$t0" "$(now)")
n=$(grep -c '^[A-Za-z0-9]' "$work/lock.txt")
size=$(du -sh "$work/wheels" | cut -f1)
echo "captured $n distributions, $size, in $t_capture s"

run_uv() {  # $1 = venv dir; uses UV_CACHE_DIR from the caller
  "$UV" venv -q --python "$PY" "$1"
  "$UV" pip install -q --offline --no-index --find-links "$work/wheels" --no-deps -r "$work/lock.txt" --python "$1/bin/python"
}
export UV_CACHE_DIR="$work/uv-cache"
# Every timed run starts with no dirty pages (`sync`, untimed): uv writes without syncing, and envbuild's
# syncfs before it publishes would otherwise also write back what the run before it left dirty.
# uv copies every file into each environment (7-8 GB for torch + CUDA here): each one but uv-warm (kept for
# the diff) is removed, untimed, once timed, so that the runs fit a 64 GiB disk.
sync; t0=$(now); run_uv "$work/uv-cold"; t_uv_cold=$(secs "$t0" "$(now)"); rm -rf "$work/uv-cold"
sync; t0=$(now); run_uv "$work/uv-warm"; t_uv_warm=$(secs "$t0" "$(now)")

eb() { "$ENVBUILD" --cache-dir "$work/eb-cache" create "$1" --python "$PY" --lock "$work/lock.txt" --find-links "$work/wheels"; }
# The cold run is traced too: $OUT/envbuild-cold.trace has its phases (unpacking, the cache's sync, linking).
sync; t0=$(now); PROVKIT_LOG=debug eb "$work/eb-cold" 2>"$OUT/envbuild-cold.trace"; t_eb_cold=$(secs "$t0" "$(now)")
grep -E "create: " "$OUT/envbuild-cold.trace" | sed 's/^envbuild: debug: python: /  /' || true
t_old_cold=
if [[ -n ${ENVBUILD_OLD:-} ]]; then  # the earlier build's cold run, on a cache of its own
  sync; t0=$(now); "$ENVBUILD_OLD" --cache-dir "$work/old-cache" create "$work/old-cold" --python "$PY" --lock "$work/lock.txt" \
    --find-links "$work/wheels" >/dev/null; t_old_cold=$(secs "$t0" "$(now)"); rm -rf "$work/old-cache" "$work/old-cold"
fi
sync; t0=$(now); eb "$work/eb-warm"; t_eb_warm=$(secs "$t0" "$(now)")
# The same warm runs again with the page cache hot (right after the above) and dropped (each tool's cache
# read back from disk), uv first, then envbuild, each into a new environment.
drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo dropped || echo "NOT dropped"; }
# ENVBUILD_OLD (optional): an earlier build, timed beside in the same states on the same cache.
old_eb() { "$ENVBUILD_OLD" --cache-dir "$work/eb-cache" create "$1" --python "$PY" --lock "$work/lock.txt" --find-links "$work/wheels"; }
hot_uv=(); hot_eb=(); hot_old=()
for i in 1 2 3; do
  sync; t0=$(now); run_uv "$work/uv-hot$i"; hot_uv+=("$(secs "$t0" "$(now)")"); rm -rf "$work/uv-hot$i"
  sync; t0=$(now); eb "$work/eb-hot$i" >/dev/null; hot_eb+=("$(secs "$t0" "$(now)")")
  if [[ -n ${ENVBUILD_OLD:-} ]]; then sync; t0=$(now); old_eb "$work/old-hot$i" >/dev/null; hot_old+=("$(secs "$t0" "$(now)")"); fi
done
# Dropped: three rounds, uv then envbuild (then the earlier build), each after its own drop; medians. The
# envbuild runs are traced (PROVKIT_LOG=debug): $OUT/envbuild-dropped-N.trace has the create's phases.
drop_uv=(); drop_eb=(); drop_old=()
for i in 1 2 3; do
  state=$(drop); t0=$(now); run_uv "$work/uv-dropped$i"; drop_uv+=("$(secs "$t0" "$(now)")"); rm -rf "$work/uv-dropped$i"
  state=$(drop); t0=$(now); PROVKIT_LOG=debug eb "$work/eb-dropped$i" >/dev/null 2>"$OUT/envbuild-dropped-$i.trace"
  drop_eb+=("$(secs "$t0" "$(now)")")
  if [[ -n ${ENVBUILD_OLD:-} ]]; then state=$(drop); t0=$(now); old_eb "$work/old-dropped$i" >/dev/null; drop_old+=("$(secs "$t0" "$(now)")"); fi
done
t_uv_dropped=$(median "${drop_uv[@]}"); t_eb_dropped=$(median "${drop_eb[@]}")
/usr/bin/time -v "$ENVBUILD" --cache-dir "$work/eb-cache" create "$work/eb-timev" --python "$PY" --lock "$work/lock.txt" \
  --find-links "$work/wheels" 2>&1 >/dev/null | grep -E "Elapsed|User time|System time|File system outputs" || true
t0=$(now); "$ENVBUILD" --cache-dir "$work/eb-cache" verify "$work/eb-warm" --lock "$work/lock.txt" | tail -1
t_verify=$(secs "$t0" "$(now)")
"$work/eb-warm/bin/python" -c 'import torch; print("torch imports from the envbuild environment:", torch.__version__, torch.__file__); a = torch.randn(1024, 1024, device="cuda"); print("matmul on", torch.cuda.get_device_name(0), "max |a@a.T - ref|:", float((a @ a.T - (a.cpu() @ a.cpu().T).cuda()).abs().max()))' || echo "torch import or GPU matmul FAILED"
files=$(find "$work/eb-warm" -type f | wc -l)
"$ENVBUILD" diff "$work/uv-warm" "$work/eb-warm" | tail -1 || true

cat > "$OUT/envbuild-gpu.md" <<TABLE
GPU host: $(grep PRETTY_NAME /etc/os-release | cut -d= -f2 | tr -d '"'), $(nproc) cores; $("$PY" -V 2>&1), torch $("$PY" -c 'import torch; print(torch.__version__)');
$n distributions ($files files, $size of wheels) captured by envbuild from $site; $("$UV" --version); one run each.

| step | seconds | envbuild / uv |
|---|---|---|
| envbuild capture | $t_capture | |
| uv venv + uv pip install --offline --no-index --no-deps, cold uv cache | $t_uv_cold | |
| envbuild create, cold cache | $t_eb_cold | $(ratio "$t_eb_cold" "$t_uv_cold") (target <= 0.3) |
| uv venv + uv pip install, warm uv cache | $t_uv_warm | |
| envbuild create, warm cache | $t_eb_warm | $(ratio "$t_eb_warm" "$t_uv_warm") (target <= 0.5) |
| uv warm, page cache hot, 3 runs | ${hot_uv[*]} | |
| envbuild warm, page cache hot, 3 runs | ${hot_eb[*]} | $(ratio "$(median "${hot_eb[@]}")" "$(median "${hot_uv[@]}")") (medians; target <= 0.5) |
| uv warm, page cache $state, 3 runs | ${drop_uv[*]} (median $t_uv_dropped) | |
| envbuild warm, page cache $state, 3 runs | ${drop_eb[*]} (median $t_eb_dropped) | $(ratio "$t_eb_dropped" "$t_uv_dropped") (medians; target <= 0.1) |
| envbuild verify --lock (every file hashed) | $t_verify | |
| earlier build (ENVBUILD_OLD), cold cache | ${t_old_cold:-} | |
| earlier build, warm, page cache hot, 3 runs | ${hot_old[*]:-} | |
| earlier build, warm, page cache dropped, 3 runs | ${drop_old[*]:-} | |
TABLE
cat "$OUT/envbuild-gpu.md"
rm -rf "$work"
