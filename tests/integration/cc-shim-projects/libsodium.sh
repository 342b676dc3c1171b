#!/usr/bin/env bash
# libsodium 1.0.18 (Debian's source): autoconf + libtool, `make check` (its
# default set of test programs, each comparing its output with its .exp
# file), with gcc and with cc-shim. Its configure probes dozens of compiler
# and linker flags (-fstack-protector, -Wl,-z,relro, the AVX2/AVX-512/AES-NI
# intrinsics it compiles some files for), and its CPU dispatch picks the
# implementations at run time. Compared: the definitions and flags configure
# chose, every configure cache value but the warning-option probes (known,
# below), the diagnostics, the test results, the files left.
source "$(dirname "$0")/lib.sh"
command -v autoreconf >/dev/null && command -v automake >/dev/null && command -v libtoolize >/dev/null ||
  fail "autoconf, automake and libtool are not installed (scripts/deps.sh)"
# The orig tarball is the git tree without configure: generated once, as Debian's dh_autoreconf does.
unpack libsodium pristine
step "libsodium autoreconf" 300 autoreconf.log autoreconf -fi pristine
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  cp -a pristine "$c"
  cd "$c"
  step "libsodium configure ($c)" 300 "../$c.configure" ./configure -C --disable-dependency-tracking
  step "libsodium make ($c)" 900 "../$c.make" make -j2
  step "libsodium make check ($c)" 900 "../$c.test" make -j2 check
  # What configure decided for the build: its definitions and the flags of the library's compiles.
  grep -E '^(DEFS|CFLAGS|CPPFLAGS|LDFLAGS|LIBS|CFLAGS_[A-Z0-9]+) =' src/libsodium/Makefile >"../$c.flags"
  cd ..
done
# Known (docs/cc-shim.md, gcc parity: the compiler is clang): configure asks
# whether the compiler is clang, and for clang adds -Wno-unknown-warning-option
# to its chain of warning-option probes (CWFLAGS), so with the shim every
# option of the chain is accepted, where gcc refuses the three it does not
# know. CWFLAGS is a configure finding only: no Makefile of libsodium uses it
# (the flags the library is compiled with are compared below).
for c in "${COMPILERS[@]}"; do
  sed -n -E 's/^checking whether C compiler accepts .* -Wextra( .* | )(-W[^ ]*)\.\.\. (yes|no)$/\2 \3/p' "$c.configure" |
    sort >"$c.cwflags"
done
grep -qx -- '-Wcast-qual yes' gcc.cwflags || fail "gcc's configure ran no warning-option probes: $(cat gcc.cwflags)"
known_difference "clang's warning-option probe" gcc.cwflags "-Wshorten-64-to-32 no" shim.cwflags "-Wshorten-64-to-32 yes"
known_difference "clang's warning-option probe" gcc.cwflags "-Wsometimes-uninitialized no" shim.cwflags \
  "-Wsometimes-uninitialized yes"
known_difference "clang's warning-option probe" gcc.cwflags "-Wvariable-decl no" shim.cwflags "-Wvariable-decl yes"
if grep -qx -- '-Wno-unknown-warning-option yes' shim.cwflags && ! grep -q -- '-Wno-unknown-warning-option' gcc.cwflags; then
  ok "the chain for clang: -Wno-unknown-warning-option, exactly"
else
  differ "the shim's configure no longer adds -Wno-unknown-warning-option for clang alone"
fi
grep -v -x -- '-Wno-unknown-warning-option yes' shim.cwflags >shim.cwflags.rest || true
mv shim.cwflags.rest shim.cwflags
expect_same "the other warning-option probes" gcc.cwflags shim.cwflags
# The cache values that name the compiler and its tools are not findings about the
# system; the chained warning-option probes (their names hold the whole chain) are above.
for c in "${COMPILERS[@]}"; do
  grep -E '^(ac_cv|lt_cv|am_cv|ax_cv)_' "$c/config.cache" |
    grep -v -E '^(ac_cv_prog_CPP=|ac_cv_prog_ac_ct_CC|ac_cv_env_CC|ac_cv_prog_CC|ac_cv_path_|lt_cv_path_|ac_cv_prog_AR|lt_cv_prog_gnu_ld|lt_cv_path_LD|lt_cv_path_NM|lt_cv_nm_interface|lt_cv_ld_reload_flag|am_cv_CC_dependencies_compiler_type|lt_cv_sys_global_symbol)' |
    grep -v -E '^ax_cv_check_cflags___g_.*__Wextra__' >"$c.cache"
done
expect_line "gcc's configure" gcc.cache "ac_cv_header_sys_random_h=\${ac_cv_header_sys_random_h=yes}"
known_difference "the compiler is clang" gcc.cache "ax_cv_PTHREAD_CLANG=\${ax_cv_PTHREAD_CLANG=no}" \
  shim.cache "ax_cv_PTHREAD_CLANG=\${ax_cv_PTHREAD_CLANG=yes}"
# ...and for clang only, AX_PTHREAD asks whether -pthread warns when linking: no.
if grep -qxF "ax_cv_PTHREAD_CLANG_NO_WARN_FLAG=\${ax_cv_PTHREAD_CLANG_NO_WARN_FLAG=no}" shim.cache &&
  ! grep -q '^ax_cv_PTHREAD_CLANG_NO_WARN_FLAG=' gcc.cache; then
  ok "AX_PTHREAD's clang-only probe: -pthread needs no flag against the link warning, exactly"
else
  differ "AX_PTHREAD's clang-only probe (ax_cv_PTHREAD_CLANG_NO_WARN_FLAG) is no longer 'no' for the shim alone"
fi
grep -v '^ax_cv_PTHREAD_CLANG_NO_WARN_FLAG=' shim.cache >shim.cache.rest || true
mv shim.cache.rest shim.cache
expect_same "configure's cache values" gcc.cache shim.cache
expect_same "configure's definitions and flags" gcc.flags shim.flags
expect_warnings_like_gcc "libsodium build" gcc.make shim.make
# Known: gcc 12's -Wstringop-overread (its object-size analysis, which clang
# does not have) warns where the tests pass short strings to functions that
# declare `const char str[crypto_pwhash_STRBYTES]` (128); the shim gives none
# (docs/cc-shim.md, gcc parity: warnings beyond the tables). Counted exactly,
# then the rest compared.
overread=$(grep -c -- 'warning: .*\[-Wstringop-overread\]' gcc.test || true)
((overread > 0)) || fail "gcc's make check no longer warns -Wstringop-overread (the known difference is gone: update the case)"
if grep -q -- '-Wstringop-overread' shim.test; then differ "the shim's make check has -Wstringop-overread warnings"; fi
ok "gcc's -Wstringop-overread warnings in the tests: $overread (the shim: none)"
grep -v -- '\[-Wstringop-overread\]' gcc.test >gcc.test.rest || true
expect_warnings_like_gcc "libsodium make check (but -Wstringop-overread)" gcc.test.rest shim.test
for c in "${COMPILERS[@]}"; do grep -E '^(# TOTAL|# PASS|# FAIL|# ERROR|# SKIP|PASS|FAIL|SKIP|ERROR)' "$c.test" | sort >"$c.result"; done
expect_line "gcc's make check" gcc.result "# FAIL:  0"
grep -q -E '^# PASS: +[1-9][0-9]' gcc.result || fail "gcc's make check passed too few tests: $(cat gcc.result)"
expect_same "make check results" gcc.result shim.result
expect_same_files "libsodium tree" gcc shim
