#!/usr/bin/env bash
# A make project built with make -j2, CC=gcc and CC=cc-shim: the same program
# output (the target triple of `$(CC) -dumpmachine` in it) and kind of
# executable (PIE), the same
# dependencies in the -MMD -MP files (as make reads them), the same objects
# rebuilt after a header changes, and a build as silent on stderr as gcc's.
# And the instruction set extensions built for without -march.
source "$(dirname "$0")/../../lib.sh"
# The dependencies of one .d file as make reads it: continuations joined, one
# "target: prerequisite" per line, sorted.
deps_of() {
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1" |
    awk -F: 'NF > 1 { n = split($2, p, " "); if (n == 0) print $1 ":"; for (i = 1; i <= n; i++) print $1 ": " p[i] }' | sort
}
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  cp -r "$CASE_DIR/project" "$c"
  make -C "$c" -j2 CC="$CC" >"$c.make.out" 2>"$c.make.err" || { cat "$c.make.out" "$c.make.err"; fail "make -j2 with $c failed"; }
  "./$c/prog" >"$c.run" || fail "the program built with $c exited $?"
  # Position-independent or not: the compiler's default (Debian's gcc: PIE).
  readelf -h "$c/prog" | awk '/Type:/{print $2}' >>"$c.run"
  for d in "$c"/obj/*.d; do echo "== ${d#"$c"/}"; deps_of "$d"; done >"$c.deps"
  # A header only the odd parts include changes: make rebuilds what the .d files name.
  sleep 1; sed -i 's/OFFSET 1000/OFFSET 2000/' "$c/include/offset.h"
  make -C "$c" -j2 CC="$CC" >"$c.remake.out" 2>"$c.remake.err" || { cat "$c.remake.err"; fail "the second make with $c failed"; }
  grep -o -- '-o [^ ]*' "$c.remake.out" | sort >"$c.rebuilt"
  cat "$c.make.err" "$c.remake.err" >"$c.err"
  "./$c/prog" >>"$c.run" || fail "the rebuilt program built with $c exited $?"
done
expect_line "gcc's dependencies" gcc.deps "obj/part1.o: include/offset.h"
expect_line "gcc's rebuilt objects" gcc.rebuilt "-o obj/part3.o"
expect_line "gcc's program" gcc.run "3147 2420 built for $("$GCC" -dumpmachine)"
expect_line "gcc's rebuilt program" gcc.run "6147 4420 built for $("$GCC" -dumpmachine)"
expect_line "gcc's program" gcc.run "DYN"
expect_same "program output" gcc.run shim.run
expect_same "dependency files" gcc.deps shim.deps
expect_same "objects rebuilt after a header change" gcc.rebuilt shim.rebuilt
expect_quiet_like_gcc "compiler output of make" gcc.err shim.err

# Without -march gcc builds for the distribution's baseline (x86-64 on
# Debian), and so does the shim (before issue 24 it built for this CPU, as
# gcc -march=native: json-c's tests died of SIGILL under valgrind).
"$GCC" -O2 "$CASE_DIR/isa.c" -o isa-gcc && ./isa-gcc >isa-gcc.run || fail "isa.c with gcc"
expect_line "isa.c with gcc" isa-gcc.run "isa: base"
use_compiler shim
"$CC" -O2 "$CASE_DIR/isa.c" -o isa-shim && ./isa-shim >isa-shim.run || fail "isa.c with the shim"
expect_same "instruction set without -march" isa-gcc.run isa-shim.run
