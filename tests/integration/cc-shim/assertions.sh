#!/usr/bin/env bash
# assert() at every -O: zig defines NDEBUG in its release modes (-O1 and up,
# -Os), so through plain zig cc an optimised build checks no assertion
# (pixman's test programs checked none, and clang warned their variables
# unused); gcc never defines NDEBUG. The shim undefines it before the
# caller's arguments, so a caller's own -DNDEBUG still wins.
source "$(dirname "$0")/lib.sh"
printf '#include <assert.h>\n#include <stdio.h>\nint main(int argc, char **argv) { (void)argv; assert(argc == 0); puts("unchecked"); return 0; }\n' >a.c
# runs BINARY: "aborted" when its assertion fired, else its output.
runs() { local out; if out=$("./$1" 2>/dev/null); then echo "$out"; else echo aborted; fi; }
GCC=$(command -v gcc) || fail "gcc (the reference) is not on PATH"
for opt in -O1 -O2 -O3 -Os; do
  "$GCC" "$opt" a.c -o by-gcc || fail "gcc $opt failed"
  expect_eq "gcc $opt" "$(runs by-gcc)" aborted
  "$ZIG" cc "$opt" a.c -o by-zig 2>/dev/null || fail "zig cc $opt failed"
  expect_eq "plain zig cc $opt (the rule would not be needed)" "$(runs by-zig)" unchecked
  "$SHIM" "$opt" a.c -o by-shim 2>shim.err || fail "the shim failed ($opt): $(cat shim.err)"
  [[ ! -s shim.err ]] || fail "the shim printed on a clean build ($opt): $(cat shim.err)"
  expect_eq "cc-shim $opt" "$(runs by-shim)" aborted
  "$SHIM" "$opt" -DNDEBUG a.c -o own || fail "the shim failed ($opt -DNDEBUG)"
  expect_eq "cc-shim $opt -DNDEBUG (the caller's own)" "$(runs own)" unchecked
done
ok "assert() fires through the shim at -O1, -O2, -O3, -Os as with gcc (plain zig cc: never); -DNDEBUG still wins"
