#!/bin/bash
# On the GPU host: where a cold `envcheck --kernels SITE-PACKAGES` spends its time, the directory walk (one
# directory after another) or the reads of the objects. Staged as kernels-inventory-2.sh (envcheck packed by
# bench/device/pack.sh into DIR/pack, this script in DIR); as root, for drop_caches. About a minute.
set -u
D=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SP=${SP:-/opt/torch/.venv/lib/python3.12/site-packages}
export LD_LIBRARY_PATH=$D/pack/lib
EC=$D/pack/bin/envcheck
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
secs() { python3 -c "import sys; print(f'{float(sys.argv[2])-float(sys.argv[1]):.3f} s')" "$@"; }
{
date -u; $EC --version
echo "$(find $SP -type d | wc -l) directories, $(find $SP -type f | wc -l) files under $SP"
for i in 1 2 3; do
  drop; t=$EPOCHREALTIME; n=$(find $SP -type f -name '*.so*' | wc -l); echo "cold find (one walk): $n objects, $(secs $t $EPOCHREALTIME)"
  drop; t=$EPOCHREALTIME; find $SP -mindepth 3 -maxdepth 3 -type d > /tmp/d3; find $SP -maxdepth 3 -type f -name '*.so*' > /tmp/f3
  n=$(xargs -P16 -I{} find {} -type f -name '*.so*' < /tmp/d3 | wc -l); echo "cold find, 16 walks side by side: $((n + $(wc -l < /tmp/f3))) objects, $(secs $t $EPOCHREALTIME)"
  drop; t=$EPOCHREALTIME; PROVKIT_LOG=debug $EC --kernels $SP --json > /dev/null 2> "$OUT/trace-$i.txt"
  echo "cold envcheck --kernels: $(secs $t $EPOCHREALTIME), $(grep -E 'kernels: ' "$OUT/trace-$i.txt" | tr '\n' ' ')"
done
t=$EPOCHREALTIME; find $SP -type f -name '*.so*' > /dev/null; echo "warm find: $(secs $t $EPOCHREALTIME)"
t=$EPOCHREALTIME; PROVKIT_LOG=debug $EC --kernels $SP --json > /dev/null 2> "$OUT/trace-warm.txt"
echo "warm envcheck --kernels: $(secs $t $EPOCHREALTIME), $(grep -E 'kernels: ' "$OUT/trace-warm.txt" | tr '\n' ' ')"
} > "$OUT/transcript.txt" 2>&1
cat "$OUT/transcript.txt"
