#!/usr/bin/env bash
# A meson project (Debian's meson) set up with CC=gcc and with CC=cc-shim:
# the same config.h from its compiler probes (has_header, has_function,
# has_header_symbol, find_library, sizeof, alignment, compiles, has_type), a
# setup stderr like gcc's (progress bars aside), a build as silent as gcc's,
# the same program output.
source "$(dirname "$0")/../../lib.sh"
command -v meson >/dev/null || fail "meson is not installed (scripts/deps.sh installs it)"
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  meson setup "$c" "$CASE_DIR/project" >"$c.setup.out" 2>"$c.setup.err" ||
    { cat "$c.setup.out" "$c.setup.err"; fail "meson setup with $c failed"; }
  ninja -C "$c" --quiet >"$c.build.out" 2>&1 || { cat "$c.build.out"; fail "building with $c failed"; }
  "./$c/parity" >"$c.run" || fail "the program built with $c exited $?"
done
expect_line "gcc's config.h" gcc/config.h "#define HAVE_STDIO_H 1"
expect_line "gcc's config.h" gcc/config.h "#define HAVE_NO_SUCH_HEADER_H 0"
expect_line "gcc's config.h" gcc/config.h "#define HAVE_LIBM 1"
expect_same "config.h" gcc/config.h shim/config.h
# Compared with gcc's own stderr, not with silence: with python3-tqdm
# installed meson draws progress bars there.
for c in "${COMPILERS[@]}"; do without_progress_bars "$c.setup.err" >"$c.setup.err.n"; done
expect_same "meson setup stderr (without progress bars)" gcc.setup.err.n shim.setup.err.n
expect_quiet_like_gcc "compiler output of the build" gcc.build.out shim.build.out
expect_same "program output" gcc.run shim.run
