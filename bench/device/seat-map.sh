#!/usr/bin/env bash
# envcheck's seat map checked by hand on the GPU host (issue 43, item 3): a process holds GPU memory (torch,
# 2 GiB), started through systemd-run where the host has systemd (so the row names its unit), else plainly;
# then envcheck's inventory, a --vram-free gate that cannot pass (it must name the holder and its fix) and the
# same in --json, beside nvidia-smi's own list of the compute processes.
#   OUT=/dir ENVCHECK=/path/envcheck PY=/path/python bash bench/device/seat-map.sh
set -uo pipefail
OUT=${OUT:?set OUT}
ENVCHECK=${ENVCHECK:-envcheck}
PY=${PY:-python3}
mark=$(mktemp -u /tmp/seat-held.XXXXXX)
hold="import torch, time; x = torch.empty(2 << 30, dtype=torch.uint8, device='cuda'); open('$mark', 'w').write('1'); time.sleep(120)"
unit=""
if command -v systemd-run >/dev/null && systemd-run --unit provkit-seat-test --collect "$PY" -c "$hold" 2>"$OUT/systemd-run.err"; then
  unit=provkit-seat-test
  echo "holder: systemd-run --unit provkit-seat-test"
else
  echo "holder: a plain background process (systemd-run: $(head -c 300 "$OUT/systemd-run.err" 2>/dev/null))"
  "$PY" -c "$hold" &
fi
for _ in $(seq 1 120); do [[ -e $mark ]] && break; sleep 0.5; done
[[ -e $mark ]] || echo "the holder did not start in 60 s"
echo "== nvidia-smi --query-compute-apps"
nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory --format=csv
echo "== envcheck (inventory)"
"$ENVCHECK"
echo "exit: $?"
echo "== envcheck --vram-free 100000G"
"$ENVCHECK" --vram-free 100000G
echo "exit: $?"
"$ENVCHECK" --vram-free 100000G --json >"$OUT/seat-map.json"
echo "json exit: $?"
if [[ -n $unit ]]; then systemctl stop "$unit"; else kill %1 2>/dev/null; fi
rm -f "$mark"
