#!/usr/bin/env bash
# zlib 1.2.13 (Debian's source): its own configure, make and `make test`,
# with gcc and with cc-shim. Compared: configure's findings, the compiler's
# diagnostics (clang warns 324 times on its K&R definitions, gcc never),
# lld's version-script warning on gz_intmax, the test output, the files left.
source "$(dirname "$0")/lib.sh"
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  unpack zlib "$c"
  cd "$c"
  step "zlib configure ($c)" 120 "../$c.configure" ./configure
  step "zlib make ($c)" 300 "../$c.make" make -j2
  step "zlib make test ($c)" 120 "../$c.test" make test
  cd ..
done
normalised gcc.configure >gcc.configure.n; normalised shim.configure >shim.configure.n
expect_line "gcc's configure" gcc.configure.n "Checking for attribute(visibility) support... Yes."
expect_same "configure's findings" gcc.configure.n shim.configure.n
expect_same "zlib.pc" gcc/zlib.pc shim/zlib.pc
expect_warnings_like_gcc "zlib build" gcc.make shim.make
grep -v -E '^(CC|cc|/)' gcc.test >gcc.test.n; grep -v -E '^(CC|cc|/)' shim.test >shim.test.n
expect_line "gcc's make test" gcc.test.n "		*** zlib test OK ***"
expect_line "gcc's make test" gcc.test.n "		*** zlib shared test OK ***"
expect_same "make test output" gcc.test.n shim.test.n
expect_same_files "zlib tree" gcc shim
