#!/usr/bin/env bash
# For the GPU host (issue 3): envcheck's transcript beside nvidia-smi's own
# values, an agreement check between the two, and the inventory wall time
# against nvidia-smi and a `python3 -c "import torch; ..."` collecting the
# same facts (median of N runs; a bash loop timed with $EPOCHREALTIME, hyperfine is not there).
#
#   bench/envcheck-gpu.sh [ENVCHECK_BINARY] [RUNS]
#   ENVCHECK_BINARY: default ./envcheck beside this script, else build/bin/envcheck, else envcheck on PATH.
#   PYTHON: the interpreter with torch (default python3); the torch timing is skipped without torch.
# Writes everything to $OUT/envcheck-gpu.txt when OUT is set (and to stdout).
# Target: envcheck's inventory under 0.3 s on the GPU host. Needs only bash, coreutils, awk, python3.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-}
if [[ -z $bin ]]; then
  for c in "$here/envcheck" "$here/../build/bin/envcheck" "$(command -v envcheck || true)"; do
    [[ -n $c && -x $c ]] && { bin=$c; break; }
  done
fi
runs=${2:-21}
python=${PYTHON:-python3}
[[ -n $bin && -x $bin ]] || { echo "envcheck-gpu.sh: no envcheck binary (pass its path)" >&2; exit 2; }

report=/dev/null
if [[ -n ${OUT:-} ]]; then
  mkdir -p "$OUT"
  report=$OUT/envcheck-gpu.txt
  : >"$report"
fi
exec > >(tee -a "$report") 2>&1

section() { printf '\n===== %s\n' "$*"; }
show() {  # show COMMAND...: prints the command, its output and its exit code
  printf '\n$ %s\n' "$*"
  "$@"
  printf '[exit %d]\n' "$?"
}

smi_fields=driver_version,compute_cap,uuid,name,memory.total,memory.free,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max

section "host"
date -u
uname -a
grep PRETTY_NAME /etc/os-release
echo "envcheck binary: $bin"
show "$bin" --version
show ldd "$bin"

section "nvidia-smi's own values"
show nvidia-smi --query-gpu=$smi_fields --format=csv
printf '\n$ nvidia-smi | head -12   (the banner carries the CUDA version)\n'
nvidia-smi | head -12
show nvidia-smi topo -p2p r

section "envcheck transcript"
show "$bin"
show "$bin" --cuda 13.0
show "$bin" --cuda 13.2
show "$bin" --cuda 13.2 --strict
show "$bin" --need fp8
show "$bin" --need nvfp4
show "$bin" --lib libcuda.so.1 --lib libnvidia-ml.so.1
show "$bin" --json

section "agreement: envcheck --json against nvidia-smi --query-gpu"
"$bin" --json >/tmp/envcheck-gpu.$$.json
nvidia-smi --query-gpu=$smi_fields --format=csv,noheader,nounits >/tmp/envcheck-gpu.$$.csv
nvidia-smi >/tmp/envcheck-gpu.$$.banner
python3 - /tmp/envcheck-gpu.$$.json /tmp/envcheck-gpu.$$.csv /tmp/envcheck-gpu.$$.banner <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
rows = {c["name"]: c for c in doc["checks"]}
smi = [[f.strip() for f in line.split(",")] for line in open(sys.argv[2]) if line.strip()]
banner = open(sys.argv[3]).read()
bad = 0
def same(what, ours, theirs):
    global bad
    ok = str(ours) == str(theirs)
    bad += not ok
    print(f"{'AGREE   ' if ok else 'DISAGREE'} {what}: envcheck={ours} nvidia-smi={theirs}")
drv = rows["driver"]["data"]
same("driver version", drv["driver_version"], smi[0][0])
m = re.search(r"CUDA Version:\s*([0-9.]+)", banner)
same("CUDA version", drv["cuda"], m.group(1) if m else "?")
for i, f in enumerate(smi):
    d = rows.get(f"gpu {i}", {}).get("data", {})
    same(f"gpu {i} uuid", d.get("uuid"), f[2])
    same(f"gpu {i} name", d.get("name"), f[3])
    same(f"gpu {i} compute capability", d.get("compute_capability"), f[1])
    same(f"gpu {i} memory.total MiB", (d.get("memory_total") or 0) // 2**20, f[4])
    free = (d.get("memory_free") or 0) // 2**20
    print(f"{'AGREE   ' if abs(free - int(f[5])) <= 64 else 'DIFFERS '} gpu {i} memory.free MiB (moves; within 64 MiB): envcheck={free} nvidia-smi={f[5]}")
    p = d.get("pcie", {})
    same(f"gpu {i} pcie.link.gen.max", p.get("gen_max"), f[7])
    same(f"gpu {i} pcie.link.width.max", p.get("width_max"), f[9])
    print(f"info     gpu {i} pcie current (trains down when idle): envcheck gen {p.get('gen_current')} x{p.get('width_current')}, nvidia-smi gen {f[6]} x{f[8]}")
print(f"{bad} disagreement(s)")
PY
rm -f /tmp/envcheck-gpu.$$.*

section "timing: median of $runs runs each (ms)"
median_ms() {
  local n=$1 i t0 t1
  shift
  local times=()
  "$@" >/dev/null 2>&1  # warm-up
  for ((i = 0; i < n; i++)); do
    t0=${EPOCHREALTIME/./}
    "$@" >/dev/null 2>&1
    t1=${EPOCHREALTIME/./}
    times+=($((t1 - t0)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f ms (min %.1f, max %.1f, %d runs)\n", a[int((NR+1)/2)]/1000, a[1]/1000, a[NR]/1000, NR}'
}
torch_facts='import torch
n = torch.cuda.device_count()
for i in range(n):
    p = torch.cuda.get_device_properties(i)
    free, total = torch.cuda.mem_get_info(i)
    print(i, p.name, p.uuid, f"{p.major}.{p.minor}", total, free)
for a in range(n):
    for b in range(a + 1, n):
        print(a, b, torch.cuda.can_device_access_peer(a, b))
import ctypes
v = ctypes.c_int()
ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(v))  # torch has no public driver query
print(torch.version.cuda, v.value)'
echo "floor, /bin/true:                         $(median_ms "$runs" /bin/true)"
echo "envcheck (full inventory):                $(median_ms "$runs" "$bin")"
echo "envcheck --json (full inventory):         $(median_ms "$runs" "$bin" --json)"
echo "nvidia-smi --query-gpu=... --format=csv:  $(median_ms "$runs" nvidia-smi --query-gpu=$smi_fields --format=csv)"
echo "nvidia-smi (banner, for the CUDA version): $(median_ms "$runs" nvidia-smi)"
if "$python" -c 'import torch' >/dev/null 2>&1; then
  printf '\n$ %s -c "<torch facts>"\n' "$python"
  if ! "$python" -c "$torch_facts"; then
    echo "python3 -c 'import torch; ...': the facts script failed above; no timing"
  else
  echo "python3 -c 'import torch; ...' (same facts): $(median_ms "$(( runs < 11 ? runs : 11 ))" "$python" -c "$torch_facts")"
  fi
else
  echo "python3 -c 'import torch; ...': skipped, $python cannot import torch (set PYTHON to an interpreter that can)"
fi
