#!/usr/bin/env bash
# Fixture cc-shim-warm: fills the shared test zig cache once (zig's first
# compiles build compiler_rt and, when CC points at the shim, its own glibc
# stubs: several seconds each), so the tests that follow stay fast.
source "$(dirname "$0")/lib.sh"
mkdir -p "$ZIG_GLOBAL_CACHE_DIR"
printf '#include <stdio.h>\nint main(void){puts("warm");return 0;}\n' > warm.c
# zig builds compiler_rt (and its own libc) per optimize mode and PIC-ness, so
# warm the combinations the tests use: debug links (no -O, as make and
# distutils link), an -O2 executable, and with CC=shim zig's own libc.
"$SHIM" warm.c -o warm && ./warm >/dev/null || fail "warm-up build (system libc) failed"
"$SHIM" -O2 warm.c -o warm && ./warm >/dev/null || fail "warm-up -O2 build (system libc) failed"
"$SHIM" -shared -fPIC warm.c -o warm.so || fail "warm-up shared build failed"
# As Triton calls it: CC names the shim, so zig's libc detection meets the guard.
CC=$SHIM "$SHIM" warm.c -o warm2 && ./warm2 >/dev/null || fail "warm-up build (zig's libc) failed"
CC=$SHIM "$SHIM" -O3 -shared -fPIC warm.c -o warm2.so || fail "warm-up shared build (zig's libc) failed"
ok "zig cache warm at $ZIG_GLOBAL_CACHE_DIR"
