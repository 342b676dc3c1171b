#!/usr/bin/env bash
# envbuild beside uv on the GPU host (Ubuntu 24.04, a python3 with torch, uv at /usr/local/bin/uv, no network),
# measured so that it cannot flatter envbuild:
#
#   OUT=/some/dir ENVBUILD=/path/to/envbuild [ENVBUILD_OLD=/path/to/earlier/envbuild] PY=/path/to/python \
#     WORK=/a/dir/on/the/real/disk bash bench/envbuild-gpu.sh
#
# 1. `envbuild capture` of the site-packages that holds torch -> wheelhouse + hashed lock (lock.txt), and the
#    same requirements without hashes (plain.txt), for the uv run that need not hash anything.
# 2. uv as a user runs it (`uv venv` + `uv pip install --offline --no-index --find-links W --no-deps -r LOCK`),
#    with its default link mode and with `--link-mode hardlink`, each with the hashed lock and the plain one;
#    envbuild create (and ENVBUILD_OLD's, if given). Caches and environments in one directory of one file
#    system, so every tool can hardlink. Every timed run starts with no dirty pages (an untimed `sync`) and
#    goes into a new environment; its time is taken twice: when the tool exits, and after a `sync` that
#    follows it (envbuild promises a durable environment, uv does not).
# 3. warm (caches filled): page cache hot, then dropped before each run; 3 rounds, the tools' order rotated
#    each round; medians. Cold (empty caches, wheels in the page cache): COLD_ROUNDS (default ROUNDS) likewise. The disk's own
#    write rate (dd conv=fdatasync) beside the cold runs.
# 4. `envbuild diff` of the uv and envbuild environments, `envbuild verify --lock`, torch imported from the
#    envbuild environment.
# Results: $OUT/envbuild-gpu.md (tables), $OUT/envbuild-gpu.log (everything printed), $OUT/*.trace.
set -euo pipefail
OUT=${OUT:?set OUT to a directory for the results}
mkdir -p "$OUT"
ENVBUILD=$(readlink -f "${ENVBUILD:-$(command -v envbuild || echo ./envbuild)}")
[[ -n ${ENVBUILD_OLD:-} ]] && ENVBUILD_OLD=$(readlink -f "$ENVBUILD_OLD")
PY=${PY:-python3}
UV=${UV:-/usr/local/bin/uv}
ROUNDS=${ROUNDS:-3}
COLD_ROUNDS=${COLD_ROUNDS:-$ROUNDS}
work=${WORK:-/var/tmp/envbuild-gpu}
rm -rf "$work"
mkdir -p "$work"
exec > >(tee "$OUT/envbuild-gpu.log") 2>&1

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
drop() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null && echo dropped || echo "NOT dropped"; }

echo "host: $(uname -srm); $(nproc) cores; $(grep PRETTY_NAME /etc/os-release | cut -d= -f2)"
echo "envbuild: $ENVBUILD ($("$ENVBUILD" --version))"
[[ -n ${ENVBUILD_OLD:-} ]] && echo "envbuild (earlier): $ENVBUILD_OLD ($("$ENVBUILD_OLD" --version))"
echo "uv: $("$UV" --version); UV_* in the environment: $(env | grep -c '^UV_' || true)"
PY=$(command -v "$PY")  # not resolved: a venv python must stay the venv's
site=$("$PY" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
echo "python: $PY ($("$PY" -V 2>&1)); torch $("$PY" -c 'import torch; print(torch.__version__)') in $site"
echo "work: $work on $(findmnt -no SOURCE,FSTYPE -T "$work" | tr -s ' ')"

"$ENVBUILD" capture "$site" --wheelhouse "$work/wheels" --lock "$work/lock.txt" | tail -1
grep -v -- '--hash' "$work/lock.txt" | sed 's/ *\\$//' >"$work/plain.txt"
n=$(grep -c '^[A-Za-z0-9]' "$work/lock.txt")
size=$(du -sh "$work/wheels" | cut -f1)
echo "captured $n distributions, $size of wheels"

# One step of a tool into a new environment $2; $1 names the step. Prints "exit-seconds synced-seconds".
step() {
  local what=$1 env=$2 t0 t1 t2
  sync
  t0=$(now)
  case $what in
    uv-default) "$UV" venv -q --python "$PY" "$env" &&
      "$UV" pip install -q --offline --no-index --find-links "$work/wheels" --no-deps -r "$work/lock.txt" \
        --python "$env/bin/python" ;;
    uv-hardlink) "$UV" venv -q --python "$PY" "$env" &&
      "$UV" pip install -q --offline --no-index --find-links "$work/wheels" --no-deps -r "$work/lock.txt" \
        --link-mode hardlink --python "$env/bin/python" ;;
    uv-plain) "$UV" venv -q --python "$PY" "$env" &&
      "$UV" pip install -q --offline --no-index --find-links "$work/wheels" --no-deps -r "$work/plain.txt" \
        --link-mode hardlink --python "$env/bin/python" ;;
    envbuild) "$ENVBUILD" --cache-dir "$work/eb-cache" create "$env" --python "$PY" --lock "$work/lock.txt" \
      --find-links "$work/wheels" >/dev/null ;;
    envbuild-old) "$ENVBUILD_OLD" --cache-dir "$work/old-cache" create "$env" --python "$PY" \
      --lock "$work/lock.txt" --find-links "$work/wheels" >/dev/null ;;
  esac
  t1=$(now)
  sync
  t2=$(now)
  echo "$(secs "$t0" "$t1") $(secs "$t0" "$t2")"
}
export UV_CACHE_DIR="$work/uv-cache"

tools=(uv-default uv-hardlink uv-plain envbuild)
[[ -n ${ENVBUILD_OLD:-} ]] && tools+=(envbuild-old)
declare -A runs  # "state tool" -> "exit/synced exit/synced ..."
# Round r runs the tools starting at index r (rotated), so no tool always runs first or after the same one.
rotate() { local r=$1; for ((k = 0; k < ${#tools[@]}; k++)); do echo "${tools[$(((k + r) % ${#tools[@]}))]}"; done; }
record() { runs["$1 $2"]="${runs["$1 $2"]:-} $3"; }

echo "== cold: empty caches, wheels in the page cache"
cat "$work"/wheels/* >/dev/null
for ((r = 0; r < COLD_ROUNDS; r++)); do
  for t in $(rotate "$r"); do
    rm -rf "$work/uv-cache" "$work/eb-cache" "$work/old-cache" "$work/cold-$t"
    sync
    if [[ $t == envbuild && $r == 0 ]]; then
      res=$(PROVKIT_LOG=debug step "$t" "$work/cold-$t" 2>"$OUT/envbuild-cold.trace")
    else
      res=$(step "$t" "$work/cold-$t")
    fi
    echo "cold round $r $t: $res"
    record cold "$t" "${res// //}"
    rm -rf "$work/cold-$t"
  done
done
echo "disk write rate: $(dd if=/dev/zero of="$work/dd.bin" bs=16M count=512 conv=fdatasync 2>&1 | tail -1)"
rm -f "$work/dd.bin"

# The caches filled once more (the cold rounds left only the last tool's), untimed.
for t in "${tools[@]}"; do step "$t" "$work/fill-$t" >/dev/null; done
# A trace of uv's choices, once: which link mode it used and whether it hashed the wheels.
"$UV" venv -q --python "$PY" "$work/uv-trace"
RUST_LOG=uv=debug "$UV" pip install --offline --no-index --find-links "$work/wheels" --no-deps -r "$work/lock.txt" \
  --python "$work/uv-trace/bin/python" >"$OUT/uv-warm.trace" 2>&1 || true
grep -iE "link|hash|copy|clone" "$OUT/uv-warm.trace" | sort | uniq -c | sort -rn | head -15 || true

for state in hot dropped; do
  echo "== warm, page cache $state"
  for ((r = 0; r < ROUNDS; r++)); do
    for t in $(rotate "$r"); do
      rm -rf "$work/warm-$t"
      sync
      [[ $state == dropped ]] && page=$(drop) || page=hot
      if [[ $t == envbuild ]]; then
        res=$(PROVKIT_LOG=debug step "$t" "$work/warm-$t" 2>"$OUT/envbuild-$state-$r.trace")
      else
        res=$(step "$t" "$work/warm-$t")
      fi
      echo "warm $state ($page) round $r $t: $res"
      record "$state" "$t" "${res// //}"
    done
  done
done

echo "== the environments"
"$ENVBUILD" diff "$work/warm-uv-default" "$work/warm-envbuild" | tail -1 || true
"$ENVBUILD" diff "$work/warm-uv-hardlink" "$work/warm-envbuild" | tail -1 || true
t0=$(now)
"$ENVBUILD" --cache-dir "$work/eb-cache" verify "$work/warm-envbuild" --lock "$work/lock.txt" | tail -1
t_verify=$(secs "$t0" "$(now)")
"$work/warm-envbuild/bin/python" -c 'import torch; a = torch.randn(1024, 1024, device="cuda"); print("torch", torch.__version__, "from", torch.__file__, "matmul on", torch.cuda.get_device_name(0), "max |a@a.T - ref|:", float((a @ a.T - (a.cpu() @ a.cpu().T).cuda()).abs().max()))' ||
  echo "torch import or GPU matmul FAILED"
files=$(find "$work/warm-envbuild" -type f | wc -l)
uv_files=$(find "$work/warm-uv-default" -type f | wc -l)
links_uv=$(find "$work/warm-uv-default" -type f -links 1 | wc -l)
echo "files: envbuild environment $files, uv's $uv_files (of which $links_uv have one link: copied, not linked)"

# Medians of each column ("exit/synced" values).
col() { local i=$1; shift; for v in "$@"; do echo "${v//\// }" | awk -v i="$i" '{print $i}'; done; }
med() { local vals; read -ra vals <<<"${runs["$1 $2"]:-}"; ((${#vals[@]})) || return 0; median $(col "$3" "${vals[@]}"); }
{
  echo "GPU host: $(grep PRETTY_NAME /etc/os-release | cut -d= -f2 | tr -d '"'), $(nproc) cores, $(findmnt -no FSTYPE -T "$work");"
  echo "$("$PY" -V 2>&1), torch $("$PY" -c 'import torch; print(torch.__version__)'); $n distributions, $files files,"
  echo "$size of wheels; $("$UV" --version); envbuild $("$ENVBUILD" --version); $ROUNDS rounds, tools' order rotated."
  echo
  echo "| state | tool | runs (s, at exit / after sync) | median at exit | median after sync |"
  echo "| --- | --- | --- | --- | --- |"
  for state in cold hot dropped; do
    for t in "${tools[@]}"; do
      echo "| $state | $t | ${runs["$state $t"]:-} | $(med "$state" "$t" 1) | $(med "$state" "$t" 2) |"
    done
  done
  echo
  for state in cold hot dropped; do
    best=; best_t=
    for t in uv-default uv-hardlink; do
      m=$(med "$state" "$t" 1)
      if [[ -z $best ]] || awk -v a="$m" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$m; best_t=$t; fi
    done
    eb=$(med "$state" envbuild 1); eb_s=$(med "$state" envbuild 2); uv_s=$(med "$state" "$best_t" 2)
    plain=$(med "$state" uv-plain 1)
    echo "- $state: the faster uv with the hashed lock is $best_t ($best s); envbuild / it = $(ratio "$eb" "$best") at exit," \
      "$(ratio "$eb_s" "$uv_s") after sync; envbuild / uv with no hashes to check = $(ratio "$eb" "$plain")"
  done
  echo "- envbuild verify --lock: $t_verify s"
} >"$OUT/envbuild-gpu.md"
cat "$OUT/envbuild-gpu.md"
rm -rf "$work"
