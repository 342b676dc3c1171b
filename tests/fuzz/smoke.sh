#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (a separate build of just the parser
# sources, tests/fuzz/project) into $PROVKIT_BUILD_DIR/fuzz and runs each one
# for FUZZ_SECONDS (default 15) over its seed corpus, tests/fuzz/corpus/<target>/,
# with the dictionary tests/fuzz/dict/<target>.dict. Fails on any crash,
# sanitizer report, uncaught exception, leak or hang; the input that did it is
# kept in $PROVKIT_BUILD_DIR/fuzz/artifacts/.
#
#   tests/fuzz/smoke.sh [TARGET...]      TARGET: manifest tree http_headers profile record wheel safetensors gguf markers requirements pylock
#                                        quant_config kernels (default all)
#
# New inputs found go to a scratch corpus, never into the source tree, unless
# FUZZ_CORPUS_DIR names a directory to keep them in (long runs, see
# docs/reliability.md). Add a crashing input to tests/fuzz/corpus/<target>/
# once its bug is fixed.
set -euo pipefail

src=${PROVKIT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PROVKIT_BUILD_DIR:?set PROVKIT_BUILD_DIR (the main build directory)}/fuzz
seconds=${FUZZ_SECONDS:-15}
targets=("$@")
((${#targets[@]})) || targets=(manifest tree http_headers profile record wheel safetensors gguf markers requirements pylock quant_config
  kernels)

cxx=${FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz: $cxx not found; scripts/deps.sh installs clang and libclang-rt-14-dev" >&2
  exit 1
fi

# Configure once (the compiler is fixed at first configure), then build what changed.
if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$src/tests/fuzz/project" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
fi
ninja -C "$build" -j"$(nproc)" $(printf 'fuzz_%s ' "${targets[@]}") | tail -n 1

scratch=$(mktemp -d "${TMPDIR:-/tmp}/provkit-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
corpus=${FUZZ_CORPUS_DIR:-$scratch}
mkdir -p "$build/artifacts"

status=0
for t in "${targets[@]}"; do
  seeds=$src/tests/fuzz/corpus/$t
  [[ -d $seeds ]] || { echo "fuzz: no seed corpus $seeds" >&2; exit 1; }
  mkdir -p "$corpus/$t"
  log=$corpus/$t.log
  dict=$src/tests/fuzz/dict/$t.dict
  # -timeout: one input taking 10 s is a hang; -error_exitcode: crashes and
  # sanitizer reports all end the run with 77.
  if "$build/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -error_exitcode=77 \
      -print_final_stats=1 -dict="$dict" -artifact_prefix="$build/artifacts/$t-" "$corpus/$t" "$seeds" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*/[0-9a-zA-Z]*' "$log" | tail -n 1)
    echo "fuzz: $t ok: $runs inputs in ${seconds}s, $cov, seeds $(ls "$seeds" | wc -l)"
  else
    status=1
    echo "fuzz: $t FAILED; the libFuzzer log ends:" >&2
    grep -v '^#[0-9]' "$log" | tail -n 40 >&2
  fi
done
exit $status
