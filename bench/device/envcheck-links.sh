#!/usr/bin/env bash
# issue 16 on the GPU host: envcheck's link test, PCIe atomics and RoCE, with
# nvidia-smi sampled during the copies (docs/envcheck-on-gpu.md). Run from the repo root, with
# envcheck packed by bench/device/pack.sh under $D/pk: D=.device/links bash bench/device/envcheck-links.sh
D=${D:-.device/links}
E=$D/pk/bin/envcheck
export LD_LIBRARY_PATH=$D/pk/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/transcript.txt") 2>&1
show() { echo; echo "\$ $*"; "$@"; echo "[exit $?]"; }
echo "===== host"; date -u; uname -r; grep PRETTY /etc/os-release; echo "uid $(id -u)"
show nvidia-smi --query-gpu=name,pci.bus_id,pcie.link.gen.current,pcie.link.width.current,pcie.link.gen.max,pcie.link.width.max --format=csv
echo; echo "===== inventory without --link-test, 5 runs (wall seconds)"
TIMEFORMAT=%R
for i in 1 2 3 4 5; do { time $E >/dev/null; } 2>&1; done
show $E
echo; echo "===== --link-test with nvidia-smi sampling every 100 ms"
nvidia-smi --query-gpu=timestamp,pcie.link.gen.current,pcie.link.width.current --format=csv -lms 100 >"$OUT/smi.csv" 2>&1 &
SMI=$!
sleep 1
show $E --link-test 3 --min-pcie 5:16 --min-h2d 20
sleep 1
kill $SMI; wait $SMI 2>/dev/null
echo "nvidia-smi samples (gen,width: count):"; tail -n +2 "$OUT/smi.csv" | awk -F', ' '{print $2" x"$3}' | sort | uniq -c
echo "first and last samples:"; sed -n 2,4p "$OUT/smi.csv"; tail -3 "$OUT/smi.csv"
echo; echo "\$ $E --link-test 2 --json > link.json   (its link and peer rows:)"
$E --link-test 2 --json >"$OUT/link.json"; echo "[exit $?]"
python3 -c 'import json,sys; [print(json.dumps(c)) for c in json.load(open(sys.argv[1]))["checks"] if c["name"].split()[0] in ("link","peer")]' "$OUT/link.json"
echo; echo "===== --pcie-atomics as root"
BDF=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | sed 's/^0000//' | tr A-Z a-z)
show readlink -f /sys/bus/pci/devices/$BDF
show wc -c /sys/bus/pci/devices/$BDF/config
command -v lspci >/dev/null && lspci -vvs $BDF 2>&1 | grep -E "AtomicOps|LnkSta:|LnkCap:" 
show $E --pcie-atomics
$E --pcie-atomics --json >"$OUT/atomics.json"; echo "[exit $?]"; cat "$OUT/atomics.json"
echo; echo "===== --pcie-atomics as nobody (config past 64 bytes is root's)"
cp $E /tmp/envcheck-links && chmod 755 /tmp/envcheck-links
show setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/envcheck-links --pcie-atomics
echo; echo "===== --roce"
show ls -la /sys/class/infiniband
show $E --roce
$E --roce --json >"$OUT/roce.json"; echo "[exit $?]"; cat "$OUT/roce.json"
echo; echo "===== inventory --json (rows: name status)"
$E --json >"$OUT/inventory.json"; echo "[exit $?]"
python3 -c 'import json,sys; [print(c["name"], c["status"]) for c in json.load(open(sys.argv[1]))["checks"]]' "$OUT/inventory.json"
