#!/usr/bin/env bash
# An autoconf ./configure (made by Debian's autoheader and autoconf) with
# CC=gcc and with CC=cc-shim: the same config.h, the same cached probe results
# (LIBS among them), configure and make as silent on stderr as gcc's, and the
# same program output.
source "$(dirname "$0")/../../lib.sh"
command -v autoconf >/dev/null || fail "autoconf is not installed (scripts/deps.sh installs it)"
mkdir src && cp "$CASE_DIR"/project/* src/
(cd src && autoheader && autoconf) || fail "autoheader/autoconf failed"
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  cp -r src "$c"
  (cd "$c" && ./configure -C CC="$CC" >../"$c.configure.out" 2>../"$c.configure.err") ||
    { cat "$c.configure.out" "$c.configure.err"; fail "./configure with $c exited non-zero (see $c/config.log)"; }
  # The probes' results, without the ones that name the compiler itself.
  grep -E "^ac_cv_(header|func|search|sizeof|type|c_bigendian|c_inline|sys_(file_offset|large_files))" "$c/config.cache" >"$c.cache"
  (cd "$c" && make >/dev/null 2>../"$c.make.err") || { cat "$c.make.err"; fail "make with $c failed"; }
  "./$c/parity" >"$c.run" || fail "the program built with $c exited $?"
done
expect_line "gcc's config.h" gcc/config.h "#define HAVE_STDIO_H 1"
expect_line "gcc's config.h" gcc/config.h "/* #undef HAVE_NO_SUCH_HEADER_H */"
expect_same "config.h" gcc/config.h shim/config.h
# zig links libm (and libpthread, libdl, ...) into every glibc link, so cos
# links without -lm. (LIBS is made of the ac_cv_search_* results.)
known_difference "AC_SEARCH_LIBS([cos], [m])" gcc.cache 'ac_cv_search_cos=${ac_cv_search_cos=-lm}' shim.cache "ac_cv_search_cos=\${ac_cv_search_cos='none required'}"
expect_same "cached probe results" gcc.cache shim.cache
expect_quiet_like_gcc "configure stderr" gcc.configure.err shim.configure.err
expect_quiet_like_gcc "compiler output of make" gcc.make.err shim.make.err
expect_same "program output" gcc.run shim.run
