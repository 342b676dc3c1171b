#!/bin/bash
# On the GPU host, for issue 23's last two targets: envcheck --kernels cold under 1 s on torch's site-packages,
# the inventory under 30 ms. Layout as bench/device/inventory-and-kernels.sh: envcheck packed by
# bench/device/pack.sh into DIR/pack, this script in DIR. Writes DIR's results into $OUT (transcript.txt,
# kernels_sp.json, the debug traces). Takes about a minute (well under 4). Staging, from a build tree:
#   bench/device/pack.sh DIR/pack build/bin/envcheck && cp bench/device/kernels-inventory-2.sh DIR/
#   (on the host, as root for drop_caches) OUT=/tmp/out bash DIR/kernels-inventory-2.sh
# Bytes read from disk: the child's rusage inblock (512-byte units), which Linux takes from the same
# per-task I/O accounting as /proc/PID/io's read_bytes.
set -u
D=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SP=${SP:-/opt/torch/.venv/lib/python3.12/site-packages}
export LD_LIBRARY_PATH=$D/pack/lib
EC=$D/pack/bin/envcheck
CUFFT=$(ls $SP/nvidia/cu13/lib/libcufft.so.* $SP/nvidia/cufft/lib/libcufft.so.* 2>/dev/null | head -1)
timed() {  # timed LABEL CMD...: one run, its wall time and what it read from disk
  python3 - "$@" <<'PY'
import os,subprocess,sys,time
t=time.perf_counter(); p=subprocess.Popen(sys.argv[2:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
_,st,ru=os.wait4(p.pid,0); w=time.perf_counter()-t
print(f"{sys.argv[1]}: rc={os.waitstatus_to_exitcode(st)} wall={w:.3f} s, read_bytes {ru.ru_inblock*512/2**20:.1f} MiB, user {ru.ru_utime:.2f} s sys {ru.ru_stime:.2f} s",flush=True)
PY
}
drop() { sync; echo 3 > /proc/sys/vm/drop_caches && echo "page cache dropped" || echo "page cache NOT dropped"; }
{
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $EC --version; uname -r
find $SP -type f \( -name '*.so' -o -name '*.so.*' \) -printf '%s\n' | awk '{s+=$1; n++} END {printf "%d shared objects, %.2f GB\n", n, s/1e9}'
findmnt -no SOURCE,FSTYPE --target $SP; lsblk -dno NAME,ROTA,SIZE,MODEL 2>/dev/null | head -4
echo "== --kernels on site-packages: 3 cold (page cache dropped before each), then 3 warm"
for i in 1 2 3; do c=$(drop); timed "cold ($c) --kernels site-packages" $EC --kernels $SP --json; done
for i in 1 2 3; do timed "warm --kernels site-packages" $EC --kernels $SP --json; done
$EC --kernels $SP --json > "$OUT/kernels_sp.json"; echo "exit $? (site-packages; the listing: kernels_sp.json)"
echo "== libcufft alone (its .ldata), cold then warm: ${CUFFT:-not found under $SP/nvidia}"
if [ -n "$CUFFT" ]; then
  c=$(drop); timed "cold ($c) --kernels libcufft" $EC --kernels "$CUFFT"
  timed "warm --kernels libcufft" $EC --kernels "$CUFFT"
fi
echo "== one cold run with the trace (per file: reads, .ldata blocks): kernels-debug.txt"
drop >/dev/null; t0=$EPOCHREALTIME; PROVKIT_LOG=debug $EC --kernels $SP > /dev/null 2> "$OUT/kernels-debug.txt"
echo "wall $(python3 -c "print(f'{$EPOCHREALTIME-$t0:.3f}')") s (tracing on), $(wc -l < "$OUT/kernels-debug.txt") trace lines"
grep -E 'MiB in blocks|side by side' "$OUT/kernels-debug.txt" | sort -t' ' -k1,1 | head -20 | cut -c1-250
echo "== inventory: 21 runs each, beside nvidia-smi's CSV query (wall ms)"
python3 - "$EC" <<'PY'
import subprocess,sys,time,statistics
def runs(cmd,n=21):
    subprocess.run(cmd,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)  # one warm-up
    ts=[]
    for i in range(n):
        t=time.perf_counter(); subprocess.run(cmd,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL); ts.append((time.perf_counter()-t)*1000)
    return f"median {statistics.median(ts):.1f} ms min {min(ts):.1f} max {max(ts):.1f}"
print("/bin/true", runs(["/bin/true"]))
for i in range(2):
    print("envcheck", runs([sys.argv[1]]))
    print("nvidia-smi --query-gpu=name,memory.total,pcie.link.gen.current --format=csv",
          runs(["nvidia-smi","--query-gpu=name,memory.total,pcie.link.gen.current","--format=csv"]))
print("envcheck --json", runs([sys.argv[1],"--json"]))
PY
echo "== one inventory with PROVKIT_LOG=debug: the time of each step"
for i in 1 2 3; do PROVKIT_LOG=debug $EC 2>&1 >/dev/null | grep -E 'inventory:|nvml:|libcuda:'; echo; done | tee "$OUT/inventory-steps-2.txt"
echo "== LD_DEBUG=statistics (start-up relocations)"; LD_DEBUG=statistics $EC 2>&1 >/dev/null | tail -8
} > "$OUT/transcript.txt" 2>&1
cat "$OUT/transcript.txt"
