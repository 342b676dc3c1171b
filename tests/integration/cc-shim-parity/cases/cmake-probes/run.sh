#!/usr/bin/env bash
# A CMake project's configure-time probes (check_include_file,
# check_symbol_exists, check_function_exists, check_library_exists,
# check_type_size, find_library) with gcc and with CC=cc-shim: the same cache
# values, the same library architecture, a silent configure and build, and the
# same program output and kind of executable, in a build without -O.
source "$(dirname "$0")/../../lib.sh"
src=$CASE_DIR/project
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  # No CMAKE_BUILD_TYPE, as many projects are configured: no -O, as in every probe.
  cmake -S "$src" -B "$c" -G Ninja \
    >"$c.configure.out" 2>"$c.configure.err" || { cat "$c.configure.out" "$c.configure.err"; fail "cmake configure with $c failed"; }
  grep -E '^(HAVE|SIZEOF|LIBM|LIBPTHREAD)_[A-Z0-9_]*:' "$c/CMakeCache.txt" | sort >"$c.cache"
  cmake --build "$c" -- --quiet >"$c.build.out" 2>&1 || { cat "$c.build.out"; fail "building with $c failed"; }
  "./$c/probes" >"$c.run" || fail "the program built with $c exited $?"
  # Position-independent or not: the compiler's default (Debian's gcc: PIE).
  readelf -h "$c/probes" | awk '/Type:/{print $2}' >>"$c.run"
done
# gcc's side is a real result, not two empty ones.
expect_line "gcc's cache" gcc.cache "HAVE_STDIO_H:INTERNAL=1"
expect_line "gcc's cache" gcc.cache "HAVE_NO_SUCH_HEADER_H:INTERNAL="
expect_line "gcc's program" gcc.run "DYN"
# zig links libm (and libpthread, libdl, ...) into every glibc link, so a
# function of libm links without -lm.
known_difference "check_function_exists(cos)" gcc.cache "HAVE_COS_IN_LIBC:INTERNAL=" shim.cache "HAVE_COS_IN_LIBC:INTERNAL=1"
expect_same "probe cache values" gcc.cache shim.cache
# zig cc is clang, and says so.
known_difference "compiler id" gcc/layout.txt "CMAKE_C_COMPILER_ID=GNU" shim/layout.txt "CMAKE_C_COMPILER_ID=Clang"
expect_same "library architecture and layout" gcc/layout.txt shim/layout.txt
expect_same "config.h" gcc/config.h shim/config.h
expect_quiet_like_gcc "cmake configure stderr" gcc.configure.err shim.configure.err
expect_quiet_like_gcc "compiler output of the build" gcc.build.out shim.build.out
expect_same "program output" gcc.run shim.run
