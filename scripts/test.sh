#!/usr/bin/env bash
# Installs what is missing, builds everything and runs the whole test suite
# through ctest. This is the README's test command and what CI runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PROVKIT_BUILD:-$root/build}

"$root/scripts/deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)"
cd "$build"
ctest --output-on-failure -j "$(nproc)" --timeout 900 "$@"
