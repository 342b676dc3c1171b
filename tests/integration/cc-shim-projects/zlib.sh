#!/usr/bin/env bash
# zlib 1.2.13 (Debian's source): its own configure, make and `make test`,
# with gcc and with cc-shim. Compared: configure's findings, the compiler's
# diagnostics (clang warns 324 times on its K&R definitions, gcc never),
# lld's version-script warning on gz_intmax, the test output, the files left.
# Then zlib through ccache: warnings gcc and clang both give (-Wcast-qual, 4
# in libz.a) must reach every build's log, the compiler's cache hit or not.
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

# Through ccache, as the report found it: a build of the same sources and flags before (zig's cache then held
# every object) left ccache's first build with no diagnostics to print or store: 0 of 324 warnings. Now each
# of three builds prints gcc's: the shim alone, ccache's miss (its compile a hit in zig's cache), ccache's hit.
command -v ccache >/dev/null || fail "ccache is not installed (scripts/deps.sh installs it)"
export CCACHE_DIR=$WORK/ccache CCACHE_NOHASHDIR=1 CCACHE_BASEDIR=$WORK
warned_build() {  # warned_build NAME CC: zlib's libz.a built with -Wcast-qual in tree NAME, its make log NAME.make
  unpack zlib "$1"
  cd "$1"
  step "zlib configure ($1)" 120 "../$1.configure" env CC="$2" CFLAGS="-O2 -Wcast-qual" ./configure
  ccache -z >/dev/null  # the statistics of the make alone (configure's probes go through ccache too)
  step "zlib make ($1)" 300 "../$1.make" make -j2 libz.a
  cd ..
}
ccache_count() {  # ccache_count FIELD...: the sum of these fields of ccache's statistics
  ccache --print-stats | awk -F'\t' -v f=" $* " 'index(f, " " $1 " ") { n += $2 } END { print n + 0 }'
}
warned_build gcc-wcq "$GCC"
warned_build shim-wcq "$SHIM"
warned_build ccache-miss "ccache $SHIM"
misses=$(ccache_count cache_miss)
warned_build ccache-hit "ccache $SHIM"
hits=$(ccache_count direct_cache_hit preprocessed_cache_hit)
((misses >= 15 && hits == misses)) || fail "ccache: $misses compiles missed in the first make, $hits hit in the second (want all)"
# Something to lose: gcc warns 4 times on libz.a's sources (gzlib.c, gzwrite.c, inflate.c).
(($(warnings gcc-wcq.make | wc -l) > 0)) || fail "gcc -Wcast-qual gave no warning on zlib: the comparisons below would prove nothing"
expect_warnings_like_gcc "zlib -Wcast-qual, cc-shim" gcc-wcq.make shim-wcq.make
expect_warnings_like_gcc "zlib -Wcast-qual, ccache's miss" gcc-wcq.make ccache-miss.make
expect_warnings_like_gcc "zlib -Wcast-qual, ccache's hit ($hits of $misses compiles)" gcc-wcq.make ccache-hit.make
