#!/bin/bash
# On a GPU host just started, as the call's first command: envcheck --kernels on files this machine has never
# read (torch's libraries, then the rest of site-packages; FIRST=sp: site-packages at once), then the same runs
# with the guest's page cache dropped, then warm. What the first runs meet below the guest is not ours to drop:
# a host that read the same image for another machine may still hold it. dd of a file nothing here reads (the
# toolkit's largest library), first and again, says which that was.
#
# With a second build packed into old/ (old/bin/envcheck), the dropped-cache runs alternate the two.
# One line a run: wall time; the root disk's reads and MiB (/proc/diskstats); and from the debug trace when the
# objects were found, when the GPUs were known, and when the listing ended. The first run's whole trace is left in
# /tmp/kernels-first-touch-trace.txt.
# Staging, from a build tree:
#   bench/device/pack.sh DIR/pack build/bin/envcheck && cp bench/device/kernels-first-touch.sh DIR/
#   (optionally) bench/device/pack.sh DIR/old OTHER_BUILD/bin/envcheck
#   (on the host, as root) bash DIR/kernels-first-touch.sh
set -u
D=$(cd "$(dirname "$0")" && pwd)
SP=${SP:-/opt/torch/.venv/lib/python3.12/site-packages}
date -u
echo "up since $(uptime -s)"
dev=$(lsblk -no PKNAME "$(findmnt -no SOURCE /)" 2>/dev/null | head -1); dev=${dev:-vda}; echo "disk: $dev"
io() { awk -v d="$dev" '$3==d {print $4, $6}' /proc/diskstats; }
secs() { python3 -c "print(f'{$EPOCHREALTIME-$1:.3f}')"; }
drop() { sync; echo 3 >/proc/sys/vm/drop_caches || echo "page cache NOT dropped"; }
timed() {  # timed LABEL COMMAND...: one line with the wall time and the disk's reads and MiB
  local label=$1 r0 s0 r1 s1 t rc; shift
  drop; read -r r0 s0 < <(io); t=$EPOCHREALTIME
  "$@"; rc=$?
  local w; w=$(secs "$t"); read -r r1 s1 < <(io)
  echo "$label: rc=$rc wall ${w}s; disk $((r1 - r0)) reads, $(((s1 - s0) / 2048)) MiB"
}
kernels() {  # kernels BUILD PATH...: envcheck --kernels with the trace's times on one line
  local build=$1; shift
  LD_LIBRARY_PATH=$D/$build/lib PROVKIT_LOG=debug "$D/$build/bin/envcheck" --kernels "$@" --json \
    >"/tmp/kernels-$build.json" 2>/tmp/kernels-trace.txt
  local rc=$?
  echo -n "[$(grep -o 'objects found in [0-9.]*' /tmp/kernels-trace.txt | head -1) ms;" \
    "$(grep -o 'GPUs and driver known at [0-9.]*' /tmp/kernels-trace.txt | head -1) ms;" \
    "$(grep -o 'listed at [0-9.]*' /tmp/kernels-trace.txt | head -1) ms] "
  return $rc
}
libs=("$SP/torch/lib" "$SP/nvidia")
builds=(pack); [[ -x $D/old/bin/envcheck ]] && builds+=(old)

echo "== 1. first touch"
if [[ ${FIRST:-libs} == sp ]]; then  # FIRST=sp: the whole site-packages first
  timed "pack: site-packages, first touch" kernels pack "$SP"
  cp /tmp/kernels-trace.txt /tmp/kernels-first-touch-trace.txt  # each library's reads, from and to
else
  timed "pack: torch's libraries, first touch" kernels pack "${libs[@]}"
  cp /tmp/kernels-trace.txt /tmp/kernels-first-touch-trace.txt
  timed "pack: site-packages, first touch of the rest" kernels pack "$SP"
fi
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader

echo "== 2. the guest's page cache dropped (${builds[*]})"
for _ in 1 2 3; do for b in "${builds[@]}"; do timed "$b: torch's libraries, cold" kernels "$b" "${libs[@]}"; done; done
for _ in 1 2 3; do for b in "${builds[@]}"; do timed "$b: site-packages, cold" kernels "$b" "$SP"; done; done
if [[ ${#builds[@]} == 2 ]]; then
  python3 - <<'EOF'
import json
a, b = (json.load(open(f'/tmp/kernels-{n}.json')) for n in ('pack', 'old'))
for d in (a, b):
    for c in d.get('checks', []):
        c.get('data', {}).pop('milliseconds', None)
print('site-packages: the two builds list the same:', a == b)
EOF
fi

echo "== 3. warm"
for b in "${builds[@]}"; do
  for what in libs sp; do
    if [[ $what == libs ]]; then set -- "${libs[@]}"; else set -- "$SP"; fi
    kernels "$b" "$@" >/dev/null; t=$EPOCHREALTIME
    kernels "$b" "$@" >/dev/null; echo "$b: $what warm: rc=$? $(secs "$t") s"
  done
done

echo "== 4. not ours: dd of a file nothing here has read, first and again"
big=$(find /usr/local/cuda/lib64/ -maxdepth 1 -type f -name 'lib*.so*' -printf '%s %p\n' | sort -rn | head -1 | cut -d' ' -f2-)
timed "dd ${big##*/}, first" dd if="$big" of=/dev/null bs=1M status=none
timed "dd ${big##*/}, again" dd if="$big" of=/dev/null bs=1M status=none
date -u
