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
# The cache values that name the compiler and its tools are not findings about the system.
for c in "${COMPILERS[@]}"; do
  grep -E '^(ac_cv|lt_cv|am_cv|ax_cv)_' "$c/config.cache" |
    grep -v -E '^(ac_cv_prog_CPP=|ac_cv_prog_ac_ct_CC|ac_cv_env_CC|ac_cv_prog_CC|ac_cv_path_|lt_cv_path_|ac_cv_prog_AR|lt_cv_prog_gnu_ld|lt_cv_path_LD|lt_cv_path_NM|lt_cv_nm_interface|lt_cv_ld_reload_flag|am_cv_CC_dependencies_compiler_type|lt_cv_sys_global_symbol)' \
    >"$c.cache"
done
expect_line "gcc's configure" gcc.cache "ac_cv_header_sys_random_h=\${ac_cv_header_sys_random_h=yes}"
expect_same "configure's cache values" gcc.cache shim.cache
expect_same "configure's definitions and flags" gcc.flags shim.flags
expect_warnings_like_gcc "libsodium build" gcc.make shim.make
expect_warnings_like_gcc "libsodium make check" gcc.test shim.test
for c in "${COMPILERS[@]}"; do grep -E '^(# TOTAL|# PASS|# FAIL|# ERROR|# SKIP|PASS|FAIL|SKIP|ERROR)' "$c.test" | sort >"$c.result"; done
expect_line "gcc's make check" gcc.result "# FAIL:  0"
grep -q -E '^# PASS: +[1-9][0-9]' gcc.result || fail "gcc's make check passed too few tests: $(cat gcc.result)"
expect_same "make check results" gcc.result shim.result
expect_same_files "libsodium tree" gcc shim
