#!/usr/bin/env bash
# Where a warm envbuild create spends its time, beside uv's, on the GPU host (issue 46: "find where the 0.4 s
# goes"). Same workload and setup as bench/envbuild-gpu.sh (the torch site-packages captured into wheels and a
# hashed lock, caches and environments on one file system), then, page cache hot, into new environments:
#   - envbuild's own phase trace (PROVKIT_LOG=debug), 3 runs, beside uv --link-mode hardlink's times;
#   - `strace -c -f -w` of one run each (system calls by count and by wall time);
#   - `perf record -g` of one run each: the top symbols and the kernel/user split (where perf is given);
#   - envbuild at -j 8, 16, 32 (its default is 2x cores, at most 32);
#   - `envbuild diff` against uv's environment, `envbuild verify --lock`, torch imported on the GPU.
#
#   OUT=/dir ENVBUILD=/path/envbuild [ENVBUILD_OLD=/path/earlier/envbuild] PY=/path/python [STRACE=/path/strace] \
#     [PERF=/path/perf] WORK=/dir/on/the/real/disk bash bench/envbuild-gpu-profile.sh
# ENVBUILD_OLD: an earlier build timed in the same rounds (the same cache), to see what a change gained.
# Results: $OUT/profile.log and the raw strace/perf reports under $OUT.
set -euo pipefail
OUT=${OUT:?set OUT to a directory for the results}
mkdir -p "$OUT"
ENVBUILD=$(readlink -f "${ENVBUILD:-$(command -v envbuild)}")
[[ -n ${ENVBUILD_OLD:-} ]] && ENVBUILD_OLD=$(readlink -f "$ENVBUILD_OLD")
PY=$(command -v "${PY:-python3}")
UV=${UV:-/usr/local/bin/uv}
STRACE=${STRACE:-$(command -v strace || true)}
PERF=${PERF:-$(command -v perf || true)}
work=${WORK:-/var/tmp/envbuild-profile}
rm -rf "$work"
mkdir -p "$work"
exec > >(tee "$OUT/profile.log") 2>&1
export UV_CACHE_DIR="$work/uv-cache"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

echo "host: $(uname -srm); $(nproc) cores; $(grep PRETTY_NAME /etc/os-release | cut -d= -f2)"
echo "envbuild: $ENVBUILD ($("$ENVBUILD" --version)); uv: $("$UV" --version)"
echo "work: $work on $(findmnt -no SOURCE,FSTYPE -T "$work" | tr -s ' ')"
site=${SITE:-$("$PY" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')}
t0=$(now)
"$ENVBUILD" capture "$site" --wheelhouse "$work/wheels" --lock "$work/lock.txt" | tail -1
echo "capture: $(secs "$t0" "$(now)") s; $(grep -c '^[A-Za-z0-9]' "$work/lock.txt") distributions, $(du -sh "$work/wheels" | cut -f1)"

eb() { "${EB:-$ENVBUILD}" --cache-dir "$work/eb-cache" create "$1" --python "$PY" --lock "$work/lock.txt" \
  --find-links "$work/wheels" --progress none "${@:2}" >/dev/null; }
uvh() { "$UV" venv -q --python "$PY" "$1" && "$UV" pip install -q --offline --no-index --find-links "$work/wheels" \
  --no-deps -r "$work/lock.txt" --link-mode hardlink --python "$1/bin/python"; }
eb_version() { "$ENVBUILD" --version >/dev/null; }
timed() {  # timed NAME CMD...: the command's wall time, into a new environment made by CMD
  local name=$1 t
  shift
  sync
  t=$(now)
  "$@"
  echo "$name: $(secs "$t" "$(now)") s"
}

# The caches filled (untimed beyond the line printed).
timed "envbuild cold" eb "$work/fill-eb"
timed "uv hardlink cold" uvh "$work/fill-uv"
echo "files in the environment: $(find "$work/fill-eb" -type f | wc -l), directories: $(find "$work/fill-eb" -type d | wc -l)"

echo "== warm, page cache hot: 3 runs each, alternating; envbuild's phases"
for r in 0 1 2; do
  rm -rf "$work/w-eb" "$work/w-uv"
  timed "round $r uv hardlink" uvh "$work/w-uv"
  rm -rf "$work/w-eb"
  sync
  t=$(now)
  PROVKIT_LOG=debug eb "$work/w-eb" 2>"$OUT/eb-warm-$r.trace"
  echo "round $r envbuild: $(secs "$t" "$(now)") s"
  grep 'create:' "$OUT/eb-warm-$r.trace" | sed 's/^.*create: /    /'
  if [[ -n ${ENVBUILD_OLD:-} ]]; then
    rm -rf "$work/w-old"
    EB=$ENVBUILD_OLD timed "round $r envbuild-old" eb "$work/w-old"
  fi
done

echo "== process start and exit alone (envbuild --version, 3 runs)"
for r in 0 1 2; do timed "envbuild --version" eb_version; done

echo "== envbuild's workers"
for j in 8 16 32; do
  rm -rf "$work/w-eb"
  timed "envbuild -j $j" eb "$work/w-eb" -j "$j"
done

if [[ -n $STRACE ]]; then
  echo "== strace -c -f -w (one run each)"
  rm -rf "$work/s-eb" "$work/s-uv"
  sync
  "$STRACE" -c -f -w -o "$OUT/strace-envbuild.txt" "$ENVBUILD" --cache-dir "$work/eb-cache" create "$work/s-eb" \
    --python "$PY" --lock "$work/lock.txt" --find-links "$work/wheels" --progress none >/dev/null
  "$UV" venv -q --python "$PY" "$work/s-uv"
  sync
  "$STRACE" -c -f -w -o "$OUT/strace-uv.txt" "$UV" pip install -q --offline --no-index --find-links "$work/wheels" \
    --no-deps -r "$work/lock.txt" --link-mode hardlink --python "$work/s-uv/bin/python"
  for t in envbuild uv; do
    echo "-- $t"
    head -16 "$OUT/strace-$t.txt"
    tail -1 "$OUT/strace-$t.txt"
  done
fi

if [[ -n $PERF ]]; then
  echo "== perf record -g (one run each)"
  rm -rf "$work/p-eb" "$work/p-uv"
  sync
  "$PERF" record -q -g -F 4999 -o "$work/eb.perf" -- "$ENVBUILD" --cache-dir "$work/eb-cache" create "$work/p-eb" \
    --python "$PY" --lock "$work/lock.txt" --find-links "$work/wheels" --progress none >/dev/null 2>&1 || true
  "$UV" venv -q --python "$PY" "$work/p-uv"
  sync
  "$PERF" record -q -g -F 4999 -o "$work/uv.perf" -- "$UV" pip install -q --offline --no-index \
    --find-links "$work/wheels" --no-deps -r "$work/lock.txt" --link-mode hardlink \
    --python "$work/p-uv/bin/python" 2>/dev/null || true
  for t in eb uv; do
    [[ -s $work/$t.perf ]] || continue
    "$PERF" report -i "$work/$t.perf" --stdio --no-children --sort sym 2>/dev/null | grep -v '^$' >"$OUT/perf-$t-sym.txt" || true
    "$PERF" report -i "$work/$t.perf" --stdio --no-children --sort dso -g none 2>/dev/null | grep '%' >"$OUT/perf-$t-dso.txt" || true
    "$PERF" report -i "$work/$t.perf" --stdio --children --sort sym -g caller,0.5,callee --percent-limit 3 2>/dev/null >"$OUT/perf-$t-children.txt" || true
    echo "-- $t: by object"
    head -8 "$OUT/perf-$t-dso.txt"
    echo "-- $t: top symbols"
    grep -E '^ +[0-9.]+%' "$OUT/perf-$t-sym.txt" | head -25
  done
fi

echo "== the environments"
"$ENVBUILD" diff "$work/w-uv" "$work/w-eb" | tail -2 || true
t=$(now)
"$ENVBUILD" --cache-dir "$work/eb-cache" verify "$work/w-eb" --lock "$work/lock.txt" | tail -1
echo "verify: $(secs "$t" "$(now)") s"
"$work/w-eb/bin/python" -c 'import torch; a = torch.randn(512, 512, device="cuda"); print("torch", torch.__version__, "on", torch.cuda.get_device_name(0), float((a @ a).abs().sum()) > 0)' ||
  echo "torch import or GPU matmul FAILED"
rm -rf "$work"
