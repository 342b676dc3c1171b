#!/usr/bin/env bash
# CC_SHIM_DEBUG=1 prints the translated command line (to stderr, before the
# exec); without it nothing is printed.
source "$(dirname "$0")/lib.sh"
printf 'int main(void) { return 0; }\n' > d.c
# compile only: linking for -march=x86_64 would build compiler_rt for that CPU first
CC_SHIM_DEBUG=1 "$SHIM" -O2 -c d.c -o 'd out.o' -march=x86-64 -mtune=generic >out.txt 2>err.txt || fail "build failed: $(cat err.txt)"
[[ ! -s out.txt ]] || fail "debug output went to stdout"
line=$(cat err.txt)
# The host's libc6-dev is zig's libc (a libc file in a memfd), the target the host's glibc.
[[ $line == "cc-shim: exec ZIG_LIBC=/proc/self/fd/"[0-9]*" $ZIG cc -target x86_64-linux-gnu."* ]] ||
  fail "debug line does not start with zig's libc file, zig and the glibc target: $line"
[[ $line != *"-march=native"* ]] || fail "the caller's -march did not replace the native CPU: $line"
expect_contains "debug line" "$line" " -fno-sanitize=all "
expect_contains "debug line" "$line" " -O2 -c d.c -o 'd out.o' -march=x86_64 -Wno-pointer-sign "
[[ $line != *"-mtune"* ]] || fail "-mtune reached zig: $line"
[[ -s 'd out.o' ]] || fail "no output file"
CC_SHIM_DEBUG=0 "$SHIM" -O2 d.c -o d2 2>err.txt
[[ ! -s err.txt ]] || fail "CC_SHIM_DEBUG=0 printed: $(cat err.txt)"
ok "CC_SHIM_DEBUG"

# Issue 41 (17): an argument's newline and escape sequence are shown escaped (util::printable): the trace is
# one line and moves no cursor.
CC_SHIM_DEBUG=1 "$SHIM" -c d.c -o d3.o "-Ix"$'\e[2J\ncc-shim: FORGED' 2>err.txt || fail "build failed: $(cat err.txt)"
expect_eq "lines of the debug trace" "$(wc -l <err.txt)" 1
[[ $(cat err.txt) != *$'\e'* ]] || fail "an escape sequence reached the debug trace: $(cat -v err.txt)"
expect_contains "debug line" "$(cat err.txt)" '\x1b[2J\ncc-shim: FORGED'
ok "CC_SHIM_DEBUG escapes what an argument holds"
