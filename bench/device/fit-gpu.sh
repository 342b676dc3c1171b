#!/usr/bin/env bash
# Issue 40 item 7 on the GPU host: the fit planner (hf-fetch inspect --engine-args ... --gpus local) against
#  a. what torch holds after loading a checkpoint on the card (bench/device/fit_gpu_torch.py), and
#  b. a CUDA build of llama.cpp (node-llama-cpp's carried source) and its buffers on tiny GGUFs
#     (bench/device/fit_gpu_llamacpp.py; the GGUFs are tests/llamacpp/make_gguf.py's, made on the dev box).
# Each part that fails is recorded and the next goes on; OUT/not-run.txt lists what could not be run.
#
#   OUT=$OUT HF_FETCH=.device/bin/hf-fetch PY=/opt/torch/.venv/bin/python FIT=.device/fit bash bench/device/fit-gpu.sh
#
# FIT holds llama.cpp-src.tar.xz, gguf/*.gguf, ninja and cmake-debian12.tar.xz (a CMake used only when the host
# has none). WORK (default /var/tmp/fitgpu) keeps the source, the build and the checkpoints between calls: a
# build that did not finish in BUILD_DEADLINE seconds goes on where it stopped on the next call.
# Optional: GPUS_ARG (default '--gpus local'; '--gpu-memory 80G' on a box without a GPU), DEVICE (CUDA0),
# CUDA (ON; OFF builds llama.cpp for the CPU), JOBS (16), BUILD_DEADLINE (450 s after the start),
# SKIP_TORCH=1, SKIP_LLAMA=1, TORCH_ARGS (e.g. --dry-run), CASES (fit_gpu_llamacpp.py --only), CARRIED_TOOLS=1
# (use the carried cmake and ninja even where the host has its own).
set -u
: "${OUT:?}" "${HF_FETCH:?}" "${PY:?}" "${FIT:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-/var/tmp/fitgpu}
GPUS_ARG=${GPUS_ARG:---gpus local}
DEVICE=${DEVICE:-CUDA0}
CUDA=${CUDA:-ON}
JOBS=${JOBS:-16}
BUILD_DEADLINE=${BUILD_DEADLINE:-450}
T0=$(date +%s)
mkdir -p "$OUT" "$WORK"
OUT=$(cd "$OUT" && pwd)
FIT=$(cd "$FIT" && pwd)
case $HF_FETCH in /*) ;; *) HF_FETCH=$PWD/$HF_FETCH ;; esac
exec > >(tee -a "$OUT/fit-gpu.log") 2>&1
NOTRUN=$OUT/not-run.txt
: >"$NOTRUN"
# tar without xz (a minimal image) still has Python's lzma
untar() { tar xJf "$1" -C "$2" 2>/dev/null || "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"; }
say() { echo "[fit-gpu $(($(date +%s) - T0))s] $*"; }
notrun() { say "NOT RUN: $*"; echo "- $*" >>"$NOTRUN"; }

say "start $(date -u +%FT%TZ) on $(hostname); WORK=$WORK GPUS_ARG='$GPUS_ARG' DEVICE=$DEVICE CUDA=$CUDA"
{
  echo "## Facts"
  echo
  echo '```'
  nvidia-smi --query-gpu=index,name,memory.total,memory.used,driver_version --format=csv 2>&1 | head -5
  "$HF_FETCH" --version 2>&1 | head -1
  (command -v nvcc || ls /usr/local/cuda/bin/nvcc) 2>&1 | head -1
  (nvcc --version 2>/dev/null || /usr/local/cuda/bin/nvcc --version) 2>&1 | tail -2 | head -1
  echo "cmake: $(command -v cmake || echo none on PATH) $(cmake --version 2>/dev/null | head -1)"
  echo "ninja: $(command -v ninja || echo none on PATH); make: $(command -v make || echo none)"
  echo "CC=${CC:-} CXX=${CXX:-}; gcc: $(command -v gcc || echo none); g++: $(command -v g++ || echo none); /opt/gcc/bin: $(ls /opt/gcc/bin 2>/dev/null | tr '\n' ' ')"
  echo "git: $(command -v git || echo none); nproc: $(nproc)"
  echo "carried: $(cd "$FIT" && ls | tr '\n' ' '); node-llama-cpp: $(cat "$FIT/SOURCE.txt" 2>/dev/null | tr '\n' ' ')"
  echo '```'
} >"$OUT/facts.md" 2>&1
cat "$OUT/facts.md"

# --- the tools the llama.cpp build needs: a C and C++ compiler, nvcc, cmake, ninja or make ---
pick() { for c in "$@"; do [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && { command -v "$c"; return 0; }; done; return 1; }
CC_=$(pick "${CC:-}" gcc /opt/gcc/bin/gcc cc clang) || CC_=
CXX_=$(pick "${CXX:-}" g++ /opt/gcc/bin/g++ c++ clang++) || CXX_=
NVCC=$(pick nvcc /usr/local/cuda/bin/nvcc) || NVCC=
CMAKE=$(pick cmake "$(dirname "$PY")/cmake") || CMAKE=
[ -n "${CARRIED_TOOLS:-}" ] && CMAKE=  # a test of the carried cmake and ninja on a box that has its own
if [ -z "$CMAKE" ] && [ -f "$FIT/cmake-debian12.tar.xz" ]; then
  # Debian 12's cmake 3.25 with the libraries it links; only those the host lacks are put on its path.
  if [ ! -x "$WORK/cmk/bin/cmake" ]; then untar "$FIT/cmake-debian12.tar.xz" "$WORK"; fi
  mkdir -p "$WORK/cmk/needed"
  for _ in 1 2 3 4 5 6; do
    missing=$(LD_LIBRARY_PATH="$WORK/cmk/needed" ldd "$WORK/cmk/bin/cmake" | awk '/not found/{print $1}')
    [ -z "$missing" ] && break
    for m in $missing; do [ -f "$WORK/cmk/lib/$m" ] && ln -sf "../lib/$m" "$WORK/cmk/needed/$m"; done
  done
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
    "$WORK/cmk/needed" "$WORK/cmk/bin/cmake" >"$WORK/cmake"
  chmod +x "$WORK/cmake"
  if "$WORK/cmake" --version >/dev/null 2>&1; then
    CMAKE=$WORK/cmake
    say "using the carried Debian 12 cmake (the host has none, or CARRIED_TOOLS is set) ($("$CMAKE" --version | head -1); libraries added: $(ls "$WORK/cmk/needed" | tr '\n' ' '))"
    echo "- the carried Debian 12 cmake 3.25 was used (the host has none on PATH or beside PY, or CARRIED_TOOLS)" >>"$OUT/facts.md"
  else
    say "the carried cmake does not run: $("$WORK/cmake" --version 2>&1 | head -2)"
  fi
fi
NINJA=$(pick ninja) || NINJA=
[ -n "${CARRIED_TOOLS:-}" ] && NINJA=
if [ -z "$NINJA" ] && [ -f "$FIT/ninja" ]; then cp "$FIT/ninja" "$WORK/ninja" && chmod +x "$WORK/ninja" && "$WORK/ninja" --version >/dev/null 2>&1 && NINJA=$WORK/ninja; fi
say "compilers: CC=${CC_:-none} CXX=${CXX_:-none} nvcc=${NVCC:-none} cmake=${CMAKE:-none} ninja=${NINJA:-none}"

# --- b. llama.cpp: extract, configure, build in the background (resumable) while the torch part runs ---
SRC=$WORK/llama.cpp
BDIR=$WORK/build-$( [ "$CUDA" = ON ] && echo cuda || echo cpu )
BUILD_PID=
build_llama() {
  set -o pipefail
  if [ ! -f "$SRC/.extracted" ]; then
    rm -rf "$SRC" && untar "$FIT/llama.cpp-src.tar.xz" "$WORK" && touch "$SRC/.extracted" || { echo "extract failed"; return 10; }
  fi
  if [ ! -f "$BDIR/.configured" ]; then
    gen=(-G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA")
    [ -z "$NINJA" ] && gen=(-G "Unix Makefiles")
    cuda=(-DGGML_CUDA=OFF)
    [ "$CUDA" = ON ] && cuda=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_COMPILER="$NVCC"
                              -DCMAKE_CUDA_HOST_COMPILER="$CXX_" -DGGML_CUDA_NCCL=OFF -DGGML_CUDA_COMPRESSION_MODE=none)
    configure() {
      "$CMAKE" -S "$SRC" -B "$BDIR" "${gen[@]}" "${cuda[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_COMPILER="$CC_" -DCMAKE_CXX_COMPILER="$CXX_" -DBUILD_SHARED_LIBS=ON -DGGML_NATIVE=ON \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF "$@"
    }
    if ! configure; then
      # nvcc refuses a host compiler newer than it knows: once more with its own switch for that
      [ "$CUDA" = ON ] || { echo "configure failed"; return 11; }
      echo "configure failed; again with -allow-unsupported-compiler"
      rm -rf "$BDIR"
      configure -DCMAKE_CUDA_FLAGS=-allow-unsupported-compiler || { echo "configure failed"; return 11; }
    fi
    touch "$BDIR/.configured"
  fi
  local left=$((T0 + BUILD_DEADLINE - $(date +%s)))
  [ "$left" -gt 0 ] || return 124
  timeout -k 10 "$left" "$CMAKE" --build "$BDIR" -j "$JOBS" --target llama-completion || return $?
  left=$((T0 + BUILD_DEADLINE - $(date +%s)))
  [ "$left" -gt 0 ] || return 125
  timeout -k 10 "$left" "$CMAKE" --build "$BDIR" -j "$JOBS" --target llama-server || return 20
}
if [ -n "${SKIP_LLAMA:-}" ]; then
  notrun "llama.cpp part: SKIP_LLAMA set"
elif [ ! -f "$FIT/llama.cpp-src.tar.xz" ]; then
  notrun "llama.cpp part: $FIT/llama.cpp-src.tar.xz is not carried"
elif [ -z "$CMAKE" ] || [ -z "$CC_" ] || [ -z "$CXX_" ] || { [ "$CUDA" = ON ] && [ -z "$NVCC" ]; } \
     || { [ -z "$NINJA" ] && ! command -v make >/dev/null; }; then
  notrun "llama.cpp CUDA build: missing tool(s): cmake=${CMAKE:-none} CC=${CC_:-none} CXX=${CXX_:-none} nvcc=${NVCC:-none} ninja=${NINJA:-none} make=$(command -v make || echo none)"
else
  say "llama.cpp build in $BDIR (log: build.log), until $BUILD_DEADLINE s after the start"
  (build_llama >"$OUT/build.log" 2>&1; echo $? >"$OUT/build.rc") &
  BUILD_PID=$!
fi

# --- a. torch: planner weights per GPU vs what torch holds ---
if [ -n "${SKIP_TORCH:-}" ]; then
  notrun "torch part: SKIP_TORCH set"
else
  say "torch part"
  # shellcheck disable=SC2086
  timeout -k 10 300 "$PY" "$HERE/fit_gpu_torch.py" --hf-fetch "$HF_FETCH" --work "$WORK" --out "$OUT" \
    --gpus-arg "$GPUS_ARG" ${TORCH_ARGS:-}
  rc=$?
  say "torch part exit $rc"
  if [ -f "$OUT/torch.json" ]; then
    "$PY" - "$OUT/torch.json" >>"$NOTRUN" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1])):
    for e in r["errors"]:
        print(f"- torch {r['family']}: {e[:400]}")
EOF
  else
    notrun "torch part: exit $rc, no torch.json (see fit-gpu.log)"
  fi
fi

# --- b, continued: wait for the build, then run the cases ---
if [ -n "$BUILD_PID" ]; then
  say "waiting for the llama.cpp build"
  wait "$BUILD_PID"
  brc=$(cat "$OUT/build.rc" 2>/dev/null || echo '?')
  tail -5 "$OUT/build.log" | sed 's/^/  build: /'
  case $brc in
    0) say "llama.cpp built" ;;
    20) notrun "llama-server did not build (exit or time out; llama-completion did): the llama-server cases are skipped; see build.log" ;;
    124|125) notrun "the llama.cpp build did not finish by $BUILD_DEADLINE s: run the same command again to go on ($BDIR is kept)" ;;
    *) notrun "the llama.cpp build failed (exit $brc): see build.log's end" ;;
  esac
  SHIM=
  if [ -n "$CC_" ] && "$CC_" -shared -fPIC -O1 -o "$WORK/fit_gpu_shim.so" "$HERE/fit_gpu_shim.c" -ldl 2>"$OUT/shim.log"; then
    SHIM=$WORK/fit_gpu_shim.so
  else
    notrun "the exact-bytes shim did not compile (shim.log): the comparison uses llama.cpp's MiB lines alone"
  fi
  if [ -x "$BDIR/bin/llama-completion" ]; then
    say "llama.cpp cases"
    # shellcheck disable=SC2086
    timeout -k 10 $((T0 + 535 - $(date +%s))) "$PY" "$HERE/fit_gpu_llamacpp.py" --bin-dir "$BDIR/bin" \
      --hf-fetch "$HF_FETCH" --gguf-dir "$FIT/gguf" --out "$OUT" --shim "$SHIM" --device "$DEVICE" \
      --gpus-arg "$GPUS_ARG" --only "${CASES:-}"
    rc=$?
    say "llama.cpp cases exit $rc"
    if [ -f "$OUT/llamacpp.json" ]; then
      "$PY" - "$OUT/llamacpp.json" >>"$NOTRUN" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1])):
    for e in r["errors"]:
        print(f"- llama.cpp case {r['case']} ({r['family']}: {r['line']}): {e[:400]}")
EOF
    else
      notrun "llama.cpp cases: exit $rc, no llamacpp.json"
    fi
  else
    notrun "llama.cpp cases: no llama-completion binary in $BDIR/bin"
  fi
fi

{
  echo "# fit-gpu: issue 40 item 7 ($(date -u +%FT%TZ), $(($(date +%s) - T0)) s)"
  echo
  cat "$OUT/facts.md"
  echo
  [ -f "$OUT/torch.md" ] && cat "$OUT/torch.md" && echo
  [ -f "$OUT/llamacpp.md" ] && cat "$OUT/llamacpp.md" && echo
  echo "## Could not be run"
  echo
  if [ -s "$NOTRUN" ]; then cat "$NOTRUN"; else echo "(everything ran)"; fi
} >"$OUT/fit-gpu.md"
say "done in $(($(date +%s) - T0)) s: $OUT/fit-gpu.md"
echo "---- could not be run ----"
cat "$NOTRUN"
