#!/bin/bash
# On the GPU host: envcheck --kernels cold on torch's libraries (torch/lib and nvidia/) and on the whole
# site-packages, 3 runs each, the page cache dropped before every run and the root disk's own counters
# (/proc/diskstats: reads completed, sectors read) read around it; then one warm run of each. Prints one line
# a run, with the walk's and the listing's times from the debug trace. Staging, from a build tree:
#   bench/device/pack.sh DIR/pack build/bin/envcheck && cp bench/device/kernels-cold-3.sh DIR/
#   (on the host, as root for drop_caches) bash DIR/kernels-cold-3.sh
set -u
D=$(cd "$(dirname "$0")" && pwd)
SP=${SP:-/opt/torch/.venv/lib/python3.12/site-packages}
export LD_LIBRARY_PATH=$D/pack/lib
EC=$D/pack/bin/envcheck
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
dev=$(lsblk -no PKNAME "$(findmnt -no SOURCE /)" 2>/dev/null | head -1); dev=${dev:-vda}; echo "disk: $dev"
io() { awk -v d="$dev" '$3==d {print $4, $6}' /proc/diskstats; }
secs() { python3 -c "print(f'{$EPOCHREALTIME-$1:.3f}')"; }
cold() {  # cold LABEL PATH...
  local label=$1 r0 s0 r1 s1 t rc; shift
  sync; echo 3 >/proc/sys/vm/drop_caches || echo "page cache NOT dropped"
  read -r r0 s0 < <(io); t=$EPOCHREALTIME
  PROVKIT_LOG=debug "$EC" --kernels "$@" --json >/tmp/kernels.json 2>/tmp/kernels-trace.txt; rc=$?
  local w; w=$(secs "$t"); read -r r1 s1 < <(io)
  echo "$label cold: rc=$rc wall ${w}s; disk $((r1 - r0)) reads, $(((s1 - s0) / 2048)) MiB;" \
    "$(grep -o 'objects found in [0-9.]*' /tmp/kernels-trace.txt) ms; $(grep -o 'listed at [0-9.]*' /tmp/kernels-trace.txt) ms"
}
warm() {  # warm LABEL PATH...
  local label=$1 t; shift
  "$EC" --kernels "$@" --json >/dev/null 2>&1; t=$EPOCHREALTIME
  "$EC" --kernels "$@" --json >/dev/null 2>&1; echo "$label warm: rc=$? $(secs "$t") s"
}
for _ in 1 2 3; do cold libs "$SP/torch/lib" "$SP/nvidia"; done
for _ in 1 2 3; do cold site-packages "$SP"; done
warm libs "$SP/torch/lib" "$SP/nvidia"
warm site-packages "$SP"
date -u
