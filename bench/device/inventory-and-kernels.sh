#!/bin/bash
# On the GPU host (envcheck packed by bench/device/pack.sh into DIR/pack, tests/data/kernels/libk_*.so in DIR/data,
# bench/envcheck-kernels-gpu.sh copied to DIR/kernels.sh, this script in DIR): envcheck inventory time and where it goes; --kernels cold and warm.
set -u
D=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export LD_LIBRARY_PATH=$D/pack/lib
EC=$D/pack/bin/envcheck
{
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$EC --version
echo "== inventory, 21 runs each (wall ms, median/min/max)"
python3 - "$EC" <<'PY'
import subprocess,sys,time,statistics
for args in ([],["--json"]):
    ts=[]
    for i in range(21):
        t=time.perf_counter(); subprocess.run([sys.argv[1]]+args,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL); ts.append((time.perf_counter()-t)*1000)
    print("envcheck",*args,f"median {statistics.median(ts):.1f} ms min {min(ts):.1f} max {max(ts):.1f}")
for cmd in (["nvidia-smi","--query-gpu=name,driver_version","--format=csv,noheader"],):
    ts=[]
    for i in range(11):
        t=time.perf_counter(); subprocess.run(cmd,stdout=subprocess.DEVNULL); ts.append((time.perf_counter()-t)*1000)
    print(cmd[0],f"median {statistics.median(ts):.1f} ms")
PY
echo "== LD_DEBUG=statistics"; LD_DEBUG=statistics $EC 2>&1 >/dev/null | tail -20
strace -f -tt -T -o "$OUT/inventory.strace" $EC >/dev/null 2>&1
echo "== strace: the 40 slowest syscalls"; sort -t'<' -k2 -rn "$OUT/inventory.strace" | awk -F'<' '{print $NF, $0}' | sort -rn | head -40 | cut -c1-220
echo "== strace -c"; strace -f -c -o /dev/stdout $EC >/dev/null 2>&1 | head -30
echo "== first and last line of the trace"; head -1 "$OUT/inventory.strace"; tail -1 "$OUT/inventory.strace"
echo "== gaps over 2 ms between syscalls"
python3 - "$OUT/inventory.strace" <<'PY'
import sys,re
prev=None;pl=""
for line in open(sys.argv[1]):
    m=re.match(r"(\d+)\s+(\d+):(\d+):([\d.]+)\s+(.*)",line)
    if not m: continue
    t=int(m.group(2))*3600+int(m.group(3))*60+float(m.group(4))
    if prev is not None and t-prev>0.002: print(f"{(t-prev)*1000:.1f} ms before: {m.group(5)[:160]}\n   after: {pl[:160]}")
    prev=t; pl=m.group(5)
PY
} > "$OUT/inventory.txt" 2>&1
OUT=$OUT bash "$D/kernels.sh" 
