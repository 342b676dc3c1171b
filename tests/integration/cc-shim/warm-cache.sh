#!/usr/bin/env bash
# Fixture cc-shim-warm: the shared test zig cache, made once per build tree.
# It starts as a copy of the cache `cc-shim --shim-warm` filled (fixture
# cc-shim-shim-warm), as a user's cache does after `cc-shim --shim-warm` in an
# image build, so no test builds zig's libc++ again (expat's first C++
# configure did, for minutes). The C compiles below then add what the tests
# use beyond --shim-warm: zig's own libc, for CC naming the shim.
source "$(dirname "$0")/lib.sh"
WARMED=$PROVKIT_BUILD_DIR/tests/cc-shim/zig-cache-shim-warm
[[ -f $WARMED.stamp ]] || fail "no cache warmed by --shim-warm at $WARMED (fixture cc-shim-shim-warm)"
# Copied when the shared cache was not made from it yet (a build tree from before, or a first run).
if [[ ! -f $ZIG_GLOBAL_CACHE_DIR.seeded ]]; then
  rm -rf "$ZIG_GLOBAL_CACHE_DIR"
  cp -a "$WARMED" "$ZIG_GLOBAL_CACHE_DIR"
  echo "copied from $WARMED ($(du -sh "$ZIG_GLOBAL_CACHE_DIR" | cut -f1))" >"$ZIG_GLOBAL_CACHE_DIR.seeded"
fi
echo "shared cache: $(cat "$ZIG_GLOBAL_CACHE_DIR.seeded")"
printf '#include <stdio.h>\nint main(void){puts("warm");return 0;}\n' > warm.c
# The combinations the tests use: debug links (no -O, as make and distutils
# link), an -O2 executable, a shared object, and with CC=shim zig's own libc.
"$SHIM" warm.c -o warm && ./warm >/dev/null || fail "warm-up build (system libc) failed"
"$SHIM" -O2 warm.c -o warm && ./warm >/dev/null || fail "warm-up -O2 build (system libc) failed"
"$SHIM" -shared -fPIC warm.c -o warm.so || fail "warm-up shared build failed"
# As Triton calls it: CC names the shim, so zig's libc detection meets the guard.
CC=$SHIM "$SHIM" warm.c -o warm2 && ./warm2 >/dev/null || fail "warm-up build (zig's libc) failed"
CC=$SHIM "$SHIM" -O3 -shared -fPIC warm.c -o warm2.so || fail "warm-up shared build (zig's libc) failed"
# A C++ program links from what was copied: no libc++ object is built here.
printf '#include <iostream>\nint main() { std::cout << "warm" << std::endl; }\n' > warm.cpp
before=$(find "$ZIG_GLOBAL_CACHE_DIR/o" -name 'libc++.a' | wc -l)
"$SHIM" --shim-cxx warm.cpp -o warmxx && [[ $(./warmxx) == warm ]] || fail "warm-up C++ build failed"
expect_eq "libc++ archives in the shared cache after a C++ link" "$(find "$ZIG_GLOBAL_CACHE_DIR/o" -name 'libc++.a' | wc -l)" "$before"
ok "zig cache warm at $ZIG_GLOBAL_CACHE_DIR"
