#!/usr/bin/env bash
# pixman 0.42.2 (Debian's source; Debian builds it with autoconf, so
# configure and `make check`), with gcc and with cc-shim. Its MMX, SSE2,
# SSSE3 and AVX2 fast paths, picked at run time, are what the tests exercise.
# Compared: config.h and every configure cache value but the known
# differences (OpenMP, libm, the undeclared-builtin probe), the diagnostics
# (known: where a warning inside a macro points, gcc's -Wmaybe-uninitialized,
# three of clang's own), the test results, the files left. Its combiner-test
# unmasks FE_DIVBYZERO and died of SIGFPE with the shim until the shim gave
# clang gcc's -ftrapping-math, and its assertions were compiled out until the
# shim undid zig's NDEBUG (docs/cc-shim.md, Translations).
#
# Time (the whole case stays within about 4 minutes on a 2-core box): the
# self-checking tests run through `make check` (TESTS set to them); the
# fuzzers, whose default runs are 30 000 to 8 000 000 iterations each
# (affine-test alone is minutes), run over a fixed first range of their
# iterations, as pixman's own `TEST first last` form allows, and the checksum
# each prints over that range is compared between the builds. Not run:
# composite and tolerance-test (8 and 10 million iterations, no range form),
# alphamap and filter-reduction-test (single long runs).
source "$(dirname "$0")/lib.sh"
SELF_CHECKS="oob-test infinite-loop trap-crasher fence-image-self-test region-translate-test fetch-test a1-trap-test
  prng-test radial-invalid pdf-op-test region-test combiner-test scaling-crash-test alpha-loop scaling-helpers-test
  thread-test rotate-test gradient-crash-test pixel-test"
FUZZ_RANGES=("affine-test 1 100000" "scaling-test 1 200000" "blitters-test 1 50000" "cover-test 1 20000"
  "solid-test 1 10000" "glyph-test 1 1000" "composite-traps-test 1 2000" "region-contains-test 1 100"
  "matrix-test 1 1000")
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  unpack pixman "$c"
  cd "$c"
  # No GTK demos, no libpng in the tests: the same on any box.
  step "pixman configure ($c)" 300 "../$c.configure" ./configure -C --disable-gtk --disable-libpng
  step "pixman make ($c)" 600 "../$c.make" make -j2
  step "pixman make check ($c)" 600 "../$c.test" make -j2 check TESTS="$(echo $SELF_CHECKS)"
  : >"../$c.fuzz"
  for r in "${FUZZ_RANGES[@]}"; do
    read -r prog first last <<<"$r"
    step "pixman $prog $first $last ($c)" 120 "../$c.fuzz.one" "test/$prog" "$first" "$last"
    echo "$prog $(tail -n 1 "../$c.fuzz.one")" >>"../$c.fuzz"
  done
  rm -f "../$c.fuzz.one"
  cd ..
done
# Known: zig has no OpenMP runtime and clang finds no omp.h (gcc's is in its
# private dir), so configure says "unsupported" and pixman's test programs run
# their loops on one thread (the library itself never uses OpenMP); zig links
# its libm into every link, so sqrtf needs no -lm (docs/cc-shim.md, gcc parity).
known_difference "config.h: OpenMP" gcc/config.h "#define USE_OPENMP 1" shim/config.h "/* #undef USE_OPENMP */"
expect_same "config.h" gcc/config.h shim/config.h
# The cache values that name the compiler and its tools are not findings about the system.
for c in "${COMPILERS[@]}"; do
  grep -E '^(ac_cv|lt_cv|am_cv)_' "$c/config.cache" |
    grep -v -E '^(ac_cv_prog_CPP=|ac_cv_prog_ac_ct_CC|ac_cv_env_CC|ac_cv_prog_CC|ac_cv_path_|lt_cv_path_|ac_cv_prog_AR|lt_cv_prog_gnu_ld|lt_cv_path_LD|lt_cv_path_NM|lt_cv_nm_interface|lt_cv_ld_reload_flag|am_cv_CC_dependencies_compiler_type|lt_cv_sys_global_symbol)' \
    >"$c.cache"
done
expect_line "gcc's configure" gcc.cache "ac_cv_sizeof_long=\${ac_cv_sizeof_long=8}"
known_difference "OpenMP" gcc.cache "ac_cv_prog_c_openmp=\${ac_cv_prog_c_openmp=-fopenmp}" \
  shim.cache "ac_cv_prog_c_openmp=\${ac_cv_prog_c_openmp=unsupported}"
known_difference "libm" gcc.cache "ac_cv_search_sqrtf=\${ac_cv_search_sqrtf=-lm}" \
  shim.cache "ac_cv_search_sqrtf=\${ac_cv_search_sqrtf='none required'}"
known_difference "the undeclared-builtin probe" gcc.cache \
  "ac_cv_c_undeclared_builtin_options=\${ac_cv_c_undeclared_builtin_options='none needed'}" shim.cache \
  "ac_cv_c_undeclared_builtin_options=\${ac_cv_c_undeclared_builtin_options=-fno-builtin}"
expect_same "configure's cache values" gcc.cache shim.cache
# Diagnostics. Known, both clang's way of reporting and not the shim's to
# change: MAKE_ACCESSORS(format) defines an unused `__dummy__format` for each
# of pixman-access.c's 38 formats; both compilers warn 38 times
# (-Wunused-const-variable), gcc at the macro's own line (468), clang at each
# use (470 to 507). And gcc's -Wmaybe-uninitialized, from its optimiser's
# flow analysis, which clang does not have: pixman.c:866 (stack_boxes).
warnings gcc.make >gcc.make.w
warnings shim.make >shim.make.w
for _ in $(seq 38); do echo "pixman-access.c:468: warning"; done >access.gcc
seq 470 507 | sed 's/.*/pixman-access.c:&: warning/' >access.shim
if [[ $(grep -xF 'pixman-access.c:468: warning' gcc.make.w) == "$(cat access.gcc)" ]] &&
  grep -qxF 'pixman.c:866: warning' gcc.make.w; then
  ok "gcc's known warnings: 38 at pixman-access.c:468, one at pixman.c:866"
else
  fail "gcc's build no longer warns 38 times at pixman-access.c:468 and once at pixman.c:866: $(cat gcc.make.w)"
fi
if [[ $(grep -E '^pixman-access\.c:(4[7-9][0-9]|50[0-7]): warning$' shim.make.w) == "$(cat access.shim)" ]]; then
  ok "the shim's known warnings: one at each MAKE_ACCESSORS use, pixman-access.c:470 to 507"
else
  differ "the shim's warnings in pixman-access.c are no longer one at each of lines 470 to 507"
fi
# And clang's own, where gcc 12 has none: -Wunused-but-set-variable also for a
# variable only ever `q += ...` (lowlevel-blt-bench.c:182; gcc counts that as a
# use), and -Wunused-function for an unused `static force_inline` function
# (__inline__ with always_inline; pixman-sse2.c:380, 396; gcc never warns about
# unused inline functions).
CLANG_ONLY="lowlevel-blt-bench.c:182 pixman-sse2.c:380 pixman-sse2.c:396"
for w in $CLANG_ONLY; do
  if [[ $(grep -cxF "$w: warning" shim.make.w) == 1 ]] && ! grep -qxF "$w: warning" gcc.make.w; then
    ok "clang's own warning at $w, exactly"
  else
    differ "the known clang-only warning at $w is no longer one with the shim and none with gcc"
  fi
done
grep -v -x -E 'pixman-access\.c:468: warning|pixman\.c:866: warning' gcc.make.w >gcc.make.rest || true
grep -v -x -E 'pixman-access\.c:(4[7-9][0-9]|50[0-7]): warning' shim.make.w |
  grep -v -x -E "$(echo $CLANG_ONLY | sed -e 's/\./\\./g' -e 's/ /: warning|/g'): warning" >shim.make.rest || true
expect_same "the other diagnostics" gcc.make.rest shim.make.rest
if ! grep -q 'ld: warning' gcc.make && grep -q 'ld.lld: warning' shim.make; then
  differ "lld warned where GNU ld was silent: $(grep 'ld.lld: warning' shim.make | head -n 3)"
fi
for c in "${COMPILERS[@]}"; do grep -E '^(# TOTAL|# PASS|# FAIL|# ERROR|PASS|FAIL|XFAIL|SKIP)' "$c.test" | sort >"$c.result"; done
expect_line "gcc's make check" gcc.result "# PASS:  $(echo $SELF_CHECKS | wc -w)"
expect_line "gcc's make check" gcc.result "# FAIL:  0"
expect_same "make check results" gcc.result shim.result
for r in "${FUZZ_RANGES[@]}"; do
  read -r prog first last <<<"$r"
  grep -qxE "$prog $first-$last: checksum=[0-9A-F]{8}" gcc.fuzz || fail "gcc's $prog printed no checksum: $(cat gcc.fuzz)"
done
expect_same "the fuzzers' checksums over their ranges" gcc.fuzz shim.fuzz
expect_same_files "pixman tree" gcc shim
