#!/usr/bin/env bash
# The unit suite (provkit-unit, every domain's tests) under ASan and UBSan, in a build of its own beside the
# main one ($PROVKIT_BUILD_DIR/sanitize-address-undefined), then run once. Any report fails the run:
# -fno-sanitize-recover=all for UBSan, halt_on_error for ASan, LeakSanitizer's report at exit.
# Extra arguments go to provkit-unit (a Catch2 test spec, e.g. "[hash]").
#
# -O1 -g1: what the sanitizers' authors advise (whole stacks with lines, well under -O2 -g's compile time).
# PROVKIT_SANITIZE_CXX/CC and PROVKIT_SANITIZE_LAUNCHER (tests/sanitize/CMakeLists.txt passes the main
# build's compilers and launcher, e.g. ccache) are used when set. The portable link (static libstdc++) is off:
# ASan must see every operator new and delete. docs/reliability.md, "Sanitizers", says what it costs.
set -euo pipefail
src=${PROVKIT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PROVKIT_BUILD_DIR:?set PROVKIT_BUILD_DIR (the main build directory)}/sanitize-address-undefined
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# Configured every time (seconds when nothing changed), so that a change of the flags here reaches a kept build.
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  ${PROVKIT_SANITIZE_CXX:+-DCMAKE_CXX_COMPILER="$PROVKIT_SANITIZE_CXX"} \
  ${PROVKIT_SANITIZE_CC:+-DCMAKE_C_COMPILER="$PROVKIT_SANITIZE_CC"} \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  -DCMAKE_SHARED_LINKER_FLAGS="$flags" -DPROVKIT_PORTABLE=OFF \
  ${PROVKIT_SANITIZE_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER="$PROVKIT_SANITIZE_LAUNCHER"} \
  ${PROVKIT_SANITIZE_LAUNCHER:+-DCMAKE_C_COMPILER_LAUNCHER="$PROVKIT_SANITIZE_LAUNCHER"} >/dev/null
start=$(date +%s)
log=$build/ninja.log
ninja -C "$build" -j"$(nproc)" provkit-unit >"$log" 2>&1 || { cat "$log"; exit 1; }
tail -n 1 "$log"
echo "sanitize: build took $(($(date +%s) - start)) s"
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
start=$(date +%s)
status=0
"$build/bin/provkit-unit" "$@" || status=$?
echo "sanitize: run took $(($(date +%s) - start)) s"
exit "$status"
