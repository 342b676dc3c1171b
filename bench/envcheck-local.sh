#!/usr/bin/env bash
# envcheck's full inventory wall time on this host (no GPU expected), median
# of N runs (hyperfine is not on every box, so a bash loop timed with $EPOCHREALTIME:
# no fork for the clock).
#   bench/envcheck-local.sh [ENVCHECK_BINARY] [RUNS]
# Target (issue 3): under 0.1 s on a host without a GPU.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-${PROVKIT_BIN:-$here/../build/bin}/envcheck}
runs=${2:-31}
[[ -x $bin ]] || { echo "envcheck-local.sh: no envcheck at $bin (build it, or pass its path)" >&2; exit 2; }

median_ms() {  # median_ms RUNS COMMAND...: prints the median wall time in ms
  local n=$1 i t0 t1
  shift
  local times=()
  "$@" >/dev/null 2>&1 || true  # warm the page cache once
  for ((i = 0; i < n; i++)); do
    t0=${EPOCHREALTIME/./}
    "$@" >/dev/null 2>&1 || true
    t1=${EPOCHREALTIME/./}
    times+=($((t1 - t0)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "%.1f ms (min %.1f, max %.1f, %d runs)\n", m/1000, a[1]/1000, a[NR]/1000, NR}'
}

echo "host: $(uname -srm), $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "binary: $bin ($(du -h "$bin" | cut -f1))"
echo "driver: $("$bin" --json | python3 -c 'import json,sys; print(next(c["reason"] for c in json.load(sys.stdin)["checks"] if c["name"]=="driver"))')"
echo "floor, /bin/true:              $(median_ms "$runs" /bin/true)"
echo "envcheck (inventory):          $(median_ms "$runs" "$bin")"
echo "envcheck --json (inventory):   $(median_ms "$runs" "$bin" --json)"
echo "envcheck --cuda 13.0 --need fp8 --lib libc.so.6: $(median_ms "$runs" "$bin" --cuda 13.0 --need fp8 --lib libc.so.6)"
