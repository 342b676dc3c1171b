#!/usr/bin/env bash
# zig cc turns UBSan traps on at -O0; through the shim a program with UB runs
# as gcc would build it, while the caller's own -fsanitize=... still wins.
source "$(dirname "$0")/lib.sh"
cat > ub.c <<'C'
#include <limits.h>
#include <stdio.h>
int main(int argc, char** argv) { int x = INT_MAX; x += argc; printf("%d\n", x); return 0; }
C
run() { set +e; "$@" >run.out 2>&1; rc=$?; set -e; }

"$ZIG" cc -O0 ub.c -o ub-zig || fail "plain zig build failed"
run ./ub-zig
expect_eq "plain zig cc -O0: signed overflow traps (SIGILL)" "$rc" 132

"$SHIM" -O0 ub.c -o ub-shim || fail "shim build failed"
run ./ub-shim
expect_eq "shim -O0: exit status" "$rc" 0
expect_eq "shim -O0: output" "$(cat run.out)" "-2147483648"
ok "no UBSan trap through the shim"

"$SHIM" -O0 -fsanitize=undefined ub.c -o ub-asked || fail "shim build with -fsanitize=undefined failed"
run ./ub-asked
expect_eq "shim -O0 -fsanitize=undefined: traps" "$rc" 132
"$SHIM" -O2 -fsanitize=signed-integer-overflow -fsanitize-trap=signed-integer-overflow ub.c -o ub-one || fail "shim build with one sanitizer failed"
run ./ub-one
expect_eq "shim -O2 -fsanitize=signed-integer-overflow: traps" "$rc" 132
ok "the caller's -fsanitize=... wins"
