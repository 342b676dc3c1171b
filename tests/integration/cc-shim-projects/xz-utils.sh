#!/usr/bin/env bash
# xz-utils 5.4.1 (Debian's source): autoconf + libtool, `make check`, with
# gcc and with cc-shim. Compared: config.h, every configure cache value
# (config.cache, -C) but one known difference, the diagnostics, the tests.
source "$(dirname "$0")/lib.sh"
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  unpack xz-utils "$c"
  cd "$c"
  # The smallest faithful build: liblzma and xz, their own test programs (no docs, no xzdec/lzmainfo/scripts).
  step "xz configure ($c)" 300 "../$c.configure" ./configure -C --disable-doc --disable-xzdec --disable-lzmadec \
    --disable-lzmainfo --disable-lzma-links --disable-scripts --disable-nls
  step "xz make ($c)" 900 "../$c.make" make -j2
  step "xz make check ($c)" 600 "../$c.test" make -j2 check
  cd ..
done
expect_same "config.h" gcc/config.h shim/config.h
# The cache values that say what the compiler is (its path, its GNU-ness, the
# linker it drives) are not findings about the system.
for c in "${COMPILERS[@]}"; do
  grep -E '^(ac_cv|lt_cv|am_cv|gl_cv)_' "$c/config.cache" |
    grep -v -E '^(ac_cv_prog_CPP=|ac_cv_prog_ac_ct_CC|ac_cv_env_CC|ac_cv_prog_CC|ac_cv_path_|lt_cv_path_|ac_cv_prog_AR|lt_cv_prog_gnu_ld|lt_cv_path_LD|lt_cv_path_NM|lt_cv_nm_interface|lt_cv_ld_reload_flag|am_cv_CC_dependencies_compiler_type|lt_cv_sys_global_symbol)' \
    >"$c.cache"
done
expect_line "gcc's configure" gcc.cache "lt_cv_prog_compiler_rtti_exceptions=\${lt_cv_prog_compiler_rtti_exceptions=no}"
# clang reads `(void) strchr;` without a declaration as an implicit
# declaration, which the shim keeps a warning as gcc 12 keeps calls to
# undeclared functions; autoconf then adds -fno-builtin to its AC_CHECK_DECL
# probes only, which give the same answers (docs/cc-shim.md, gcc parity).
known_difference "the undeclared-builtin probe" gcc.cache \
  "ac_cv_c_undeclared_builtin_options=\${ac_cv_c_undeclared_builtin_options='none needed'}" shim.cache \
  "ac_cv_c_undeclared_builtin_options=\${ac_cv_c_undeclared_builtin_options=-fno-builtin}"
expect_same "configure's cache values" gcc.cache shim.cache
expect_warnings_like_gcc "xz build" gcc.make shim.make
for c in "${COMPILERS[@]}"; do grep -E '^(# TOTAL|# PASS|# FAIL|# ERROR|PASS|FAIL)' "$c.test" | sort >"$c.result"; done
expect_line "gcc's make check" gcc.result "# FAIL:  0"
expect_same "make check results" gcc.result shim.result
